//! A priority array: 140 FIFO queues and a bitmap saying which are non-empty.
//!
//! This is the structure that makes the 2.6 scheduler O(1). Picking the next task is
//! "find the first set bit, take the head of that queue" — a handful of `trailing_zeros`
//! over three 64-bit words, however many tasks there are:
//!
//! ```text
//!   bitmap  0 0 1 0 ... 0 1 0 ... 1        (bit 140, the delimiter, is always set)
//!               │         │
//!   queue[2]  ──┘ A ⇄ B   │                 head → A, tail → B
//!   queue[120] ───────────┘ C
//! ```
//!
//! Each queue is a doubly linked list threaded through the tasks' own
//! [`SchedEntity`](crate::SchedEntity) links (see `task.rs`), with a head and a tail per
//! level, so enqueue at the tail, removal of any task, and moving a task to the back of its
//! level are all O(1).
//!
//! A runqueue has two of these, *active* and *expired* (`runqueue.rs`).

use crate::prio::MAX_PRIO;
use crate::task::{QueueLink, TaskSlot, TaskStore};

/// Number of 64-bit words holding `MAX_PRIO + 1` bits.
pub const BITMAP_WORDS: usize = (MAX_PRIO as usize + 1).div_ceil(64);

/// Which of a runqueue's two arrays (not which role it plays: the roles swap).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArrayId(pub(crate) u8);

impl ArrayId {
    /// 0 or 1.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// 140 FIFO queues and their bitmap (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrioArray {
    id: ArrayId,
    nr_active: u32,
    bitmap: [u64; BITMAP_WORDS],
    head: [Option<TaskSlot>; MAX_PRIO as usize],
    tail: [Option<TaskSlot>; MAX_PRIO as usize],
}

impl PrioArray {
    /// An empty array called `id`; only the delimiter bit at `MAX_PRIO` is set.
    pub(crate) fn new(id: ArrayId) -> Self {
        let mut bitmap = [0; BITMAP_WORDS];
        let delimiter = MAX_PRIO as usize;
        bitmap[delimiter / 64] |= 1 << (delimiter % 64);
        let empty = [None; MAX_PRIO as usize];
        PrioArray { id, nr_active: 0, bitmap, head: empty, tail: empty }
    }

    /// Which array this is.
    pub fn id(&self) -> ArrayId {
        self.id
    }

    /// Tasks queued on this array.
    pub fn nr_active(&self) -> u32 {
        self.nr_active
    }

    /// True when no task is queued.
    pub fn is_empty(&self) -> bool {
        self.nr_active == 0
    }

    /// `sched_find_first_bit`: the best non-empty level, or `MAX_PRIO` (the delimiter) if
    /// the array is empty.
    pub fn first_level(&self) -> usize {
        // BEGIN LAB 2: find-first-bit over the bitmap words (trailing_zeros); the delimiter ends the search
        // STUB: MAX_PRIO as usize
        for (i, word) in self.bitmap.iter().enumerate() {
            if *word != 0 {
                return i * 64 + word.trailing_zeros() as usize;
            }
        }
        // Unreachable while the delimiter is set.
        MAX_PRIO as usize
        // END LAB 2
    }

    /// Is the bitmap bit for `level` (0..=`MAX_PRIO`) set?
    pub fn bit(&self, level: usize) -> bool {
        level <= MAX_PRIO as usize && self.bitmap[level / 64] & (1 << (level % 64)) != 0
    }

    /// First task queued at `level`.
    pub fn head(&self, level: usize) -> Option<TaskSlot> {
        self.head.get(level).copied().flatten()
    }

    /// Last task queued at `level`.
    pub fn tail(&self, level: usize) -> Option<TaskSlot> {
        self.tail.get(level).copied().flatten()
    }

    fn set_bit(&mut self, level: usize) {
        self.bitmap[level / 64] |= 1 << (level % 64);
    }

    fn clear_bit(&mut self, level: usize) {
        self.bitmap[level / 64] &= !(1 << (level % 64));
    }

    /// `enqueue_task`: put `key` at the tail of queue `level` (clamped to 0..MAX_PRIO).
    /// The task must not be on any array.
    pub(crate) fn enqueue<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot, level: i32) {
        let level = level.clamp(0, MAX_PRIO - 1) as usize;
        // BEGIN LAB 2: link key after the level's tail (or as its head), mark the level non-empty, count it
        let old_tail = self.tail[level];
        store.entity(key).link = QueueLink { array: Some(self.id), level: level as u8, prev: old_tail, next: None };
        match old_tail {
            Some(t) => store.entity(t).link.next = Some(key),
            None => self.head[level] = Some(key),
        }
        self.tail[level] = Some(key);
        self.set_bit(level);
        self.nr_active += 1;
        // END LAB 2
    }

    /// `dequeue_task`: unlink `key`, which must be on this array, from its queue.
    pub(crate) fn dequeue<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot) {
        // BEGIN LAB 2: unlink from the neighbours (or head/tail), clear the bit of a level left empty, detach key
        // Detached first: one look at `key` (the neighbours are other tasks).
        let link = core::mem::replace(&mut store.entity(key).link, QueueLink::DETACHED);
        let level = link.level as usize;
        match link.prev {
            Some(p) => store.entity(p).link.next = link.next,
            None => self.head[level] = link.next,
        }
        match link.next {
            Some(n) => store.entity(n).link.prev = link.prev,
            None => self.tail[level] = link.prev,
        }
        if self.head[level].is_none() {
            self.clear_bit(level);
        }
        self.nr_active = self.nr_active.saturating_sub(1);
        // END LAB 2
    }

    /// `requeue_task`: move `key` (on this array) to the tail of its own level.
    pub(crate) fn requeue<S: TaskStore + ?Sized>(&mut self, store: &mut S, key: TaskSlot) {
        // BEGIN LAB 2: to the tail of the same level
        let level = store.entity(key).link.level as i32;
        self.dequeue(store, key);
        self.enqueue(store, key, level);
        // END LAB 2
    }
}

#[cfg(test)]
#[path = "prio_array_tests.rs"]
mod tests;
