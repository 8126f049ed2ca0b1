//! `scheduler_tick`: the timer interrupt charges the running task one tick of its slice.
//!
//! The kernel's timer interrupt handler calls [`RunQueue::scheduler_tick`] once per tick
//! (`HZ` times a second). What happens depends on the policy of the task on the CPU:
//!
//! ```text
//!   idle            nothing
//!   SCHED_FIFO      nothing: a FIFO task runs until it blocks or yields
//!   SCHED_RR        slice used up → fresh slice, tail of its level (still active), resched
//!   normal / batch  slice used up → fresh slice, new dynamic prio, and then
//!                      interactive and the expired array not starving → back on active
//!                      otherwise                                      → expired array
//!                   slice not used up, but an interactive task has run another
//!                   TIMESLICE_GRANULARITY → back of its level (round-robin among equals)
//! ```
//!
//! The tick never switches tasks itself: it sets `need_resched`, and the kernel calls
//! `schedule()` when it is safe to (on the way out of the interrupt, or — for the handover
//! case — inside it). The running task's microstate does not change here; moving it to the
//! expired array only decides which queue state it gets when it is switched out.

use crate::interactivity::{effective_prio, is_interactive, timeslice_granularity};
use crate::prio::Policy;
use crate::runqueue::RunQueue;
use crate::task::TaskStore;
use crate::timeslice::static_prio_timeslice;

impl RunQueue {
    /// One timer tick at TSC `now`, charged to the current task (see the module
    /// documentation). Sets `need_resched` when the current task should give up the CPU.
    pub fn scheduler_tick<S: TaskStore + ?Sized>(&mut self, store: &mut S, now: u64) {
        self.ticks += 1;
        self.timestamp_last_tick = now;
        let p = self.curr;
        if p == self.idle {
            return;
        }
        let active = self.active_id();
        let config = &self.config;
        let se = store.entity(p);
        if se.link.array != Some(active) {
            // It expired (or yielded) already and has not been switched out yet.
            self.need_resched = true;
            return;
        }

        if se.policy.is_realtime() {
            // BEGIN LAB 2: SCHED_RR: one tick less; at 0 a fresh slice, the tail of its level, resched (FIFO: nothing)
            // STUB: let _ = se;
            if se.policy == Policy::RoundRobin {
                se.time_slice = se.time_slice.saturating_sub(1);
                if se.time_slice == 0 {
                    se.time_slice = static_prio_timeslice(config, se.static_prio);
                    self.need_resched = true;
                    self.arrays[self.active].requeue(store, p);
                }
            }
            // END LAB 2
            return;
        }

        // BEGIN LAB 2: normal tasks: expiry (to expired unless interactive and not starving) or granularity round-robin
        // STUB: let _ = (se, active);
        se.time_slice = se.time_slice.saturating_sub(1);
        if se.time_slice == 0 {
            se.prio = effective_prio(config, se);
            se.time_slice = static_prio_timeslice(config, se.static_prio);
            let interactive = is_interactive(se.prio, se.static_prio);
            let static_prio = se.static_prio;
            self.arrays[self.active].dequeue(store, p);
            self.need_resched = true;
            if self.expired_timestamp.is_none() {
                self.expired_timestamp = Some(self.ticks);
            }
            if !interactive || self.expired_starving(static_prio) {
                let expired = self.expired_id();
                self.enqueue(store, p, expired);
                self.best_expired_prio = self.best_expired_prio.min(static_prio);
            } else {
                self.enqueue(store, p, active);
            }
        } else {
            let granularity = timeslice_granularity(config, se.sleep_avg);
            let used = static_prio_timeslice(config, se.static_prio).saturating_sub(se.time_slice);
            if is_interactive(se.prio, se.static_prio)
                && used.is_multiple_of(granularity)
                && se.time_slice >= granularity
            {
                self.arrays[self.active].requeue(store, p);
                self.need_resched = true;
            }
        }
        // END LAB 2
    }
}
