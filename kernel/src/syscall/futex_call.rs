//! `futex(uaddr, op, val, timeout, uaddr2, val3)`: Linux's fast user-space locking.
//!
//! The operations (decoded by `tally_usync::futex::decode`, as Linux's `do_futex`):
//!
//! | op | does | returns |
//! |---|---|---|
//! | `FUTEX_WAIT` | sleep if `*uaddr == val`, for at most the relative `timeout` | 0 woken; `EAGAIN` the word differs; `ETIMEDOUT`; `EINTR` |
//! | `FUTEX_WAIT_BITSET` | the same, woken only by wakes whose bitset meets `val3` (0: `EINVAL`); `timeout` absolute on CLOCK_MONOTONIC, or CLOCK_REALTIME with `FUTEX_CLOCK_REALTIME` | as `FUTEX_WAIT` |
//! | `FUTEX_WAKE` | wake up to `val` sleepers | how many were woken |
//! | `FUTEX_WAKE_BITSET` | the same, those whose bitset meets `val3` | how many |
//! | `FUTEX_REQUEUE` | wake up to `val`, move up to `val2` (the `timeout` argument's value) more to `uaddr2` | woken + moved |
//! | `FUTEX_CMP_REQUEUE` | the same if `*uaddr == val3`, else `EAGAIN` | woken + moved |
//!
//! `FUTEX_PRIVATE_FLAG` is accepted on each (Tally keys private and shared futexes alike:
//! `proc/futex.rs`). `uaddr` not 4-byte aligned is `EINVAL`, outside the user half
//! `EFAULT`; a wait or compare whose word cannot be read is `EFAULT`. A wake does not read
//! the word, so it succeeds (waking nobody) on an unmapped user address, as Linux's private
//! wake. `ENOSYS` for `FUTEX_WAKE_OP`, `FUTEX_FD`, the priority-inheritance operations and
//! unknown ones, as Linux answers for operations it does not have. Waits sleep in
//! FUTEX_SLEEP. The design: `docs/user-mode.md` (futexes).

use tally_uapi::errno::{EFAULT, EINVAL};
use tally_usync::futex::{self, Cmd};
use tally_usync::Timeout;

use super::{int_arg, usercopy, Args, SysResult};
use crate::proc;
use hal::address_space::USER_END;

/// The TSC value a wait with `timeout` ends at (`None`: never).
pub(super) fn tsc_deadline(timeout: Timeout) -> Option<u64> {
    let now = hal::tsc::read();
    let clock = crate::base::time::clock();
    let after = |ns: u64| Some(now.saturating_add(clock.ns_to_ticks(ns)));
    let mono_now = clock.monotonic_ns(now);
    match timeout {
        Timeout::Never => None,
        Timeout::After(ns) => after(ns),
        Timeout::AtMonotonic(at) => after(at.saturating_sub(mono_now)),
        Timeout::AtRealtime(at) => {
            let boot = crate::base::time::boot_unix_seconds().saturating_mul(1_000_000_000);
            after(at.saturating_sub(boot).saturating_sub(mono_now))
        }
    }
}

/// A futex word's address: 4-byte aligned (`EINVAL`) and in the user half (`EFAULT`).
fn check_addr(addr: u64) -> Result<(), i32> {
    if !addr.is_multiple_of(4) {
        return Err(EINVAL);
    }
    if addr.checked_add(4).is_none_or(|end| end > USER_END) {
        return Err(EFAULT);
    }
    Ok(())
}

/// `futex(uaddr, op, val, timeout, uaddr2, val3)`.
pub fn futex(a: &Args) -> SysResult {
    let (uaddr, op, val, utime, uaddr2, val3) = (a[0], a[1] as u32, a[2] as u32, a[3], a[4], a[5] as u32);
    let req = futex::decode(op)?;
    match req.cmd {
        Cmd::Wait { bitset_op } => {
            // Linux reads the timeout first (EFAULT, EINVAL), then checks the bitset and the
            // address.
            let ts = if utime == 0 {
                None
            } else {
                let t = usercopy::read_timespec(utime)?;
                Some((t.tv_sec, t.tv_nsec))
            };
            let deadline = tsc_deadline(futex::timeout(&req, ts)?);
            let bitset = futex::bitset(bitset_op, val3)?;
            check_addr(uaddr)?;
            let key = proc::futex::key(uaddr)?;
            let fault_in = || usercopy::check(uaddr, 4, false);
            proc::futex::wait(key, val, bitset, deadline, &fault_in).map(|()| 0)
        }
        Cmd::Wake { bitset_op } => {
            let bitset = futex::bitset(bitset_op, val3)?;
            check_addr(uaddr)?;
            let key = proc::futex::key(uaddr)?;
            Ok(proc::futex::wake(key, int_arg(val as u64), bitset) as u64)
        }
        Cmd::Requeue { compare } => {
            // `val` and `val2` are C ints: negative counts are EINVAL.
            let (nr_wake, nr_requeue) = (int_arg(val as u64), int_arg(utime));
            if nr_wake < 0 || nr_requeue < 0 {
                return Err(EINVAL);
            }
            check_addr(uaddr)?;
            check_addr(uaddr2)?;
            let (from, to) = (proc::futex::key(uaddr)?, proc::futex::key(uaddr2)?);
            let fault_in = || usercopy::check(uaddr, 4, false);
            let expect = compare.then_some(val3);
            proc::futex::requeue(from, to, nr_wake as u32, nr_requeue as u32, expect, &fault_in).map(|n| n as u64)
        }
    }
}
