//! COM1, the console: a 16550 UART at I/O port 0x3F8, driven by the `uart_16550` crate.
//!
//! QEMU connects COM1 to the terminal (`-serial stdio`), so this is where every line the
//! kernel prints goes, and where tests read the kernel's output.

use core::fmt::Write;
use spin::Mutex;
use uart_16550::backend::PioBackend;
use uart_16550::{Config, Uart16550Tty};

const COM1: u16 = 0x3f8;

static PORT: Mutex<Option<Uart16550Tty<PioBackend>>> = Mutex::new(None);

/// Program the UART (8-N-1, FIFO on). Until this runs, output is dropped.
pub fn init() {
    // SAFETY: 0x3F8..0x3FF is COM1 on every PC and QEMU `pc` machine, and this module is the
    // only code that touches those ports.
    let tty = unsafe { Uart16550Tty::new_port(COM1, Config::default()) };
    *PORT.lock() = tty.ok();
}

/// Write a string with interrupts disabled, so an interrupt handler that prints cannot
/// deadlock on the port lock held by the code it interrupted.
pub fn write_str(s: &str) {
    super::cpu::without_interrupts(|| {
        if let Some(port) = PORT.lock().as_mut() {
            let _ = port.write_str(s);
        }
    });
}

/// Write from a panic or fault report, even if the interrupted code holds the port lock
/// (it will never run again, so taking the port from it is sound).
pub fn write_str_emergency(s: &str) {
    if let Some(mut guard) = PORT.try_lock() {
        if let Some(port) = guard.as_mut() {
            let _ = port.write_str(s);
        }
        return;
    }
    // SAFETY: we are on the way to stopping the machine; the lock holder was interrupted
    // and never resumes, so no one else uses the port from here on.
    unsafe { PORT.force_unlock() };
    write_str(s);
}
