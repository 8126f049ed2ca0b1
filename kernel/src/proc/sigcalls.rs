//! # The signal calls, process side: dispositions, masks, waiting for a signal, the
//! alternate stack, signals to one thread
//!
//! The system calls (`syscall/signal_calls.rs`) copy the user's structures in and out;
//! the rules are here and in `tally_sig`, on the state `signal.rs` keeps: each a few
//! lines under the task table's lock, ending with the caller's "signal pending" flag
//! recomputed (Linux's `recalc_sigpending`) when its mask or its pending sets changed.
//! Waiting (`rt_sigtimedwait`, `rt_sigsuspend`, `pause`) sleeps interruptibly: any signal
//! the thread does not block wakes it (`sched::set_signal_pending`). See
//! `docs/user-mode.md` (signals).

use tally_sig::{Act, SigSet, ERESTARTNOHAND};
use tally_tasktable::TaskKey;
use tally_uapi::errno::{EAGAIN, EINTR, EINVAL, EPERM, ESRCH};
use tally_uapi::signal::{KernelSigaction, SigInfo, StackT, NSIG, SIGKILL, SIGSTOP, SIG_IGN, SI_TKILL};

use crate::sched;

/// `rt_sigaction(sig, act, oldact)`: set `sig`'s action to `new` (if given) and return the
/// old one. `EINVAL` for a number outside 1..=64, and for a new action for SIGKILL or
/// SIGSTOP. A signal that becomes ignored is discarded from every pending set of the
/// process (POSIX).
pub fn sigaction(sig: u8, new: Option<KernelSigaction>) -> Result<KernelSigaction, i32> {
    if !(1..=NSIG).contains(&sig) {
        return Err(EINVAL);
    }
    super::with(|p| {
        let me = sched::current();
        let leader = p.table.leader(me)?;
        let Some(new) = new else {
            return Ok(p.signals.process(leader).actions.get(sig));
        };
        let old = p.signals.process(leader).actions.set(sig, new)?;
        // The task table's ignored set is what job control reads (SIGTTIN's EIO).
        p.table.set_ignored(me, sig, new.sa_handler == SIG_IGN)?;
        if p.signals.process(leader).actions.act(sig) == Act::Ignore {
            let threads = p.table.threads(leader).map(|t| t.to_vec()).unwrap_or_default();
            p.signals.process(leader).pending.discard(SigSet::of(sig));
            for t in threads {
                p.signals.thread(t).pending.discard(SigSet::of(sig));
            }
        }
        Ok(old)
    })
}

/// `rt_sigprocmask(how, set, oldset)`: the caller's mask before; changed by `how` and `set`
/// if `change` is given (`EINVAL` for a bad `how`). SIGKILL and SIGSTOP are never blocked.
pub fn sigprocmask(change: Option<(u64, SigSet)>) -> Result<SigSet, i32> {
    super::with(|p| {
        let me = sched::current();
        let old = p.signals.thread(me).blocked;
        if let Some((how, set)) = change {
            p.signals.thread(me).blocked = old.apply(how, set).ok_or(EINVAL)?;
            p.recalc_sigpending(me);
        }
        Ok(old)
    })
}

/// `rt_sigpending`: the signals pending for the caller or its process that it blocks.
pub fn sigpending() -> SigSet {
    super::with(|p| {
        let me = sched::current();
        let Ok(leader) = p.table.leader(me) else { return SigSet::EMPTY };
        let shared = p.signals.process(leader).pending.set();
        let t = p.signals.thread(me);
        t.pending.set().union(shared).and(t.blocked)
    })
}

/// Take a pending signal of `set` for the caller (its own first, then its process's).
fn take_from(set: SigSet) -> Option<SigInfo> {
    super::with(|p| {
        let me = sched::current();
        let leader = p.table.leader(me).ok()?;
        let info =
            p.signals.thread(me).pending.take_next(set).or_else(|| p.signals.process(leader).pending.take_next(set));
        p.recalc_sigpending(me);
        info
    })
}

/// `rt_sigtimedwait(set, info, timeout)`: wait until a signal of `set` is pending and take
/// it (Linux's `do_sigtimedwait`). `deadline`: the TSC value at which to give up (`EAGAIN`;
/// `Some(0)` polls), `None` to wait for ever. While waiting, the signals of `set` are
/// unblocked so that their arrival wakes the caller, but they take no default action
/// (`real_blocked`); a signal outside `set` that the caller does not block ends the wait
/// with `EINTR` (its handler runs on the way out).
pub fn sigtimedwait(set: SigSet, deadline: Option<u64>) -> Result<SigInfo, i32> {
    let set = set.blockable();
    if let Some(info) = take_from(set) {
        return Ok(info);
    }
    if deadline.is_some_and(|d| hal::tsc::read() >= d) {
        return Err(EAGAIN);
    }
    super::with(|p| {
        let me = sched::current();
        let t = p.signals.thread(me);
        t.real_blocked = Some(t.blocked);
        t.blocked = t.blocked.minus(set);
        p.recalc_sigpending(me);
    });
    sched::sleep_until(deadline.unwrap_or(u64::MAX));
    super::with(|p| {
        let me = sched::current();
        let t = p.signals.thread(me);
        if let Some(b) = t.real_blocked.take() {
            t.blocked = b;
        }
        p.recalc_sigpending(me);
    });
    if let Some(info) = take_from(set) {
        return Ok(info);
    }
    if sched::interrupted() {
        Err(EINTR)
    } else {
        Err(EAGAIN)
    }
}

