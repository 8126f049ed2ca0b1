//! Wait queues: how a task sleeps until something happens, and how that something wakes it.
//!
//! A [`WaitQueue`] is a list of sleeping tasks. A task that must wait checks its condition
//! with interrupts disabled, puts itself on the queue and blocks in one step (nothing can
//! slip in between on one CPU with interrupts off), so a wake-up can never be lost between the
//! check and the sleep. The waker — another task, or an interrupt handler — sets the
//! condition and calls [`WaitQueue::wake_all`]. Sleeps are interruptible (`sleep()`, waiting
//! for a child: INTERRUPTIBLE_SLEEP) or uninterruptible (a disk request:
//! UNINTERRUPTIBLE_SLEEP), and may carry a deadline, after which the tick wakes the task.

use alloc::collections::VecDeque;
use spin::Mutex;
use tally_runqueue::{SleepKind, TaskSlot};

/// Tasks waiting for one condition, woken all at once.
pub struct WaitQueue {
    waiters: Mutex<VecDeque<TaskSlot>>,
}

impl WaitQueue {
    pub const fn new() -> Self {
        Self { waiters: Mutex::new(VecDeque::new()) }
    }

    /// Sleep in `kind` until `ready()` holds (true) or the TSC passes `deadline` (false).
    /// `ready` is evaluated with interrupts disabled.
    pub fn wait_until(&self, kind: SleepKind, deadline: Option<u64>, ready: impl Fn() -> bool) -> bool {
        loop {
            let outcome = hal::cpu::without_interrupts(|| {
                if ready() {
                    return Some(true);
                }
                if deadline.is_some_and(|d| hal::tsc::read() >= d) {
                    return Some(false);
                }
                let Some((sched, me)) = super::scheduler().and_then(|s| Some((s, s.current()?))) else {
                    // Before the scheduler exists there is nobody to switch to: wait here.
                    hal::cpu::wait_for_interrupt();
                    return None;
                };
                self.waiters.lock().push_back(me);
                sched.block(kind, deadline);
                // Woken (or timed out): leave the queue if the waker did not take us off.
                self.waiters.lock().retain(|&k| k != me);
                None
            });
            if let Some(done) = outcome {
                return done;
            }
        }
    }

    /// Wake every waiter. Callable from interrupt handlers.
    pub fn wake_all(&self) {
        hal::cpu::without_interrupts(|| {
            // One at a time, so the queue keeps its capacity: waiting and waking allocate
            // nothing after the first sleep (the heap allocator is a first-fit free list).
            loop {
                let next = self.waiters.lock().pop_front();
                match (next, super::scheduler()) {
                    (Some(k), Some(sched)) => sched.wake(k),
                    _ => break,
                }
            }
        });
    }
}
