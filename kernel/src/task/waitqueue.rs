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
//! [`IrqCompletion`] is the common case of a wait queue: one event, signalled from an
//! interrupt handler (the ATA driver's "the controller has finished").

use alloc::collections::VecDeque;
use core::sync::atomic::{AtomicBool, Ordering};
use spin::Mutex;
use tally_runqueue::{SleepKind, TaskSlot};


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
                let Some(me) = super::current_sched_key() else {
                    // Before the scheduler exists there is nobody to switch to: wait here.
                    hal::cpu::wait_for_interrupt();
                    return None;
                };
                self.waiters.lock().push_back(me);
                super::block_current(kind, deadline);
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
                match next {
                    Some(k) => super::wake(k),
                    None => break,
                }
            }
        });
    }
}

/// One event, signalled from an interrupt handler; waiters sleep UNINTERRUPTIBLE.
pub struct IrqCompletion {
    done: AtomicBool,
    queue: WaitQueue,
}

impl IrqCompletion {
    pub const fn new() -> Self {
        Self { done: AtomicBool::new(false), queue: WaitQueue::new() }
    }
}

impl crate::drivers::ata::Completion for IrqCompletion {
    fn reset(&self) {
        self.done.store(false, Ordering::Release);
    }

    fn complete(&self) {
        self.done.store(true, Ordering::Release);
        self.queue.wake_all();
    }

    fn wait(&self, deadline_tsc: u64) -> bool {
        self.queue.wait_until(SleepKind::Uninterruptible, Some(deadline_tsc), || self.done.load(Ordering::Acquire))
    }
}

/// A lock whose contenders sleep (UNINTERRUPTIBLE, like a Linux mutex) instead of spinning:
/// for holders that themselves sleep while holding it, such as a disk request waiting for
/// its interrupt. A spinning contender could otherwise keep the holder from ever running.
pub struct SleepLock {
    held: AtomicBool,
    queue: WaitQueue,
}

/// Holding a [`SleepLock`]; dropping it releases the lock and wakes the sleepers.
pub struct SleepLockGuard<'a> {
    lock: &'a SleepLock,
}

impl SleepLock {
    pub const fn new() -> Self {
        Self { held: AtomicBool::new(false), queue: WaitQueue::new() }
    }

    /// Take the lock, sleeping while another task holds it.
    pub fn lock(&self) -> SleepLockGuard<'_> {
        // `swap` runs with interrupts off: taking a free lock and finding it held are one step.
        self.queue.wait_until(SleepKind::Uninterruptible, None, || !self.held.swap(true, Ordering::Acquire));
        SleepLockGuard { lock: self }
    }
}

impl Drop for SleepLockGuard<'_> {
    fn drop(&mut self) {
        self.lock.held.store(false, Ordering::Release);
        self.lock.queue.wake_all();
    }
}
