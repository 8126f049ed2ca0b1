//! Who a task is: the ids system calls return, and the identity an accounting record carries.
//!
//! Linux's naming, which confuses everyone once: a *thread* is what the kernel schedules and
//! gives a pid; a *process* is a thread group, named by its leader's pid (the tgid). So
//! `getpid` returns the tgid and `gettid` the thread's own pid.

use tally_tasktable::{ExitState, ExitStatus, Task, TaskKey};

use super::{Payload, Procs, Totals};
use crate::sched::{self, slot_of, Sched};

/// Who the running task is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ids {
    /// Thread id (Linux's `gettid`; the kernel's pid of this task).
    pub tid: i32,
    /// Process id (`getpid`: the thread group id).
    pub pid: i32,
    pub uid: u32,
    /// The command name (NUL-padded).
    pub comm: [u8; 16],
}

/// One field of the running task, read under the table's lock without copying the rest:
/// what `getpid`, `gettid`, `getppid` and `getuid` need (a null system call should cost a
/// lookup, not a copy of the task's name and counters). 0 if the task is gone.
fn current_field<R: Default>(f: impl FnOnce(&Task<Payload, Totals>) -> R) -> R {
    super::with(|p| p.table.get(sched::current()).map(f).unwrap_or_default())
}

/// The running thread's id (`gettid`). The ids never change, so the scheduler publishes
/// the running task's at each switch: one load, no lock.
pub fn current_tid() -> i32 {
    sched::current_ids().tid
}

/// The running thread's process id (`getpid`: its thread group id), as [`current_tid`].
pub fn current_pid() -> i32 {
    sched::current_ids().tgid
}

/// The running process's parent's process id (`getppid`; 0 if none).
pub fn current_ppid() -> i32 {
    super::with(|p| p.table.ppid(sched::current()).unwrap_or(0))
}

/// The running task's user id (`getuid`).
pub fn current_uid() -> u32 {
    current_field(|t| t.uid())
}

/// Tasks in the table now, zombies included (`sysinfo`'s `procs`: Linux counts threads).
pub fn nr_tasks() -> usize {
    super::with(|p| p.table().len())
}

/// The running task's group id (`getgid`/`getegid`: Tally keeps one gid per task).
pub fn current_gid() -> u32 {
    current_field(|t| t.gid())
}

/// The running task's ids and name, read at one time (all zero if it is gone).
pub fn current_ids() -> Ids {
    current_field(|t| Ids { tid: t.pid(), pid: t.tgid(), uid: t.uid(), comm: *t.comm() })
}

/// Parent pid of `pid` (its process's parent), if `pid` exists.
pub fn ppid(pid: i32) -> Option<i32> {
    super::with(|p| p.table.lookup(pid).and_then(|key| p.table.ppid(key)).ok())
}

/// Whether `pid` is a zombie (exited, not yet reaped).
pub fn is_zombie(pid: i32) -> bool {
    super::with(|p| {
        p.table.lookup(pid).and_then(|key| p.table.get(key)).is_ok_and(|t| t.exit_state() == ExitState::Zombie)
    })
}

/// Everything an accounting record says about who a task is and how it was scheduled, read
/// at one instant (the numbers — clocks, counters, memory — are read separately).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub pid: i32,
    pub tgid: i32,
    pub ppid: i32,
    pub uid: u32,
    pub gid: u32,
    pub comm: [u8; 16],
    pub nice: i32,
    /// Linux's policy number (SCHED_NORMAL 0, FIFO 1, RR 2, BATCH 3).
    pub policy: u8,
    /// The task's `ac_flag` bits (`tally_tasktable::AcctFlags`).
    pub flags: u8,
    /// Is it its process's leader?
    pub leader: bool,
    /// Does it have a user mode (not a kernel thread)? A user process has the console as
    /// its terminal (acct's `ac_tty`).
    pub user: bool,
    /// How it ended, if it has (a zombie leader).
    pub exit_status: Option<ExitStatus>,
    /// TSC when the task was created, and when its process's leader was.
    pub created_tsc: u64,
    pub group_created_tsc: u64,
}

impl Procs {
    /// The identity of task `key` (`ESRCH`-style errno if it is not in the table). Reads the
    /// scheduler's view (nice, policy, creation time) under its lock.
    pub fn identity(&self, key: TaskKey) -> Result<Identity, i32> {
        sched::with(|s| self.identity_in(s, key))
    }

    /// [`Procs::identity`] for a caller that holds the scheduler's lock already (`s`).
    pub fn identity_in(&self, s: &mut Sched, key: TaskKey) -> Result<Identity, i32> {
        let t = self.table.get(key)?;
        let ppid = self.table.ppid(key).unwrap_or(0);
        let leader = self.table.leader(key).unwrap_or(key);
        let se = s.entity(slot_of(key));
        let (nice, policy) = (se.nice(), se.policy() as u8);
        let (created, group_created) = (s.created(slot_of(key)), s.created(slot_of(leader)));
        Ok(Identity {
            pid: t.pid(),
            tgid: t.tgid(),
            ppid,
            uid: t.uid(),
            gid: t.gid(),
            comm: *t.comm(),
            nice,
            policy,
            flags: t.flags().bits(),
            leader: leader == key,
            user: t.payload().is_user(),
            exit_status: t.exit_status(),
            created_tsc: created,
            group_created_tsc: group_created,
        })
    }
}
