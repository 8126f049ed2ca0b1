//! Waiting on several wait queues at once: what `poll` needs (Linux's `poll_table`).
//!
//! `poll` watches many descriptors, each with its own [`WaitQueue`] (a pipe's readers, the
//! console's, the bus's), and must sleep until *any* of them has news. A [`WaitSet`] is the
//! list of queues one pass over the descriptors collected; [`WaitSet::sleep`] puts the
//! running task on every one of them, blocks once, and takes it off every one again before
//! returning:
//!
//! ```text
//!   interrupts off ─┬─ ask each file: ready?  (each adds its queue to the set)
//!                   ├─ none ready: enqueue on every queue, block (POLL_SLEEP) ─► woken by any
//!                   └─ dequeue from every queue ─► interrupts on, ask again
//! ```
//!
//! **No lost wake-up.** The files are asked and the task queued in one critical section
//! with interrupts off (one CPU), so a wake-up between "not ready" and the sleep cannot
//! happen: the waker runs after the task is on every queue.
//!
//! **No stale registration.** The task leaves every queue in the same critical section in
//! which it wakes — whichever queue woke it, or its deadline, or a kill — so no queue keeps
//! an entry for a sleep that is over. A later `wake_all` on one of them cannot reach the
//! task while it sleeps for something else (a futex, `nanosleep`), and the queues do not
//! grow with every `poll`. (Linux's `poll_freewait` does the same at the end of `do_poll`.)
//! A queue is added once however many descriptors share it (the bus's readers queue serves
//! every socket), so one wake-up is one entry to remove.
//!
//! The set borrows the queues: the caller keeps the files (and so their queues) alive for
//! the whole call, as `syscall/poll.rs` holds an `Arc` of each open file.

use alloc::vec::Vec;
use tally_runqueue::SleepKind;

use super::WaitQueue;

/// The wait queues of one `poll` pass.
#[derive(Default)]
pub struct WaitSet<'a> {
    queues: Vec<&'a WaitQueue>,
}

impl<'a> WaitSet<'a> {
    pub const fn new() -> Self {
        WaitSet { queues: Vec::new() }
    }

    /// Wake the sleeper when `queue` is woken (once per queue, however often it is added).
    pub fn add(&mut self, queue: &'a WaitQueue) {
        if !self.queues.iter().any(|q| core::ptr::eq(*q, queue)) {
            self.queues.push(queue);
        }
    }

    /// Forget the queues, for the next pass.
    pub fn clear(&mut self) {
        self.queues.clear();
    }

    /// With interrupts disabled, right after finding nothing ready: sleep in `kind` (an
    /// interruptible kind: POLL_SLEEP for `poll`) until one of the queues is woken or the TSC
    /// passes `deadline`. Returns on the task's way back, off every queue; false (without
    /// sleeping) if its process is being killed. A set with no queues sleeps until the
    /// deadline (`poll` on no descriptors is a sleep).
    pub fn sleep(&self, kind: SleepKind, deadline: Option<u64>) -> bool {
        let Some((sched, me)) = super::scheduler().and_then(|s| Some((s, s.current()?))) else {
            hal::cpu::wait_for_interrupt();
            return true;
        };
        for q in &self.queues {
            q.enqueue(me);
        }
        let slept = sched.block_unless_killed(kind, deadline);
        for q in &self.queues {
            q.dequeue(me);
        }
        slept
    }
}
