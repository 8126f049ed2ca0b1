//! `wait4(pid, status, options, rusage)`: collect a child that has ended, and what it used.
//!
//! Linux's semantics:
//!
//! * `pid` = -1 waits for any child, `pid` > 0 for that child, 0 for any child in the
//!   caller's process group, < -1 for any child in group `-pid`. A pid that is not a child
//!   of the caller's process is `ECHILD`, as is having no (matching) children at all —
//!   waiting would be forever.
//! * `options`: `WNOHANG` returns 0 at once if no matching child has ended yet;
//!   `WUNTRACED` also reports a child that has stopped (status `0x7f | sig << 8`),
//!   `WCONTINUED` one that SIGCONT continued (status `0xffff`) — each event once, and the
//!   child stays (job control, `docs/job-control.md`); the `rusage` of such a report is all
//!   zeros (Tally reports usage at reaping). Linux's `__WALL`, `__WCLONE`, `__WNOTHREAD` are
//!   accepted and change nothing; any other bit is `EINVAL`.
//! * Without `WNOHANG` the caller sleeps (INTERRUPTIBLE_SLEEP) until a child ends (or,
//!   with those options, stops or continues); `EINTR`
//!   if its own process is killed meanwhile.
//! * `status` (an `int *`) gets the wait status (`exit(7)` → `0x700`, killed by SIGSEGV →
//!   11); `rusage` gets a Linux `struct rusage` ([`Rusage`]) describing the reaped child
//!   *and* the children it had reaped itself (Linux's `RUSAGE_BOTH`, what `wait4` reports).
//!   Either may be NULL. Both are checked writable **before** anything is reaped, so a bad
//!   pointer gives `EFAULT` and leaves the child to be collected by a correct call.
//!
//! The rusage fields come from the child's totals (`proc::Totals`, harvested from every
//! thread at exit): user time is its ONCPU_USR microstate, system time ONCPU_SYS plus
//! ONCPU_TRAP (a system call and a page fault are both the kernel working for it),
//! `ru_maxrss` its resident-set high-water mark in KiB, then faults, blocks and context
//! switches from its counters. Reaping also adds those totals to the caller's children
//! total, which is what `msa(MSA_CHILDREN)` reads.

use tally_microstate::MicroState;
use tally_tasktable::{Accumulate, WaitFor};
use tally_uapi::errno::{ECHILD, EINVAL};
use tally_uapi::syscall::{Rusage, Timeval, WCONTINUED, WNOHANG, WUNTRACED};

use super::{int_arg, usercopy, Args, SysResult};
use crate::proc::{self, Totals, WaitOptions, Waited};

const WNOTHREAD: u32 = 0x2000_0000;
const WALL: u32 = 0x4000_0000;
const WCLONE: u32 = 0x8000_0000;
const ACCEPTED: u32 = WNOHANG as u32 | WUNTRACED as u32 | WCONTINUED as u32 | WNOTHREAD | WALL | WCLONE;

/// `wait4(pid, status, options, rusage)` → the reaped child's pid, or 0 (`WNOHANG`).
pub fn wait4(a: &Args) -> SysResult {
    let (pid, status_addr, options, ru_addr) = (int_arg(a[0]), a[1], int_arg(a[2]) as u32, a[3]);
    if options & !ACCEPTED != 0 {
        return Err(EINVAL);
    }
    let target = match pid {
        -1 => WaitFor::Any,
        p if p > 0 => WaitFor::Pid(p),
        0 => WaitFor::Group(0),
        // -pid: that group (i32::MIN has no positive counterpart: no such group).
        p => WaitFor::Group(p.checked_neg().ok_or(ECHILD)?),
    };
    if status_addr != 0 {
        usercopy::check(status_addr, 4, true)?;
    }
    if ru_addr != 0 {
        usercopy::check(ru_addr, Rusage::SIZE as u64, true)?;
    }
    let has = |bit: usize| options & bit as u32 != 0;
    let how = WaitOptions { nohang: has(WNOHANG), untraced: has(WUNTRACED), continued: has(WCONTINUED) };
    let r = match proc::wait_child(target, how)? {
        None => return Ok(0),
        Some(Waited::Reaped(r)) => r,
        Some(Waited::Job { pid, status }) => {
            // A stop or a continue: the status, and an empty rusage (see the module comment).
            if status_addr != 0 {
                usercopy::write_i32(status_addr, status)?;
            }
            if ru_addr != 0 {
                usercopy::copy_to_user(ru_addr, &Rusage::default().to_bytes())?;
            }
            return Ok(pid as u64);
        }
    };
    // Checked above; these fail only if another thread unmapped the memory meanwhile, and
    // then the child is gone (as on Linux).
    if status_addr != 0 {
        usercopy::write_i32(status_addr, r.status.raw())?;
    }
    if ru_addr != 0 {
        let mut both = r.totals.clone();
        both.add(&r.children_total);
        usercopy::copy_to_user(ru_addr, &rusage(&both).to_bytes())?;
    }
    Ok(r.pid as u64)
}

fn timeval(ns: u64) -> Timeval {
    Timeval { tv_sec: (ns / 1_000_000_000) as i64, tv_usec: (ns % 1_000_000_000 / 1000) as i64 }
}

/// The `struct rusage` of some totals (see the module documentation).
pub fn rusage(t: &Totals) -> Rusage {
    let clock = crate::base::time::clock();
    let m = &t.msa;
    let user = clock.ticks_to_ns(m[MicroState::OncpuUsr as usize]);
    let sys = clock.ticks_to_ns(m[MicroState::OncpuSys as usize].wrapping_add(m[MicroState::OncpuTrap as usize]));
    let c = &t.counters;
    let n = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    Rusage {
        ru_utime: timeval(user),
        ru_stime: timeval(sys),
        ru_maxrss: n(t.mem.hiwater_rss_kb()),
        ru_minflt: n(c.minflt),
        ru_majflt: n(c.majflt),
        ru_inblock: n(c.inblock),
        ru_oublock: n(c.oublock),
        ru_nvcsw: n(c.nvcsw),
        ru_nivcsw: n(c.nivcsw),
        ..Rusage::default()
    }
}
