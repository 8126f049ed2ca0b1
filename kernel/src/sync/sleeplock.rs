//! A lock whose contenders sleep instead of spinning.

use core::sync::atomic::{AtomicBool, Ordering};
use tally_runqueue::SleepKind;

use super::WaitQueue;

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
