//! User-mode benchmarks: `/bin/ubench` (userland/src/bin/ubench.rs) run as processes.
//!
//! * `null_syscall` — `getpid()` from ring 3; `msa_self` — `msa(13, MSA_SELF, timers)`;
//!   `msa_thread` — the runtime's `msa(MSA_THREAD)`, read from the vvar page in ring 3;
//!   `msa_thread_reader` — the same through a program's own `tally_rt::msa::ThreadClocks`;
//!   `taskstats_get` — a taskstats `GET PID` round trip over the bus.
//! * `lat_ctx`, P = 2…96 processes — a user-to-user context switch as LMbench's `lat_ctx`
//!   measures it: a token passed round a ring of P processes through pipes, each hop a
//!   blocking `read` woken by a `write` (the ring is built by `ubench ctx`, see its doc).
//!
//! The processes time themselves with `rdtsc` and print `BENCHRAW {…}` lines; `xtask`
//! aggregates them per (name, param). This side only spawns and reaps them.

use alloc::format;
use alloc::vec::Vec;

use super::Harness;
use crate::proc;

const PATH: &str = "/bin/ubench";
const SYSCALLS: u64 = 100_000;
/// GET round trips (each ~10 system-call costs).
const GETS: u64 = 10_000;
/// Rounds of the token ring per P (each round is P switches).
const ROUNDS: u64 = 200;
const PROCS: [u64; 7] = [2, 4, 8, 16, 32, 64, 96];

/// Spawn `ubench ARGS...`, returning its pid (reported, not fatal, if it fails).
fn spawn(args: &[&str]) -> Option<i32> {
    let mut argv: Vec<&[u8]> = alloc::vec![b"ubench".as_slice()];
    argv.extend(args.iter().map(|a| a.as_bytes()));
    match proc::spawn_program(PATH, &argv) {
        Ok(pid) => Some(pid),
        Err(e) => {
            println!("bench: user: cannot spawn {PATH} {}: errno {e}", args.join(" "));
            None
        }
    }
}

fn reap(pids: &[i32]) {
    for pid in pids {
        if let Ok(r) = proc::wait(Some(*pid)) {
            let status = r.status.raw();
            if !(tally_tasktable::wifexited(status) && tally_tasktable::wexitstatus(status) == 0) {
                println!("bench: user: ubench pid {pid} ended with raw status {status:#x}");
            }
        }
    }
}

pub fn user(h: &mut Harness) {
    let n = format!("{SYSCALLS}");
    for mode in ["getpid", "msa", "msathread", "msathreadr"] {
        if let Some(pid) = spawn(&[mode, &n]) {
            reap(&[pid]);
            h.ran += 1;
        }
    }

    if let Some(pid) = spawn(&["tsget", &format!("{GETS}")]) {
        reap(&[pid]);
        h.ran += 1;
    }

    let rounds = format!("{ROUNDS}");
    for p in PROCS {
        if let Some(pid) = spawn(&["ctx", &rounds, &format!("{p}")]) {
            reap(&[pid]);
            h.ran += 1;
        }
    }
}
