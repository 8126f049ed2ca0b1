//! # The process tree
//!
//! Every process but init (and the idle task, which stands outside) has a parent process,
//! and every process lists its children. The two directions are kept in step by the only
//! three operations that change them: `create` of a process (links child to creator's
//! process), a process's death (this file), and `wait` (unlinks the reaped child).
//!
//! When a process dies (its last thread exits) its children, live or zombie, cannot keep a
//! parent that will never wait for them: they are *re-parented* to init, as Linux's
//! `forget_original_parent` does when there is no subreaper. A child that is already a
//! zombie becomes waitable by init at once, so init must be woken. Only then is the dead
//! process itself offered to its own parent.
//!
//! Threads are not in the tree: a thread's parent is its process's parent, and children made
//! by any thread belong to the process, so any thread of the parent may reap them.

use alloc::vec::Vec;

use crate::status::ExitStatus;
use crate::table::{TaskTable, INIT_PID};
use crate::{Accumulate, TaskKey};

/// What the death of a process (the exit of its last thread) did; part of an `ExitReport`.
#[derive(Debug)]
pub struct ProcessExit<A> {
    /// The zombie leader, waiting in the table to be reaped.
    pub leader: TaskKey,
    pub tgid: i32,
    /// The process's wait status (an `exit_group` status overrides the leader's own).
    pub status: ExitStatus,
    /// All threads, past and present (taskstats per-tgid exit record, acct record).
    pub total: A,
    /// The parent process (leader key): wake whoever waits on it (and signal `SIGCHLD`).
    pub wake_parent: Option<TaskKey>,
    /// Children handed to init.
    pub adopted: Vec<TaskKey>,
    /// `Some(init)` when an adopted child is already a zombie: wake init's waiters.
    pub wake_init: Option<TaskKey>,
}

impl<T, A: Accumulate> TaskTable<T, A> {
    /// The last thread of `leader`'s process has exited: hand its children to init and
    /// describe the death.
    pub(crate) fn process_died(&mut self, leader: TaskKey) -> ProcessExit<A> {
        let init = self.pids.get(INIT_PID).filter(|&k| k != leader);
        let (tgid, own_status) = match self.tasks.get(leader) {
            Some(t) => (t.tgid, t.exit_status),
            None => (0, None),
        };
        let (parent, orphans, status, total) = match self.group_mut(leader) {
            Some(g) => (
                g.parent,
                core::mem::take(&mut g.children),
                g.group_exit.or(own_status).unwrap_or_default(),
                g.dead.clone(),
            ),
            None => (None, Vec::new(), ExitStatus::default(), A::default()),
        };
        // A process that dies stopped (SIGKILL ends a stopped process) is stopped no more, and
        // its unread stop or continue report gives way to its exit (Linux's group exit clears
        // SIGNAL_STOP_STOPPED): an orphaned group is not hung up for a dead member.
        let mut was_stopped = false;
        if let Some(g) = self.group_mut(leader) {
            was_stopped = core::mem::take(&mut g.job.stopped);
            g.job.stopping = None;
            g.job.report = None;
        }
        if was_stopped {
            self.stopped_processes -= 1;
        }
        let mut wake_init = None;
        for &child in &orphans {
            let zombie = match self.group_mut(child) {
                Some(g) => {
                    g.parent = init;
                    g.is_dead()
                }
                None => false,
            };
            if zombie {
                wake_init = init;
            }
        }
        if let Some(g) = init.and_then(|i| self.group_mut(i)) {
            g.children.extend_from_slice(&orphans);
        }
        ProcessExit { leader, tgid, status, total, wake_parent: parent, adopted: orphans, wake_init }
    }
}
