//! # The slab: where task records live, and the keys that name them
//!
//! Every task record sits in one slot of a growable array. A task is named inside the kernel
//! by a [`TaskKey`]: the slot index plus the slot's *generation*. Freeing a slot bumps its
//! generation, so a key kept after its task was reaped (by a wait queue, a timer, a scheduler
//! run queue) no longer matches and every lookup with it fails with `ESRCH` instead of quietly
//! reaching whatever task moved into the slot next. Lookup is O(1): index, then compare.
//!
//! Flow: `TaskTable::create*` inserts here, `exit` of a thread and `wait` of a process remove
//! from here. Pids (user-visible names) are a separate layer, see `pid.rs`.

use alloc::vec::Vec;

/// The kernel-internal name of a task: a slot index and the generation the slot had when the
/// task was put there. `Copy`, 8 bytes, cheap to keep in run queues and wait queues.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct TaskKey {
    index: u32,
    generation: u32,
}

impl TaskKey {
    /// The slot index (stable while the task lives; reused after it is reaped).
    pub fn index(self) -> u32 {
        self.index
    }

    /// The generation: tells this task apart from every earlier and later user of the slot.
    pub fn generation(self) -> u32 {
        self.generation
    }

    /// Packs the key in a `u64` (e.g. a per-CPU "current task" word). Any `u64` unpacks to a
    /// key; one that never named a task simply fails every lookup.
    pub const fn to_bits(self) -> u64 {
        (self.generation as u64) << 32 | self.index as u64
    }

    pub const fn from_bits(bits: u64) -> Self {
        TaskKey { index: bits as u32, generation: (bits >> 32) as u32 }
    }
}

struct Slot<E> {
    generation: u32,
    entry: Option<E>,
}

/// A generational slab. Slots freed by [`Slab::remove`] are reused, most recent first; a slot
/// whose generation would wrap is retired instead, so two keys can never alias.
pub(crate) struct Slab<E> {
    slots: Vec<Slot<E>>,
    free: Vec<u32>,
    len: usize,
}

impl<E> Slab<E> {
    pub(crate) const fn new() -> Self {
        Slab { slots: Vec::new(), free: Vec::new(), len: 0 }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Stores `entry` and returns its key, or gives the entry back when memory is short or
    /// the index space (u32) is used up.
    pub(crate) fn insert(&mut self, entry: E) -> Result<TaskKey, E> {
        if let Some(index) = self.free.pop() {
            if let Some(slot) = self.slots.get_mut(index as usize) {
                slot.entry = Some(entry);
                self.len += 1;
                return Ok(TaskKey { index, generation: slot.generation });
            }
        }
        let Ok(index) = u32::try_from(self.slots.len()) else {
            return Err(entry);
        };
        if self.slots.try_reserve(1).is_err() || self.free.try_reserve(self.slots.len() + 1).is_err() {
            return Err(entry);
        }
        self.slots.push(Slot { generation: 0, entry: Some(entry) });
        self.len += 1;
        Ok(TaskKey { index, generation: 0 })
    }

    pub(crate) fn get(&self, key: TaskKey) -> Option<&E> {
        match self.slots.get(key.index as usize) {
            Some(slot) if slot.generation == key.generation => slot.entry.as_ref(),
            _ => None,
        }
    }

    pub(crate) fn get_mut(&mut self, key: TaskKey) -> Option<&mut E> {
        match self.slots.get_mut(key.index as usize) {
            Some(slot) if slot.generation == key.generation => slot.entry.as_mut(),
            _ => None,
        }
    }

    /// Takes the entry out and invalidates `key` (and every copy of it).
    pub(crate) fn remove(&mut self, key: TaskKey) -> Option<E> {
        let slot = self.slots.get_mut(key.index as usize)?;
        if slot.generation != key.generation {
            return None;
        }
        let entry = slot.entry.take()?;
        self.len -= 1;
        // When the generation space is used up the slot is retired for good (not put back
        // on the free list) rather than let a key alias.
        if let Some(next) = slot.generation.checked_add(1) {
            slot.generation = next;
            // Cannot fail: `insert` reserved room for every slot in `free`.
            self.free.push(key.index);
        }
        Some(entry)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (TaskKey, &E)> {
        self.slots.iter().enumerate().filter_map(|(i, slot)| {
            let key = TaskKey { index: i as u32, generation: slot.generation };
            slot.entry.as_ref().map(|e| (key, e))
        })
    }

    #[cfg(test)]
    fn force_generation(&mut self, index: u32, generation: u32) {
        self.slots[index as usize].generation = generation;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_key_is_detected_after_reuse() {
        let mut s = Slab::new();
        let a = s.insert("a").unwrap();
        assert_eq!(s.remove(a), Some("a"));
        let b = s.insert("b").unwrap();
        assert_eq!(a.index(), b.index(), "slot is reused");
        assert_eq!(TaskKey::from_bits(b.to_bits()), b);
        assert_eq!(s.get(TaskKey::from_bits(u64::MAX)), None);
        assert_ne!(a, b);
        assert_eq!(s.get(a), None);
        assert_eq!(s.remove(a), None);
        assert_eq!(s.get(b), Some(&"b"));
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn exhausted_generation_retires_the_slot() {
        let mut s = Slab::new();
        let a = s.insert(1).unwrap();
        s.force_generation(a.index(), u32::MAX);
        let a = TaskKey { index: a.index(), generation: u32::MAX };
        assert_eq!(s.remove(a), Some(1));
        let b = s.insert(2).unwrap();
        assert_ne!(a.index(), b.index(), "retired slot is never handed out again");
        assert_eq!(s.get(a), None);
    }

    #[test]
    fn iter_yields_live_entries_with_their_keys() {
        let mut s = Slab::new();
        let a = s.insert(10).unwrap();
        let b = s.insert(20).unwrap();
        s.remove(a);
        let v: Vec<_> = s.iter().collect();
        assert_eq!(v, [(b, &20)]);
    }
}
