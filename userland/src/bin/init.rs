//! `init [COMMANDS]` — process 1: starts the given commands, reaps every child, and exits
//! with the status of the last command.
//!
//! **Where it comes from.** Pid 1 starts as a kernel thread that does the kernel's part of
//! boot (the self-test or benchmark the command line names, else the boot demo), then
//! execs this program in place, as Linux's `kernel_init` ends by exec'ing `/sbin/init`: the
//! same task, pid 1, now in user mode (`kernel/src/main.rs`). Its arguments are the kernel
//! command line's `init=PROGRAM` followed by the words after `--`, so
//! `--cmdline "demo=off init=sh"` runs `init sh`, and `--cmdline "demo=off -- hello a ; sh"`
//! runs `init hello a ; sh`. Without arguments init runs `sh`, the shell on the console.
//! Run by hand (from the shell) it is an ordinary program doing the same.
//!
//! **Commands.** The arguments joined with spaces, in a tiny shell syntax: `;` separates
//! *steps*, run one after another; `&` separates commands of one step, started together.
//! So `init spin 300 & spin 300 0 ; msa sleeper 100` runs two spinners side by side, waits
//! for both, then runs `msa sleeper 100`. (A kernel command line passes the same words as
//! separate arguments; quoting is not needed.)
//!
//! **Parent of last resort.** A process whose parent exits is handed to pid 1 by the
//! kernel, and init collects it with `wait4(-1, ...)` so it does not stay a zombie; such
//! children are reported as orphans.
//!
//! **The end.** When the last step has ended, init collects every child still there —
//! waiting for orphans that still run, so none is cut off — prints a summary and exits with
//! the status of the last command of the last step, as `$?` would be in `sh`: its exit
//! code, 128 + the signal that killed it, 127 for a program that does not exist, 126 for
//! one that cannot be started. As pid 1 that exit ends the machine: the kernel ends QEMU
//! with this status (0 is success; `init sh` thus hands on the shell's `exit N`).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;
use tally_rt::process::{describe, exit_code, exited, shell_status, spawn_command_attr, spawn_failure_status};
use tally_rt::uapi::errno::{ECHILD, EINTR};
use tally_rt::uapi::syscall::POSIX_SPAWN_SETSID;
use tally_rt::uapi::syscall::WNOHANG;
use tally_rt::{eprintln, println, sys};

tally_rt::entry!(main);

/// Status of a command that cannot be started (as `sh`; `process::spawn_failure_status`).
const CANNOT_RUN: i32 = 126;

fn main() -> i32 {
    let mut line = String::new();
    for a in tally_rt::args().skip(1) {
        line.push_str(a);
        line.push(' ');
    }
    if line.trim().is_empty() {
        line.push_str("sh");
    }
    let (mut started, mut failed) = (0usize, 0usize);
    // `$?`: the status of the last command of the last step run so far.
    let mut last = 0;
    for step in line.split(';') {
        let cmds: Vec<Vec<&str>> =
            step.split('&').map(|c| c.split_whitespace().collect::<Vec<&str>>()).filter(|w| !w.is_empty()).collect();
        // The step's last command, whose status becomes `last`.
        let mut tail = None;
        let mut running: Vec<(usize, String)> = Vec::new();
        for (i, words) in cmds.iter().enumerate() {
            let text = words.join(" ");
            let is_tail = i + 1 == cmds.len();
            // Each command leads a session of its own, as a getty gives each login one: a
            // shell then takes the console and has job control (`docs/job-control.md`).
            match spawn_command_attr(words, POSIX_SPAWN_SETSID, 0) {
                Ok(pid) => {
                    println!("init: started pid {pid}: {text}");
                    started += 1;
                    running.push((pid, text));
                    if is_tail {
                        tail = Some(pid);
                    }
                }
                Err(e) => {
                    eprintln!("init: cannot start {text}: {e}");
                    failed += 1;
                    if is_tail {
                        last = spawn_failure_status(e);
                    }
                }
            }
        }
        // Wait for this step's commands; reap whatever else ends meanwhile.
        while !running.is_empty() {
            match reap(0) {
                Reaped::Child(pid, status) => match running.iter().position(|(p, _)| *p == pid) {
                    Some(i) => {
                        let (_, text) = running.swap_remove(i);
                        println!("init: pid {pid} ({text}) {}", describe(status));
                        if !(exited(status) && exit_code(status) == 0) {
                            failed += 1;
                        }
                        if tail == Some(pid) {
                            last = shell_status(status);
                        }
                    }
                    None => println!("init: reaped orphan pid {pid}, {}", describe(status)),
                },
                Reaped::Running => {}
                Reaped::NoChildren => {
                    eprintln!("init: {} started command(s) vanished without a wait status", running.len());
                    failed += running.len();
                    running.clear();
                    last = CANNOT_RUN;
                }
                Reaped::Error(e) => {
                    eprintln!("init: wait4: {e}");
                    failed += running.len();
                    running.clear();
                    last = CANNOT_RUN;
                }
            }
        }
    }
    // Orphans: a pid 1 collects them all before it ends (and with it the machine).
    let mut told = false;
    loop {
        match reap(WNOHANG) {
            Reaped::Child(pid, status) => println!("init: reaped orphan pid {pid}, {}", describe(status)),
            Reaped::NoChildren => break,
            Reaped::Running => {
                if !told {
                    println!("init: waiting for the orphans still running");
                    told = true;
                }
                if let Reaped::Child(pid, status) = reap(0) {
                    println!("init: reaped orphan pid {pid}, {}", describe(status));
                }
            }
            Reaped::Error(e) => {
                eprintln!("init: wait4: {e}");
                break;
            }
        }
    }
    println!("init: {started} command(s) started, {failed} failed; no children left; exit status {last}");
    last
}

enum Reaped {
    Child(usize, i32),
    /// `WNOHANG` only: there are children, none has ended.
    Running,
    NoChildren,
    Error(tally_rt::Errno),
}

/// Reaps any child (`wait4(-1, ...)` with `options`), retrying after `EINTR`.
fn reap(options: usize) -> Reaped {
    loop {
        let mut status = 0;
        match sys::wait4(-1, Some(&mut status), options, None) {
            Ok(0) if options & WNOHANG != 0 => return Reaped::Running,
            Ok(pid) => return Reaped::Child(pid, status),
            Err(e) if e.0 == EINTR => continue,
            Err(e) if e.0 == ECHILD => return Reaped::NoChildren,
            Err(e) => return Reaped::Error(e),
        }
    }
}
