//! Making tasks runnable: waking a sleeper, and starting a new task.
//!
//! `wake_up` is Linux's `try_to_wake_up` → `activate_task`: the time the task slept is
//! credited to its sleep average (so its dynamic priority improves), it is queued at the
//! tail of its level on the *active* array, its clock goes from its sleep state to
//! `ONACTIVEQUEUE`, and if it now has a better priority than the running task the
//! scheduler asks for a reschedule — the caller then calls `schedule()` at its next
//! preemption point, which for a wake-up from an interrupt handler may be inside the
//! interrupt (the handover case).
//!
//! Woken tasks are also marked with how they were woken (by an interrupt, by a task, or
//! out of an uninterruptible sleep), which decides how much of their coming runqueue wait
//! `schedule()` credits as sleep.

use crate::interactivity::{effective_prio, recalc_task_prio};
use crate::runqueue::RunQueue;
use crate::task::{BlockReason, SleepType, TaskSlot, TaskState, TaskStore};
use crate::timeslice::static_prio_timeslice;
use tally_microstate::MicroState;

impl RunQueue {
    /// Wake `key` at TSC `now` if it is sleeping or stopped. Returns false (and does
    /// nothing) if it is already runnable, running, a zombie, not yet started, or the idle
    /// task.
    pub fn wake_up<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot, now: u64) -> bool {
        if key == self.idle || key == self.curr {
            return false;
        }
        let config = &self.config;
        let in_irq = self.irq.in_irq();
        let (se, clock) = store.task(key);
        let reason = match se.state {
            TaskState::Blocked(r) if r != BlockReason::Exit => r,
            _ => return false,
        };
        if let BlockReason::Sleep(kind) = reason {
            if kind.is_uninterruptible() {
                self.nr_uninterruptible = self.nr_uninterruptible.saturating_sub(1);
                // Involuntary sleepers do not earn sleep_avg beyond the interactive edge.
                se.sleep_type = SleepType::NonInteractive;
            }
        }
        // activate_task (2.6.20): RT tasks keep their priority and timestamp.
        if !se.policy.is_realtime() {
            se.prio = recalc_task_prio(config, se, now);
            if se.sleep_type == SleepType::Normal {
                se.sleep_type = if in_irq { SleepType::Interrupted } else { SleepType::Interactive };
            }
            se.timestamp = now;
        }
        clock.switch(now, MicroState::OnActiveQueue);
        self.activate(store, key);
        self.preempt_check(store, key);
        true
    }

    /// Start a task created with `SchedEntity::new` at TSC `now`: give it a full timeslice
    /// (this crate does not split the parent's slice at fork) and queue it at the tail of
    /// its level on the active array, child-runs-last style. Returns false if the task was
    /// not new.
    pub fn wake_up_new_task<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot, now: u64) -> bool {
        let config = &self.config;
        let (se, clock) = store.task(key);
        if se.state != TaskState::New || key == self.idle {
            return false;
        }
        se.prio = effective_prio(config, se);
        se.time_slice = static_prio_timeslice(config, se.static_prio);
        se.timestamp = now;
        se.sleep_type = SleepType::Normal;
        clock.switch(now, MicroState::OnActiveQueue);
        self.activate(store, key);
        self.preempt_check(store, key);
        true
    }

    /// `TASK_PREEMPTS_CURR`: ask for a reschedule if `key` beats the running task.
    pub(crate) fn preempt_check<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot) {
        let prio = store.entity(key).prio;
        let curr = self.curr;
        if prio < store.entity(curr).prio {
            self.need_resched = true;
        }
    }
}
