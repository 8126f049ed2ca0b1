//! # The console's input side: from COM1's receiver to `read(0, ...)`
//!
//! Output to the console is synchronous (`base::console` writes straight to the UART).
//! Input cannot be: bytes arrive whenever someone types, and a reader must sleep until
//! they do. So input goes through a buffer, filled by an interrupt and drained by `read`,
//! and through a line discipline (`tally_ldisc`, Linux's `n_tty`) that edits and echoes it:
//!
//! ```text
//!   terminal ─► UART FIFO ─► IRQ 4: on_interrupt ─► RAW (4 KiB) ─► read(0, buf, n): Ldisc ─► buf
//!                  ▲          ISIG chars: signal       │ full:        processes RAW as the reader
//!                  │          the foreground group     │ rx interrupt needs it: edits, echoes,
//!                  └── bytes wait here ◄───────────────┘ off          completes the line
//! ```
//!
//! **Flow control: nothing typed is lost.** When RAW is full, the handler turns the UART's
//! receive interrupt off and leaves further bytes in the UART's FIFO; a full FIFO makes QEMU
//! stop reading its side (the terminal, or the pipe `cargo xtask run --script` writes), so
//! the sender waits. When a reader has drained RAW to half, the interrupt goes back on and
//! the FIFO's bytes come in. Each such stop is counted (`stalls`, kstat `tty:0:console`,
//! `stats/console.rs`).
//!
//! **Echo when read.** Raw bytes wait in RAW until a reader wants input (or are processed
//! at once when a reader is already waiting): the line discipline edits and echoes them
//! then. So text typed ahead — a whole script fed at once — is echoed as each line is read,
//! after the prompt that asked for it, as a user typing at that moment would see it.
//! Linux's n_tty echoes at receive time instead; the difference shows only with typed-ahead
//! input (`docs/console.md`). The signal characters (`^C ^\ ^Z` with `ISIG`) are the
//! exception: acted on the moment they arrive — the pending input is flushed, `^C` echoed,
//! and the signal sent to the console's foreground process group
//! (`proc::job_control::signal_foreground`, through [`set_signal_hook`]).
//!
//! **Dropped input.** The only bytes the kernel still drops are those of a line longer than
//! the line discipline's buffer (4095 bytes): refused with a BEL, counted (`dropped`), and
//! reported once on the console. The signal characters' flush is counted as `flushed`.
//!
//! `^D` at the start of a line reads as end of input (0): QEMU gives the guest no signal
//! when its standard input closes (the serial port just stops receiving), so end of file
//! can only be in-band, as on a terminal; `cargo xtask run --script` ends its input with it.
//!
//! The self-test `user_read` feeds input through the UART's loopback mode
//! (`hal::serial::set_loopback`), so the whole path — FIFO, IRQ 4, the buffer, the line
//! discipline, the sleeping reader — runs under `cargo xtask test` without a terminal.
//! The whole path and the line discipline's rules: `docs/console.md`.

use alloc::collections::VecDeque;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::Mutex;
use tally_ldisc::{Ldisc, Sink};
use tally_sig::ERESTARTSYS;
use tally_uapi::tty::{Termios, Winsize};

use crate::base::config::CONSOLE_INPUT_SIZE as RING_SIZE;
use crate::sync::{WaitQueue, WaitSet};

/// The IRQ line of COM1.
pub const IRQ_LINE: u8 = 4;
/// The line discipline's buffer: the longest line is one byte less (n_tty's 4096).
pub const LINE_SIZE: usize = 4096;

/// The console's input state, under one lock taken with interrupts off.
struct Tty {
    /// Bytes received and not yet processed by the line discipline.
    raw: VecDeque<u8>,
    ld: Ldisc<LINE_SIZE>,
    /// The receive interrupt is off because `raw` was full.
    throttled: bool,
    winsize: Winsize,
}

