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
//!   no room for.
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
        got = true;
        RECEIVED.fetch_add(1, Ordering::Relaxed);
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
/// while it waits.
pub fn read(buf: &mut [u8]) -> Result<usize, i32> {
    loop {
        READERS.wait_until(SleepKind::Interruptible, None, || !RING.lock().is_empty() || sched::kill_pending());
        if sched::kill_pending() {
            return Err(EINTR);
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
