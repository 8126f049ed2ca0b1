//! Who am I, and goodbye: `getpid`, `gettid`, `getppid`, `getuid`, `setuid`, `exit`,
//! `exit_group`, and `set_tid_address` (where a thread's end is announced).
//!
//! Linux's naming, which confuses everyone once: a *thread* is what the kernel schedules and
//! gives a pid; a *process* is a thread group, named by its leader's pid (the tgid). So
//! `getpid` returns the tgid and `gettid` the thread's own pid. `exit` ends one thread,
//! `exit_group` the whole process (what C's `exit()` calls): the other threads are stopped
//! at their next return to user mode (`proc/exit.rs`).
//!
//! `setuid(uid)`: root (uid 0) may become any uid, which also flags the task as having used
//! super-user privilege (`ASU` in its accounting record); anyone else may only "change" to
//! the uid it has (`EPERM`). The rules are in `proc/prio.rs`.

use super::{int_arg, Args, SysResult};
use crate::proc;

pub fn getpid(_: &Args) -> SysResult {
    Ok(proc::current_pid() as u64)
}

pub fn gettid(_: &Args) -> SysResult {
    Ok(proc::current_tid() as u64)
}

/// `set_tid_address(tidptr)`: where this thread's tid is cleared when it exits (C libraries
/// call it once at start; `pthread_join` waits on that word); returns the tid.
pub fn set_tid_address(a: &Args) -> SysResult {
    proc::set_clear_child_tid(a[0]);
    Ok(proc::current_tid() as u64)
}

pub fn getppid(_: &Args) -> SysResult {
    Ok(proc::current_ppid() as u64)
}

/// `kill(pid, sig)`: see `tally_uapi::signal`.
pub fn kill(a: &Args) -> SysResult {
    proc::kill(int_arg(a[0]), int_arg(a[1])).map(|()| 0)
}

pub fn getuid(_: &Args) -> SysResult {
    Ok(proc::current_uid() as u64)
}

/// `setuid(uid)`.
pub fn setuid(a: &Args) -> SysResult {
    proc::set_uid(int_arg(a[0]) as u32).map(|()| 0)
}

/// `exit(status)`: only the low 8 bits reach the parent.
pub fn exit(a: &Args) -> SysResult {
    proc::exit(int_arg(a[0]))
}

pub fn exit_group(a: &Args) -> SysResult {
    proc::exit_group(int_arg(a[0]))
}