static TTY: Mutex<Tty> = Mutex::new(Tty {
    raw: VecDeque::new(),
    ld: Ldisc::new(),
    throttled: false,
    winsize: Winsize { ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0 },
});
static READERS: WaitQueue = WaitQueue::new();

/// What a signal character does: set once at boot by `kmain` to job control's
/// `proc::job_control::signal_foreground` (a driver sits below the process layer, so the
/// call goes through this hook, as `proc::register_exit_observer` does the other way).
static SIGNAL_HOOK: spin::Once<fn(u8)> = spin::Once::new();

/// Route the signal characters' signals to `hook` (called once, at boot).
pub fn set_signal_hook(hook: fn(u8)) {
    SIGNAL_HOOK.call_once(|| hook);
}

fn signal_foreground(sig: u8) {
    if let Some(hook) = SIGNAL_HOOK.get() {
        hook(sig);
    }
}

/// Job control's epoch: bumped whenever the console's session or foreground group changes
/// ([`job_control_changed`]), so that a reader waiting in [`read`] is checked again.
static JOB_EPOCH: AtomicU64 = AtomicU64::new(0);

/// The current job-control epoch (read before job control's check of a reader).
pub fn job_epoch() -> u64 {
    JOB_EPOCH.load(Ordering::Relaxed)
}

/// The console's session or foreground group changed (`proc/job_control.rs`): every
/// waiting reader returns to be checked again.
pub fn job_control_changed() {
    JOB_EPOCH.fetch_add(1, Ordering::Relaxed);
    READERS.wake_all();
}

/// The counters of kstat `tty:0:console`.
static RECEIVED: AtomicU64 = AtomicU64::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);
static STALLS: AtomicU64 = AtomicU64::new(0);
static FLUSHED: AtomicU64 = AtomicU64::new(0);
static SIGNALS: AtomicU64 = AtomicU64::new(0);
/// A drop has been reported on the console (it is, once).
static REPORTED: AtomicBool = AtomicBool::new(false);

/// The console's counters, for `stats/console.rs`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// Bytes taken from the UART.
    pub received: u64,
    /// Bytes refused by the line discipline (a line longer than its buffer).
    pub dropped: u64,
    /// Times the buffer filled and the receive interrupt was turned off.
    pub stalls: u64,
    /// Bytes discarded by a signal character's flush or `TCSETSF`.
    pub flushed: u64,
    /// Signal characters acted on.
    pub signals: u64,
}

pub fn counters() -> Counters {
    Counters {
        received: RECEIVED.load(Ordering::Relaxed),
        dropped: DROPPED.load(Ordering::Relaxed),
        stalls: STALLS.load(Ordering::Relaxed),
        flushed: FLUSHED.load(Ordering::Relaxed),
        signals: SIGNALS.load(Ordering::Relaxed),
    }
}

/// The line discipline's echo goes to the console.
struct Echo;

impl Sink for Echo {
    fn echo(&mut self, bytes: &[u8]) {
        crate::base::console::echo(bytes);
    }
}

/// Make room for the input and enable the UART's receive interrupt (its line, IRQ 4, is
/// routed to [`on_interrupt`] by `irq::init`). Runs in `drivers::init` (interrupts off).
pub fn init() {
    hal::cpu::without_interrupts(|| TTY.lock().raw.reserve(RING_SIZE));
    hal::serial::enable_rx_interrupt();
}

/// Signals found in one interrupt's bytes, sent once the lock is released (more than this
/// many in one interrupt are merged: a pending signal is not queued twice anyway).
const MAX_SIGNALS: usize = 8;

