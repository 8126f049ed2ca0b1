//! `sleeper [MS]` — sleeps MS milliseconds (default 1000) with `nanosleep`, then reports
//! how long it really slept. Its microstates should be nearly all INTERRUPTIBLE_SLEEP,
//! with a sliver of ONCPU_USR/ONCPU_SYS and of ONACTIVEQUEUE after the wake-up.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::process::parse_i64;
use tally_rt::{eprintln, println, sys};

tally_rt::entry!(main);

fn main() -> i32 {
    let ms = match tally_rt::arg(1).map(parse_i64) {
        None => 1000,
        Some(Some(ms)) if ms >= 0 => ms as u64,
        Some(_) => {
            eprintln!("usage: sleeper [MS]");
            return 2;
        }
    };
    let start = sys::monotonic_ns().ok();
    if let Err(e) = sys::sleep_ms(ms) {
        eprintln!("sleeper: nanosleep: {e}");
        return 1;
    }
    match (start, sys::monotonic_ns().ok()) {
        (Some(a), Some(b)) => println!("sleeper: asked {ms} ms, slept {} us", b.saturating_sub(a) / 1000),
        _ => println!("sleeper: asked {ms} ms (no clock to measure it)"),
    }
    0
}
