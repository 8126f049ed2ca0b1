//! Wait queues: how a task sleeps until something happens, and how that something wakes it.
//!
//! A [`WaitQueue`] is a list of sleeping tasks. A task that must wait checks its condition
//! with interrupts disabled, puts itself on the queue and blocks in one step (nothing can
//! slip in between on one CPU with interrupts off), so a wake-up can never be lost between the
//! check and the sleep. The waker — another task, or an interrupt handler — sets the
//! condition and calls [`WaitQueue::wake_all`]. Sleeps are interruptible (`sleep()`, waiting
//! for a child: INTERRUPTIBLE_SLEEP) or uninterruptible (a disk request:
//! UNINTERRUPTIBLE_SLEEP), and may carry a deadline, after which the tick wakes the task.
//!
//! [`WaitQueue::wait_for`] goes one step further: its check may also *act* (a pipe's reader
//! takes the bytes in the same step that finds them), so a hot path like a pipe hand-off pays
//! for one critical section, not one to look and another to take.

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
                self.sleep(kind, deadline, false);
                None
            });
            if let Some(done) = outcome {
                return done;
            }
        }
    }

    /// Sleep (interruptibly) until `attempt()` has an answer, and return it; `None` if the
    /// caller is interrupted before there is one — its process is being killed, or a signal
    /// it does not block is pending (the call then fails with `EINTR` or is restarted:
    /// `ERESTARTSYS`, `tally_sig::restart_after`). `attempt` runs with interrupts
    /// disabled, so it may both check its condition and act on it; `None` from it means
    /// "not yet": the task then sleeps on this queue in the same critical section.
    pub fn wait_for<R>(&self, mut attempt: impl FnMut() -> Option<R>) -> Option<R> {
        loop {
            let outcome = hal::cpu::without_interrupts(|| {
                if let Some(r) = attempt() {
                    return Some(Some(r));
                }
                if self.sleep(SleepKind::Interruptible, None, true) {
                    None // woken: try again
                } else {
                    Some(None) // killed, or a signal
                }
            });
            if let Some(answer) = outcome {
                return answer;
            }
        }
    }

    /// With interrupts disabled: put the running task on the queue and block it until a
    /// wake-up (or `deadline`). Returns once it runs again, off the queue. With
    /// `unless_killed`, a task whose process is being killed, or with a signal pending, does
    /// not sleep: false.
    fn sleep(&self, kind: SleepKind, deadline: Option<u64>, unless_killed: bool) -> bool {
        let Some((sched, me)) = super::scheduler().and_then(|s| Some((s, s.current()?))) else {
            // Before the scheduler exists there is nobody to switch to: wait here.
            hal::cpu::wait_for_interrupt();
            return true;
        };
        self.enqueue(me);
        let slept = if unless_killed {
            sched.block_unless_killed(kind, deadline)
        } else {
            sched.block(kind, deadline);
            true
        };
        // `wake_all` took us off the queue; a deadline or a kill may have woken us instead.
        self.dequeue(me);
        slept
    }

    /// Put `me` on the queue (interrupts disabled; `WaitSet` and `sleep`).
    pub(super) fn enqueue(&self, me: TaskSlot) {
        self.waiters.lock().push_back(me);
    }

    /// Take `me` off the queue if a wake-up has not already (interrupts disabled).
    pub(super) fn dequeue(&self, me: TaskSlot) {
        let mut waiters = self.waiters.lock();
        if !waiters.is_empty() {
            waiters.retain(|&k| k != me);
        }
    }

    /// Wake every waiter. Callable from interrupt handlers.
    pub fn wake_all(&self) {
        hal::cpu::without_interrupts(|| {
            let mut waiters = self.waiters.lock();
            if waiters.is_empty() {
                return; // the common case for a pipe's writers
            }
            let Some(sched) = super::scheduler() else { return };
            // Popped one at a time, so the queue keeps its capacity: waiting and waking
            // allocate nothing after the first sleep (the heap allocator is a first-fit
            // free list).
            while let Some(k) = waiters.pop_front() {
                sched.wake(k);
            }
        });
    }
}
