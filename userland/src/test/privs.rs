//! `/test/privs` — the privilege rules from ring 3 (`tally_uapi::syscall`: `setpriority`,
//! `sched_setscheduler`, `setuid`): the fixture of the `user_privs` self-test
//! (`tally_uapi::fixture`).
//!
//! Checks, as root: uid 0 (1); a nicer value (2); EINVAL for `PRIO_PGRP` (3); ESRCH for
//! nobody (4); a less nice value (5); SCHED_FIFO 10 and back to SCHED_OTHER (6, 7); EINVAL
//! for FIFO priority 0, an unknown policy and a NULL parameter (8-10); EFAULT for a
//! parameter at nothing (11). Then five 1 ms sleeps (voluntary switches for the test),
//! `setuid(1000)` (12, 13); now root is out of reach (14) but "changing" to oneself is fine
//! (15); less nice is EACCES (16), nicer fine (17); real time EPERM (18), SCHED_BATCH fine
//! (19); init's nice EPERM (20). Exit status: the number of the failed check, 0 if none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::fixture::{expect_err, expect_ok};
use tally_rt::sys;
use tally_rt::sys::probe::{self, BadPtr};
use tally_rt::uapi::errno::{EACCES, EFAULT, EINVAL, EPERM, ESRCH};
use tally_rt::uapi::syscall::*;
use tally_rt::Errno;

tally_rt::entry!(main);

/// `setpriority(which, who, nice)` with each `int` in the low 32 bits of its register and
/// the high ones clear (as a C caller's 32-bit moves leave them): a negative nice value is
/// then a large 64-bit number, and only a kernel that reads the low 32 bits sees it right.
fn prio(which: usize, who: u32, nice: i32) -> Result<usize, Errno> {
    probe::setpriority(which, who as usize, nice as u32 as usize)
}

/// A task no one has.
const NOBODY: u32 = 30_000;

fn main() -> i32 {
    expect_ok(sys::getuid(), 0, 1); // root
    expect_ok(prio(PRIO_PROCESS, 0, 5), 0, 2); // nicer: anyone may
    expect_err(prio(PRIO_PGRP, 0, 5), EINVAL, 3);
    expect_err(prio(PRIO_PROCESS, NOBODY, 5), ESRCH, 4);
    expect_ok(prio(PRIO_PROCESS, 0, -5), 0, 5); // less nice: root only
    expect_ok(sys::sched_setscheduler(0, SCHED_FIFO, 10), 0, 6); // real time: root only
    expect_ok(sys::sched_setscheduler(0, SCHED_OTHER, 0), 0, 7);
    expect_err(sys::sched_setscheduler(0, SCHED_FIFO, 0), EINVAL, 8); // FIFO needs 1..99
    expect_err(sys::sched_setscheduler(0, 7, 0), EINVAL, 9); // no such policy
    expect_err(probe::sched_setscheduler(0, SCHED_FIFO, BadPtr::NULL.addr()), EINVAL, 10);
    expect_err(probe::sched_setscheduler(0, SCHED_FIFO, BadPtr::UNMAPPED.addr()), EFAULT, 11);
    for _ in 0..5 {
        let _ = sys::sleep_ms(1); // voluntary switches
    }
    expect_ok(sys::setuid(1000), 0, 12);
    expect_ok(sys::getuid(), 1000, 13);
    expect_err(sys::setuid(0), EPERM, 14); // and never root again
    expect_ok(sys::setuid(1000), 0, 15); // "changing" to oneself is fine
    expect_err(prio(PRIO_PROCESS, 0, -10), EACCES, 16); // less nice: EACCES now
    expect_ok(prio(PRIO_PROCESS, 0, 10), 0, 17); // nicer: still fine
    expect_err(sys::sched_setscheduler(0, SCHED_FIFO, 10), EPERM, 18);
    expect_ok(sys::sched_setscheduler(0, SCHED_BATCH, 0), 0, 19);
    expect_err(prio(PRIO_PROCESS, 1, 10), EPERM, 20); // init belongs to root
    0
}
