//! # Exit: how tasks end
//!
//! `exit` ends one thread (Linux `do_exit`); `exit_group` ends a whole process (Linux
//! `do_group_exit`: every other thread is killed with the same status, then the caller exits).
//! At each thread's end:
//!
//! 1. the kernel's *harvest* closure gives the thread's final numbers (read from its payload
//!    or wherever the kernel keeps them), and they are added to its process's dead-threads
//!    total (`accum.rs`);
//! 2. the thread leaves its group's live-member list and becomes a zombie;
//! 3. a thread that is not the group leader is reaped at once: nobody ever waits for a thread,
//!    so its record leaves the table, its pid is free, and its payload goes back to the kernel;
//! 4. if it was the last live thread, the process has died (`tree.rs`): its children go to
//!    init, and the leader, a zombie since it exited (maybe long ago), becomes waitable by the
//!    parent, who must be woken.
//!
//! A leader that exits while other threads run stays a zombie but is *not* waitable: the
//! process is still alive. Init's last thread may not exit (`EPERM`; Linux panics with
//! "Attempted to kill init!"), nor may idle: the kernel must halt instead.

use alloc::vec::Vec;
use tally_uapi::errno::{EPERM, ESRCH};

use crate::status::ExitStatus;
use crate::table::{TaskTable, IDLE_PID, INIT_PID};
use crate::task::{AcctFlags, ExitState};
use crate::tree::ProcessExit;
use crate::{Accumulate, Errno, TaskKey};

/// A task that left the table at exit; its payload is the kernel's again.
#[derive(Debug)]
pub struct Released<T> {
    /// Now stale; given so the kernel can drop it from its own structures.
    pub key: TaskKey,
    pub pid: i32,
    pub payload: T,
}

/// What an `exit` or `exit_group` did, for the kernel to act on.
#[derive(Debug)]
pub struct ExitReport<T, A> {
    /// Threads killed besides the caller (`exit_group` only): take each off the run queue and
    /// any wait queue; never run them again. Those in `released` are already stale keys, the
    /// leader (if among them) is a zombie in the table.
    pub killed: Vec<TaskKey>,
    /// Tasks removed from the table, the caller included if it was not the leader. The kernel
    /// runs on the caller's stack: free its payload only after switching away.
    pub released: Vec<Released<T>>,
    /// `Some` when this call ended the process (its last thread exited).
    pub process: Option<ProcessExit<A>>,
}

impl<T, A> ExitReport<T, A> {
    fn new() -> Self {
        ExitReport { killed: Vec::new(), released: Vec::new(), process: None }
    }
}

impl<T, A: Accumulate> TaskTable<T, A> {
    /// Ends the thread `key` with `status` (Linux `exit`, or death of one thread).
    ///
    /// `harvest` is called once, on this thread's payload, for the numbers to add to the
    /// process's dead-threads total. Errors (nothing changed): `ESRCH` stale key or already
    /// exited, `EPERM` idle, or the last live thread of init.
    pub fn exit(
        &mut self,
        key: TaskKey,
        status: ExitStatus,
        mut harvest: impl FnMut(&mut T) -> A,
    ) -> Result<ExitReport<T, A>, Errno> {
        let t = self.live(key)?;
        if t.pid == IDLE_PID || (t.tgid == INIT_PID && self.threads(key)? == [key]) {
            return Err(EPERM);
        }
        let mut report = ExitReport::new();
        self.exit_one(key, status, &mut harvest, &mut report);
        Ok(report)
    }

    /// Ends the whole process of `key` with `status` (Linux `exit_group`, or a fatal signal):
    /// every other live thread is ended with the same status, then `key`. The status becomes
    /// the process's wait status even if its leader had exited earlier with another one.
    ///
    /// `harvest` is called once per thread ended. Errors (nothing changed): `ESRCH` stale key
    /// or already exited, `EPERM` idle or init's process.
    pub fn exit_group(
        &mut self,
        key: TaskKey,
        status: ExitStatus,
        mut harvest: impl FnMut(&mut T) -> A,
    ) -> Result<ExitReport<T, A>, Errno> {
        let t = self.live(key)?;
        if t.pid == IDLE_PID || t.tgid == INIT_PID {
            return Err(EPERM);
        }
        let leader = self.leader(key)?;
        let g = self.group_mut(leader).ok_or(ESRCH)?;
        g.group_exit = Some(status);
        let mut report = ExitReport::new();
        report.killed = g.members.iter().copied().filter(|&m| m != key).collect();
        for i in 0..report.killed.len() {
            let other = report.killed[i];
            self.exit_one(other, status, &mut harvest, &mut report);
        }
        self.exit_one(key, status, &mut harvest, &mut report);
        Ok(report)
    }

    /// Steps 1–4 of the module comment for one live thread.
    fn exit_one(
        &mut self,
        key: TaskKey,
        status: ExitStatus,
        harvest: &mut impl FnMut(&mut T) -> A,
        report: &mut ExitReport<T, A>,
    ) {
        let Some(t) = self.tasks.get_mut(key) else {
            return;
        };
        if t.exit_state != ExitState::Live {
            return;
        }
        let numbers = harvest(&mut t.payload);
        t.exit_state = ExitState::Zombie;
        t.exit_status = Some(status);
        if status.is_signaled() {
            t.flags.insert(AcctFlags::AXSIG);
        }
        if status.core_dumped() {
            t.flags.insert(AcctFlags::ACORE);
        }
        let leader = t.leader.unwrap_or(key);
        let pid = t.pid;
        let process_dead = match self.group_mut(leader) {
            Some(g) => {
                g.dead.add(&numbers);
                crate::group::remove_key(&mut g.members, key);
                g.is_dead()
            }
            None => false,
        };
        if key != leader {
            if let Some(t) = self.tasks.remove(key) {
                self.pids.remove(pid);
                report.released.push(Released { key, pid, payload: t.payload });
            }
        }
        if process_dead {
            report.process = Some(self.process_died(leader));
        }
    }
}
