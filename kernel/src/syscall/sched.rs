//! Giving up the CPU: `sched_yield` and `nanosleep`.
//!
//! `sched_yield` is the 2.6 scheduler's: a normal task goes to the *expired* array, behind
//! every other runnable task. `nanosleep` sleeps INTERRUPTIBLE until the first timer tick at
//! or after the deadline, so it lasts up to one tick longer than asked; nothing interrupts a
//! sleep yet (no signals), so `rem` is never written.

use tally_uapi::errno::EINVAL;

use super::{uaccess, Args, SysResult};
use crate::task;

pub fn sched_yield(_: &Args) -> SysResult {
    task::yield_now();
    Ok(0)
}

/// `nanosleep(req, rem)`.
pub fn nanosleep(a: &Args) -> SysResult {
    let req = uaccess::read_timespec(a[0])?;
    if req.tv_sec < 0 || !(0..1_000_000_000).contains(&req.tv_nsec) {
        return Err(EINVAL);
    }
    let ns = (req.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(req.tv_nsec as u64);
    if ns > 0 {
        task::sleep_ns(ns);
    }
    Ok(0)
}
