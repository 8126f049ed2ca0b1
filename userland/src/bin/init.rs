//! `init [COMMANDS]` — process 1: starts the given commands and reaps every child.
//!
//! The commands are the arguments joined with spaces, in a tiny shell syntax:
//! `;` separates *steps*, run one after another; `&` separates commands of one step,
//! started together. So `init spin 300 & spin 300 0 ; msa sleeper 100` runs two spinners
//! side by side, waits for both, then runs `msa sleeper 100`. (A kernel command line can
//! pass the same words as separate arguments; quoting is not needed.) Without arguments
//! init runs `hello`.
//!
//! Like every Unix init, it is the parent of last resort: a process whose parent exits is
//! handed to pid 1, and init collects it with `wait4(-1, ...)` so it does not stay a zombie.
//! Such children are reported as orphans. When every step has ended and `wait4` answers
//! `ECHILD` (no children left), init prints a summary and exits: 0 if every command started
//! and exited with status 0, 1 otherwise.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;
use tally_rt::process::{describe, exit_code, exited, spawn_command};
use tally_rt::uapi::errno::{ECHILD, EINTR};
use tally_rt::{eprintln, println, sys};

tally_rt::entry!(main);

fn main() -> i32 {
    let mut line = String::new();
    for a in tally_rt::args().skip(1) {
        line.push_str(a);
        line.push(' ');
    }
    if line.trim().is_empty() {
        line.push_str("hello");
    }
    let (mut started, mut failed) = (0usize, 0usize);
    for step in line.split(';') {
        let mut running: Vec<(usize, String)> = Vec::new();
        for cmd in step.split('&') {
            let words: Vec<&str> = cmd.split_whitespace().collect();
            if words.is_empty() {
                continue;
            }
            let text = words.join(" ");
            match spawn_command(&words) {
                Ok(pid) => {
                    println!("init: started pid {pid}: {text}");
                    started += 1;
                    running.push((pid, text));
                }
                Err(e) => {
                    eprintln!("init: cannot start {text}: {e}");
                    failed += 1;
                }
            }
        }
        // Wait for this step's commands; reap whatever else ends meanwhile.
        while !running.is_empty() {
            match reap_one() {
                Reaped::Child(pid, status) => match running.iter().position(|(p, _)| *p == pid) {
                    Some(i) => {
                        let (_, text) = running.swap_remove(i);
                        println!("init: pid {pid} ({text}) {}", describe(status));
                        if !(exited(status) && exit_code(status) == 0) {
                            failed += 1;
                        }
                    }
                    None => println!("init: reaped orphan pid {pid}, {}", describe(status)),
                },
                Reaped::NoChildren => {
                    eprintln!("init: {} started command(s) vanished without a wait status", running.len());
                    failed += running.len();
                    running.clear();
                }
                Reaped::Error(e) => {
                    eprintln!("init: wait4: {e}");
                    failed += running.len();
                    running.clear();
                }
            }
        }
    }
    // Orphans still running: a pid 1 collects them all before it ends.
    loop {
        match reap_one() {
            Reaped::Child(pid, status) => println!("init: reaped orphan pid {pid}, {}", describe(status)),
            Reaped::NoChildren => break,
            Reaped::Error(e) => {
                eprintln!("init: wait4: {e}");
                break;
            }
        }
    }
    println!("init: {started} command(s) started, {failed} failed; no children left");
    if failed == 0 { 0 } else { 1 }
}

enum Reaped {
    Child(usize, i32),
    NoChildren,
    Error(tally_rt::Errno),
}

/// Waits for any child to end (retrying after `EINTR`).
fn reap_one() -> Reaped {
    loop {
        let mut status = 0;
        match sys::wait4(-1, Some(&mut status), 0, None) {
            Ok(pid) => return Reaped::Child(pid, status),
            Err(e) if e.0 == EINTR => continue,
            Err(e) if e.0 == ECHILD => return Reaped::NoChildren,
            Err(e) => return Reaped::Error(e),
        }
    }
}