/// IRQ 4: move what the UART has into RAW — until RAW is full, then stop the receiver's
/// interrupt (flow control) — act on signal characters, wake the readers.
pub fn on_interrupt() {
    let mut got = false;
    let mut sigs = [0u8; MAX_SIGNALS];
    let mut nsigs = 0;
    {
        let mut guard = TTY.lock();
        let tty = &mut *guard;
        loop {
            if tty.raw.len() >= RING_SIZE {
                // Leave the rest in the UART: its full FIFO holds the sender back.
                hal::serial::disable_rx_interrupt();
                if !tty.throttled {
                    tty.throttled = true;
                    STALLS.fetch_add(1, Ordering::Relaxed);
                }
                break;
            }
            let Some(b) = hal::serial::receive() else { break };
            RECEIVED.fetch_add(1, Ordering::Relaxed);
            got = true;
            if let Some(s) = tty.ld.signal_char(b, &mut Echo) {
                if s.flush {
                    discard_raw(tty, s.discarded);
                }
                SIGNALS.fetch_add(1, Ordering::Relaxed);
                if nsigs < MAX_SIGNALS && !sigs[..nsigs].contains(&s.sig) {
                    sigs[nsigs] = s.sig;
                    nsigs += 1;
                }
                continue;
            }
            tty.raw.push_back(b);
        }
    }
    for &sig in &sigs[..nsigs] {
        signal_foreground(sig);
    }
    if got {
        READERS.wake_all();
    }
}

/// (bytes received since boot, bytes dropped).
pub fn stats() -> (u64, u64) {
    (RECEIVED.load(Ordering::Relaxed), DROPPED.load(Ordering::Relaxed))
}

/// Bytes waiting: received and not yet processed, plus completed input not yet read.
pub fn pending() -> usize {
    hal::cpu::without_interrupts(|| {
        let tty = TTY.lock();
        tty.raw.len() + tty.ld.available()
    })
}

/// Drop whatever input is waiting (for tests, and `TCSETSF`).
pub fn discard() {
    hal::cpu::without_interrupts(|| flush(&mut TTY.lock()));
    resume_receiver();
}

fn flush(tty: &mut Tty) {
    let discarded = tty.ld.flush();
    discard_raw(tty, discarded);
}

/// The line discipline has discarded `discarded` bytes of its own (a flush, or a signal
/// character's): the raw bytes behind them go too, and all are counted (`flushed`).
fn discard_raw(tty: &mut Tty, discarded: usize) {
    FLUSHED.fetch_add((tty.raw.len() + discarded) as u64, Ordering::Relaxed);
    tty.raw.clear();
}

/// After RAW was drained to half: turn the receive interrupt back on (the UART raises IRQ 4
/// at once if its FIFO holds bytes).
fn unthrottle(tty: &mut Tty) {
    if tty.throttled && tty.raw.len() <= RING_SIZE / 2 {
        tty.throttled = false;
        hal::serial::enable_rx_interrupt();
    }
}

fn resume_receiver() {
    hal::cpu::without_interrupts(|| unthrottle(&mut TTY.lock()));
}

/// Read console input into `buf` (non-empty), as the line discipline hands it over: in
/// canonical mode at most one line, once complete (0 at `^D`: end of input); in raw mode
/// per `VMIN`. Sleeps until then; `ERESTARTSYS` if the caller's process is killed or a
/// signal comes meanwhile (`EINTR`, or the read restarted with `SA_RESTART`).
///
/// The caller (`syscall/io.rs`) has asked job control whether it may read, at job-control
/// epoch `epoch` ([`job_epoch`]). If the console's foreground group changes while it waits,
/// this returns `Ok(None)` without taking input, and the caller asks again: a reader stopped
/// by ^Z and continued with `bg` must not go on reading from the background (Linux restarts
/// such a read, and its check sends SIGTTIN).
pub fn read(buf: &mut [u8], epoch: u64) -> Result<Option<usize>, i32> {
    let mut sigs = [0u8; MAX_SIGNALS];
    let mut nsigs = 0;
    let got = READERS.wait_for(|| {
        if JOB_EPOCH.load(Ordering::Relaxed) != epoch {
            return Some(None);
        }
        let mut guard = TTY.lock();
        let tty = &mut *guard;
        cook(tty, buf.len(), &mut sigs, &mut nsigs);
        tty.ld.read(buf).map(Some)
    });
    after_cooking(&sigs[..nsigs]);
    got.ok_or(ERESTARTSYS) // killed, or a signal: EINTR or a restart (SA_RESTART)
}

