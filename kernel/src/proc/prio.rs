//! # Priorities and privilege: nice, scheduling policy, uid
//!
//! Three system calls change how a task is treated, and each asks first whether the caller
//! may. Tally has one notion of privilege, Unix's oldest: **uid 0 may do anything**. Linux
//! splits that into capabilities (`CAP_SYS_NICE`, `CAP_SETUID`, ...); the rules below are
//! what Linux does for a process that has all of them when its uid is 0 and none otherwise.
//!
//! * `setpriority`: anyone may raise the nice value (lower the priority) of a task of the
//!   same uid; only uid 0 may lower a nice value (`EACCES`) or touch another uid's task
//!   (`EPERM`);
//! * `sched_setscheduler`: anyone may set `SCHED_OTHER`/`SCHED_BATCH` for a task of the same
//!   uid; only uid 0 may choose `SCHED_FIFO`/`SCHED_RR` (`EPERM`) or act on another uid's
//!   task (`EPERM`);
//! * `setuid`: anyone may "change" to its own uid (a no-op); uid 0 to any uid.
//!
//! Whenever a call succeeds *because* the caller is root, the caller's task is flagged
//! `ASU` ("used super-user privileges", Linux's `PF_SUPERPRIV`): the bit a BSD accounting
//! record carries in `ac_flag`, so an administrator can see which commands relied on root.
//! [`superuser_used`] reads it.
//!
//! The target of `setpriority`/`sched_setscheduler` is a *thread* (`who`/`pid` 0: the
//! caller), as in Linux, where these calls act on one task. The scheduler side —
//! re-queueing at the new level, asking for a reschedule — is `tally_runqueue`'s
//! `set_nice`/`set_scheduler`.

use tally_runqueue::Policy;
use tally_tasktable::{AcctFlags, ExitState, TaskKey, IDLE_PID};
use tally_uapi::errno::{EACCES, EINVAL, EPERM, ESRCH};

use super::Procs;
use crate::sched::{self, slot_of};

impl Procs {
    /// The live task `pid` names (0: the current one).
    fn target(&self, pid: i32) -> Result<TaskKey, i32> {
        if pid == 0 {
            return Ok(sched::current());
        }
        if pid < 0 {
            return Err(ESRCH);
        }
        let key = self.table.lookup(pid)?;
        match self.table.get(key) {
            Ok(t) if t.exit_state() == ExitState::Live && t.pid() != IDLE_PID => Ok(key),
            _ => Err(ESRCH),
        }
    }

    /// The caller's uid, and whether it may act on `target` at all (same uid, or root).
    fn may_touch(&self, target: TaskKey) -> Result<bool, i32> {
        let me = self.table.get(sched::current())?.uid();
        let them = self.table.get(target)?.uid();
        if me == 0 {
            return Ok(me != them); // privilege used only when it was needed
        }
        if me != them {
            return Err(EPERM);
        }
        Ok(false)
    }

    pub(super) fn note_superuser(&mut self) {
        if let Ok(t) = self.table.get_mut(sched::current()) {
            t.note_superuser();
        }
    }
}

/// `setpriority(PRIO_PROCESS, pid, nice)`: `nice` is clamped to -20..19.
pub fn set_nice(pid: i32, nice: i32) -> Result<(), i32> {
    let nice = nice.clamp(-20, 19);
    super::with(|p| {
        let target = p.target(pid)?;
        let mut privileged = p.may_touch(target)?;
        let old = sched::with(|s| s.entity(slot_of(target)).nice());
        if nice < old {
            if p.table.get(sched::current())?.uid() != 0 {
                return Err(EACCES);
            }
            privileged = true;
        }
        if privileged {
            p.note_superuser();
        }
        sched::set_nice(target, nice);
        Ok(())
    })
}

/// `sched_setscheduler(pid, policy, &priority)`.
pub fn set_scheduler(pid: i32, policy: i32, rt_priority: i32) -> Result<(), i32> {
    let policy = u32::try_from(policy).ok().and_then(Policy::from_raw).ok_or(EINVAL)?;
    let rt_priority = u32::try_from(rt_priority).map_err(|_| EINVAL)?;
    super::with(|p| {
        let target = p.target(pid)?;
        let mut privileged = p.may_touch(target)?;
        if policy.is_realtime() {
            if p.table.get(sched::current())?.uid() != 0 {
                return Err(EPERM);
            }
            privileged = true;
        }
        sched::set_scheduler(target, policy, rt_priority)?;
        if privileged {
            p.note_superuser();
        }
        Ok(())
    })
}

/// `setuid(uid)` for the calling thread (gid unchanged).
pub fn set_uid(uid: u32) -> Result<(), i32> {
    if uid == u32::MAX {
        return Err(EINVAL); // (uid_t)-1 is not a uid
    }
    super::with(|p| {
        let t = p.table.get_mut(sched::current())?;
        if t.uid() == 0 {
            let gid = t.gid();
            t.set_ids(uid, gid);
            t.note_superuser();
            Ok(())
        } else if t.uid() == uid {
            Ok(())
        } else {
            Err(EPERM)
        }
    })
}

/// Linux's `capable(CAP_SYS_PACCT)` for the accounting calls (`acct`, `job_create`,
/// `csa_ctl`): is the calling task root? If it is, it is flagged `ASU` — the call it is
/// about to make is allowed because of it, and Linux's `capable()` sets `PF_SUPERPRIV`
/// exactly then.
pub fn use_privilege() -> bool {
    super::with(|p| {
        let root = p.table.get(sched::current()).is_ok_and(|t| t.uid() == 0);
        if root {
            p.note_superuser();
        }
        root
    })
}

/// Has task `pid` used super-user privilege (its `ASU` accounting flag)?
pub fn superuser_used(pid: i32) -> Option<bool> {
    super::with(|p| {
        let key = p.table.lookup(pid).ok()?;
        p.table.get(key).ok().map(|t| t.flags().contains(AcctFlags::ASU))
    })
}
