//! # Thread groups: the process
//!
//! A Unix *process* is a thread group: the threads that share an address space, a pid to be
//! known by (the tgid, its first thread's pid) and a place in the process tree. Linux keeps
//! the per-process part in `signal_struct`; here it is a [`ThreadGroup`] carried by the group
//! leader's record, which is fine because the leader outlives the process: when the leader
//! exits before its threads it stays as a zombie, and the process becomes waitable only when
//! its last thread has exited (taskstats: "a process is deemed alive as long as it has any
//! task belonging to it").
//!
//! The group holds the live members (the thread list, so walking a process's threads never
//! walks the whole table), the parent and the child processes (the tree, `tree.rs`), the
//! group exit status set by `exit_group`, the two accumulators of `accum.rs`, and the
//! process's job-control state (process group, session, stop state: `jobs.rs`).
//!
//! Flow: made by `create` of a process, joined by `create` of a thread, left by `exit`,
//! dropped when the parent's `wait` reaps the leader.

use alloc::vec::Vec;

use crate::status::ExitStatus;
use crate::TaskKey;

pub(crate) struct ThreadGroup<A> {
    /// Leader key of the parent process; `None` only for idle and init (parent is "pid 0").
    pub(crate) parent: Option<TaskKey>,
    /// Live threads, leader first while it lives. Empty means the whole process is dead.
    pub(crate) members: Vec<TaskKey>,
    /// Leader keys of child processes, live or zombie, in creation (or adoption) order.
    pub(crate) children: Vec<TaskKey>,
    /// Set by `exit_group`: the status of the process, whatever each thread's own was.
    pub(crate) group_exit: Option<ExitStatus>,
    /// Totals of exited threads (all of them once the process is dead).
    pub(crate) dead: A,
    /// Totals of reaped child processes, and of what they had reaped in turn.
    pub(crate) children_total: A,
    /// Process group, session, ignored signals and stop state (`jobs.rs`).
    pub(crate) job: crate::jobs::JobControl,
}

impl<A: Default> ThreadGroup<A> {
    pub(crate) fn new(parent: Option<TaskKey>) -> Self {
        ThreadGroup {
            parent,
            members: Vec::new(),
            children: Vec::new(),
            group_exit: None,
            dead: A::default(),
            children_total: A::default(),
            job: crate::jobs::JobControl::default(),
        }
    }
}

impl<A> ThreadGroup<A> {
    /// Every thread has exited: the leader is a zombie the parent may reap.
    pub(crate) fn is_dead(&self) -> bool {
        self.members.is_empty()
    }
}

/// Removes `key` from a key list, keeping the order (lists are short: a process's threads
/// or children). Returns whether it was there.
pub(crate) fn remove_key(list: &mut Vec<TaskKey>, key: TaskKey) -> bool {
    match list.iter().position(|&k| k == key) {
        Some(i) => {
            list.remove(i);
            true
        }
        None => false,
    }
}
