//! Giving up the CPU and choosing how to be scheduled: `sched_yield`, `nanosleep`,
//! `setpriority`, `sched_setscheduler`.
//!
//! `sched_yield` is the 2.6 scheduler's: a normal task goes to the *expired* array, behind
//! every other runnable task. `nanosleep` sleeps INTERRUPTIBLE until the first timer tick at
//! or after the deadline, so it lasts up to one tick longer than asked; the only thing that
//! cuts a sleep short is the process being killed (`exit_group` by another thread), and
//! then the thread never returns to user mode, so `rem` is never written.
//!
//! `setpriority(PRIO_PROCESS, who, nice)` and `sched_setscheduler(pid, policy, param)` act
//! on one thread (`who`/`pid` 0: the caller), as in Linux; the permission rules (only root
//! lowers nice or picks a real-time policy) are in `proc/prio.rs`.

use tally_uapi::errno::{EINTR, EINVAL};
use tally_uapi::syscall::PRIO_PROCESS;

use super::{int_arg, usercopy, Args, SysResult};
use crate::{proc, sched};

/// `setpriority(which, who, prio)`.
pub fn setpriority(a: &Args) -> SysResult {
    let (which, who, nice) = (int_arg(a[0]), int_arg(a[1]), int_arg(a[2]));
    if which != PRIO_PROCESS as i32 {
        // PRIO_PGRP and PRIO_USER: not modelled (no walk of a group's or a user's tasks).
        return Err(EINVAL);
    }
    proc::set_nice(who, nice).map(|()| 0)
}

/// `sched_setscheduler(pid, policy, param)`: `param` points to the `int` priority.
pub fn sched_setscheduler(a: &Args) -> SysResult {
    let (pid, policy, param) = (int_arg(a[0]), int_arg(a[1]), a[2]);
    if pid < 0 || policy < 0 || param == 0 {
        return Err(EINVAL);
    }
    let prio = usercopy::read_i32(param)?;
    proc::set_scheduler(pid, policy, prio).map(|()| 0)
}

pub fn sched_yield(_: &Args) -> SysResult {
    sched::yield_now();
    Ok(0)
}

/// `nanosleep(req, rem)`: `EINTR` if a signal (or a kill) cuts it short, with the time left
/// in `rem` if it is not NULL (never restarted, as Linux with a handler).
pub fn nanosleep(a: &Args) -> SysResult {
    let req = usercopy::read_timespec(a[0])?;
    if req.tv_sec < 0 || !(0..1_000_000_000).contains(&req.tv_nsec) {
        return Err(EINVAL);
    }
    let ns = (req.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(req.tv_nsec as u64);
    let clock = crate::base::time::clock();
    let deadline = hal::tsc::read().saturating_add(clock.ns_to_ticks(ns));
    if ns > 0 && !sched::sleep_until(deadline) {
        if a[1] != 0 {
            let left = clock.ticks_to_ns(deadline.saturating_sub(hal::tsc::read()));
            let rem = tally_uapi::syscall::Timespec {
                tv_sec: (left / 1_000_000_000) as i64,
                tv_nsec: (left % 1_000_000_000) as i64,
            };
            usercopy::write_timespec(a[1], &rem)?;
        }
        return Err(EINTR);
    }
    Ok(0)
}
