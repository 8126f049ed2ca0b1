//! `spin [MS] [NICE]` — burns CPU in user mode for MS milliseconds (default 1000).
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

fn main() -> i32 {
    let ms = match tally_rt::arg(1).map(parse_i64) {
        None => 1000,
        Some(Some(ms)) if ms >= 0 => ms as u64,
        Some(_) => return usage(),
    };
    if let Some(n) = tally_rt::arg(2) {
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
                for _ in 0..1000 {
                    x = burn(x);
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
            for _ in 0..ms.saturating_mul(ITERATIONS_PER_MS) / 1000 {
                for _ in 0..1000 {
                    x = burn(x);
                }
                loops += 1;
            }
        }
    }
    println!("spin: done after {ms} ms, {loops} thousand iterations (checksum {:x})", x & 0xffff);
    0
}

/// One step of work the optimiser cannot remove (the result is printed).
#[inline(never)]
fn burn(x: u64) -> u64 {
    x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407).rotate_left(7)
}

fn usage() -> i32 {
    eprintln!("usage: spin [MS] [NICE]   (MS >= 0, NICE in -20..19)");
    2
}
