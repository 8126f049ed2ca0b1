//! `schedule()`: choose the next task to run, and account the switch.
//!
//! The kernel calls [`RunQueue::schedule`] whenever the current task gives up the CPU — it
//! is going to sleep, exiting, yielding, or was told to by `need_resched` — saying which
//! with a [`PrevAction`]. In order (Linux 2.6's `schedule()`):
//!
//! 1. **prev.** A blocking or exiting task leaves its array (`deactivate_task`); a yielding
//!    one moves to the expired array (RT: to the back of its level); a preempted one stays.
//! 2. **pick.** Nothing runnable → the idle task. Otherwise, if the active array is empty,
//!    flip the arrays (O(1); the microstate side is lazy, see `msa_hooks.rs`), then take the
//!    head of the first non-empty level: `find-first-bit` + list head.
//! 3. **credit.** A task woken by an interrupt (all of it) or by another task (30%) is
//!    credited its runqueue wait as sleep; this may move it to a better level.
//! 4. **charge.** prev's sleep average loses the time it just ran (less, the more bonus it
//!    has, so interactive tasks keep their status longer).
//! 5. **account.** With one `now`: prev's clock goes to its queue, sleep or zombie state,
//!    next's to its running state — or, when called inside an interrupt, next inherits
//!    `INTERRUPTED` until the interrupt ends (the handover).
//!
//! It returns both tasks; the kernel performs the actual context switch if they differ.

use crate::interactivity::{current_bonus, recalc_task_prio, ON_RUNQUEUE_WEIGHT};
use crate::runqueue::RunQueue;
use crate::task::{BlockReason, SleepType, TaskSlot, TaskState, TaskStore};
use tally_microstate::MicroState;

/// What the task calling `schedule()` is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrevAction {
    /// Still runnable: preempted (need_resched), or just checking. It stays on its array.
    Preempted,
    /// `sched_yield()`: a normal task moves to the expired array, an RT task to the back of
    /// its level on the active array.
    Yield,
    /// Leaves the runqueue: sleeps, stops, or exits (becomes a zombie).
    Block(BlockReason),
}

/// The outcome of `schedule()`: the task that called it and the task to run now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    /// The task that was on the CPU.
    pub prev: TaskSlot,
    /// The task to run; equal to `prev` if no context switch is needed.
    pub next: TaskSlot,
}

impl Switch {
    /// True if the kernel has to switch contexts.
    pub fn is_switch(&self) -> bool {
        self.prev != self.next
    }
}

impl RunQueue {
    /// Pick the next task at TSC `now` (see the module documentation). Call with interrupts
    /// off. Inside an interrupt (`irq().in_irq()`), `prev` should be `Preempted`.
    ///
    /// The idle task can only be preempted: any other action for it is treated as
    /// `Preempted`. Blocking with `Exit` turns prev into a zombie; the kernel frees it after
    /// the switch, once its parent has collected it (the scheduler no longer refers to it).
    pub fn schedule<S: TaskStore + ?Sized>(&mut self, store: &mut S, now: u64, action: PrevAction) -> Switch {
        let prev = self.curr;
        // The state a blocking prev leaves the CPU for.
        let mut blocked_state = None;
        if prev != self.idle {
            let mut blocked = None;
            match action {
                PrevAction::Preempted => {}
                PrevAction::Yield => self.yield_current(store),
                PrevAction::Block(reason) => {
                    self.deactivate(store, prev);
                    if let BlockReason::Sleep(kind) = reason {
                        if kind.is_uninterruptible() {
                            self.nr_uninterruptible += 1;
                        }
                    }
                    blocked = Some(reason);
                }
            }
            // Charge prev for the time it ran: sleep_avg -= run_time / bonus. (Before the
            // pick, which does not read prev's sleep average: one look at prev for all of it.)
            let config = &self.config;
            let se = store.entity(prev);
            let ran = now.saturating_sub(se.timestamp).min(config.max_sleep_avg_tsc());
            let charge = ran / current_bonus(config, se.sleep_avg).max(1) as u64;
            se.sleep_avg = se.sleep_avg.saturating_sub(charge);
            se.timestamp = now;
            if let Some(reason) = blocked {
                se.state = TaskState::Blocked(reason);
                blocked_state = Some(reason.microstate());
            }
        }

        // Sets next's timestamp to `now` (prev's too, if it runs on).
        let next = self.pick_next(store, now);
        self.need_resched = false;

        if next != prev {
            self.nr_switches += 1;
            self.curr = next;
            // A runnable prev waits on the array it is on *after* the pick, which may have
            // flipped the arrays (the idle task, on none, counts as active).
            let prev_state = blocked_state.unwrap_or_else(|| {
                if store.entity(prev).link.array == Some(self.expired_id()) {
                    MicroState::OnExpiredQueue
                } else {
                    MicroState::OnActiveQueue
                }
            });
            self.account_switch(store, prev, prev_state, next, now);
        }
        Switch { prev, next }
    }

    /// Steps 2 and 3: flip if needed, take the best task, credit its runqueue wait. The
    /// task picked runs from `now` (its timestamp).
    fn pick_next<S: TaskStore + ?Sized>(&mut self, store: &mut S, now: u64) -> TaskSlot {
        if self.nr_running == 0 {
            self.expired_timestamp = None;
            store.entity(self.idle).timestamp = now;
            return self.idle;
        }
        // BEGIN LAB 2: active empty? flip; then the head of the active array's best level
        // STUB: let next = self.idle;
        if self.arrays[self.active].is_empty() {
            self.flip_arrays(now);
        }
        let level = self.arrays[self.active].first_level();
        let Some(next) = self.arrays[self.active].head(level) else {
            return self.idle; // nr_running disagrees with the arrays; never expected
        };
        // END LAB 2

        let config = &self.config;
        let se = store.entity(next);
        let credited = matches!(se.sleep_type, SleepType::Interactive | SleepType::Interrupted);
        let old_prio = se.prio;
        let mut new_prio = old_prio;
        if !se.policy.is_realtime() && credited {
            let mut waited = now.saturating_sub(se.timestamp);
            if se.sleep_type == SleepType::Interactive {
                waited = waited * (ON_RUNQUEUE_WEIGHT * 128 / 100) / 128;
            }
            let credited_until = se.timestamp.saturating_add(waited);
            new_prio = recalc_task_prio(config, se, credited_until);
        }
        se.sleep_type = SleepType::Normal;
        se.timestamp = now;
        if new_prio != old_prio {
            let array = self.active_id();
            self.dequeue(store, next);
            store.entity(next).prio = new_prio;
            self.enqueue(store, next, array);
        }
        next
    }

    /// `sys_sched_yield`'s queue move for the current task.
    fn yield_current<S: TaskStore + ?Sized>(&mut self, store: &mut S) {
        let curr = self.curr;
        let se = store.entity(curr);
        let Some(array) = se.link.array else { return };
        let target = if se.policy.is_realtime() { self.active_id() } else { self.expired_id() };
        if array == target {
            self.arrays[array.index()].requeue(store, curr);
        } else {
            self.dequeue(store, curr);
            self.enqueue(store, curr, target);
        }
    }
}
