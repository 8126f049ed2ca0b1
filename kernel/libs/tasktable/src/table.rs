//! # The task table
//!
//! [`TaskTable`] is the one place every task is found: a slab of [`Task`] records named by
//! [`TaskKey`] (`slab.rs`), a pid → key map (`pid.rs`), and, inside the leaders' records, the
//! thread groups (`group.rs`) that link the records into processes and the process tree.
//!
//! This file holds creation and the read side. A system starts with [`TaskTable::create_idle`]
//! (pid 0, optional) and [`TaskTable::create_init`] (pid 1, the root of the tree); every other
//! task is made by [`TaskTable::create`] on behalf of a live creator, either as a new process
//! (`fork`: a child of the creator's process) or as a new thread of the creator's process
//! (`clone(CLONE_THREAD)`). Ending is in `exit.rs`, collecting in `wait.rs`, and the tree
//! surgery both need in `tree.rs`.
//!
//! The table never panics on a bad key or pid: a stale key, an unknown pid or an operation
//! that does not apply comes back as a Linux errno.

use tally_uapi::errno::{EEXIST, EINVAL, ENOMEM, ESRCH};

use crate::group::ThreadGroup;
use crate::pid::Pids;
use crate::slab::Slab;
use crate::status::ExitStatus;
use crate::task::{make_comm, AcctFlags, ExitState, Task};
use crate::{Accumulate, Errno, TaskKey};

/// What [`TaskTable::create`] makes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CreateKind {
    /// `fork`: a new process, a child of the creator's process.
    Process,
    /// `clone(CLONE_THREAD)`: a new thread in the creator's process (same tgid, same parent).
    Thread,
}

/// Pid of init, the root of the tree and the adopter of orphans.
pub const INIT_PID: i32 = 1;
/// Pid of the idle task.
pub const IDLE_PID: i32 = 0;

/// All tasks. `T` is the kernel's per-task payload, `A` its accumulator (see `accum.rs`).
pub struct TaskTable<T, A> {
    pub(crate) tasks: Slab<Task<T, A>>,
    pub(crate) pids: Pids,
    /// Processes in the table whose stop has completed (`jobs.rs`): while there are none —
    /// nearly always — a death needs no look for orphaned stopped groups, which would scan
    /// the whole table.
    pub(crate) stopped_processes: usize,
}

impl<T, A: Accumulate> TaskTable<T, A> {
    /// A table with Linux's defaults: pids below `PID_MAX_DEFAULT` (32768), restarting at
    /// `RESERVED_PIDS` (300) after a wrap.
    pub fn new() -> Self {
        TaskTable { tasks: Slab::new(), pids: Pids::with_defaults(), stopped_processes: 0 }
    }

    /// A table whose pids are below `pid_max` and restart at `reserved` after a wrap
    /// (`1 <= reserved < pid_max`, else `EINVAL`).
    pub fn with_pid_max(pid_max: i32, reserved: i32) -> Result<Self, Errno> {
        Ok(TaskTable { tasks: Slab::new(), pids: Pids::new(pid_max, reserved)?, stopped_processes: 0 })
    }

