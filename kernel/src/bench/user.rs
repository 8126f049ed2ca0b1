//! User-mode benchmarks: `/bin/ubench` (userland/src/bin/ubench.rs) run as processes.
//!
//! * `null_syscall` — `getpid()` from ring 3; `msa_self` — `msa(13, MSA_SELF, timers)`.
//! * `user_ctx_yield`, P = 2…96 processes — a user-to-user context switch after LMbench's
//!   `lat_ctx`, except that the P processes pass the CPU with `sched_yield()` in a ring
//!   (Tally has no pipes yet; see the program's doc comment).
//!
//! The processes time themselves with `rdtsc` and print `BENCHRAW {…}` lines; `xtask`
//! aggregates them per (name, param). This side only spawns and reaps them. For
//! `user_ctx_yield` it gives all P the same start line, a TSC value far enough ahead that
//! all are spawned and yielding in the ring before any starts timing; it says so if the
//! spawning overran it (that row then also holds some spawn time).

use alloc::format;
use alloc::vec::Vec;

use super::Harness;
use crate::{arch, task};

const PATH: &str = "/bin/ubench";
const SYSCALLS: u64 = 100_000;
const YIELDS: u64 = 500;
const PROCS: [u64; 7] = [2, 4, 8, 16, 32, 64, 96];

/// Spawn `ubench ARGS...`, returning its pid (reported, not fatal, if it fails).
fn spawn(args: &[&str]) -> Option<i32> {
    let mut argv: Vec<&[u8]> = alloc::vec![b"ubench".as_slice()];
    argv.extend(args.iter().map(|a| a.as_bytes()));
    match task::spawn_program(PATH, &argv) {
        Ok(pid) => Some(pid),
        Err(e) => {
            println!("bench: user: cannot spawn {PATH} {}: errno {e}", args.join(" "));
            None
        }
    }
}

fn reap(pids: &[i32]) {
    for pid in pids {
        if let Ok(r) = task::wait(Some(*pid)) {
            let status = r.status.raw();
            if !(tally_task::wifexited(status) && tally_task::wexitstatus(status) == 0) {
                println!("bench: user: ubench pid {pid} ended with raw status {status:#x}");
            }
        }
    }
}

pub fn user(h: &mut Harness) {
    let n = format!("{SYSCALLS}");
    for mode in ["getpid", "msa"] {
        if let Some(pid) = spawn(&[mode, &n]) {
            reap(&[pid]);
            h.ran += 1;
        }
    }

    let clock = crate::time::clock();
    let yields = format!("{YIELDS}");
    // How long one spawn takes (plus the new process's first steps): measured once, with
    // `ubench getpid 0`, which prints nothing.
    let t = arch::tsc::read();
    if let Some(pid) = spawn(&["getpid", "0"]) {
        reap(&[pid]);
    }
    let per_spawn = arch::tsc::read() - t;
    for p in PROCS {
        // 20 ms plus 4× the measured spawn cost (at least 1 ms) per process: the processes
        // already spawned take CPU from the spawner while they wait at the start line.
        let margin = clock.ns_to_ticks(20_000_000) + p * (4 * per_spawn).max(clock.ns_to_ticks(1_000_000));
        let start = arch::tsc::read() + margin;
        let (start_s, p_s) = (format!("{start}"), format!("{p}"));
        let mut pids = Vec::new();
        for _ in 0..p {
            match spawn(&["yield", &yields, &start_s, &p_s]) {
                Some(pid) => pids.push(pid),
                None => break,
            }
        }
        let done = arch::tsc::read();
        if done >= start {
            println!(
                "bench: user_ctx_yield P={p}: spawning overran the start line by {} us",
                clock.ticks_to_ns(done - start) / 1000
            );
        }
        reap(&pids);
        h.ran += 1;
    }
}
