//! # The panic handler
//!
//! A Rust panic in a user program (an `unwrap` on `None`, an index out of bounds, an
//! allocation that failed) prints `NAME: panic: MESSAGE at FILE:LINE:COL` on standard error
//! and ends the process with `exit_group(101)` — the status a Rust program on Linux ends
//! with after a panic. A panic while printing the panic exits at once.
#![forbid(unsafe_code)]

use core::sync::atomic::{AtomicBool, Ordering};

static PANICKING: AtomicBool = AtomicBool::new(false);

/// Exit status after a panic.
pub const PANIC_EXIT: i32 = 101;

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    if !PANICKING.swap(true, Ordering::Relaxed) {
        let name = crate::program_name();
        match info.location() {
            Some(l) => {
                crate::eprintln!("{name}: panic: {} at {}:{}:{}", info.message(), l.file(), l.line(), l.column())
            }
            None => crate::eprintln!("{name}: panic: {}", info.message()),
        }
    }
    crate::sys::exit_group(PANIC_EXIT)
}
