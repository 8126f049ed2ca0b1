//! # The console's input side: from COM1's receiver to `read(0, ...)`
//!
//! Output to the console is synchronous (`base::console` writes straight to the UART).
//! Input cannot be: bytes arrive whenever someone types, and a reader must sleep until
//! they do. So input goes through a buffer, filled by an interrupt and drained by `read`:
//!
//! ```text
//!   terminal ─► UART receive FIFO ─► IRQ 4: rx_interrupt ─► RING (4 KiB) ─► read(0, buf, n)
//!                                     drains the FIFO,        ▲              sleeps INTERRUPTIBLE
//!                                     \r → \n, wakes readers  │              on READERS while
//!                                                             │              RING is empty
//! ```
//!
//! This is a (very) small tty line discipline, Linux's `n_tty` in raw-ish mode:
//!
//! * **ICRNL**: a carriage return (what a terminal's Enter key sends) is stored as `\n`;
//! * **no echo**: what is typed is not printed back (a program that wants echo writes it);
//! * **no line editing**: `read` returns as soon as at least one byte is there (up to the
//!   caller's count), as with `ICANON` off and `VMIN = 1`;
//! * **end of input is `^D`** (EOT, 0x04), as on a terminal: a read stops before it; a read
//!   that finds it first consumes it and returns 0, which programs take as end of file.
//!   QEMU gives the guest no signal when its standard input closes (the serial port just
//!   stops receiving), so end of file can only be in-band;
//! * a full buffer drops further bytes (counted in [`stats`]), as a tty drops input it has
//!   no room for;
//! * **ISIG** (job control): ^C, ^\ and ^Z are not stored but handed to the job-control hook
//!   (SIGINT, SIGQUIT, SIGTSTP to the console's foreground process group), and every read
//!   first asks the hook whether its caller may read the console (a background job gets
//!   SIGTTIN), at the start and after each wake-up. The hooks are `proc`'s
//!   (`proc/job_control.rs`), a floor above: `main.rs` installs them ([`set_job_control`]).
//!   Before that, and without a controlling session, the three bytes are dropped and every
//!   read is allowed. (Until the line discipline replaces this minimal one.)
//!
//! The self-test `user_read` feeds input through the UART's loopback mode
//! (`hal::serial::set_loopback`), so the whole path — FIFO, IRQ 4, the buffer, the
//! sleeping reader — runs under `cargo xtask test` without a terminal.

use alloc::collections::VecDeque;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Mutex;
use tally_runqueue::SleepKind;
use tally_uapi::errno::EINTR;

use crate::base::config::CONSOLE_INPUT_SIZE as RING_SIZE;
use crate::sched;
use crate::sync::WaitQueue;

/// The IRQ line of COM1.
pub const IRQ_LINE: u8 = 4;
/// `^D`.
const EOT: u8 = 0x04;

/// What the console asks job control (`proc/job_control.rs`), installed by `main.rs`.
#[derive(Clone, Copy)]
pub struct JobControlHooks {
    /// An ISIG character was typed: signal the foreground group (`signal_foreground`).
    pub signal_foreground: fn(u8),
    /// May the caller read the console now (`console_read_check`)?
    pub read_check: fn() -> Result<(), i32>,
}

static JOB_CONTROL: Mutex<Option<JobControlHooks>> = Mutex::new(None);

/// Install job control's hooks (see the module documentation).
pub fn set_job_control(hooks: JobControlHooks) {
    hal::cpu::without_interrupts(|| *JOB_CONTROL.lock() = Some(hooks));
}

fn job_control() -> Option<JobControlHooks> {
    hal::cpu::without_interrupts(|| *JOB_CONTROL.lock())
}

/// The ISIG characters (`VINTR`, `VQUIT`, `VSUSP`) and their signals.
fn isig(b: u8) -> Option<u8> {
    use tally_uapi::signal::{SIGINT, SIGQUIT, SIGTSTP};
    match b {
        0x03 => Some(SIGINT),
        0x1c => Some(SIGQUIT),
        0x1a => Some(SIGTSTP),
        _ => None,
    }
}

static RING: Mutex<VecDeque<u8>> = Mutex::new(VecDeque::new());
static READERS: WaitQueue = WaitQueue::new();
static RECEIVED: AtomicU64 = AtomicU64::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Make room for the input and enable the UART's receive interrupt (its line, IRQ 4, is
/// routed to [`on_interrupt`] by `irq::init`). Runs in `drivers::init` (interrupts off).
pub fn init() {
    hal::cpu::without_interrupts(|| RING.lock().reserve(RING_SIZE));
    hal::serial::enable_rx_interrupt();
}

/// IRQ 4: move everything the UART has into the buffer, wake the readers.
pub fn on_interrupt() {
    let mut got = false;
    while let Some(b) = hal::serial::receive() {
        RECEIVED.fetch_add(1, Ordering::Relaxed);
        if let Some(sig) = isig(b) {
            // Acted upon when received, not stored (n_tty's ISIG); the ring's lock is not
            // held, as the signal may wake and stop tasks.
            if let Some(h) = job_control() {
                (h.signal_foreground)(sig);
            }
            continue;
        }
        got = true;
        let mut ring = RING.lock();
        if ring.len() >= RING_SIZE {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        } else {
            ring.push_back(if b == b'\r' { b'\n' } else { b });
        }
    }
    if got {
        READERS.wake_all();
    }
}

/// (bytes received since boot, bytes dropped because the buffer was full).
pub fn stats() -> (u64, u64) {
    (RECEIVED.load(Ordering::Relaxed), DROPPED.load(Ordering::Relaxed))
}

/// Bytes waiting in the buffer.
pub fn pending() -> usize {
    hal::cpu::without_interrupts(|| RING.lock().len())
}

/// Drop whatever input is waiting (for tests).
pub fn discard() {
    hal::cpu::without_interrupts(|| RING.lock().clear());
}

/// Read console input into `buf` (non-empty): sleeps until there is some; returns the
/// bytes copied (0 at `^D`: end of input). `EINTR` if the caller's process is killed
/// while it waits; job control's refusal (`EIO`) for a background reader that cannot be
/// stopped.
pub fn read(buf: &mut [u8]) -> Result<usize, i32> {
    loop {
        if let Some(h) = job_control() {
            (h.read_check)()?;
        }
        READERS.wait_until(SleepKind::Interruptible, None, || !RING.lock().is_empty() || sched::kill_pending());
        if sched::kill_pending() {
            return Err(EINTR);
        }
        if let Some(h) = job_control() {
            // Sent to the background while it slept (or woken by input meant for the
            // foreground job): asked again before it takes a byte.
            (h.read_check)()?;
        }
        let n = hal::cpu::without_interrupts(|| {
            let mut ring = RING.lock();
            if ring.front() == Some(&EOT) {
                ring.pop_front();
                return Some(0);
            }
            let mut n = 0;
            while n < buf.len() {
                match ring.front() {
                    None | Some(&EOT) => break,
                    Some(&b) => {
                        buf[n] = b;
                        ring.pop_front();
                        n += 1;
                    }
                }
            }
            // Another reader may have emptied the buffer between the wake-up and here.
            (n > 0).then_some(n)
        });
        if let Some(n) = n {
            return Ok(n);
        }
    }
}
