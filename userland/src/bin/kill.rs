//! `kill [-SIGNAL] PID...` — send a signal (default SIGTERM) to processes.
//!
//! SIGNAL is a number or a name with or without `SIG` (`-9`, `-KILL`, `-SIGUSR1`); `-0` only
//! checks that the process exists and may be signalled. A negative PID names a process group
//! (`kill -STOP -- -7`, or `kill -CONT -7` after a signal), 0 the caller's own group. `--`
//! ends the options. Tally has no signal handlers: a signal takes its default action (ends
//! the process, stops or continues it, or is ignored) and is counted for the receiving
//! thread — prstat's SIG column. See `tally_uapi::signal`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::process::parse_i64;
use tally_rt::uapi::signal::*;
use tally_rt::{eprintln, sys};

tally_rt::entry!(main);

const NAMES: &[(&str, u8)] = &[
    ("HUP", SIGHUP),
    ("INT", SIGINT),
    ("QUIT", SIGQUIT),
    ("ILL", SIGILL),
    ("TRAP", SIGTRAP),
    ("ABRT", SIGABRT),
    ("BUS", SIGBUS),
    ("FPE", SIGFPE),
    ("KILL", SIGKILL),
    ("USR1", SIGUSR1),
    ("SEGV", SIGSEGV),
    ("USR2", SIGUSR2),
    ("PIPE", SIGPIPE),
    ("ALRM", SIGALRM),
    ("TERM", SIGTERM),
    ("CHLD", SIGCHLD),
    ("CONT", SIGCONT),
    ("STOP", SIGSTOP),
    ("TSTP", SIGTSTP),
    ("TTIN", SIGTTIN),
    ("TTOU", SIGTTOU),
    ("URG", SIGURG),
    ("WINCH", SIGWINCH),
    ("SYS", SIGSYS),
];

fn signal_number(s: &str) -> Option<i32> {
    if let Some(n) = parse_i64(s) {
        return i32::try_from(n).ok();
    }
    let name = s.strip_prefix("SIG").unwrap_or(s);
    NAMES.iter().find(|(n, _)| *n == name).map(|(_, v)| i32::from(*v))
}

fn main() -> i32 {
    let mut args = tally_rt::args().skip(1).peekable();
    let mut sig = i32::from(SIGTERM);
    if let Some(a) = args.peek().and_then(|a| a.strip_prefix('-')).filter(|&a| a != "-") {
        match signal_number(a) {
            Some(s) => sig = s,
            None => {
                eprintln!("kill: unknown signal {a}");
                return 2;
            }
        }
        args.next();
    }
    if args.peek() == Some(&"--") {
        args.next();
    }
    let mut status = 0;
    let mut any = false;
    for a in args {
        any = true;
        match parse_i64(a) {
            Some(pid) => {
                if let Err(e) = sys::kill(pid as isize, sig) {
                    eprintln!("kill: ({pid}): {e}");
                    status = 1;
                }
            }
            None => {
                eprintln!("kill: not a pid: {a}");
                status = 1;
            }
        }
    }
    if !any {
        eprintln!("usage: kill [-SIGNAL] PID...");
        return 2;
    }
    status
}
