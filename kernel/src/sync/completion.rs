//! A completion: one event, signalled from an interrupt handler, waited for by a task.
//!
//! The common case of a wait queue: the ATA driver issues a command and sleeps
//! (UNINTERRUPTIBLE: its time goes to UNINTERRUPTIBLE_SLEEP, a disk wait) until the
//! controller's interrupt says it has finished.

use core::sync::atomic::{AtomicBool, Ordering};
use tally_runqueue::SleepKind;

use super::WaitQueue;

/// One event, signalled from an interrupt handler; waiters sleep UNINTERRUPTIBLE.
pub struct IrqCompletion {
    done: AtomicBool,
    queue: WaitQueue,
}

impl IrqCompletion {
    pub const fn new() -> Self {
        Self { done: AtomicBool::new(false), queue: WaitQueue::new() }
    }

    /// Forget an earlier signal: the next [`wait`](Self::wait) waits for a new one. Call
    /// before starting the operation whose end will be signalled.
    pub fn reset(&self) {
        self.done.store(false, Ordering::Release);
    }

    /// Signal the event and wake the waiter (from the interrupt handler).
    pub fn complete(&self) {
        self.done.store(true, Ordering::Release);
        self.queue.wake_all();
    }

    /// Sleep until the event is signalled (true) or the TSC passes `deadline_tsc` (false).
    pub fn wait(&self, deadline_tsc: u64) -> bool {
        self.queue.wait_until(SleepKind::Uninterruptible, Some(deadline_tsc), || self.done.load(Ordering::Acquire))
    }
}
