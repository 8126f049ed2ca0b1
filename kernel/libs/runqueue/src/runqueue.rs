//! The per-CPU runqueue: two priority arrays whose roles swap, and the task on the CPU.
//!
//! ```text
//!                 ┌──────────── active ────────────┐   ┌─────────── expired ───────────┐
//!   RunQueue ───► │ tasks with timeslice left      │   │ tasks that used their slice   │
//!                 └────────────────────────────────┘   └───────────────────────────────┘
//!   curr ───► the running task (still queued on its array, as in Linux)
//!   idle ───► runs when both arrays are empty; never queued
//! ```
//!
//! A task whose slice runs out gets a fresh slice and moves to *expired*, where it waits
//! until every task on *active* has had its turn. When active is empty, `schedule()` swaps
//! the two array indices — O(1), no task is touched — and the old expired array becomes the
//! new active one. That swap is the *array flip* the microstate accounting has to notice
//! (`msa_hooks.rs`).
//!
//! The operations live in a file each: `tick.rs` (`scheduler_tick`), `wakeup.rs`,
//! `schedule.rs` (`schedule`, yield), `setprio.rs` (nice, policy) and `msa_hooks.rs`
//! (accounting, interrupts). This file holds the state and the small helpers they share.

use crate::config::SchedConfig;
use crate::prio::MAX_PRIO;
use crate::prio_array::{ArrayId, PrioArray};
use crate::task::{QueueLink, TaskSlot, TaskState, TaskStore};
use tally_microstate::IrqAccounting;

/// One CPU's runqueue (see the module documentation).
#[derive(Clone, Debug)]
pub struct RunQueue {
    pub(crate) config: SchedConfig,
    pub(crate) arrays: [PrioArray; 2],
    /// Index in `arrays` of the active array; the other one is expired.
    pub(crate) active: usize,
    /// Runnable tasks on either array, the running one included, idle not.
    pub(crate) nr_running: u32,
    /// Tasks in an uninterruptible sleep (for the load average).
    pub(crate) nr_uninterruptible: u32,
    /// Context switches performed.
    pub(crate) nr_switches: u64,
    /// Timer ticks seen (`jiffies` as far as the scheduler is concerned).
    pub(crate) ticks: u64,
    /// TSC value passed to the last `scheduler_tick`.
    pub(crate) timestamp_last_tick: u64,
    /// Tick at which the first task expired since the last flip (`None`: none has).
    pub(crate) expired_timestamp: Option<u64>,
    /// Best static priority on the expired array (`MAX_PRIO` when none).
    pub(crate) best_expired_prio: i32,
    pub(crate) curr: TaskSlot,
    pub(crate) idle: TaskSlot,
    pub(crate) need_resched: bool,
    /// TSC of the last array flip, and how many flips there have been (wrapping).
    pub(crate) flip_time: u64,
    pub(crate) flip_gen: u32,
    /// This CPU's interrupt accounting (nesting depth, per-line timers).
    pub(crate) irq: IrqAccounting,
}

impl RunQueue {
    /// A runqueue whose CPU is running `idle` at TSC `now` (the boot context becomes the
    /// idle task, as in Linux). The idle task gets priority `MAX_PRIO`, so that any runnable
    /// task preempts it, and its clock is switched to its running state.
    pub fn new<S: TaskStore + ?Sized>(config: SchedConfig, idle: TaskSlot, store: &mut S, now: u64) -> Self {
        let se = store.entity(idle);
        se.prio = MAX_PRIO;
        se.state = TaskState::Runnable;
        se.link = QueueLink::DETACHED;
        se.timestamp = now;
        let running = se.running_state;
        store.clock(idle).switch(now, running);
        RunQueue {
            config,
            arrays: [PrioArray::new(ArrayId(0)), PrioArray::new(ArrayId(1))],
            active: 0,
            nr_running: 0,
            nr_uninterruptible: 0,
            nr_switches: 0,
            ticks: 0,
            timestamp_last_tick: now,
            expired_timestamp: None,
            best_expired_prio: MAX_PRIO,
            curr: idle,
            idle,
            need_resched: false,
            flip_time: now,
            flip_gen: 0,
            irq: IrqAccounting::new(),
        }
    }

