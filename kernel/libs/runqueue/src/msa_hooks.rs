//! Microstate hooks: where the scheduler tells each task's clock what it is doing.
//!
//! Every scheduler event that changes where a task's time goes switches that task's
//! [`MsaClock`](tally_microstate::MsaClock), using the caller's single `now`:
//!
//! ```text
//!   wake_up            sleep state        → ONACTIVEQUEUE
//!   schedule, prev     ONCPU_*            → ONACTIVEQUEUE | ONEXPIREDQUEUE | a sleep | ZOMBIE
//!   schedule, next     ONACTIVEQUEUE      → its running state (or INTERRUPTED, inside an irq)
//!   set_scheduler      ONEXPIREDQUEUE     → ONACTIVEQUEUE (moved to the active array)
//!   remove             a queue state      → STOPPED | ZOMBIE
//! ```
//!
//! **The lazy array flip.** When active runs dry, `schedule()` swaps the arrays, and every
//! task waiting on the old expired array is — from that instant — waiting on the active one.
//! Switching each of their clocks would make the O(1) swap O(n). Instead the flip only records
//! its time and bumps a generation counter. A task whose clock says `ONEXPIREDQUEUE` carries
//! the generation in which that was written; the first time the scheduler touches it again
//! (it is picked to run, or taken off its queue), a differing generation means "a flip
//! happened while you waited", and its clock is charged `ONEXPIREDQUEUE` up to the flip and
//! `ONACTIVEQUEUE` from the flip on — exactly what eager switching would have given.
//!
//! At most one flip can be pending for a task: the next flip needs the active array empty,
//! and the task is on it until the scheduler touches it. Readers that want the truth without
//! touching the task use [`RunQueue::microstate`] and [`RunQueue::msa_snapshot`], which apply
//! a pending flip on the fly.
//!
//! **Interrupts.** The runqueue owns its CPU's [`IrqAccounting`](tally_microstate::IrqAccounting);
//! [`RunQueue::irq_enter`] and [`RunQueue::irq_exit`] charge the current task. A context
//! switch inside an interrupt hands `INTERRUPTED` over to the incoming task (see
//! `tally_microstate`'s `irq.rs`).
//!
//! **The idle task** is never queued, but accounts like any task: `ONCPU_SYS` (its running
//! state) while it runs — that is the CPU's idle time — and `ONACTIVEQUEUE` while another task
//! has the CPU, since it is always ready to run.

use crate::runqueue::RunQueue;
use crate::task::{BlockReason, SchedEntity, TaskSlot, TaskStore};
use tally_microstate::{MicroState, MsaClock, MsaTimes};

impl RunQueue {
    /// If a flip happened while `key` waited on the expired array, write it into the clock
    /// now: `ONEXPIREDQUEUE` until the flip, `ONACTIVEQUEUE` after.
    /// (Takes the task's two parts, from one [`TaskStore::task`] lookup.)
    #[inline]
    fn settle_flip(&self, se: &mut SchedEntity, clock: &mut MsaClock) {
        // BEGIN LAB 3: a flip happened since the task went to the expired array: write it into the clock, once
        // STUB: let _ = (se, clock);
        if let Some(generation) = se.expired_since_flip {
            if generation != self.flip_gen {
                se.expired_since_flip = None;
                clock.switch(self.flip_time, MicroState::OnActiveQueue);
            }
        }
        // END LAB 3
    }

    /// A task that is not on the CPU is now waiting on its array: charge it from `now` as
    /// `ONACTIVEQUEUE` or `ONEXPIREDQUEUE` (the idle task counts as active).
    pub(crate) fn account_waiting<S: TaskStore + ?Sized>(&self, store: &mut S, key: TaskSlot, now: u64) {
        let (se, clock) = store.task(key);
        // BEGIN LAB 3: settle any pending flip, then charge the task from `now` to the queue it waits on (remember the generation if expired)
        // STUB: let _ = (se, clock, now);
        self.settle_flip(se, clock);
        let state = self.waiting_state(se);
        se.expired_since_flip = if state == MicroState::OnExpiredQueue { Some(self.flip_gen) } else { None };
        clock.switch(now, state);
        // END LAB 3
    }

