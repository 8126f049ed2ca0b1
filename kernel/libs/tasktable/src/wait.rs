//! # Wait: collecting dead children
//!
//! A dead process stays a zombie, holding its pid, its status and its numbers, until its
//! parent collects it with `wait` (Linux `wait4`/`waitid`). Reaping is where the child's
//! numbers move into the parent's children total (`accum.rs`), where the child's pid becomes
//! free, and where the kernel gets the child's payload back to free it.
//!
//! [`TaskTable::wait`] answers in one of four ways, and never blocks itself:
//!
//! * `Ok(Reaped(..))` — a matching zombie child was collected;
//! * `Ok(NotReady)` — matching children exist, none is dead yet, and the caller said `nohang`;
//! * `Ok(Sleep { queue })` — same, without `nohang`: the kernel puts the caller on the wait
//!   queue of `queue` (the caller's process) and calls `wait` again when woken. Exits wake
//!   that queue through `ProcessExit::wake_parent` / `wake_init`;
//! * `Err(ECHILD)` — no child matches at all: waiting would be forever.
//!
//! Children belong to the process, so any of its threads may wait for them. A non-leader
//! thread is never a child: it is reaped by its own exit.

use tally_uapi::errno::{ECHILD, EINVAL, ESRCH};

use crate::group::remove_key;
use crate::status::ExitStatus;
use crate::table::TaskTable;
use crate::{Accumulate, Errno, TaskKey};

/// Which children a `wait` is for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WaitFor {
    /// Any child (`waitpid(-1, ..)`).
    Any,
    /// The child process with this pid (> 0; process groups are not modelled: `EINVAL`).
    Pid(i32),
}

/// A collected child.
#[derive(Debug)]
pub struct Reaped<T, A> {
    /// Now stale; given so the kernel can drop it from its own structures.
    pub key: TaskKey,
    /// What `wait` returns: the child's pid (= tgid).
    pub pid: i32,
    /// What `wait` stores in `*wstatus`.
    pub status: ExitStatus,
    /// The leader's payload, the kernel's again.
    pub payload: T,
    /// The child's own total (all its threads), added to the parent's children total.
    pub total: A,
    /// The child's own children total (what it had reaped), also added to the parent's.
    pub children_total: A,
}

/// The answer of [`TaskTable::wait`].
#[derive(Debug)]
pub enum WaitOutcome<T, A> {
    Reaped(Reaped<T, A>),
    /// `nohang` and no matching child is dead yet (`waitpid` returns 0).
    NotReady,
    /// No matching child is dead yet: sleep on the wait queue of `queue` (the caller's
    /// process leader) and retry when woken.
    Sleep {
        queue: TaskKey,
    },
}

impl<T, A: Accumulate> TaskTable<T, A> {
    /// Collects a dead child of `caller`'s process. Errors: `ESRCH` caller stale or exited,
    /// `EINVAL` `WaitFor::Pid` not positive, `ECHILD` no such child.
    pub fn wait(&mut self, caller: TaskKey, which: WaitFor, nohang: bool) -> Result<WaitOutcome<T, A>, Errno> {
        self.live(caller)?;
        let proc = self.leader(caller)?;
        let g = self.group(proc)?;
        let found = match which {
            WaitFor::Any => {
                if g.children.is_empty() {
                    return Err(ECHILD);
                }
                g.children.iter().copied().find(|&c| self.is_waitable(c) == Ok(true))
            }
            WaitFor::Pid(pid) if pid <= 0 => return Err(EINVAL),
            WaitFor::Pid(pid) => {
                let child = self.pids.get(pid).ok_or(ECHILD)?;
                // A thread, or someone else's child, is not ours to wait for.
                let is_child = self.get(child)?.is_leader() && self.parent(child)? == Some(proc);
                if !is_child {
                    return Err(ECHILD);
                }
                Some(child).filter(|&c| self.is_waitable(c) == Ok(true))
            }
        };
        match found {
            Some(child) => self.reap(proc, child).map(WaitOutcome::Reaped),
            None if nohang => Ok(WaitOutcome::NotReady),
            None => Ok(WaitOutcome::Sleep { queue: proc }),
        }
    }

    /// Takes the dead process `child` out of the table and out of `proc`'s children, and
    /// adds its numbers to `proc`'s children total.
    fn reap(&mut self, proc: TaskKey, child: TaskKey) -> Result<Reaped<T, A>, Errno> {
        let task = self.tasks.remove(child).ok_or(ESRCH)?;
        self.pids.remove(task.pid);
        let group = task.group.unwrap_or_else(|| crate::group::ThreadGroup::new(None));
        let status = group.group_exit.or(task.exit_status).unwrap_or_default();
        if let Some(g) = self.group_mut(proc) {
            remove_key(&mut g.children, child);
            g.children_total.add(&group.dead);
            g.children_total.add(&group.children_total);
        }
        Ok(Reaped {
            key: child,
            pid: task.pid,
            status,
            payload: task.payload,
            total: group.dead,
            children_total: group.children_total,
        })
    }
}
