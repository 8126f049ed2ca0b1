//! Signal calls: `rt_sigaction`, `rt_sigprocmask`, `rt_sigpending`, `rt_sigtimedwait`,
//! `rt_sigsuspend`, `pause`, `sigaltstack`, `rt_sigreturn`, `tkill`, `tgkill` — Linux's
//! numbers, layouts and errnos (`tally_uapi::signal`). Each copies the user's structures in
//! and out (both pointers checked before anything changes) and leaves the rules to
//! `proc/sigcalls.rs` and `tally_sig`; delivery is `proc/sigdeliver.rs`. See
//! `docs/user-mode.md` (signals).

use tally_sig::SigSet;
use tally_uapi::errno::EINVAL;
use tally_uapi::signal::{KernelSigaction, SigInfo, StackT};

use super::{int_arg, usercopy, Args, SysResult, SyscallFrame};
use crate::proc;

/// Every call here takes a `sigsetsize` of 8 (Linux's `sizeof(sigset_t)` for the kernel).
fn check_setsize(size: u64) -> Result<(), i32> {
    if size != 8 {
        return Err(EINVAL);
    }
    Ok(())
}

fn read_set(addr: u64) -> Result<SigSet, i32> {
    usercopy::read_array::<8>(addr).map(|b| SigSet(u64::from_le_bytes(b)))
}

/// `rt_sigaction(sig, act, oldact, sigsetsize)`.
pub fn rt_sigaction(a: &Args) -> SysResult {
    let (sig, act, oldact) = (int_arg(a[0]), a[1], a[2]);
    check_setsize(a[3])?;
    let sig = u8::try_from(sig).map_err(|_| EINVAL)?;
    let new = if act != 0 {
        let mut b = [0u8; KernelSigaction::SIZE];
        usercopy::copy_from_user(act, &mut b)?;
        Some(KernelSigaction::from_bytes(&b))
    } else {
        None
    };
    if oldact != 0 {
        usercopy::check(oldact, KernelSigaction::SIZE as u64, true)?;
    }
    let old = proc::sigaction(sig, new)?;
    if oldact != 0 {
        usercopy::copy_to_user(oldact, &old.to_bytes())?;
    }
    Ok(0)
}

/// `rt_sigprocmask(how, set, oldset, sigsetsize)`.
pub fn rt_sigprocmask(a: &Args) -> SysResult {
    let (how, set, oldset) = (a[0], a[1], a[2]);
    check_setsize(a[3])?;
    let change = if set != 0 { Some((how, read_set(set)?)) } else { None };
    if oldset != 0 {
        usercopy::check(oldset, 8, true)?;
    }
    let old = proc::sigprocmask(change)?;
    if oldset != 0 {
        usercopy::write_u64(oldset, old.0)?;
    }
    Ok(0)
}

/// `rt_sigpending(set, sigsetsize)`.
pub fn rt_sigpending(a: &Args) -> SysResult {
    check_setsize(a[1])?;
    usercopy::write_u64(a[0], proc::sigpending().0).map(|()| 0)
}

/// `rt_sigtimedwait(set, info, timeout, sigsetsize)`: the signal taken (`info` filled if
/// not NULL), `EAGAIN` after `timeout` (NULL: none), `EINTR` if another signal came.
pub fn rt_sigtimedwait(a: &Args) -> SysResult {
    let (set, info, timeout) = (read_set(a[0])?, a[1], a[2]);
    check_setsize(a[3])?;
    let deadline = if timeout != 0 {
        let ts = usercopy::read_timespec(timeout)?;
        if ts.tv_sec < 0 || !(0..1_000_000_000).contains(&ts.tv_nsec) {
            return Err(EINVAL);
        }
        let ns = (ts.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec as u64);
        Some(hal::tsc::read().saturating_add(crate::base::time::clock().ns_to_ticks(ns)))
    } else {
        None
    };
    if info != 0 {
        usercopy::check(info, SigInfo::SIZE as u64, true)?;
    }
    let got = proc::sigtimedwait(set, deadline)?;
    if info != 0 {
        usercopy::copy_to_user(info, &got.to_bytes())?;
    }
    Ok(got.signo as u64)
}

/// `rt_sigsuspend(mask, sigsetsize)`.
pub fn rt_sigsuspend(a: &Args) -> SysResult {
    check_setsize(a[1])?;
    proc::sigsuspend(read_set(a[0])?)
}

/// `pause()`.
pub fn pause(_: &Args) -> SysResult {
    proc::pause()
}

/// `tkill(tid, sig)`.
pub fn tkill(a: &Args) -> SysResult {
    proc::tgkill(None, int_arg(a[0]), int_arg(a[1])).map(|()| 0)
}

/// `tgkill(tgid, tid, sig)`.
pub fn tgkill(a: &Args) -> SysResult {
    proc::tgkill(Some(int_arg(a[0])), int_arg(a[1]), int_arg(a[2])).map(|()| 0)
}

/// `sigaltstack(ss, old_ss)` for a caller at user stack pointer `rsp`.
fn sigaltstack_at(ss: u64, old: u64, rsp: u64) -> SysResult {
    let new = if ss != 0 { Some(StackT::from_bytes(&usercopy::read_array::<{ StackT::SIZE }>(ss)?)) } else { None };
    if old != 0 {
        usercopy::check(old, StackT::SIZE as u64, true)?;
    }
    let was = proc::sigaltstack(new, rsp)?;
    if old != 0 {
        usercopy::copy_to_user(old, &was.to_bytes())?;
    }
    Ok(0)
}

/// `sigaltstack(ss, old_ss)`: a frame handler, for the caller's stack pointer (`EPERM`
/// while running on the alternate stack).
pub fn sigaltstack(f: &mut SyscallFrame) -> SysResult {
    sigaltstack_at(f.rdi, f.rsi, f.rsp)
}

/// `rt_sigreturn()`: every register from the signal frame (`proc/sigdeliver.rs`); `rax`
/// is the frame's, so the handler's interrupted code sees its own `rax` again.
pub fn rt_sigreturn(f: &mut SyscallFrame) -> SysResult {
    proc::sigreturn_regs(f);
    Ok(f.rax)
}
