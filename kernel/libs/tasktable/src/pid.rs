//! # Pids: the names user space sees
//!
//! A pid (`pid_t`, an `i32`) names one thread; a process is named by its thread-group id,
//! which is the pid of its first thread. Pid 0 is the idle task, pid 1 is init. Other pids are
//! handed out in increasing order from a cursor, like Linux's `alloc_pid`: a pid freed by a
//! reap is *not* handed out again until the cursor reaches `pid_max` and wraps back to
//! `reserved`, so a pid a user just saw die keeps naming nothing for as long as possible.
//! Pids below `reserved` are only used while the system boots and never after a wrap.
//!
//! The common case costs one map probe: the cursor's next pid is free. Only after a wrap does
//! the allocator step over pids still in use, at most once around the range; a count of pids
//! in use in the range says "exhausted" (`EAGAIN`) without walking at all.
//!
//! Flow: `TaskTable::create*` calls [`Pids::alloc`] and [`Pids::insert`] (pid → key),
//! reaping calls [`Pids::remove`]; `TaskTable::lookup` is the pid → key map.

use alloc::collections::BTreeMap;
use tally_uapi::errno::{EAGAIN, EEXIST, EINVAL};

use crate::{Errno, TaskKey};

/// Linux's default `pid_max` (`/proc/sys/kernel/pid_max` on a small machine).
pub const PID_MAX_DEFAULT: i32 = 0x8000;
/// Linux's `RESERVED_PIDS`: where the cursor restarts after a wrap.
pub const RESERVED_PIDS: i32 = 300;

pub(crate) struct Pids {
    map: BTreeMap<i32, TaskKey>,
    /// Pids are taken from `1..pid_max` (0 is idle's, handed out by `insert_fixed`).
    pid_max: i32,
    /// After a wrap the cursor restarts here.
    reserved: i32,
    /// The pid handed out last; the next search starts after it.
    last: i32,
    /// Pids in use in `reserved..pid_max`, the range that is searched after a wrap.
    in_range: usize,
}

impl Pids {
    pub(crate) fn new(pid_max: i32, reserved: i32) -> Result<Self, Errno> {
        if reserved < 1 || reserved >= pid_max {
            return Err(EINVAL);
        }
        Ok(Pids { map: BTreeMap::new(), pid_max, reserved, last: 0, in_range: 0 })
    }

    pub(crate) const fn with_defaults() -> Self {
        Pids { map: BTreeMap::new(), pid_max: PID_MAX_DEFAULT, reserved: RESERVED_PIDS, last: 0, in_range: 0 }
    }

    pub(crate) fn get(&self, pid: i32) -> Option<TaskKey> {
        self.map.get(&pid).copied()
    }

    /// Picks the next free pid after the cursor and moves the cursor to it. The pid is not
    /// in use until [`Pids::insert`].
    pub(crate) fn alloc(&mut self) -> Result<i32, Errno> {
        let mut pid = self.last;
        // Every pid is visited at most once: `1..pid_max` is the longest possible tour.
        for _ in 1..self.pid_max {
            pid = if pid + 1 >= self.pid_max { self.reserved } else { pid + 1 };
            if pid >= self.reserved && self.range_full() {
                // The rest of the tour lies in `reserved..pid_max`, and all of it is in use.
                return Err(EAGAIN);
            }
            if !self.map.contains_key(&pid) {
                self.last = pid;
                return Ok(pid);
            }
        }
        Err(EAGAIN)
    }

    fn range_full(&self) -> bool {
        self.in_range >= (self.pid_max - self.reserved) as usize
    }

    /// Records `pid → key`; `pid` came from [`Pids::alloc`] or is a fixed pid (0, 1).
    pub(crate) fn insert(&mut self, pid: i32, key: TaskKey) -> Result<(), Errno> {
        if pid < 0 || pid >= self.pid_max {
            return Err(EINVAL);
        }
        if self.map.contains_key(&pid) {
            return Err(EEXIST);
        }
        self.map.insert(pid, key);
        if pid >= self.reserved {
            self.in_range += 1;
        }
        if pid > self.last {
            self.last = pid;
        }
        Ok(())
    }

    /// The highest free pid (from `pid_max - 1` down), recorded as `pid → key` *without*
    /// moving the cursor: for kernel daemons, so that the pids user processes get are the
    /// ones they would get without them (pid 2 is still the first process init starts).
    pub(crate) fn take_top(&mut self, key: TaskKey) -> Result<i32, Errno> {
        let pid = (self.reserved..self.pid_max).rev().find(|p| !self.map.contains_key(p)).ok_or(EAGAIN)?;
        self.map.insert(pid, key);
        self.in_range += 1;
        Ok(pid)
    }

    pub(crate) fn remove(&mut self, pid: i32) {
        if self.map.remove(&pid).is_some() && pid >= self.reserved {
            self.in_range -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slab::Slab;

    fn key() -> TaskKey {
        // Any key will do: the pid layer never dereferences it.
        let mut s = Slab::new();
        s.insert(()).unwrap()
    }

    fn take(p: &mut Pids) -> Result<i32, Errno> {
        let pid = p.alloc()?;
        p.insert(pid, key())?;
        Ok(pid)
    }

    #[test]
    fn counts_up_from_one_and_does_not_reuse_before_wrap() {
        let mut p = Pids::new(10, 3).unwrap();
        assert_eq!(take(&mut p), Ok(1));
        assert_eq!(take(&mut p), Ok(2));
        assert_eq!(take(&mut p), Ok(3));
        p.remove(2);
        p.remove(3);
        assert_eq!(take(&mut p), Ok(4), "freed pids 2 and 3 are not reused yet");
    }

    #[test]
    fn wraps_to_reserved_and_skips_pids_in_use() {
        let mut p = Pids::new(8, 3).unwrap();
        for want in 1..8 {
            assert_eq!(take(&mut p), Ok(want));
        }
        assert_eq!(p.alloc(), Err(EAGAIN));
        p.remove(2); // below `reserved`: never handed out again after a wrap
        assert_eq!(p.alloc(), Err(EAGAIN));
        p.remove(5);
        p.remove(4);
        assert_eq!(take(&mut p), Ok(4));
        assert_eq!(take(&mut p), Ok(5));
        assert_eq!(p.alloc(), Err(EAGAIN));
    }

    #[test]
    fn fixed_pids_are_checked() {
        let mut p = Pids::new(8, 3).unwrap();
        assert_eq!(p.insert(0, key()), Ok(()));
        assert_eq!(p.insert(0, key()), Err(EEXIST));
        assert_eq!(p.insert(8, key()), Err(EINVAL));
        assert_eq!(p.insert(-1, key()), Err(EINVAL));
        assert!(Pids::new(8, 0).is_err());
        assert!(Pids::new(8, 8).is_err());
    }
}
