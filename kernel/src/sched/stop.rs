//! Job control's stop and continue, for one task: where a stopped task waits, and how its
//! time is charged to STOPPED.
//!
//! The process layer (`proc/job_stop.rs`) decides that a process stops or continues and
//! calls these for each of its threads. The model, faithful to Linux's (a thread stops at
//! its next return towards user mode, `do_signal_stop` from `get_signal`), and exact to the
//! TSC tick:
//!
//! * [`stop_thread`] marks the task (`Hot::stop`). A task asleep *interruptibly* is stopped
//!   where it sleeps (`RunQueue::stop_sleeper`: STOPPED from this instant); the sleep's
//!   kind is kept, so its wake-up is not lost. Any other task — running, runnable, or in an
//!   uninterruptible sleep (a disk request, which finishes first) — stops when it next goes
//!   back to user mode: the system-call exit and an interrupt that came from user mode ask
//!   [`stop_pending`] and call [`stop_current`], which blocks it with `BlockReason::Stop`
//!   (its clock switches from ONCPU_SYS or ONCPU_USR to STOPPED in `schedule()`).
//! * A wake-up for a task stopped in its sleep ([`super::wake`], the timer list) is not
//!   lost and not acted on: the kept kind is forgotten, so the task will run when continued.
//! * [`continue_thread`] (SIGCONT) clears the mark; a stopped task whose wake-up has not come
//!   goes back to its sleep (`RunQueue::resume_sleep`: the sleep's microstate again), any
//!   other stopped task is woken (STOPPED → ON_ACTIVE_QUEUE).
//! * A kill wakes a stopped task (`running::kill`): SIGKILL ends a stopped process.
//!
//! See `docs/job-control.md`.

use tally_runqueue::{BlockReason, PrevAction, TaskSlot, TaskState};

use super::state::{self, Sched, Store};
use super::switch::switch_and_clean;

/// Is `slot` stopped (blocked in STOPPED)?
pub(super) fn is_stopped_locked(s: &Sched, slot: TaskSlot) -> bool {
    s.hot(slot).is_some_and(|h| h.se.state() == TaskState::Blocked(BlockReason::Stop))
}

/// Is task `slot` stopped (blocked in STOPPED, by [`stop_thread`] or [`stop_current`])?
pub fn is_stopped(slot: TaskSlot) -> bool {
    state::with(|s| is_stopped_locked(s, slot))
}

/// Ask task `slot` to stop (its process is stopping) at TSC `now`; returns whether it is
/// stopped now (it was asleep interruptibly, or stopped already). Otherwise it stops at its
/// next return towards user mode.
pub fn stop_thread(slot: TaskSlot, now: u64) -> bool {
    state::with(|s| {
        let Some(hot) = s.hot_mut(slot) else { return false };
        if hot.killed {
            return false; // a dying task does not stop
        }
        hot.stop = true;
        if let Some(kind) = s.rq.stop_sleeper(&mut Store(&mut s.tasks), slot, now) {
            if let Some(hot) = s.hot_mut(slot) {
                hot.stopped_sleep = Some(kind);
            }
        }
        is_stopped_locked(s, slot)
    })
}

/// SIGCONT for task `slot` at TSC `now`: no more stop; a stopped task goes back to its sleep
/// or to the run queue (see the module documentation).
pub fn continue_thread(slot: TaskSlot, now: u64) {
    state::with(|s| resume_locked(s, slot, now));
}

/// [`continue_thread`] under the lock (also how a kill ends a stop).
pub(super) fn resume_locked(s: &mut Sched, slot: TaskSlot, now: u64) {
    let Some(hot) = s.hot_mut(slot) else { return };
    hot.stop = false;
    let sleep = hot.stopped_sleep.take();
    if !is_stopped_locked(s, slot) {
        return;
    }
    let resumed = match sleep {
        Some(kind) => s.rq.resume_sleep(&mut Store(&mut s.tasks), slot, kind, now),
        None => false,
    };
    if !resumed && s.rq.wake_up(&mut Store(&mut s.tasks), slot, now) {
        s.runq_changed(now);
    }
}

/// A wake-up for `slot` (under the lock): false if the task is stopped, which keeps it
/// stopped and, if it was stopped in its sleep, records that the sleep is over.
pub(super) fn wake_allowed(s: &mut Sched, slot: TaskSlot) -> bool {
    if !is_stopped_locked(s, slot) {
        return true;
    }
    if let Some(hot) = s.hot_mut(slot) {
        hot.stopped_sleep = None;
    }
    false
}

/// Must the running task stop before it returns to user mode?
pub fn stop_pending() -> bool {
    state::try_with(|s| {
        let me = s.rq.current();
        s.hot(me).is_some_and(|h| h.stop && !h.killed)
    })
    .unwrap_or(false)
}

/// Stop the running task here (a return towards user mode, interrupts off), if it still
/// must: it blocks in STOPPED until [`continue_thread`] or a kill wakes it. Returns when it
/// runs again (or at once if there is nothing to do).
pub fn stop_current() {
    let threads = state::with_irqs_off(|s| {
        let me = s.current_hot();
        if !me.stop || me.killed {
            return None;
        }
        Some(s.pick(PrevAction::Block(BlockReason::Stop)))
    });
    if let Some(threads) = threads {
        switch_and_clean(threads);
    }
}
