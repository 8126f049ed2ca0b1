//! Who am I, and goodbye: `getpid`, `gettid`, `getppid`, `getuid`, `exit`, `exit_group`.
//!
//! Linux's naming, which confuses everyone once: a *thread* is what the kernel schedules and
//! gives a pid; a *process* is a thread group, named by its leader's pid (the tgid). So
//! `getpid` returns the tgid and `gettid` the thread's own pid. `exit` ends one thread,
//! `exit_group` the whole process (what C's `exit()` calls).

use super::{Args, SysResult};
use crate::task;

pub fn getpid(_: &Args) -> SysResult {
    Ok(task::current_ids().pid as u64)
}

pub fn gettid(_: &Args) -> SysResult {
    Ok(task::current_ids().tid as u64)
}

pub fn getppid(_: &Args) -> SysResult {
    Ok(task::current_ids().ppid as u64)
}

pub fn getuid(_: &Args) -> SysResult {
    Ok(task::current_ids().uid as u64)
}

/// `exit(status)`: only the low 8 bits reach the parent.
pub fn exit(a: &Args) -> SysResult {
    task::exit(a[0] as i32)
}

pub fn exit_group(a: &Args) -> SysResult {
    task::exit_group(a[0] as i32)
}
