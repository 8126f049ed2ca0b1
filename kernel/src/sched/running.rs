//! Which of the three running microstates the task on the CPU is in, and the kill flag
//! checked on every way back to user mode.
//!
//! A running task charges ONCPU_USR (user code), ONCPU_SYS (a system call) or ONCPU_TRAP
//! (an exception). The entry paths (`syscall`, `trap`) and the return to user mode tell the
//! run queue which, so the switch is exact to the TSC tick and correct inside interrupts.
//! The kill flag says the task's process is exiting: the task must leave through
//! `proc/exit.rs` instead of returning to user mode.

use tally_microstate::{MicroState, MsaTimes, ACCOUNTING_ENABLED};
use tally_runqueue::{BlockReason, TaskSlot, TaskState};

use super::state::{self, Store};

/// The TSC value for a running-state change: read only when accounting is compiled in
/// (without it the clocks keep no time, and a system call should not pay for the read).
#[inline(always)]
pub fn msa_now() -> u64 {
    if ACCOUNTING_ENABLED {
        hal::tsc::read()
    } else {
        0
    }
}

/// The running task now runs in `state` (ONCPU_USR, ONCPU_SYS or ONCPU_TRAP): its
/// microstate clock switches at this instant (or when the current interrupt ends).
pub fn set_running_state(state: MicroState) {
    state::with(|s| {
        let me = s.rq.current();
        s.rq.set_running_state(&mut Store(&mut s.tasks), me, state, hal::tsc::read());
    });
}

/// System-call entry, with interrupts still off (the `syscall` instruction cleared IF, so
/// the lock is taken without saving and restoring the flag): the task runs in the kernel
/// (ONCPU_SYS) and has made one more call (counted for prstat's SCL) — one lock acquisition
/// for both. The task is the current one and no interrupt is in progress, so the clock
/// switches through the run queue's system-call hook, `set_current_running_state`.
pub fn syscall_entered() {
    state::with_irqs_off(|s| {
        let (rq, me) = s.rq_and_current();
        me.counters.syscalls += 1;
        // BEGIN LAB 3: a system call begins: from this TSC value the task runs in the kernel (ONCPU_SYS)
        // STUB: let _ = rq;
        rq.set_current_running_state(&mut me.se, &mut me.clock, MicroState::OncpuSys, msa_now());
        // END LAB 3
    });
}

/// What the way back to ring 3 found ([`enter_user_mode`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserReturn {
    /// The task runs in ONCPU_USR from now: return to user mode.
    Ready,
    /// Its process is being killed: the task must exit instead (nothing changed).
    Killed,
    /// The scheduler wants the CPU for another task (nothing changed): switch first, then
    /// try again.
    Reschedule,
    /// Its process is stopping (job control): the task must stop first (`stop.rs`), then
    /// try again.
    Stop,
    /// A signal it does not block is pending: the process layer delivers it first (runs
    /// its default action or builds a handler's frame), then tries again.
    Signal,
}

/// Going back to ring 3 (after a system call, or for the first time): unless the task's
/// process is being killed or the scheduler wants the CPU, the task runs in ONCPU_USR from
/// now — the checks and the state switch under one lock. Call with interrupts off (the
/// lock is taken without saving the flag), so no kill and no wake-up slips in before
/// ring 3.
pub fn enter_user_mode() -> UserReturn {
    state::with_irqs_off(|s| {
        let (rq, me) = s.rq_and_current();
        if me.killed {
            return UserReturn::Killed;
        }
        if me.stop {
            return UserReturn::Stop;
        }
        if me.sigpending {
            return UserReturn::Signal;
        }
        if rq.need_resched() {
            return UserReturn::Reschedule;
        }
        // BEGIN LAB 3: back to ring 3: from this TSC value the task runs in user mode (ONCPU_USR)
        // STUB: let _ = rq;
        rq.set_current_running_state(&mut me.se, &mut me.clock, MicroState::OncpuUsr, msa_now());
        // END LAB 3
        UserReturn::Ready
    })
}

/// Is the current task's process being killed (so the task must not go back to user mode)?
pub fn kill_pending() -> bool {
    state::try_with(|s| {
        let me = s.rq.current();
        s.hot(me).is_some_and(|h| h.killed)
    })
    .unwrap_or(false)
}

/// Mark task `slot` to die at its next return towards user mode, and wake it if it sleeps
/// interruptibly (its sleep ends early: `nanosleep` returns, `wait4` fails with `EINTR`)
/// or is stopped (SIGKILL ends a stopped process). A task in an uninterruptible sleep (a
/// disk request) finishes it first.
pub fn kill(slot: TaskSlot, now: u64) {
    state::with(|s| {
        let Some(hot) = s.hot_mut(slot) else { return };
        hot.killed = true;
        if hot.se.state() == TaskState::Blocked(BlockReason::Stop) {
            // Continued first: back to the run queue, or to the sleep it was stopped in,
            // which the kill then ends like any interruptible sleep.
            super::stop::resume_locked(s, slot, now);
        }
        let Some(hot) = s.hot_mut(slot) else { return };
        // Every interruptible kind: a plain sleep, a futex wait, a poll.
        let interruptible =
            matches!(hot.se.state(), TaskState::Blocked(BlockReason::Sleep(k)) if !k.is_uninterruptible());
        if interruptible && s.rq.wake_up(&mut Store(&mut s.tasks), slot, now) {
            s.runq_changed(now);
        }
    });
}

/// Is the running task's sleep to be cut short: its process is being killed, or a signal it
/// does not block is pending (Linux's `signal_pending`)?
pub fn interrupted() -> bool {
    state::try_with(|s| {
        let me = s.rq.current();
        s.hot(me).is_some_and(|h| h.killed || h.sigpending)
    })
    .unwrap_or(false)
}

/// Has the running task anything to do before it returns to user mode from an interrupt
/// or an exception — exit (killed), stop, or look at its signals? One look under the lock.
pub fn user_return_work() -> bool {
    state::try_with(|s| {
        let me = s.rq.current();
        s.hot(me).is_some_and(|h| h.killed || h.stop || h.sigpending)
    })
    .unwrap_or(false)
}

/// Is a signal the running task does not block pending for it?
pub fn signal_pending() -> bool {
    state::try_with(|s| {
        let me = s.rq.current();
        s.hot(me).is_some_and(|h| h.sigpending)
    })
    .unwrap_or(false)
}

/// Set or clear task `slot`'s "signal pending" flag; when set, wake it if it sleeps
/// interruptibly (its sleep ends early, Linux's `signal_wake_up`). A stopped task stays
/// stopped (only SIGCONT and SIGKILL end a stop); an uninterruptible sleep finishes first.
pub fn set_signal_pending(slot: TaskSlot, pending: bool, now: u64) {
    state::with(|s| {
        let Some(hot) = s.hot_mut(slot) else { return };
        hot.sigpending = pending;
        // Every interruptible kind: a plain sleep, a futex wait, a poll.
        let interruptible =
            matches!(hot.se.state(), TaskState::Blocked(BlockReason::Sleep(k)) if !k.is_uninterruptible());
        if pending && interruptible && s.rq.wake_up(&mut Store(&mut s.tasks), slot, now) {
            s.runq_changed(now);
        }
    });
}

/// Is task `slot` marked to die?
pub fn killed(slot: TaskSlot) -> bool {
    state::with(|s| s.hot(slot).is_some_and(|h| h.killed))
}

/// The running task's microstate clocks now (TSC ticks).
pub fn current_msa() -> MsaTimes {
    state::with(|s| {
        let me = s.rq.current();
        s.msa_snapshot(me, hal::tsc::read())
    })
}