/// Feed the line discipline from RAW until it has what a reader of `want` bytes needs (the
/// edits and echo happen now); signal characters found are kept in `sigs` for the caller
/// to send once the lock is released.
fn cook(tty: &mut Tty, want: usize, sigs: &mut [u8; MAX_SIGNALS], nsigs: &mut usize) {
    if tty.ld.wants_input(want) && !tty.raw.is_empty() {
        tty.ld.set_start_column(hal::serial::column());
    }
    while tty.ld.wants_input(want) {
        let Some(b) = tty.raw.pop_front() else { break };
        // A signal character reaches here only if ISIG was turned on after it arrived.
        if let Some(s) = tty.ld.receive(b, &mut Echo) {
            if s.flush {
                discard_raw(tty, s.discarded);
            }
            if *nsigs < MAX_SIGNALS {
                sigs[*nsigs] = s.sig;
                *nsigs += 1;
            }
        }
    }
    DROPPED.store(tty.ld.dropped(), Ordering::Relaxed);
    unthrottle(tty);
}

/// With the lock released: send the signals cooking found, report a refused line once.
fn after_cooking(sigs: &[u8]) {
    for &sig in sigs {
        signal_foreground(sig);
    }
    if DROPPED.load(Ordering::Relaxed) > 0 && !REPORTED.swap(true, Ordering::Relaxed) {
        log::warn!(
            "tty: console input refused: a line longer than {} bytes (BEL echoed); counted in kstat tty:0:console",
            LINE_SIZE - 1
        );
    }
}

/// `poll` on the console: POLLIN once a read would not wait — a completed line (or end of
/// input) in canonical mode, `VMIN` bytes (at least one) in raw mode, as Linux's n_tty
/// answers — and POLLOUT always (output is synchronous). Bytes typed ahead are cooked now,
/// as a read would cook them, so a line already in RAW counts. Adds the readers' queue to
/// `set`: every byte that arrives, every change of settings wakes it. Call with
/// interrupts off (the caller's critical section spans the check and the sleep).
pub fn poll_ready(set: &mut WaitSet<'_>) -> i16 {
    use tally_uapi::poll::{POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM};
    let mut sigs = [0u8; MAX_SIGNALS];
    let mut nsigs = 0;
    let readable = {
        let mut guard = TTY.lock();
        let tty = &mut *guard;
        let want = tty.ld.poll_threshold();
        cook(tty, want, &mut sigs, &mut nsigs);
        tty.ld.readable()
    };
    after_cooking(&sigs[..nsigs]);
    set.add(&READERS);
    let input = if readable { POLLIN | POLLRDNORM } else { 0 };
    input | POLLOUT | POLLWRNORM
}

/// The console's terminal settings (`TCGETS`).
pub fn termios() -> Termios {
    hal::cpu::without_interrupts(|| TTY.lock().ld.termios())
}

/// Change them (`TCSETS`; `flush`: `TCSETSF`, discarding input not yet read). A reader
/// waiting may now be satisfied (a new `VMIN`, canonical mode off): it is woken.
pub fn set_termios(t: Termios, flush_input: bool) {
    hal::cpu::without_interrupts(|| {
        let mut tty = TTY.lock();
        if flush_input {
            flush(&mut tty);
        }
        tty.ld.set_termios(t);
        unthrottle(&mut tty);
    });
    READERS.wake_all();
}

/// The window size (`TIOCGWINSZ`): 24 rows of 80 columns until `TIOCSWINSZ` says otherwise.
pub fn winsize() -> Winsize {
    hal::cpu::without_interrupts(|| TTY.lock().winsize)
}

pub fn set_winsize(w: Winsize) {
    hal::cpu::without_interrupts(|| TTY.lock().winsize = w);
}