    /// A task that is not on the CPU left the runqueue at `now` for `reason`.
    pub(crate) fn account_blocked<S: TaskStore + ?Sized>(
        &self,
        store: &mut S,
        key: TaskSlot,
        now: u64,
        reason: BlockReason,
    ) {
        let (se, clock) = store.task(key);
        // BEGIN LAB 3: settle any pending flip, then charge the task from `now` to the state of `reason`
        // STUB: let _ = (se, clock, now, reason);
        self.settle_flip(se, clock);
        se.expired_since_flip = None;
        clock.switch(now, reason.microstate());
        // END LAB 3
    }

    /// The queue state of a waiting task, from the array it is on.
    fn waiting_state(&self, se: &SchedEntity) -> MicroState {
        match se.link.array {
            Some(id) if id == self.expired_id() => MicroState::OnExpiredQueue,
            _ => MicroState::OnActiveQueue,
        }
    }

    /// Does `key`'s clock still owe a flip (see the module documentation)?
    fn flip_pending(&self, se: &SchedEntity) -> bool {
        // BEGIN LAB 3: a task owes a flip if it waits on the expired array since a generation that is no longer current
        // STUB: let _ = se;
        // STUB: false
        matches!(se.expired_since_flip, Some(g) if g != self.flip_gen)
        // END LAB 3
    }

    /// The microstate `key` is in, with any pending flip applied. Does not modify the task.
    pub fn microstate<S: TaskStore + ?Sized>(&self, store: &mut S, key: TaskSlot) -> MicroState {
        let (se, clock) = store.task(key);
        if self.flip_pending(se) {
            MicroState::OnActiveQueue
        } else {
            clock.state()
        }
    }

    /// `key`'s microstate clocks at `now` (TSC ticks), with any pending flip applied — what
    /// the `msa()` system call and `/proc`-style readers should report. Does not modify the
    /// task.
    pub fn msa_snapshot<S: TaskStore + ?Sized>(&self, store: &mut S, key: TaskSlot, now: u64) -> MsaTimes {
        let (se, clock) = store.task(key);
        if self.flip_pending(se) {
            clock.snapshot_as_if_switched(self.flip_time, MicroState::OnActiveQueue, now)
        } else {
            clock.snapshot(now)
        }
    }

    /// Add [`RunQueue::msa_snapshot`]'s clocks into `sum` (wrapping), without building the
    /// snapshot when no flip is pending: how `MSA_SELF` sums a process's live threads.
    #[inline]
    pub fn msa_add_to<S: TaskStore + ?Sized>(&self, store: &mut S, key: TaskSlot, now: u64, sum: &mut MsaTimes) {
        let (se, clock) = store.task(key);
        if self.flip_pending(se) {
            self.msa_add_flipped(clock, now, sum);
        } else {
            clock.add_to(now, sum);
        }
    }

    /// [`RunQueue::msa_add_to`] for a task that owes a flip (rare: it waited on the expired
    /// array across an array swap and has not been touched since).
    #[cold]
    #[inline(never)]
    fn msa_add_flipped(&self, clock: &MsaClock, now: u64, sum: &mut MsaTimes) {
        let clocks = clock.snapshot_as_if_switched(self.flip_time, MicroState::OnActiveQueue, now);
        for (total, t) in sum.iter_mut().zip(clocks) {
            *total = total.wrapping_add(t);
        }
    }

