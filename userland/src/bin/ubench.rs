//! `ubench getpid N` | `ubench msa N` | `ubench yield N START_TSC P` — user-mode
//! microbenchmarks, started by the kernel's `bench=user` case (`cargo xtask bench`).
//!
//! Each mode times its loop with `rdtsc` (allowed in ring 3) and prints one line
//!
//! ```text
//! BENCHRAW {"name":"null_syscall","param":0,"ops":N,"t0":<tsc>,"t1":<tsc>}
//! ```
//!
//! which `xtask` aggregates per (name, param) — (max t1 − min t0) / (sum of ops) — and
//! converts to ns with the TSC frequency the kernel printed.
//!
//! * `getpid N` → `null_syscall`: N `getpid()` calls, the cheapest round trip to the kernel.
//! * `msa N` → `msa_self`: N `msa(13, MSA_SELF, timers)` calls.
//! * `yield N START_TSC P` → `user_ctx_yield`, param P: a user-to-user context switch with P
//!   processes, after LMbench's `lat_ctx`. **Deviation from lat_ctx:** Tally has no pipes
//!   or other blocking IPC yet, so instead of passing a token through a ring of pipes the P
//!   processes pass the CPU with `sched_yield()`: under the O(1) scheduler a yielding
//!   process goes to the expired array, so each yield switches to the next runnable
//!   process (another address space: a CR3 switch). That is a yield, not a wakeup — no
//!   sleep/wake path is measured. Every process first yields until `rdtsc >= START_TSC`
//!   (a common start line the kernel sets far enough ahead to spawn all P), so all P are in
//!   the ring before anyone times; then it times N yields.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::process::parse_i64;
use tally_rt::uapi::msa::{ClkT, MSA_SELF, NR_MICROSTATES};
use tally_rt::{eprintln, println, sys};

tally_rt::entry!(main);

#[allow(unsafe_code)]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC only reads the time-stamp counter (the kernel leaves CR4.TSD clear).
    unsafe { core::arch::x86_64::_rdtsc() }
}

fn num(i: usize) -> Option<u64> {
    tally_rt::arg(i).and_then(parse_i64).filter(|v| *v >= 0).map(|v| v as u64)
}

/// Print the BENCHRAW line; with no operations nothing (the kernel times `ubench getpid 0`
/// to learn the cost of a spawn).
fn report(name: &str, param: u64, ops: u64, t0: u64, t1: u64) {
    if ops == 0 {
        return;
    }
    println!("BENCHRAW {{\"name\":\"{name}\",\"param\":{param},\"ops\":{ops},\"t0\":{t0},\"t1\":{t1}}}");
}

fn main() -> i32 {
    let (Some(mode), Some(n)) = (tally_rt::arg(1), num(2)) else { return usage() };
    match mode {
        "getpid" => {
            let _ = sys::getpid(); // warm up
            let t0 = rdtsc();
            for _ in 0..n {
                let _ = core::hint::black_box(sys::getpid());
            }
            let t1 = rdtsc();
            report("null_syscall", 0, n, t0, t1);
        }
        "msa" => {
            let mut timers = [0 as ClkT; NR_MICROSTATES];
            if let Err(e) = sys::msa(MSA_SELF, &mut timers) {
                eprintln!("ubench: msa: {e}");
                return 1;
            }
            let t0 = rdtsc();
            for _ in 0..n {
                let _ = core::hint::black_box(sys::msa(MSA_SELF, core::hint::black_box(&mut timers)));
            }
            let t1 = rdtsc();
            report("msa_self", 0, n, t0, t1);
        }
        "yield" => {
            let (Some(start), Some(p)) = (num(3), num(4)) else { return usage() };
            while rdtsc() < start {
                let _ = sys::sched_yield();
            }
            let t0 = rdtsc();
            for _ in 0..n {
                let _ = sys::sched_yield();
            }
            let t1 = rdtsc();
            report("user_ctx_yield", p, n, t0, t1);
        }
        _ => return usage(),
    }
    0
}

fn usage() -> i32 {
    eprintln!("usage: ubench getpid N | ubench msa N | ubench yield N START_TSC P");
    2
}
