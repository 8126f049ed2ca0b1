//! The console: `print!`/`println!` and the `log` crate's macros, both on COM1.
//!
//! Log lines carry the monotonic time since boot, like Linux's `dmesg`:
//! `[    0.123456] INFO  message`. The level is set by `loglevel=` on the command line
//! (off, error, warn, info, debug, trace; anything else is `info`, with a warning).

use core::fmt::{self, Write};
use spin::Mutex;

struct Serial;

impl Write for Serial {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        hal::serial::write_str(s);
        Ok(())
    }
}

/// Held for a whole `print!` so that lines from different contexts do not interleave.
static CONSOLE: Mutex<Serial> = Mutex::new(Serial);

#[doc(hidden)]
pub fn _print(args: fmt::Arguments) {
    hal::cpu::without_interrupts(|| {
        let _ = CONSOLE.lock().write_fmt(args);
    });
}

/// Write the line discipline's echo: bytes as they are (`"\b \b"`, whole UTF-8 characters),
/// `\n` as CR LF; under the console's lock, so it never lands inside another `print!`.
pub fn echo(bytes: &[u8]) {
    hal::cpu::without_interrupts(|| {
        let _guard = CONSOLE.lock();
        hal::serial::write_bytes(bytes);
    });
}

/// Print from a fault or panic report: never waits for a lock the dying context holds.
pub fn emergency_print(args: fmt::Arguments) {
    struct Emergency;
    impl Write for Emergency {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            hal::serial::write_str_emergency(s);
            Ok(())
        }
    }
    let _ = Emergency.write_fmt(args);
}

#[allow(unused_macros)]
macro_rules! print {
    ($($arg:tt)*) => ($crate::base::console::_print(format_args!($($arg)*)));
}

macro_rules! println {
    () => (print!("\n"));
    ($($arg:tt)*) => ($crate::base::console::_print(format_args!("{}\n", format_args!($($arg)*))));
}

struct Logger;

impl log::Log for Logger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            match super::time::monotonic_ns() {
                Some(ns) => println!(
                    "[{:5}.{:06}] {:<5} {}",
                    ns / 1_000_000_000,
                    ns % 1_000_000_000 / 1000,
                    record.level(),
                    record.args()
                ),
                // Before the TSC is calibrated there is no time to show.
                None => println!("[     -.------] {:<5} {}", record.level(), record.args()),
            }
        }
    }

    fn flush(&self) {}
}

static LOGGER: Logger = Logger;

pub fn init() {
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(log::LevelFilter::Info);
}

/// The names `loglevel=` takes (`base::cmdline` checks a value against them), in the order
/// of [`FILTERS`].
pub const LEVEL_NAMES: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];
const FILTERS: [log::LevelFilter; 6] = [
    log::LevelFilter::Off,
    log::LevelFilter::Error,
    log::LevelFilter::Warn,
    log::LevelFilter::Info,
    log::LevelFilter::Debug,
    log::LevelFilter::Trace,
];

/// Show log lines up to level `name` (one of [`LEVEL_NAMES`]); any other name means `info`.
pub fn set_level(name: &str) {
    let level = LEVEL_NAMES.iter().position(|n| *n == name).map_or(log::LevelFilter::Info, |i| FILTERS[i]);
    log::set_max_level(level);
}