    /// Set the on-CPU state `key` runs in (`ONCPU_USR` on return to user mode, `ONCPU_SYS` on
    /// system-call entry, `ONCPU_TRAP` in an exception handler). If `key` is the current task
    /// its clock switches at `now` — or, inside an interrupt, when the interrupt ends.
    ///
    /// Inlined into the system-call paths: no call, and their constant `state` needs no
    /// delay-class lookup.
    #[inline]
    pub fn set_running_state<S: TaskStore + ?Sized>(
        &mut self,
        store: &mut S,
        key: TaskSlot,
        state: MicroState,
        now: u64,
    ) {
        let (se, clock) = store.task(key);
        se.running_state = state;
        // BEGIN LAB 3: the current task's clock switches now, or (inside an interrupt) when the interrupt ends
        // STUB: let _ = (clock, now);
        if key == self.curr {
            if self.irq.in_irq() {
                self.irq.set_resume_state(state);
            } else {
                clock.switch(now, state);
            }
        }
        // END LAB 3
    }

    /// [`RunQueue::set_running_state`] for the current task, outside any interrupt: the
    /// system-call paths, which know both by construction (a `syscall` comes from ring 3,
    /// where no interrupt handler can be in progress, and its way back runs on the call's
    /// own kernel stack with interrupts off). So the clock switches now, between two on-CPU
    /// states ([`MsaClock::switch_on_cpu`]), and the hook does the clock's work and nothing
    /// else: no "is it the current task, inside an interrupt?" test, no delay class. The
    /// caller hands in the current task's entity and clock (it has looked the task up
    /// already, for its own bookkeeping).
    #[inline]
    pub fn set_current_running_state(&self, se: &mut SchedEntity, clock: &mut MsaClock, state: MicroState, now: u64) {
        debug_assert!(!self.irq.in_irq(), "a system-call path inside an interrupt");
        se.running_state = state;
        clock.switch_on_cpu(now, state);
    }

    /// An interrupt on `line` begins at `now`: the current task is `INTERRUPTED` (see
    /// [`IrqAccounting::irq_enter`](tally_microstate::IrqAccounting::irq_enter)).
    pub fn irq_enter<S: TaskStore + ?Sized>(&mut self, store: &mut S, line: usize, now: u64) {
        let curr = self.curr;
        self.irq.irq_enter(line, now, store.clock(curr));
    }

    /// The innermost interrupt (on `line`) ends at `now`; the outermost exit gives the
    /// *current* task — after a handover, the one switched in — its running state back.
    pub fn irq_exit<S: TaskStore + ?Sized>(&mut self, store: &mut S, line: usize, now: u64) {
        let curr = self.curr;
        self.irq.irq_exit(line, now, store.clock(curr));
    }

    /// The clock side of a context switch, at one `now`: `prev` leaves the CPU for
    /// `prev_state`, `next` takes it (inheriting `INTERRUPTED` inside an interrupt). One
    /// store lookup per task, and `now` raised to the latest time once for both halves.
    pub(crate) fn account_switch<S: TaskStore + ?Sized>(
        &mut self,
        store: &mut S,
        prev: TaskSlot,
        prev_state: MicroState,
        next: TaskSlot,
        now: u64,
    ) {
        // BEGIN LAB 3: one `now` for both tasks: prev leaves for `prev_state` (task_off_cpu), next settles any flip and takes the CPU (task_on_cpu)
        // STUB: let _ = (store, prev, prev_state, next, now);
        let (se, clock) = store.task(prev);
        se.expired_since_flip = if prev_state == MicroState::OnExpiredQueue { Some(self.flip_gen) } else { None };
        let at = self.irq.task_off_cpu(now, clock, prev_state);

        let (se, clock) = store.task(next);
        if self.flip_pending(se) {
            // `settle_flip`, then the CPU, written out in this branch so that the compiler
            // knows the state in between (ONACTIVEQUEUE) and skips its delay-class lookup.
            se.expired_since_flip = None;
            clock.switch(self.flip_time, MicroState::OnActiveQueue);
            self.irq.task_on_cpu(at, clock, se.running_state);
        } else {
            se.expired_since_flip = None;
            self.irq.task_on_cpu(at, clock, se.running_state);
        }
        // END LAB 3
    }
}