/// `rt_sigsuspend(mask)`: wait with `mask` as the mask until a signal is delivered; the old
/// mask comes back once its handler has run (the frame's `uc_sigmask`). Always ends with
/// `EINTR` (as `ERESTARTNOHAND`: a signal that runs no handler does not end it).
pub fn sigsuspend(mask: SigSet) -> Result<u64, i32> {
    begin_wait_mask(mask);
    sched::sleep_until(u64::MAX);
    Err(ERESTARTNOHAND)
}

/// The caller is about to wait with `mask` as its mask (`ppoll`, `pselect`): the old one is
/// kept as `sigsuspend` keeps it, to come back with [`end_wait_mask`] — or, if a signal cut
/// the wait short, once its handler has run (the frame's `uc_sigmask`), as Linux's
/// `restore_saved_sigmask_unless` does.
pub fn begin_wait_mask(mask: SigSet) {
    super::with(|p| {
        let me = sched::current();
        let t = p.signals.thread(me);
        t.saved_mask = Some(t.blocked);
        t.blocked = mask.blockable();
        p.recalc_sigpending(me);
    });
}

/// The wait of [`begin_wait_mask`] ended without a signal to deliver: the old mask now.
pub fn end_wait_mask() {
    restore_saved_mask();
}

/// The mask a temporary one replaced (`rt_sigsuspend`, `ppoll`) back in place, if there is
/// one: true if there was.
pub(super) fn restore_saved_mask() -> bool {
    super::with(|p| {
        let me = sched::current();
        let t = p.signals.thread(me);
        let Some(old) = t.saved_mask.take() else { return false };
        t.blocked = old;
        p.recalc_sigpending(me);
        true
    })
}

/// `pause()`: wait until a signal is delivered (`EINTR` once its handler has run).
pub fn pause() -> Result<u64, i32> {
    sched::sleep_until(u64::MAX);
    Err(ERESTARTNOHAND)
}

/// `sigaltstack(ss, old_ss)` for a caller whose user stack pointer is `rsp`: the old
/// alternate stack, and the new one set if `new` (`tally_sig::AltStack::set`'s checks).
pub fn sigaltstack(new: Option<StackT>, rsp: u64) -> Result<StackT, i32> {
    super::with(|p| {
        let t = p.signals.thread(sched::current());
        let old = t.altstack.as_stack_t(rsp);
        if let Some(ss) = new {
            t.altstack.set(&ss, rsp)?;
        }
        Ok(old)
    })
}

/// `tgkill(tgid, tid, sig)` (`tgid` `None`: `tkill`): `sig` to thread `tid` (of process
/// `tgid`). `EINVAL` for a non-positive id or a bad signal, `ESRCH` no such thread (in that
/// process), `EPERM` another user's (unless root). Signal 0 only checks.
pub fn tgkill(tgid: Option<i32>, tid: i32, sig: i32) -> Result<(), i32> {
    let sig = u8::try_from(sig).ok().filter(|&s| s <= NSIG).ok_or(EINVAL)?;
    if tid <= 0 || tgid.is_some_and(|g| g <= 0) {
        return Err(EINVAL);
    }
    super::with(|p| {
        let me = sched::current();
        let my_uid = p.table.get(me)?.uid();
        let target: TaskKey = p.table.lookup(tid)?;
        let t = p.table.get(target)?;
        if tgid.is_some_and(|g| g != t.tgid()) || t.exit_state() != tally_tasktable::ExitState::Live {
            return Err(ESRCH);
        }
        if my_uid != 0 && my_uid != t.uid() {
            return Err(EPERM);
        }
        if sig == 0 {
            return Ok(());
        }
        let info = SigInfo::from_process(sig, SI_TKILL, sched::current_ids().tgid, my_uid);
        p.send_to_thread(target, info, hal::tsc::read());
        Ok(())
    })
}

/// Signal state at `fork` (Linux's `copy_sighand`, `copy_signal`): the child process gets
/// the parent's dispositions and its forking thread's mask and alternate stack; nothing
/// pending.
pub(super) fn fork_signals(parent_pid: i32, child_pid: i32) {
    super::with(|p| {
        let (Ok(parent), Ok(child)) = (p.table.lookup(parent_pid), p.table.lookup(child_pid)) else { return };
        let (Ok(pl), Ok(cl)) = (p.table.leader(parent), p.table.leader(child)) else { return };
        let me = sched::current();
        let forker = if p.table.leader(me) == Ok(pl) { me } else { parent };
        let actions = p.signals.process(pl).actions.clone();
        let (blocked, altstack) = {
            let t = p.signals.thread(forker);
            (t.saved_mask.unwrap_or(t.blocked), t.altstack)
        };
        for sig in 1..=NSIG {
            if sig != SIGKILL && sig != SIGSTOP {
                let _ = p.table.set_ignored(cl, sig, actions.ignored(sig));
            }
        }
        let cp = p.signals.process(cl);
        cp.actions = actions;
        cp.pending.clear();
        let ct = p.signals.thread(child);
        ct.blocked = blocked;
        ct.altstack = altstack;
        ct.pending.clear();
    });
}

/// Signal state at `execve` (Linux's `flush_signal_handlers`): caught signals go back to
/// their default, ignored ones stay ignored, the mask and pending signals are kept, the
/// alternate stack is gone.
pub(super) fn exec_signals() {
    super::with(|p| {
        let me = sched::current();
        let Ok(leader) = p.table.leader(me) else { return };
        p.signals.process(leader).actions.reset_for_exec();
        let t = p.signals.thread(me);
        t.altstack = Default::default();
        t.saved_mask = None;
        t.real_blocked = None;
    });
}