    /// The clock configuration.
    pub fn config(&self) -> &SchedConfig {
        &self.config
    }
    /// The task on the CPU.
    pub fn current(&self) -> TaskSlot {
        self.curr
    }
    /// The idle task.
    pub fn idle(&self) -> TaskSlot {
        self.idle
    }
    /// True when the current task should call `schedule()` at the next opportunity.
    pub fn need_resched(&self) -> bool {
        self.need_resched
    }
    /// Ask for a reschedule (e.g. from another CPU's wake-up, later).
    pub fn set_need_resched(&mut self) {
        self.need_resched = true;
    }
    /// Runnable tasks (queued or running), idle excluded.
    pub fn nr_running(&self) -> u32 {
        self.nr_running
    }
    /// Tasks in an uninterruptible sleep.
    pub fn nr_uninterruptible(&self) -> u32 {
        self.nr_uninterruptible
    }
    /// Context switches so far.
    pub fn nr_switches(&self) -> u64 {
        self.nr_switches
    }
    /// Ticks counted by `scheduler_tick`.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }
    /// The active array.
    pub fn active(&self) -> &PrioArray {
        &self.arrays[self.active]
    }
    /// The expired array.
    pub fn expired(&self) -> &PrioArray {
        &self.arrays[1 - self.active]
    }
    /// An array by identity (whatever its current role).
    pub fn array(&self, id: ArrayId) -> &PrioArray {
        &self.arrays[id.index()]
    }
    /// Tick at which the oldest task on the expired array expired (`None` if none since the
    /// last flip).
    pub fn expired_timestamp(&self) -> Option<u64> {
        self.expired_timestamp
    }
    /// Best static priority among tasks that expired since the last flip (`MAX_PRIO`: none).
    pub fn best_expired_prio(&self) -> i32 {
        self.best_expired_prio
    }
    /// Number of array flips so far (wrapping).
    pub fn flip_generation(&self) -> u32 {
        self.flip_gen
    }
    /// TSC of the last array flip (construction time before the first).
    pub fn last_flip_time(&self) -> u64 {
        self.flip_time
    }
    /// This CPU's interrupt accounting, for the kstat layer.
    pub fn irq(&self) -> &IrqAccounting {
        &self.irq
    }
    /// Mutable interrupt accounting (line kinds, `set_outcome`).
    pub fn irq_mut(&mut self) -> &mut IrqAccounting {
        &mut self.irq
    }

    pub(crate) fn active_id(&self) -> ArrayId {
        ArrayId(self.active as u8)
    }

    pub(crate) fn expired_id(&self) -> ArrayId {
        ArrayId(1 - self.active as u8)
    }

    /// Queue `key` at the tail of its `prio` level on array `id`.
    pub(crate) fn enqueue<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot, id: ArrayId) {
        let prio = store.entity(key).prio;
        self.arrays[id.index()].enqueue(store, key, prio);
    }

    /// Unlink `key` from whichever array it is on (no-op if none).
    pub(crate) fn dequeue<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot) {
        if let Some(id) = store.entity(key).link.array {
            self.arrays[id.index()].dequeue(store, key);
        }
    }

    /// `__activate_task`: queue on the active array and count as running.
    pub(crate) fn activate<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot) {
        // One look at the task for its state and its level (the array links it in a second).
        let se = store.entity(key);
        se.state = TaskState::Runnable;
        let prio = se.prio;
        self.arrays[self.active].enqueue(store, key, prio);
        self.nr_running += 1;
    }

    /// `deactivate_task`: off its array and no longer counted as running.
    pub(crate) fn deactivate<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot) {
        self.dequeue(store, key);
        self.nr_running = self.nr_running.saturating_sub(1);
    }

    /// `EXPIRED_STARVING(rq)`: should even interactive tasks now go to the expired array?
    /// Yes if the current task's static priority is worse than the best one waiting there,
    /// or if the expired array has waited longer than `STARVATION_LIMIT` per running task.
    pub(crate) fn expired_starving(&self, curr_static_prio: i32) -> bool {
        // BEGIN LAB 2: a better static priority waits on expired, or it has waited > STARVATION_LIMIT x nr_running ticks
        // STUB: let _ = curr_static_prio;
        // STUB: false
        if curr_static_prio > self.best_expired_prio {
            return true;
        }
        match self.expired_timestamp {
            None => false,
            Some(t) => {
                let limit = self.config.starvation_limit() as u64 * self.nr_running as u64;
                self.ticks.saturating_sub(t) > limit
            }
        }
        // END LAB 2
    }

    /// Swap active and expired (O(1): two indices). Tasks are not touched; the flip's time
    /// and generation are recorded so their clocks can be corrected lazily.
    pub(crate) fn flip_arrays(&mut self, now: u64) {
        // BEGIN LAB 2: swap the roles, forget the old expiry bookkeeping, record when (and which) flip this was
        // STUB: let _ = now;
        self.active = 1 - self.active;
        self.expired_timestamp = None;
        self.best_expired_prio = MAX_PRIO;
        self.flip_time = now;
        self.flip_gen = self.flip_gen.wrapping_add(1);
        // END LAB 2
    }
}

#[cfg(test)]
#[path = "runqueue_tests.rs"]
mod tests;
