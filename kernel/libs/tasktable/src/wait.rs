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
//! * `Ok(Job { .. })` — with `WUNTRACED`/`WCONTINUED`, a matching child stopped or was
//!   continued (`jobs.rs`): its report is collected, the child stays;
//! * `Ok(NotReady)` — matching children exist, none is dead yet, and the caller said `nohang`;
//! * `Ok(Sleep { queue })` — same, without `nohang`: the kernel puts the caller on the wait
//!   queue of `queue` (the caller's process) and calls `wait` again when woken. Exits wake
//!   that queue through `ProcessExit::wake_parent` / `wake_init`;
//! * `Err(ECHILD)` — no child matches at all: waiting would be forever.
//!
//! Children belong to the process, so any of its threads may wait for them. A non-leader
//! thread is never a child: it is reaped by its own exit.

use tally_uapi::errno::{ECHILD, EINVAL, ESRCH};

use alloc::vec::Vec;

use crate::group::remove_key;
use crate::jobs::JobReport;
use crate::status::ExitStatus;
use crate::table::TaskTable;
use crate::{Accumulate, Errno, TaskKey};

/// Which children a `wait` is for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum WaitFor {
    /// Any child (`waitpid(-1, ..)`).
    Any,
    /// The child process with this pid (> 0).
    Pid(i32),
    /// Any child in process group `pgid`; 0: the caller's group (`waitpid(0 or -pgid, ..)`).
    Group(i32),
}

/// `wait4`'s options that this table implements.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct WaitOpts {
    /// `WNOHANG`: do not sleep.
    pub nohang: bool,
    /// `WUNTRACED`: also report children that have stopped.
    pub untraced: bool,
    /// `WCONTINUED`: also report stopped children continued by SIGCONT.
    pub continued: bool,
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
    /// A child stopped or continued (`WUNTRACED`/`WCONTINUED`): its pid and wait status
    /// (`0x7f | sig << 8` stopped, `0xffff` continued). The child stays.
    Job {
        pid: i32,
        status: i32,
    },
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
        self.wait_opts(caller, which, WaitOpts { nohang, ..WaitOpts::default() })
    }

    /// [`TaskTable::wait`] with all of `wait4`'s options: a dead child is reaped first; else,
    /// with `untraced`/`continued`, a child's stop or continue report (`jobs.rs`) is
    /// collected. `WaitFor::Group` with no child in that group is `ECHILD`.
    pub fn wait_opts(&mut self, caller: TaskKey, which: WaitFor, o: WaitOpts) -> Result<WaitOutcome<T, A>, Errno> {
        self.live(caller)?;
        let proc = self.leader(caller)?;
        let g = self.group(proc)?;
        let candidates: Vec<TaskKey> = match which {
            WaitFor::Any => g.children.clone(),
            WaitFor::Group(pgid) => {
                let pgid = if pgid == 0 { g.job.pgid } else { pgid };
                g.children.iter().copied().filter(|&c| self.pgid(c) == Ok(pgid)).collect()
            }
            WaitFor::Pid(pid) if pid <= 0 => return Err(EINVAL),
            WaitFor::Pid(pid) => {
                let child = self.pids.get(pid).ok_or(ECHILD)?;
                // A thread, or someone else's child, is not ours to wait for.
                let is_child = self.get(child)?.is_leader() && self.parent(child)? == Some(proc);
                if !is_child {
                    return Err(ECHILD);
                }
                alloc::vec![child]
            }
        };
        if candidates.is_empty() {
            return Err(ECHILD);
        }
        if let Some(&child) = candidates.iter().find(|&&c| self.is_waitable(c) == Ok(true)) {
            return self.reap(proc, child).map(WaitOutcome::Reaped);
        }
        if let Some(&child) = candidates.iter().find(|&&c| self.has_report(c, o.untraced, o.continued)) {
            let pid = self.get(child)?.pid();
            let status = match self.take_report(child, o.untraced, o.continued) {
                Some(JobReport::Stopped(sig)) => 0x7f | i32::from(sig) << 8,
                Some(JobReport::Continued) => 0xffff,
                None => return Err(ESRCH),
            };
            return Ok(WaitOutcome::Job { pid, status });
        }
        if o.nohang {
            Ok(WaitOutcome::NotReady)
        } else {
            Ok(WaitOutcome::Sleep { queue: proc })
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
