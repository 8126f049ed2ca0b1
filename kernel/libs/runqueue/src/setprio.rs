//! Changing a task's priority or policy, and taking a waiting task off the runqueue.
//!
//! A queued task sits at the level of its priority, so any change of priority must take it
//! off its queue and put it back (`set_user_nice`, `sched_setscheduler` in Linux). These are
//! the scheduler's *dequeue-without-pick* paths, so they also settle any lazy array flip the
//! task still owes its clock (`msa_hooks.rs`) before its queue state changes:
//!
//! ```text
//!   set_nice        same array, new level          microstate unchanged
//!   set_scheduler   off its array, onto active     ONEXPIREDQUEUE → ONACTIVEQUEUE
//!   remove          off the runqueue               queue state → STOPPED / ZOMBIE / a sleep
//! ```

use crate::interactivity::effective_prio;
use crate::prio::{nice_to_prio, rt_prio_to_prio, Policy, MAX_NICE, MIN_NICE};
use crate::runqueue::RunQueue;
use crate::task::{check_policy, BlockReason, SchedError, TaskSlot, TaskState, TaskStore};

impl RunQueue {
    /// `set_user_nice`: give `key` nice value `nice` (clamped to -20..=19) at TSC `now`.
    /// An RT task only records it (it matters once the task is normal again). Asks for a
    /// reschedule if a queued task got better, or the running task got worse.
    #[allow(unused_variables)]
    pub fn set_nice<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot, nice: i32, now: u64) {
        if key == self.idle {
            return;
        }
        let config = &self.config;
        let se = store.entity(key);
        se.static_prio = nice_to_prio(nice.clamp(MIN_NICE, MAX_NICE));
        if se.policy.is_realtime() {
            return;
        }
        let array = se.link.array;
        let old_prio = se.prio;
        se.prio = effective_prio(config, se);
        let delta = se.prio - old_prio;
        if let Some(id) = array {
            self.dequeue(store, key);
            self.enqueue(store, key, id);
            if delta < 0 || (delta > 0 && key == self.curr) {
                self.need_resched = true;
            }
        }
    }

    /// `sched_setscheduler`: give `key` `policy` with RT priority `rt_priority` (1..=99 for
    /// FIFO/RR, 0 otherwise) at TSC `now`. A queued task is moved to the *active* array at
    /// its new level. Switching to `Batch` clears the sleep average, as Linux does.
    pub fn set_scheduler<S: TaskStore + ?Sized>(
        &mut self,
        store: &mut S,
        key: TaskSlot,
        policy: Policy,
        rt_priority: u32,
        now: u64,
    ) -> Result<(), SchedError> {
        check_policy(policy, rt_priority)?;
        if key == self.idle {
            return Err(SchedError::InvalidArgument);
        }
        let queued = store.entity(key).link.array.is_some();
        if queued {
            self.deactivate(store, key);
        }
        let se = store.entity(key);
        let old_prio = se.prio;
        se.policy = policy;
        se.rt_priority = rt_priority;
        if policy == Policy::Batch {
            se.sleep_avg = 0;
        }
        se.prio = if policy.is_realtime() { rt_prio_to_prio(rt_priority) } else { effective_prio(&self.config, se) };
        let new_prio = se.prio;
        if queued {
            self.activate(store, key);
            if key == self.curr {
                if new_prio > old_prio {
                    self.need_resched = true;
                }
            } else {
                self.account_waiting(store, key, now);
                self.preempt_check(store, key);
            }
        }
        Ok(())
    }

    /// Take `key`, which must be waiting on an array (runnable, not current, not idle), off
    /// the runqueue at TSC `now` for `reason` — e.g. it is stopped or killed while waiting.
    /// Returns false and does nothing otherwise. (The current task leaves through
    /// `schedule(PrevAction::Block(..))` instead.)
    pub fn remove<S: TaskStore + ?Sized>(
        &mut self,
        store: &mut S,
        key: TaskSlot,
        reason: BlockReason,
        now: u64,
    ) -> bool {
        if key == self.curr || key == self.idle || store.entity(key).link.array.is_none() {
            return false;
        }
        self.deactivate(store, key);
        store.entity(key).state = TaskState::Blocked(reason);
        if let BlockReason::Sleep(kind) = reason {
            if kind.is_uninterruptible() {
                self.nr_uninterruptible += 1;
            }
        }
        self.account_blocked(store, key, now, reason);
        true
    }
}
