//! Switching tasks: `schedule()`'s decision, the machine switch, and what the next task does
//! first.
//!
//! A switch has three parts. Under the lock, [`Sched::pick`] runs the O(1) scheduler's
//! `schedule()` (which also switches both tasks' microstate clocks, with one TSC value) and
//! returns the two threads. With the lock released and interrupts still off,
//! `hal::context::switch` swaps stacks. The task that gets the CPU then runs
//! [`after_switch`]: it ends an interrupt it inherited (the INTERRUPTED handover) and frees
//! the stacks of released tasks, which nobody can be standing on any more. A brand-new
//! thread starts in [`thread_entry`], which does the same and then calls the task's body.

use alloc::sync::Arc;
use core::mem;
use core::sync::atomic::{AtomicBool, Ordering};
use hal::context::Thread;
use tally_runqueue::{BlockReason, PrevAction};

use super::state::{self, Sched, Store};

/// The two threads of a switch (from, to).
pub(super) type Threads = (Arc<Thread>, Arc<Thread>);

impl Sched {
    /// Run `schedule()` and return the threads to switch between, if any. A switch is
    /// counted for the task leaving the CPU: voluntary if it blocks or yields, involuntary
    /// if it is preempted (an exiting task's counters were already harvested).
    pub(super) fn pick(&mut self, action: PrevAction) -> Option<Threads> {
        let now = hal::tsc::read();
        let sw = self.rq.schedule(&mut Store(&mut self.tasks), now, action);
        self.runq_changed(now);
        if !sw.is_switch() {
            return None;
        }
        let counted = sw.prev != self.rq.idle() && action != PrevAction::Block(BlockReason::Exit);
        let Some(prev) = self.hot_mut(sw.prev) else { panic!("a runnable task has no scheduler state") };
        if counted {
            match action {
                PrevAction::Preempted => prev.counters.nivcsw += 1,
                _ => prev.counters.nvcsw += 1,
            }
        }
        let from = Arc::clone(&prev.thread);
        let Some(next) = self.hot(sw.next) else { panic!("a runnable task has no scheduler state") };
        let (to, vvar_slot) = (Arc::clone(&next.thread), next.vvar_slot);
        state::set_current(next);
        // Which clock page a user-space reader finds its own (the vvar header).
        self.vvar.current = vvar_slot;
        Some((from, to))
    }
}

/// Switch away from the current task as the scheduler decides; returns when it runs again.
pub(super) fn schedule(action: PrevAction) {
    hal::cpu::without_interrupts(|| {
        let threads = state::with_irqs_off(|s| s.pick(action));
        switch_and_clean(threads);
    });
}

/// With interrupts off and the lock released: switch (if the scheduler chose another
/// task), and once back on the CPU finish what the switch left over.
pub(super) fn switch_and_clean(threads: Option<Threads>) {
    if let Some((prev, next)) = threads {
        hal::context::switch(prev, next);
    }
    after_switch();
}

/// Set (under the scheduler's lock) when a switch leaves work for [`after_switch`]: an
/// interrupt handed over (`Sched::handover_line`) or a released task's thread in the
/// graveyard. Most switches leave none, and then `after_switch` need not take the lock.
static AFTER_SWITCH_WORK: AtomicBool = AtomicBool::new(false);

/// Tell the next [`after_switch`] that it has work (call with the scheduler's lock held).
pub(super) fn note_after_switch_work() {
    AFTER_SWITCH_WORK.store(true, Ordering::Relaxed);
}

/// The first thing a task does when it gets the CPU (back): if the task before it switched
/// inside an interrupt, this task inherited that interrupt (it has been INTERRUPTED since
/// the switch) and now ends it; and free what dead tasks left behind — their stacks are
/// certainly not in use any more, since this task is the one running.
pub(super) fn after_switch() {
    // Interrupts are off and there is one CPU: nothing sets the flag between this load and
    // the lock below, and anything set before is seen.
    if !AFTER_SWITCH_WORK.load(Ordering::Relaxed) {
        return;
    }
    let dead = state::with_irqs_off(|s| {
        AFTER_SWITCH_WORK.store(false, Ordering::Relaxed);
        if let Some(line) = s.handover_line.take() {
            s.rq.irq_exit(&mut Store(&mut s.tasks), line as usize, hal::tsc::read());
        }
        mem::take(&mut s.graveyard)
    });
    drop(dead);
}

/// First code of every new thread (the HAL's trampoline calls it, interrupts off): finish
/// the switch, then run the task's [`ThreadStart`](super::ThreadStart) with interrupts on.
pub(super) extern "C" fn thread_entry(_: u64) -> ! {
    after_switch();
    let start = state::with_irqs_off(|s| s.current_hot().start.take());
    hal::cpu::enable_interrupts();
    match start {
        Some(start) => {
            (start.body)(start.arg);
            (start.exit)()
        }
        None => panic!("a new thread has nothing to run"),
    }
}

/// On the way out of an interrupt (and in the idle loop): switch if the scheduler asked to.
pub fn preempt_if_needed() {
    let needed = state::try_with(|s| s.rq.need_resched()).unwrap_or(false);
    if needed {
        schedule(PrevAction::Preempted);
    }
}

/// Give up the CPU (2.6 `sched_yield`: a normal task goes to the expired array).
pub fn yield_now() {
    schedule(PrevAction::Yield);
}

/// The idle loop: the boot thread's life once the kernel is up.
pub fn idle_loop() -> ! {
    loop {
        preempt_if_needed();
        hal::cpu::wait_for_interrupt();
    }
}