    /// Number of tasks in the table, zombies included.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.len() == 0
    }

    /// The idle task, pid 0: outside the tree (no parent, can neither create nor exit), but
    /// in the table so "the current task" is always a key. At most one (`EEXIST`).
    pub fn create_idle(&mut self, name: &[u8], payload: T) -> Result<TaskKey, Errno> {
        self.create_root(IDLE_PID, name, 0, 0, 0, payload)
    }

    /// Init, pid 1: the root of the process tree. Its last thread can never exit (`EPERM`),
    /// so there is always someone to adopt orphans. Call once, before any `create`.
    pub fn create_init(
        &mut self,
        name: &[u8],
        uid: u32,
        gid: u32,
        begin_time: u64,
        payload: T,
    ) -> Result<TaskKey, Errno> {
        self.create_root(INIT_PID, name, uid, gid, begin_time, payload)
    }

    /// A kernel daemon outside the process tree: a process with no parent, as Linux's
    /// kernel threads hang off `kthreadd` rather than init. Nobody waits for it (init's
    /// `wait4(-1)` does not see it), so it must never exit. Root's uid and gid. Its pid is
    /// the highest free one (`pid_max - 1` for the first), taken without moving the pid
    /// cursor, so user processes get the pids they would get without daemons.
    pub fn create_daemon(&mut self, name: &[u8], begin_time: u64, payload: T) -> Result<TaskKey, Errno> {
        let mut group = ThreadGroup::new(None);
        group.members.try_reserve(1).map_err(|_| ENOMEM)?;
        let task = Task {
            pid: 0,
            tgid: 0,
            leader: None,
            exit_state: ExitState::Live,
            exit_status: None,
            comm: make_comm(name),
            uid: 0,
            gid: 0,
            begin_time,
            flags: AcctFlags::empty(),
            payload,
            group: Some(group),
        };
        let key = self.tasks.insert(task).map_err(|_| ENOMEM)?;
        let pid = match self.pids.take_top(key) {
            Ok(pid) => pid,
            Err(e) => {
                self.tasks.remove(key);
                return Err(e);
            }
        };
        if let Some(t) = self.tasks.get_mut(key) {
            t.pid = pid;
            t.tgid = pid;
        }
        if let Some(g) = self.group_mut(key) {
            g.members.push(key);
        }
        Ok(key)
    }

    fn create_root(
        &mut self,
        pid: i32,
        name: &[u8],
        uid: u32,
        gid: u32,
        begin_time: u64,
        payload: T,
    ) -> Result<TaskKey, Errno> {
        if self.pids.get(pid).is_some() {
            return Err(EEXIST);
        }
        let mut group = ThreadGroup::new(None);
        group.members.try_reserve(1).map_err(|_| ENOMEM)?;
        let task = Task {
            pid,
            tgid: pid,
            leader: None,
            exit_state: ExitState::Live,
            exit_status: None,
            comm: make_comm(name),
            uid,
            gid,
            begin_time,
            flags: AcctFlags::empty(),
            payload,
            group: Some(group),
        };
        let key = self.tasks.insert(task).map_err(|_| ENOMEM)?;
        if let Err(e) = self.pids.insert(pid, key) {
            self.tasks.remove(key);
            return Err(e);
        }
        if let Some(g) = self.group_mut(key) {
            g.members.push(key);
            // The root of the tree leads its own group and session (pid 0 and kernel
            // daemons stay in "session 0", as Linux's kernel threads do).
            g.job.pgid = pid;
            g.job.sid = pid;
        }
        Ok(key)
    }

    /// Creates a task on behalf of `creator` (a live task, not idle). The new task inherits
    /// comm, uid and gid, is flagged `AFORK`, and gets a fresh pid.
    ///
    /// * [`CreateKind::Process`]: pid = tgid, parent = the creator's process, in the
    ///   creator's process group and session.
    /// * [`CreateKind::Thread`]: joins the creator's group (its tgid and parent).
    ///
    /// Errors: `ESRCH` creator stale or exited, `EINVAL` creator is idle, `EAGAIN` no free
    /// pid, `ENOMEM` no memory. On error nothing changed except that `payload` was dropped
    /// and the pid cursor may have moved.
    pub fn create(
        &mut self,
        creator: TaskKey,
        kind: CreateKind,
        begin_time: u64,
        payload: T,
    ) -> Result<TaskKey, Errno> {
        let c = self.live(creator)?;
        if c.pid == IDLE_PID {
            return Err(EINVAL);
        }
        let (comm, uid, gid, tgid) = (c.comm, c.uid, c.gid, c.tgid);
        let proc = self.leader(creator)?;
        let (pgid, sid) = {
            let j = &self.group(proc)?.job;
            (j.pgid, j.sid)
        };
        // Make room in the lists we will push to first, so nothing below can fail halfway.
        let mut own_group = None;
        match kind {
            CreateKind::Process => {
                let g = self.group_mut(proc).ok_or(ESRCH)?;
                g.children.try_reserve(1).map_err(|_| ENOMEM)?;
                let mut ng = ThreadGroup::new(Some(proc));
                ng.members.try_reserve(1).map_err(|_| ENOMEM)?;
                // A child process starts in its creator's process group and session
                // (`jobs.rs`); ignored signals and the stop state are not inherited.
                ng.job.pgid = pgid;
                ng.job.sid = sid;
                own_group = Some(ng);
            }
            CreateKind::Thread => {
                let g = self.group_mut(proc).ok_or(ESRCH)?;
                g.members.try_reserve(1).map_err(|_| ENOMEM)?;
            }
        }
        let pid = self.pids.alloc()?;
        let task = Task {
            pid,
            tgid: if kind == CreateKind::Process { pid } else { tgid },
            leader: if kind == CreateKind::Process { None } else { Some(proc) },
            exit_state: ExitState::Live,
            exit_status: None,
            comm,
            uid,
            gid,
            begin_time,
            flags: AcctFlags::AFORK,
            payload,
            group: own_group,
        };
        let key = self.tasks.insert(task).map_err(|_| ENOMEM)?;
        if let Err(e) = self.pids.insert(pid, key) {
            self.tasks.remove(key);
            return Err(e);
        }
        match kind {
            CreateKind::Process => {
                if let Some(g) = self.group_mut(proc) {
                    g.children.push(key);
                }
                if let Some(g) = self.group_mut(key) {
                    g.members.push(key);
                }
            }
            CreateKind::Thread => {
                if let Some(g) = self.group_mut(proc) {
                    g.members.push(key);
                }
            }
        }
        Ok(key)
    }

    // ---- lookups -------------------------------------------------------------------------

    /// The task named by `key`, live or zombie; `ESRCH` if the key is stale.
    pub fn get(&self, key: TaskKey) -> Result<&Task<T, A>, Errno> {
        self.tasks.get(key).ok_or(ESRCH)
    }

    pub fn get_mut(&mut self, key: TaskKey) -> Result<&mut Task<T, A>, Errno> {
        self.tasks.get_mut(key).ok_or(ESRCH)
    }

    /// The task with thread id `pid` (zombies included, as Linux's `find_task_by_vpid`).
    pub fn lookup(&self, pid: i32) -> Result<TaskKey, Errno> {
        self.pids.get(pid).ok_or(ESRCH)
    }

    /// Every task in the table, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (TaskKey, &Task<T, A>)> {
        self.tasks.iter()
    }

    /// The leader of `key`'s thread group (`key` itself for a leader): the key that names the
    /// process in [`TaskTable::children`], in wait-queue identities and in `ExitReport`s.
    pub fn leader(&self, key: TaskKey) -> Result<TaskKey, Errno> {
        Ok(self.get(key)?.leader.unwrap_or(key))
    }

    /// The parent process (its leader's key) of `key`'s process; `None` for init and idle.
    pub fn parent(&self, key: TaskKey) -> Result<Option<TaskKey>, Errno> {
        Ok(self.group(key)?.parent)
    }

    /// `getppid`: the parent process's pid, 0 for init and idle.
    pub fn ppid(&self, key: TaskKey) -> Result<i32, Errno> {
        match self.parent(key)? {
            Some(p) => Ok(self.get(p)?.pid),
            None => Ok(0),
        }
    }

    /// Child processes (leader keys, live or zombie) of `key`'s process.
    pub fn children(&self, key: TaskKey) -> Result<&[TaskKey], Errno> {
        Ok(&self.group(key)?.children)
    }

    /// The live threads of `key`'s process, the leader first while it lives. Empty when the
    /// process is a zombie.
    pub fn threads(&self, key: TaskKey) -> Result<&[TaskKey], Errno> {
        Ok(&self.group(key)?.members)
    }

    /// The totals of `key`'s process's threads that have exited (all of them once it is dead).
    pub fn dead_total(&self, key: TaskKey) -> Result<&A, Errno> {
        Ok(&self.group(key)?.dead)
    }

    /// [`TaskTable::dead_total`] and [`TaskTable::threads`] with one lookup of the group:
    /// everything `MSA_SELF` adds up.
    pub fn process_parts(&self, key: TaskKey) -> Result<(&A, &[TaskKey]), Errno> {
        let g = self.group(key)?;
        Ok((&g.dead, &g.members))
    }

    /// The totals of the child processes `key`'s process has reaped (`MSA_CHILDREN`,
    /// `RUSAGE_CHILDREN`), grandchildren reaped by them included.
    pub fn children_total(&self, key: TaskKey) -> Result<&A, Errno> {
        Ok(&self.group(key)?.children_total)
    }

    /// The whole process, "past and present" (`MSA_SELF`, taskstats by tgid): the dead
    /// threads' total plus `read` of every live thread.
    pub fn process_total(&self, key: TaskKey, mut read: impl FnMut(&T) -> A) -> Result<A, Errno> {
        let g = self.group(key)?;
        let mut sum = g.dead.clone();
        for &m in &g.members {
            sum.add(&read(&self.get(m)?.payload));
        }
        Ok(sum)
    }

    /// The wait status of `key`'s process once all its threads have exited, else `None`.
    /// An `exit_group` status overrides the leader's own (Linux `group_exit_code`).
    pub fn process_status(&self, key: TaskKey) -> Result<Option<ExitStatus>, Errno> {
        let leader = self.leader(key)?;
        let g = self.group(leader)?;
        if !g.is_dead() {
            return Ok(None);
        }
        Ok(g.group_exit.or(self.get(leader)?.exit_status))
    }

    /// `key`'s process is a zombie its parent can reap.
    pub fn is_waitable(&self, key: TaskKey) -> Result<bool, Errno> {
        Ok(self.group(key)?.is_dead())
    }

    // ---- crate-internal helpers ----------------------------------------------------------

    /// A task that has not exited; `ESRCH` otherwise.
    pub(crate) fn live(&self, key: TaskKey) -> Result<&Task<T, A>, Errno> {
        match self.tasks.get(key) {
            Some(t) if t.exit_state == ExitState::Live => Ok(t),
            _ => Err(ESRCH),
        }
    }

    /// The thread group of `key`'s process (a leader's own, found without a second lookup).
    pub(crate) fn group(&self, key: TaskKey) -> Result<&ThreadGroup<A>, Errno> {
        let task = self.get(key)?;
        let leader = match task.leader {
            None => task,
            Some(l) => self.get(l)?,
        };
        leader.group.as_ref().ok_or(ESRCH)
    }

    /// The thread group of a leader (`None` if `leader` is stale or not a leader).
    pub(crate) fn group_mut(&mut self, leader: TaskKey) -> Option<&mut ThreadGroup<A>> {
        self.tasks.get_mut(leader).and_then(|t| t.group.as_mut())
    }
}

impl<T, A: Accumulate> Default for TaskTable<T, A> {
    fn default() -> Self {
        Self::new()
    }
}
