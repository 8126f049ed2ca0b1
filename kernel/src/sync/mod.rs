//! # sync — how a task waits for something, and how that something wakes it
//!
//! The floor just above `base`: wait queues ([`WaitQueue`]), the
//! one-event completion an interrupt handler signals ([`IrqCompletion`]), a lock whose
//! contenders sleep instead of spinning ([`SleepLock`]), and a sleep on several wait queues
//! at once ([`WaitSet`], what `poll` waits with). Files, the bus and the drivers wait
//! with these.
//!
//! Waiting means taking the running task off the run queue, which is the scheduler's
//! business, one layer up. So this layer never names the scheduler: the `sched` layer
//! installs itself at boot as the [`Scheduler`] these primitives block and wake through
//! ([`install`]). Before that, a waiter simply halts until the next interrupt.
//!
//! See `docs/scheduler.md` (sleeping and waking) and `docs/architecture.md` (the floors).

mod completion;
mod sleeplock;
mod waitqueue;
mod waitset;

pub use completion::IrqCompletion;
pub use sleeplock::SleepLock;
pub use waitqueue::WaitQueue;
pub use waitset::WaitSet;

use spin::Once;
use tally_runqueue::{SleepKind, TaskSlot};

/// What the primitives need of a scheduler: who is running, how it blocks, how a sleeper
/// is woken. Implemented by the `sched` layer, which hands itself to [`install`].
pub trait Scheduler: Sync {
    /// The running task (`None` while there is nobody to switch to, early in boot).
    fn current(&self) -> Option<TaskSlot>;
    /// Block the running task in `kind` sleep until woken (or until the TSC passes
    /// `deadline`). Called with interrupts disabled, after the task is on a queue.
    fn block(&self, kind: SleepKind, deadline: Option<u64>);
    /// Block the running task in an interruptible `kind` of sleep (INTERRUPTIBLE, FUTEX,
    /// POLL) until woken or the TSC passes `deadline`, unless its process is being killed or
    /// a signal it does not block is pending: then it does not sleep, and the answer is
    /// false. (The check and the sleep are one step, so neither can slip in between.)
    fn block_unless_killed(&self, kind: SleepKind, deadline: Option<u64>) -> bool;
    /// Make `task` runnable if it sleeps. Called with interrupts disabled (also from
    /// interrupt handlers).
    fn wake(&self, task: TaskSlot);
}

static SCHEDULER: Once<&'static dyn Scheduler> = Once::new();

/// Make the primitives block and wake through `scheduler`. Call once, at boot.
pub fn install(scheduler: &'static dyn Scheduler) {
    SCHEDULER.call_once(|| scheduler);
}

fn scheduler() -> Option<&'static dyn Scheduler> {
    SCHEDULER.get().copied()
}
