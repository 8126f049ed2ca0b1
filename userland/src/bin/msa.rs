//! `msa CMD [ARGS...]`, `msa [-s | -t]` — where did the time go? Microstate accounting
//! from user space.
//!
//! With a command: spawns it, waits for it, then asks the kernel for the microstate times of
//! the process's reaped children — `msa(13, MSA_CHILDREN, timers)` — and prints them, one
//! row per microstate, in milliseconds (like `time CMD`, but with all 13 states instead of
//! user/sys/real). The child's `struct rusage` from `wait4` comes first: its user and
//! system times are sums of the same microstate clocks (ONCPU_USR; ONCPU_SYS + ONCPU_TRAP).
//! Without a command, or with `-s`: the times of `msa` itself, every thread of the process
//! (`MSA_SELF`); with `-t`: those of the calling thread alone (`MSA_THREAD`, this call's
//! ONCPU_SYS so far included). `msa` has one thread, so the two differ only by the instant
//! of the reading; a line before the table names the call. Every row is printed, the
//! states that stayed 0 too.
//!
//! ```text
//! $ msa spin 200
//! msa: pid 7 (spin 200) exited with status 0
//! msa: rusage: user 0.198512 s, system 0.000741 s, 3 minor / 0 major faults, 1 voluntary / 2 involuntary switches
//! timer                          ms  what
//! ONCPU_USR                 198.512  running in user mode
//! ONCPU_SYS                   0.741  in the kernel for system calls
//! ...
//! total                     201.003
//! ```
//!
//! With a command, `msa` exits as `time CMD` does: with CMD's exit status, 128 + the signal
//! if CMD was killed, 127/126 if it could not be started (no such program / cannot run).
//!
//! The state names and their order are the ABI (`tally_uapi::msa::MicroState`, the order of
//! the original Linux patch); the descriptions are those of its documentation.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use tally_rt::process::{describe, shell_status, spawn_command, spawn_failure_status};
use tally_rt::uapi::msa::{ClkT, MicroState, MSA_CHILDREN, MSA_SELF, MSA_THREAD, NR_MICROSTATES};
use tally_rt::uapi::syscall::Rusage;
use tally_rt::{eprintln, println, sys};

tally_rt::entry!(main);

const USAGE: &str = "usage: msa CMD [ARGS...]   (MSA_CHILDREN: CMD's times)\n       msa [-s | -t]        \
                     (MSA_SELF: this process; -t: MSA_THREAD, this thread)";

fn main() -> i32 {
    let cmd: Vec<&str> = tally_rt::args().skip(1).collect();
    // CMD's wait status, once it has run.
    let mut child = None;
    let which = match cmd[..] {
        [] | ["-s"] => MSA_SELF,
        ["-t"] => MSA_THREAD,
        // A program's name never starts with '-': an option msa does not know, or -s/-t
        // followed by more words.
        [first, ..] if first.starts_with('-') => {
            eprintln!("{USAGE}");
            return 2;
        }
        _ => match run_child(&cmd) {
            Ok(status) => {
                child = Some(status);
                MSA_CHILDREN
            }
            Err(code) => return code,
        },
    };
    let name = match which {
        MSA_SELF => "MSA_SELF",
        MSA_THREAD => "MSA_THREAD",
        _ => "MSA_CHILDREN",
    };
    let mut timers = [0 as ClkT; NR_MICROSTATES];
    if let Err(e) = sys::msa(which, &mut timers) {
        eprintln!("msa: msa({NR_MICROSTATES}, {name}): {e}");
        return 1;
    }
    match which {
        MSA_SELF => println!(
            "msa: msa({NR_MICROSTATES}, {name}) of pid {}: every thread of this process",
            sys::getpid().unwrap_or(0)
        ),
        MSA_THREAD => println!(
            "msa: msa({NR_MICROSTATES}, {name}) of tid {} (pid {}): the calling thread",
            sys::gettid().unwrap_or(0),
            sys::getpid().unwrap_or(0)
        ),
        _ => {}
    }
    println!("{:<24} {:>12}  what", "timer", "ms");
    let mut total: u64 = 0;
    for s in MicroState::ALL {
        let ns = timers[s.index()];
        total = total.saturating_add(ns);
        println!("{:<24} {:>12}  {}", s.name(), Ms(ns), what(s));
    }
    println!("{:<24} {:>12}", "total", Ms(total));
    // As `time CMD` does: CMD's own status (128 + the signal if it was killed).
    child.map_or(0, shell_status)
}

/// Spawns `cmd`, reaps it with `wait4` and prints how it ended and its rusage; returns its
/// wait status. `Err` is the exit status for a command that could not be run (127 no such
/// program, 126 cannot be started, as a shell says) or waited for (1).
fn run_child(cmd: &[&str]) -> Result<i32, i32> {
    let pid = match spawn_command(cmd) {
        Ok(pid) => pid,
        Err(e) => {
            eprintln!("msa: spawn {}: {e}", cmd[0]);
            return Err(spawn_failure_status(e));
        }
    };
    let mut status = 0;
    let mut ru = Rusage::default();
    match sys::wait4(pid as isize, Some(&mut status), 0, Some(&mut ru)) {
        Ok(_) => {
            println!("msa: pid {pid} ({}) {}", Joined(cmd), describe(status));
            println!(
                "msa: rusage: user {}.{:06} s, system {}.{:06} s, {} minor / {} major faults, \
                 {} voluntary / {} involuntary switches",
                ru.ru_utime.tv_sec,
                ru.ru_utime.tv_usec,
                ru.ru_stime.tv_sec,
                ru.ru_stime.tv_usec,
                ru.ru_minflt,
                ru.ru_majflt,
                ru.ru_nvcsw,
                ru.ru_nivcsw
            );
            Ok(status)
        }
        Err(e) => {
            eprintln!("msa: wait4({pid}): {e}");
            Err(1)
        }
    }
}

/// What each state means (after the descriptions in the MSA patch's documentation).
fn what(s: MicroState) -> &'static str {
    match s {
        MicroState::OncpuUsr => "running in user mode",
        MicroState::OncpuSys => "in the kernel for system calls",
        MicroState::OncpuTrap => "in the kernel for exceptions (page faults)",
        MicroState::InterruptibleSleep => "slow sleeps, e.g. nanosleep",
        MicroState::UninterruptibleSleep => "fast sleeps, e.g. disk I/O",
        MicroState::OnActiveQueue => "waiting for a CPU, timeslice left",
        MicroState::OnExpiredQueue => "waiting for a new timeslice",
        MicroState::Zombie => "exited, not yet waited for",
        MicroState::Stopped => "stopped",
        MicroState::Interrupted => "stolen by interrupt handlers",
        MicroState::PagingSleep => "waiting for pages from disk",
        MicroState::FutexSleep => "sleeping in futexes",
        MicroState::PollSleep => "sleeping in poll/select",
    }
}

/// Nanoseconds shown as milliseconds with three decimals (`1234567` → `1.234`).
struct Ms(u64);

impl core::fmt::Display for Ms {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.pad(&alloc::format!("{}.{:03}", self.0 / 1_000_000, self.0 / 1000 % 1000))
    }
}

/// The command line, words separated by spaces.
struct Joined<'a>(&'a [&'a str]);

impl core::fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, w) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            f.write_str(w)?;
        }
        Ok(())
    }
}
