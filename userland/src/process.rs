//! # Processes: starting programs and reading how they ended
//!
//! Tally has no `fork`/`exec` pair: a process starts a child with one call,
//! `spawn(path, argv)`, which loads a program from the ramdisk (like `posix_spawn`). The
//! parent later collects the child with `wait4`, which reports a *wait status* in Linux's
//! encoding (the kernel builds it in `tally-tasktable`'s `status.rs`):
//!
//! ```text
//!   exit(code)          (code & 0xff) << 8        low 7 bits 0
//!   killed by signal s  s | 0x80 (core flag)      low 7 bits 1..=0x7e
//! ```
//!
//! A program that faults (divides by zero, touches an unmapped page) is killed with the
//! signal Linux would send: `SIGFPE`, `SIGSEGV`, `SIGILL`...
#![forbid(unsafe_code)]

use alloc::string::String;
use core::fmt;

use crate::sys;
use crate::Errno;

/// Where programs named without a `/` are looked up (the ramdisk's `bin/`).
pub const BIN_DIR: &str = "/bin/";

/// The ramdisk path for a command name: `hello` → `/bin/hello`; a name with a `/` is
/// taken as is.
pub fn resolve(cmd: &str) -> String {
    let mut p = String::new();
    if !cmd.contains('/') {
        p.push_str(BIN_DIR);
    }
    p.push_str(cmd);
    p
}

/// Starts `argv[0]` (resolved with [`resolve`]) with arguments `argv`; returns the pid.
pub fn spawn_command(argv: &[&str]) -> Result<usize, Errno> {
    let Some(cmd) = argv.first() else { return Err(Errno(tally_uapi::errno::EINVAL)) };
    sys::spawn(&resolve(cmd), argv)
}

/// [`spawn_command`] with `posix_spawn`'s process-group attribute (`sys::spawn_attr`).
pub fn spawn_command_attr(argv: &[&str], flags: usize, pgroup: usize) -> Result<usize, Errno> {
    let Some(cmd) = argv.first() else { return Err(Errno(tally_uapi::errno::EINVAL)) };
    sys::spawn_attr(&resolve(cmd), argv, flags, pgroup)
}

/// `WIFEXITED`: ended through `exit` (the shared decoder, `tally_uapi::wait`).
pub const fn exited(status: i32) -> bool {
    tally_uapi::wait::wifexited(status)
}

/// `WEXITSTATUS`: the exit code, when [`exited`].
pub const fn exit_code(status: i32) -> i32 {
    tally_uapi::wait::wexitstatus(status)
}

/// `WTERMSIG`: the killing signal, when it was one (0 otherwise).
pub const fn term_signal(status: i32) -> i32 {
    if tally_uapi::wait::wifsignaled(status) {
        tally_uapi::wait::wtermsig(status)
    } else {
        0
    }
}

/// A wait status as a shell's `$?` would show it, and so the status a program that runs a
/// command should exit with (`time`, `msa CMD`, `sh`, `init`): the exit code, or 128 + the
/// signal that killed it.
pub const fn shell_status(status: i32) -> i32 {
    if exited(status) {
        exit_code(status)
    } else {
        128 + term_signal(status)
    }
}

/// `$?` for a command that could not be started: 127 when there is no such program, 126
/// when it exists but cannot be run (POSIX's two statuses).
pub const fn spawn_failure_status(e: Errno) -> i32 {
    if e.0 == tally_uapi::errno::ENOENT {
        127
    } else {
        126
    }
}

/// Linux's name of signal `sig` on x86_64: every standard signal `kill` can send
/// (`tally_uapi::signal`), "signal" for numbers without a name.
pub const fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        16 => "SIGSTKFLT",
        17 => "SIGCHLD",
        18 => "SIGCONT",
        19 => "SIGSTOP",
        20 => "SIGTSTP",
        21 => "SIGTTIN",
        22 => "SIGTTOU",
        23 => "SIGURG",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        26 => "SIGVTALRM",
        27 => "SIGPROF",
        28 => "SIGWINCH",
        29 => "SIGIO",
        30 => "SIGPWR",
        31 => "SIGSYS",
        _ => "signal",
    }
}

/// Displays a wait status: `exited with status 0`, `killed by SIGSEGV (11), core flag`.
/// (The core bit says the signal's default action is a core dump, as Linux sets it; Tally
/// writes no core file, so this does not say "core dumped".)
pub fn describe(status: i32) -> impl fmt::Display {
    fmt::from_fn(move |f| {
        if exited(status) {
            write!(f, "exited with status {}", exit_code(status))
        } else if tally_uapi::wait::wifstopped(status) {
            let sig = tally_uapi::wait::wstopsig(status);
            write!(f, "stopped by {} ({sig})", signal_name(sig))
        } else if tally_uapi::wait::wifcontinued(status) {
            f.write_str("continued")
        } else {
            let sig = term_signal(status);
            write!(f, "killed by {} ({sig})", signal_name(sig))?;
            if tally_uapi::wait::wcoredump(status) {
                f.write_str(", core flag")?;
            }
            Ok(())
        }
    })
}

/// Parses a decimal number argument (`"1500"`), with an optional leading `-`.
pub fn parse_i64(s: &str) -> Option<i64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for c in digits.bytes() {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_sub(i64::from(c - b'0'))?;
    }
    if neg {
        Some(v)
    } else {
        v.checked_neg()
    }
}

/// Parses a non-negative decimal (or `0x` hexadecimal) number argument.
pub fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) if !h.is_empty() => u64::from_str_radix(h, 16).ok(),
        Some(_) => None,
        None => s.parse().ok(),
    }
}
