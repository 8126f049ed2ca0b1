//! # Console output: `print!` and friends
//!
//! File descriptor 1 is standard output and 2 standard error; on Tally both reach the
//! serial console. Each `print!` formats into a 512-byte buffer on the stack and hands the
//! kernel whole buffers, so one `println!` is normally one `write` system call: several
//! processes printing at once interleave whole lines, not fragments, and a program costs
//! the kernel a system call per line rather than per formatted piece.
//!
//! Errors are ignored (as there is nowhere to report them): a kernel without `write`
//! simply shows nothing.
#![forbid(unsafe_code)]

use core::fmt::{self, Write};

/// Standard output.
pub const STDOUT: usize = 1;
/// Standard error.
pub const STDERR: usize = 2;

const BUF: usize = 512;

/// A `fmt::Write` sink that batches output for one file descriptor.
pub struct FdWriter {
    fd: usize,
    buf: [u8; BUF],
    len: usize,
}

impl FdWriter {
    pub const fn new(fd: usize) -> Self {
        FdWriter { fd, buf: [0; BUF], len: 0 }
    }

    /// Writes out what is buffered.
    pub fn flush(&mut self) {
        let _ = crate::sys::write_all(self.fd, &self.buf[..self.len]);
        self.len = 0;
    }
}

impl Write for FdWriter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut bytes = s.as_bytes();
        while !bytes.is_empty() {
            if self.len == BUF {
                self.flush();
            }
            let n = bytes.len().min(BUF - self.len);
            self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
        }
        Ok(())
    }
}

impl Drop for FdWriter {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Formats `args` to `fd` (what the macros expand to).
pub fn print_to(fd: usize, args: fmt::Arguments<'_>) {
    let mut w = FdWriter::new(fd);
    let _ = w.write_fmt(args);
}

/// Prints to standard output.
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::io::print_to($crate::io::STDOUT, format_args!($($arg)*)) };
}

/// Prints a line to standard output.
#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => { $crate::io::print_to($crate::io::STDOUT, format_args!("{}\n", format_args!($($arg)*))) };
}

/// Prints to standard error.
#[macro_export]
macro_rules! eprint {
    ($($arg:tt)*) => { $crate::io::print_to($crate::io::STDERR, format_args!($($arg)*)) };
}

/// Prints a line to standard error.
#[macro_export]
macro_rules! eprintln {
    () => { $crate::eprint!("\n") };
    ($($arg:tt)*) => { $crate::io::print_to($crate::io::STDERR, format_args!("{}\n", format_args!($($arg)*))) };
}

/// Writes `text` to standard output as it is, in as few `write`s as the kernel allows
/// (reports built in a `String` go out whole, not in 512-byte pieces).
pub fn write_out(text: &str) {
    let _ = crate::sys::write_all(STDOUT, text.as_bytes());
}
