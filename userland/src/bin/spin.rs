//! `spin [-s] [MS] [NICE]` — burns CPU in user mode for MS milliseconds (default 1000).
//!
//! The clock is checked only every 100 000 iterations, so nearly all the time is ONCPU_USR.
//! With `-s` the loop is the opposite: one `getpid` system call per iteration, so the time
//! goes to ONCPU_SYS — the two halves of the user/system split `msa spin` shows.
//!
//! With NICE (-20..19) it first calls `setpriority(PRIO_PROCESS, 0, NICE)`, so several
//! spinners of different nice values show the O(1) scheduler's timeslices in their
//! microstates: ONCPU_USR for the time they ran, ONACTIVEQUEUE/ONEXPIREDQUEUE for the time
//! they waited. The time is read with `clock_gettime(CLOCK_MONOTONIC)`; without that call
//! the program says so and counts a fixed number of loop iterations instead.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::process::parse_i64;
use tally_rt::uapi::syscall::PRIO_PROCESS;
use tally_rt::{eprintln, println, sys};

tally_rt::entry!(main);

/// Loop iterations per "millisecond" when there is no clock (a rough guess for QEMU TCG).
const ITERATIONS_PER_MS: u64 = 20_000;

/// Inner iterations between two clock checks.
const BATCH: u64 = 100_000;

fn main() -> i32 {
    let syscalls = tally_rt::arg(1) == Some("-s");
    let first = if syscalls { 2 } else { 1 };
    let ms = match tally_rt::arg(first).map(parse_i64) {
        None => 1000,
        Some(Some(ms)) if ms >= 0 => ms as u64,
        Some(_) => return usage(),
    };
    if let Some(n) = tally_rt::arg(first + 1) {
        let Some(nice) = parse_i64(n).filter(|n| (-20..=19).contains(n)) else { return usage() };
        if let Err(e) = sys::setpriority(PRIO_PROCESS, 0, nice as i32) {
            eprintln!("spin: setpriority({nice}): {e}");
            return 1;
        }
    }
    let mut loops: u64 = 0;
    let mut x: u64 = 1;
    match sys::monotonic_ns() {
        Ok(start) => {
            let end = start.saturating_add(ms.saturating_mul(1_000_000));
            loop {
                if syscalls {
                    for _ in 0..100 {
                        x = x.wrapping_add(sys::getpid().unwrap_or(0) as u64);
                    }
                } else {
                    for _ in 0..BATCH {
                        x = burn(x);
                    }
                }
                loops += 1;
                match sys::monotonic_ns() {
                    Ok(now) if now < end => {}
                    _ => break,
                }
            }
        }
        Err(e) => {
            eprintln!("spin: clock_gettime: {e}; counting iterations instead");
            for _ in 0..ms.saturating_mul(ITERATIONS_PER_MS) / BATCH {
                for _ in 0..BATCH {
                    x = burn(x);
                }
                loops += 1;
            }
        }
    }
    let unit = if syscalls { "x 100 getpid calls" } else { "x 100k iterations" };
    println!("spin: done after {ms} ms, {loops} {unit} (checksum {:x})", x & 0xffff);
    0
}

/// One step of work the optimiser cannot remove (the result is printed).
#[inline(never)]
fn burn(x: u64) -> u64 {
    x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407).rotate_left(7)
}

fn usage() -> i32 {
    eprintln!("usage: spin [-s] [MS] [NICE]   (MS >= 0, NICE in -20..19; -s: a getpid loop)");
    2
}
