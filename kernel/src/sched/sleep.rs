//! Sleeping and waking: how a task leaves the run queue until something happens.
//!
//! [`block_current`] takes the running task off the run queue (its clock goes to the sleep's
//! microstate, INTERRUPTIBLE or UNINTERRUPTIBLE) and switches away; [`wake`] puts a task
//! back, from another task or an interrupt handler. A sleep may carry a deadline: the task is
//! then also on the timer list, which every tick drains (`interrupts.rs`). The wait queues of
//! the `sync` layer are built on these two functions.

use tally_runqueue::{BlockReason, PrevAction, SleepKind, TaskSlot};

use super::state::{self, Sched, Store};
use super::switch::switch_and_clean;

/// Block the running task in `kind` sleep until [`wake`] (or, with a deadline, until the
/// first tick at or after it). Call with interrupts disabled, after registering the task
/// where its waker will find it. Returns once the task runs again.
pub fn block_current(kind: SleepKind, deadline: Option<u64>) {
    block(kind, deadline, false);
}

/// [`block_current`] in an interruptible `kind` (INTERRUPTIBLE, FUTEX or POLL), unless the
/// task's process is being killed or a signal it does not block is pending: then it does
/// not sleep, and the answer is false. The kill and signal flags are read under the lock the
/// sleep takes anyway, so a kill or a signal after this check finds the task asleep and
/// wakes it (`running::kill`, `running::set_signal_pending`). The wait queues' interruptible
/// waits, the futex and poll waits sleep this way (`proc/futex.rs`, `sync::WaitSet`).
pub fn block_current_unless_killed(kind: SleepKind, deadline: Option<u64>) -> bool {
    block(kind, deadline, true)
}

fn block(kind: SleepKind, deadline: Option<u64>, unless_killed: bool) -> bool {
    let picked = state::with_irqs_off(|s| {
        if unless_killed && (s.current_hot().killed || s.current_hot().sigpending) {
            return None;
        }
        let timer = deadline.map(|when| {
            s.sleep_seq += 1;
            s.sleepers.insert((when, s.sleep_seq), s.rq.current());
            (when, s.sleep_seq)
        });
        Some((s.pick(PrevAction::Block(BlockReason::Sleep(kind))), timer))
    });
    let Some((threads, timer)) = picked else { return false };
    switch_and_clean(threads);
    if let Some(t) = timer {
        // Woken before the deadline: the timer entry must not wake a later, unrelated sleep.
        state::with_irqs_off(|s| s.sleepers.remove(&t));
    }
    true
}

/// Make a sleeping task runnable (no effect on a task that is not asleep; a stopped task
/// stays stopped, see `stop.rs`). Callable from interrupt handlers; a wake-up of a
/// higher-priority task asks for a reschedule.
pub fn wake(slot: TaskSlot) {
    state::try_with(|s| wake_locked(s, slot));
}

/// [`wake`], under the scheduler's lock.
pub(super) fn wake_locked(s: &mut Sched, slot: TaskSlot) {
    if !super::stop::wake_allowed(s, slot) {
        return; // stopped (job control): it runs when continued (`stop.rs`)
    }
    let now = hal::tsc::read();
    if s.rq.wake_up(&mut Store(&mut s.tasks), slot, now) {
        s.runq_changed(now);
    }
}

/// Sleep (interruptibly) for at least `ns` nanoseconds; woken by the tick that passes the
/// deadline, so the sleep lasts up to one tick longer. Returns early (false) if the task's
/// process is being killed (see `proc/exit.rs`) or a signal it does not block is pending;
/// true after the full sleep.
pub fn sleep_ns(ns: u64) -> bool {
    sleep_until(hal::tsc::read().saturating_add(crate::base::time::clock().ns_to_ticks(ns)))
}

/// [`sleep_ns`] to the TSC value `deadline`.
pub fn sleep_until(deadline: u64) -> bool {
    while hal::tsc::read() < deadline {
        // The check and the sleep with interrupts off: a signal an interrupt handler sends
        // in between would find the task awake, and its wake-up would be lost.
        let cut_short = hal::cpu::without_interrupts(|| {
            if super::running::interrupted() {
                return true;
            }
            block_current(SleepKind::Interruptible, Some(deadline));
            false
        });
        if cut_short {
            return false;
        }
    }
    true
}

/// The scheduler as the `sync` layer's wait queues see it (installed by `init`).
pub(super) struct WaitQueueHooks;

impl crate::sync::Scheduler for WaitQueueHooks {
    fn current(&self) -> Option<TaskSlot> {
        // The running task's key is one load (`state::current`); the hooks are installed
        // only after the scheduler, so it always names a task here.
        Some(state::slot_of(state::current()))
    }

    fn block(&self, kind: SleepKind, deadline: Option<u64>) {
        block_current(kind, deadline)
    }

    fn block_unless_killed(&self, kind: SleepKind, deadline: Option<u64>) -> bool {
        // The kill and signal flags are read under the lock the sleep takes anyway: a kill
        // or a signal after this check finds the task asleep and wakes it
        // (`running::kill`, `running::set_signal_pending`).
        block_current_unless_killed(kind, deadline)
    }

    fn wake(&self, task: TaskSlot) {
        // `WaitQueue::wake_all`, the only caller, has interrupts off already.
        state::try_with_irqs_off(|s| wake_locked(s, task));
    }
}
