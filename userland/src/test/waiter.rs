//! `/test/waiter` — `wait4`'s contract from ring 3, and what it reports of a child: the
//! fixture of the `user_wait4` self-test (`tally_uapi::fixture`).
//!
//! Checks: ECHILD without children (1), also for pid 0 and pid < -1 (process groups: no
//! child in them); EINVAL for an unknown option (2-4); `spawn /bin/spin 30` (5); `WNOHANG` while it runs answers 0 (6);
//! a bad status or rusage pointer is EFAULT and the child is not lost (7, 8); the reap with a
//! rusage (9) and status 0 (10); ECHILD once reaped (11); `msa(MSA_CHILDREN)` (12), whose
//! ONCPU_USR in µs is the rusage's `ru_utime` (13). The rusage, the timers and the child's
//! pid go to the result area; then the handshake. Exit status: the failed check, 0 if none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::fixture::{check, expect_err, expect_ok, positive, Area};
use tally_rt::sys;
use tally_rt::sys::probe::{self, BadPtr};
use tally_rt::uapi::errno::{ECHILD, EFAULT, EINVAL};
use tally_rt::uapi::fixture::{AREA_CHILD_PID, AREA_MSA_A, AREA_RUSAGE};
use tally_rt::uapi::msa::{MSA_CHILDREN, NR_MICROSTATES};
use tally_rt::uapi::syscall::{Rusage, WNOHANG};

tally_rt::entry!(main);

/// An option bit `wait4` does not know.
const UNKNOWN_OPTION: usize = 0x100;

fn main() -> i32 {
    let area = Area::map();
    expect_err(sys::wait4(-1, None, 0, None), ECHILD, 1);
    expect_err(sys::wait4(0, None, 0, None), ECHILD, 2);
    expect_err(sys::wait4(-7, None, 0, None), ECHILD, 3);
    expect_err(sys::wait4(-1, None, UNKNOWN_OPTION, None), EINVAL, 4);
    let child = positive(sys::spawn("/bin/spin", &["spin", "30"]), 5);
    let pid = child as isize;
    let mut status = -1;
    expect_ok(sys::wait4(pid, Some(&mut status), WNOHANG, None), 0, 6);
    expect_err(probe::wait4(pid, BadPtr::UNMAPPED.into(), 0, BadPtr::NULL.into()), EFAULT, 7);
    expect_err(probe::wait4(pid, (&mut status).into(), 0, BadPtr::KERNEL.into()), EFAULT, 8);
    let mut ru = Rusage::default();
    expect_ok(sys::wait4(pid, Some(&mut status), 0, Some(&mut ru)), child, 9);
    area.put_bytes(AREA_RUSAGE, &ru.to_bytes());
    area.put(AREA_CHILD_PID, child as u64);
    check(status == 0, 10);
    expect_err(sys::wait4(pid, Some(&mut status), 0, None), ECHILD, 11);
    let mut children = [0u64; NR_MICROSTATES];
    expect_ok(sys::msa(MSA_CHILDREN, &mut children), 0, 12);
    area.put_words(AREA_MSA_A, &children);
    // ONCPU_USR in ns, truncated to µs, is ru_utime: both come from the same clock.
    let utime_us = (ru.ru_utime.tv_sec as u64).wrapping_mul(1_000_000).wrapping_add(ru.ru_utime.tv_usec as u64);
    check(children[0] / 1000 == utime_us, 13);
    area.handshake();
    0
}
