//! # Job control: process groups, sessions, ignored signals, stopped processes
//!
//! A shell runs each command line (a *job*) as a **process group**, so that one signal can
//! reach every process of the job (`kill(-pgid, sig)`, the terminal's ^C), and the groups of
//! one login form a **session**, which owns the terminal. The terminal has one *foreground*
//! group at a time (the kernel's, not this crate's); the others are in the background. This
//! is POSIX job control, as Linux keeps it in `signal_struct` (`pgrp`, `session`, `flags`):
//!
//! * every process has a process group id (pgid) and a session id (sid). A child process
//!   starts in its creator's group and session (`create`); `setpgid` moves a process into
//!   another group *of its session* or makes it lead a new one, `setsid` makes the caller the
//!   leader of a new session and of a new group in it, both with Linux's rules and errnos;
//! * `spawn` may put the child in a group (or a new session) before it runs
//!   ([`SpawnGroup`], like `posix_spawnattr_setpgroup` / `POSIX_SPAWN_SETSID`): since Tally's
//!   child has always exec'd when its parent gets its pid, `setpgid` on it is `EACCES`, as
//!   Linux answers for a child that has exec'd, and the attribute is the race-free way;
//! * a process may *ignore* a signal (`SIG_IGN`): an interactive shell ignores SIGINT,
//!   SIGQUIT, SIGTSTP, SIGTTIN and SIGTTOU. Tally has no signal handlers, so ignoring is the
//!   only disposition besides the default. A spawned child starts with every signal at its
//!   default (as if the shell passed `POSIX_SPAWN_SETSIGDEF` for all of them);
//! * the **stop state**: a stop signal asks the whole process to stop
//!   ([`TaskTable::request_stop`]); the kernel stops each thread and, when the last one has,
//!   calls [`TaskTable::complete_stop`], which leaves a *report* for the parent's
//!   `wait4(WUNTRACED)`. SIGCONT ([`TaskTable::continue_process`]) cancels the stop and, if it
//!   had completed, leaves a "continued" report for `wait4(WCONTINUED)`. One report slot, as
//!   Linux's `SIGNAL_STOP_STOPPED`/`SIGNAL_STOP_CONTINUED` flags: a newer event replaces an
//!   unread older one.
//!
//! A process group is **orphaned** when no member has a parent in another group of the same
//! session (POSIX): nobody is left who could continue it, so the kernel hangs it up
//! (SIGHUP, SIGCONT) if it has a stopped member, and a read of the terminal from it is `EIO`
//! instead of SIGTTIN.

use alloc::vec::Vec;
use tally_uapi::errno::{EACCES, EINVAL, EPERM, ESRCH};

use crate::status::NSIG;
use crate::table::{TaskTable, INIT_PID};
use crate::task::{AcctFlags, ExitState};
use crate::{Accumulate, Errno, TaskKey};

/// What a process has to tell its parent's `wait4` about a stop or a continue.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum JobReport {
    /// Stopped by this signal (`WIFSTOPPED`, status `0x7f | sig << 8`).
    Stopped(u8),
    /// Continued by SIGCONT (`WIFCONTINUED`, status `0xffff`).
    Continued,
}

/// The process group a `spawn`ed child starts in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SpawnGroup {
    /// Its creator's (the default).
    Inherit,
    /// Process group `pgid` of the creator's session; 0: a new group led by the child
    /// (`posix_spawnattr_setpgroup`).
    Join(i32),
    /// A new session, and a new group in it, both led by the child (`POSIX_SPAWN_SETSID`).
    NewSession,
}

/// The job-control part of a process (in its thread group).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct JobControl {
    pub(crate) pgid: i32,
    pub(crate) sid: i32,
    /// Bit `s` set: signal `s` is ignored (`SIG_IGN`).
    pub(crate) ignored: u64,
    /// `Some(sig)`: a stop by `sig` was asked for and not cancelled by SIGCONT.
    pub(crate) stopping: Option<u8>,
    /// The stop completed: every thread stopped (`SIGNAL_STOP_STOPPED`).
    pub(crate) stopped: bool,
    /// The event the parent has not collected yet.
    pub(crate) report: Option<JobReport>,
}

impl<T, A: Accumulate> TaskTable<T, A> {
    fn job(&self, key: TaskKey) -> Result<&JobControl, Errno> {
        Ok(&self.group(key)?.job)
    }

    fn job_mut(&mut self, key: TaskKey) -> Result<&mut JobControl, Errno> {
        let leader = self.leader(key)?;
        Ok(&mut self.group_mut(leader).ok_or(ESRCH)?.job)
    }

    /// The process group of `key`'s process.
    pub fn pgid(&self, key: TaskKey) -> Result<i32, Errno> {
        Ok(self.job(key)?.pgid)
    }

    /// The session of `key`'s process.
    pub fn sid(&self, key: TaskKey) -> Result<i32, Errno> {
        Ok(self.job(key)?.sid)
    }

    /// The process named by `pid` for `getpgid`/`getsid`/`setpgid`: the caller's with 0.
    fn process_by_pid(&self, caller: TaskKey, pid: i32) -> Result<TaskKey, Errno> {
        match pid {
            0 => self.leader(caller),
            p if p < 0 => Err(ESRCH),
            p => self.leader(self.lookup(p)?),
        }
    }

    /// `getpgid(pid)` (0: the caller's process). `ESRCH` no such process.
    pub fn getpgid(&self, caller: TaskKey, pid: i32) -> Result<i32, Errno> {
        self.pgid(self.process_by_pid(caller, pid)?)
    }

    /// `getsid(pid)` (0: the caller's process). `ESRCH` no such process.
    pub fn getsid(&self, caller: TaskKey, pid: i32) -> Result<i32, Errno> {
        self.sid(self.process_by_pid(caller, pid)?)
    }

    /// The processes (leader keys, zombies included until reaped) of process group `pgid`;
    /// empty for `pgid <= 0`.
    pub fn process_group(&self, pgid: i32) -> Vec<TaskKey> {
        if pgid <= 0 {
            return Vec::new();
        }
        self.tasks
            .iter()
            .filter(|(_, t)| t.group.as_ref().is_some_and(|g| g.job.pgid == pgid))
            .map(|(k, _)| k)
            .collect()
    }

    /// The session of process group `pgid`, if it has a member.
    pub fn session_of_group(&self, pgid: i32) -> Option<i32> {
        let key = *self.process_group(pgid).first()?;
        self.sid(key).ok()
    }

    /// `setpgid(pid, pgid)` by `caller` (Linux's rules): `pid` 0 is the caller's process,
    /// `pgid` 0 the target's own pid. The target must be the caller's process or a child of
    /// it (`ESRCH`) in the caller's session (`EPERM`) that has not exec'd (`EACCES`), not a
    /// session leader (`EPERM`); a `pgid` other than the target's pid must name a group of the
    /// caller's session (`EPERM`). `EINVAL` a negative `pgid`.
    pub fn setpgid(&mut self, caller: TaskKey, pid: i32, pgid: i32) -> Result<(), Errno> {
        if pgid < 0 {
            return Err(EINVAL);
        }
        self.live(caller)?;
        let me = self.leader(caller)?;
        let target = match pid {
            0 => me,
            p if p < 0 => return Err(EINVAL),
            p => {
                let t = self.lookup(p)?;
                if !self.get(t)?.is_leader() {
                    return Err(EINVAL);
                }
                t
            }
        };
        if target != me {
            if self.parent(target)? != Some(me) {
                return Err(ESRCH);
            }
            if self.sid(target)? != self.sid(me)? {
                return Err(EPERM);
            }
            if !self.get(target)?.flags().contains(AcctFlags::AFORK) {
                return Err(EACCES);
            }
        }
        self.move_to_group(me, target, pgid)
    }

    /// The checks `setpgid` and `spawn` share, then the move: `target` (not a session
    /// leader) joins `pgid` (0: its own pid) of `me`'s session.
    fn move_to_group(&mut self, me: TaskKey, target: TaskKey, pgid: i32) -> Result<(), Errno> {
        let tpid = self.get(target)?.pid();
        let (tsid, my_sid) = (self.sid(target)?, self.sid(me)?);
        if tsid == tpid {
            return Err(EPERM); // a session leader stays in its group
        }
        let pgid = if pgid == 0 { tpid } else { pgid };
        if pgid != tpid && self.session_of_group(pgid) != Some(my_sid) {
            return Err(EPERM);
        }
        self.job_mut(target)?.pgid = pgid;
        Ok(())
    }

    /// `setsid()`: the caller's process leads a new session and a new group in it; returns
    /// the session id (its pid). `EPERM` if a process group with its pid exists (it leads
    /// one already, or another process still uses its pid as a group id).
    pub fn setsid(&mut self, caller: TaskKey) -> Result<i32, Errno> {
        self.live(caller)?;
        let me = self.leader(caller)?;
        let pid = self.get(me)?.pid();
        if !self.process_group(pid).is_empty() {
            return Err(EPERM);
        }
        let j = self.job_mut(me)?;
        j.pgid = pid;
        j.sid = pid;
        Ok(pid)
    }

    /// Put a child just created by `spawn` in the group `how` says, before it runs (see
    /// [`SpawnGroup`]); `creator` is the spawning task. Errors as `setpgid`'s (`EPERM`).
    pub fn spawn_group(&mut self, creator: TaskKey, child: TaskKey, how: SpawnGroup) -> Result<(), Errno> {
        match how {
            SpawnGroup::Inherit => Ok(()),
            SpawnGroup::Join(pgid) if pgid < 0 => Err(EINVAL),
            SpawnGroup::Join(pgid) => {
                let me = self.leader(creator)?;
                self.move_to_group(me, child, pgid)
            }
            SpawnGroup::NewSession => self.setsid(child).map(|_| ()),
        }
    }

    /// Is process group `pgid` orphaned (POSIX): does no live member have a parent in
    /// another group of the same session? (A parent that is init does not count, as on
    /// Linux.) A group without a live member is orphaned.
    pub fn is_orphaned_group(&self, pgid: i32) -> bool {
        for key in self.process_group(pgid) {
            let Ok(t) = self.get(key) else { continue };
            if t.exit_state() != ExitState::Live && self.threads(key).map(|m| m.is_empty()).unwrap_or(true) {
                continue;
            }
            let Ok(Some(parent)) = self.parent(key) else { continue };
            if self.get(parent).map(|p| p.pid()) == Ok(INIT_PID) {
                continue;
            }
            let (Ok(ppg), Ok(psid), Ok(sid)) = (self.pgid(parent), self.sid(parent), self.sid(key)) else { continue };
            if ppg != pgid && psid == sid {
                return false;
            }
        }
        true
    }

    /// Does process group `pgid` have a member whose stop has completed? (No scan of the
    /// table while no process at all is stopped.)
    pub fn group_has_stopped(&self, pgid: i32) -> bool {
        self.stopped_processes > 0 && self.process_group(pgid).into_iter().any(|k| self.job(k).is_ok_and(|j| j.stopped))
    }

    /// Live processes in the table whose stop has completed (a process that dies is stopped
    /// no more).
    pub fn stopped_processes(&self) -> usize {
        self.stopped_processes
    }

    // ---- signal dispositions ---------------------------------------------------------------

    /// Set signal `sig`'s disposition in `key`'s process: ignored, or the default; returns
    /// whether it was ignored before. `EINVAL` for 0, SIGKILL, SIGSTOP (which can be neither
    /// caught nor ignored) and numbers above 64.
    pub fn set_ignored(&mut self, key: TaskKey, sig: u8, ignore: bool) -> Result<bool, Errno> {
        if sig == 0 || sig > NSIG || sig == tally_uapi::signal::SIGKILL || sig == tally_uapi::signal::SIGSTOP {
            return Err(EINVAL);
        }
        let j = self.job_mut(key)?;
        let bit = 1u64 << (sig - 1);
        let was = j.ignored & bit != 0;
        if ignore {
            j.ignored |= bit;
        } else {
            j.ignored &= !bit;
        }
        Ok(was)
    }

    /// Is signal `sig` ignored by `key`'s process?
    pub fn is_ignored(&self, key: TaskKey, sig: u8) -> bool {
        (1..=NSIG).contains(&sig) && self.job(key).is_ok_and(|j| j.ignored & (1u64 << (sig - 1)) != 0)
    }

    // ---- stop and continue -----------------------------------------------------------------

    /// A stop signal `sig` reached `key`'s process: the stop is asked for. Returns false if
    /// the process is already stopping or stopped (the second stop does nothing).
    pub fn request_stop(&mut self, key: TaskKey, sig: u8) -> Result<bool, Errno> {
        let j = self.job_mut(key)?;
        if j.stopping.is_some() {
            return Ok(false);
        }
        j.stopping = Some(sig);
        Ok(true)
    }

    /// The signal of the stop asked for and not cancelled, if any.
    pub fn stop_requested(&self, key: TaskKey) -> Option<u8> {
        self.job(key).ok().and_then(|j| j.stopping)
    }

    /// Has `key`'s process stopped (every thread)?
    pub fn is_stopped(&self, key: TaskKey) -> bool {
        self.job(key).is_ok_and(|j| j.stopped)
    }

    /// The last thread of `key`'s process has stopped: the stop is complete, and the parent
    /// has a report to collect. Returns the stop signal if this completed it (the kernel then
    /// sends the parent SIGCHLD), `None` if no stop was asked for or it had completed.
    pub fn complete_stop(&mut self, key: TaskKey) -> Result<Option<u8>, Errno> {
        let j = self.job_mut(key)?;
        match j.stopping {
            Some(sig) if !j.stopped => {
                j.stopped = true;
                j.report = Some(JobReport::Stopped(sig));
                self.stopped_processes += 1;
                Ok(Some(sig))
            }
            _ => Ok(None),
        }
    }

    /// SIGCONT reached `key`'s process: a stop asked for or completed is over. Returns true
    /// if the process had stopped — it then has a "continued" report for its parent (and the
    /// kernel sends the parent SIGCHLD). A stop still in progress is cancelled silently.
    pub fn continue_process(&mut self, key: TaskKey) -> Result<bool, Errno> {
        let j = self.job_mut(key)?;
        let was_stopped = j.stopped;
        j.stopping = None;
        j.stopped = false;
        if was_stopped {
            j.report = Some(JobReport::Continued);
            self.stopped_processes -= 1;
        }
        Ok(was_stopped)
    }

    /// The report `key`'s process holds for its parent (read without collecting it).
    pub fn job_report(&self, key: TaskKey) -> Option<JobReport> {
        self.job(key).ok().and_then(|j| j.report)
    }

    /// Collect `key`'s report if `untraced`/`continued` asks for its kind.
    pub(crate) fn take_report(&mut self, key: TaskKey, untraced: bool, continued: bool) -> Option<JobReport> {
        let j = self.job_mut(key).ok()?;
        let wanted = match j.report? {
            JobReport::Stopped(_) => untraced && j.stopped,
            JobReport::Continued => continued,
        };
        if wanted {
            j.report.take()
        } else {
            None
        }
    }

    /// Would [`TaskTable::take_report`] find something?
    pub(crate) fn has_report(&self, key: TaskKey, untraced: bool, continued: bool) -> bool {
        match self.job(key).ok().and_then(|j| j.report.map(|r| (r, j.stopped))) {
            Some((JobReport::Stopped(_), stopped)) => untraced && stopped,
            Some((JobReport::Continued, _)) => continued,
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CreateKind, WaitFor, WaitOpts, WaitOutcome};

    type Table = TaskTable<(), u64>;

    /// init, a shell (in a session of its own) and two children of the shell.
    fn setup() -> (Table, TaskKey, TaskKey, TaskKey, TaskKey) {
        let mut t = Table::new();
        let init = t.create_init(b"init", 0, 0, 0, ()).unwrap();
        let sh = t.create(init, CreateKind::Process, 0, ()).unwrap();
        t.get_mut(sh).unwrap().exec(b"sh");
        t.setsid(sh).unwrap();
        let a = t.create(sh, CreateKind::Process, 0, ()).unwrap();
        let b = t.create(sh, CreateKind::Process, 0, ()).unwrap();
        (t, init, sh, a, b)
    }

    fn pid(t: &Table, k: TaskKey) -> i32 {
        t.get(k).unwrap().pid()
    }

    #[test]
    fn children_inherit_group_and_session() {
        let (t, init, sh, a, _) = setup();
        assert_eq!((t.pgid(init).unwrap(), t.sid(init).unwrap()), (1, 1));
        let s = pid(&t, sh);
        assert_eq!((t.pgid(sh).unwrap(), t.sid(sh).unwrap()), (s, s));
        assert_eq!((t.pgid(a).unwrap(), t.sid(a).unwrap()), (s, s));
        assert_eq!(t.getpgid(a, 0).unwrap(), s);
        assert_eq!(t.getsid(sh, pid(&t, a)).unwrap(), s);
        assert_eq!(t.getpgid(sh, 9999), Err(ESRCH));
        // Threads share their process's group.
        let mut t = t;
        let th = t.create(a, CreateKind::Thread, 0, ()).unwrap();
        assert_eq!(t.pgid(th).unwrap(), s);
    }

    #[test]
    fn setpgid_follows_linux_rules() {
        let (mut t, init, sh, a, b) = setup();
        let (pa, pb, ps) = (pid(&t, a), pid(&t, b), pid(&t, sh));
        // A child that has not exec'd may be moved into a new group, then its sibling into it.
        t.setpgid(sh, pa, 0).unwrap();
        assert_eq!(t.pgid(a).unwrap(), pa);
        t.setpgid(sh, pb, pa).unwrap();
        assert_eq!(t.pgid(b).unwrap(), pa);
        assert_eq!(t.process_group(pa), alloc::vec![a, b]);
        // A group that does not exist in the session: EPERM. Negative: EINVAL.
        assert_eq!(t.setpgid(sh, pb, 4242), Err(EPERM));
        assert_eq!(t.setpgid(sh, pb, -3), Err(EINVAL));
        // Not a child: ESRCH; the session leader itself: EPERM.
        assert_eq!(t.setpgid(a, pb, 0), Err(ESRCH));
        assert_eq!(t.setpgid(sh, 0, 0), Err(EPERM));
        assert_eq!(t.setpgid(sh, ps, 0), Err(EPERM));
        // After exec: EACCES (the parent); the child itself still may.
        t.get_mut(a).unwrap().exec(b"spin");
        assert_eq!(t.setpgid(sh, pa, ps), Err(EACCES));
        t.setpgid(a, 0, ps).unwrap();
        assert_eq!(t.pgid(a).unwrap(), ps);
        // A child in another session: EPERM.
        let c = t.create(init, CreateKind::Process, 0, ()).unwrap();
        let d = t.create(c, CreateKind::Process, 0, ()).unwrap();
        t.setsid(d).unwrap();
        assert_eq!(t.setpgid(c, pid(&t, d), 0), Err(EPERM));
        // A group of another session: EPERM.
        assert_eq!(t.setpgid(c, 0, ps), Err(EPERM));
    }

    #[test]
    fn setsid_refuses_a_group_leader() {
        let (mut t, _, sh, a, _) = setup();
        assert_eq!(t.setsid(sh), Err(EPERM));
        let pa = pid(&t, a);
        assert_eq!(t.setsid(a), Ok(pa));
        assert_eq!((t.pgid(a).unwrap(), t.sid(a).unwrap()), (pa, pa));
        assert_eq!(t.setsid(a), Err(EPERM));
    }

    #[test]
    fn spawn_group_places_the_child_before_it_runs() {
        let (mut t, _, sh, a, _) = setup();
        t.get_mut(a).unwrap().exec(b"x");
        let pa = pid(&t, a);
        // spawn's attribute works on a child that has exec'd (it has not run yet).
        t.spawn_group(sh, a, SpawnGroup::Join(0)).unwrap();
        assert_eq!(t.pgid(a).unwrap(), pa);
        let c = t.create(sh, CreateKind::Process, 0, ()).unwrap();
        t.get_mut(c).unwrap().exec(b"y");
        t.spawn_group(sh, c, SpawnGroup::Join(pa)).unwrap();
        assert_eq!(t.pgid(c).unwrap(), pa);
        let d = t.create(sh, CreateKind::Process, 0, ()).unwrap();
        assert_eq!(t.spawn_group(sh, d, SpawnGroup::Join(777)), Err(EPERM));
        assert_eq!(t.spawn_group(sh, d, SpawnGroup::Join(-1)), Err(EINVAL));
        t.spawn_group(sh, d, SpawnGroup::NewSession).unwrap();
        assert_eq!(t.sid(d).unwrap(), pid(&t, d));
        t.spawn_group(sh, d, SpawnGroup::Inherit).unwrap();
    }

    #[test]
    fn orphaned_groups() {
        let (mut t, _, sh, a, _) = setup();
        let pa = pid(&t, a);
        t.setpgid(sh, pa, 0).unwrap();
        // The shell (another group, same session) is a's parent: not orphaned.
        assert!(!t.is_orphaned_group(pa));
        // The shell's own group: its parent is init: orphaned.
        assert!(t.is_orphaned_group(pid(&t, sh)));
        // The shell dies: a is adopted by init, its group is orphaned.
        t.exit(sh, crate::ExitStatus::exited(0), |_| 0).unwrap();
        assert!(t.is_orphaned_group(pa));
        assert!(t.is_orphaned_group(4242));
    }

    #[test]
    fn ignored_signals() {
        let (mut t, _, sh, a, _) = setup();
        assert_eq!(t.set_ignored(sh, 2, true), Ok(false));
        assert!(t.is_ignored(sh, 2) && !t.is_ignored(sh, 3) && !t.is_ignored(a, 2));
        assert_eq!(t.set_ignored(sh, 2, false), Ok(true));
        assert!(!t.is_ignored(sh, 2));
        for bad in [0u8, 9, 19, 65] {
            assert_eq!(t.set_ignored(sh, bad, true), Err(EINVAL));
        }
        assert!(!t.is_ignored(sh, 0) && !t.is_ignored(sh, 200));
        // A child starts with every signal at its default.
        t.set_ignored(sh, 20, true).unwrap();
        let c = t.create(sh, CreateKind::Process, 0, ()).unwrap();
        assert!(!t.is_ignored(c, 20));
    }

    fn wait(t: &mut Table, caller: TaskKey, which: WaitFor, untraced: bool, continued: bool) -> Option<(i32, i32)> {
        let opts = WaitOpts { nohang: true, untraced, continued };
        match t.wait_opts(caller, which, opts).unwrap() {
            WaitOutcome::Reaped(r) => Some((r.pid, r.status.raw())),
            WaitOutcome::Job { pid, status } => Some((pid, status)),
            WaitOutcome::NotReady => None,
            WaitOutcome::Sleep { .. } => unreachable!("nohang"),
        }
    }

    #[test]
    fn stop_and_continue_reports() {
        let (mut t, _, sh, a, _) = setup();
        let pa = pid(&t, a);
        assert!(t.request_stop(a, 20).unwrap());
        assert!(!t.request_stop(a, 19).unwrap(), "a second stop does nothing");
        assert_eq!(t.stop_requested(a), Some(20));
        // Not complete yet: nothing to report.
        assert_eq!(wait(&mut t, sh, WaitFor::Any, true, true), None);
        assert_eq!(t.complete_stop(a), Ok(Some(20)));
        assert_eq!(t.complete_stop(a), Ok(None));
        assert!(t.is_stopped(a));
        // Without WUNTRACED the stop is not reported.
        assert_eq!(wait(&mut t, sh, WaitFor::Any, false, true), None);
        assert_eq!(wait(&mut t, sh, WaitFor::Pid(pa), true, false), Some((pa, 0x7f | 20 << 8)));
        assert_eq!(wait(&mut t, sh, WaitFor::Any, true, false), None, "collected once");
        assert!(t.continue_process(a).unwrap());
        assert!(!t.is_stopped(a) && t.stop_requested(a).is_none());
        assert_eq!(wait(&mut t, sh, WaitFor::Any, true, false), None);
        assert_eq!(wait(&mut t, sh, WaitFor::Any, false, true), Some((pa, 0xffff)));
        // A stop cancelled before it completed is not reported.
        t.request_stop(a, 19).unwrap();
        assert!(!t.continue_process(a).unwrap());
        assert_eq!(wait(&mut t, sh, WaitFor::Any, true, true), None);
        // An unread stop replaced by a continue: only the continue is seen.
        t.request_stop(a, 19).unwrap();
        t.complete_stop(a).unwrap();
        t.continue_process(a).unwrap();
        assert_eq!(wait(&mut t, sh, WaitFor::Any, true, true), Some((pa, 0xffff)));
        assert_eq!(t.stopped_processes(), 0, "every completed stop was continued");
    }

    #[test]
    fn wait_for_a_process_group() {
        let (mut t, _, sh, a, b) = setup();
        let (pa, pb) = (pid(&t, a), pid(&t, b));
        t.setpgid(sh, pa, 0).unwrap();
        // No child in group 4242: ECHILD; b is not in a's group.
        let opts = WaitOpts { nohang: true, untraced: true, continued: false };
        assert_eq!(t.wait_opts(sh, WaitFor::Group(4242), opts).err(), Some(tally_uapi::errno::ECHILD));
        t.exit(b, crate::ExitStatus::exited(3), |_| 0).unwrap();
        assert_eq!(wait(&mut t, sh, WaitFor::Group(pa), true, false), None);
        // Group 0 means the caller's group, which b is in.
        assert_eq!(wait(&mut t, sh, WaitFor::Group(0), false, false), Some((pb, 0x300)));
        t.request_stop(a, 19).unwrap();
        t.complete_stop(a).unwrap();
        assert_eq!(wait(&mut t, sh, WaitFor::Group(pa), true, false), Some((pa, 0x137f)));
        assert_eq!(t.stopped_processes(), 1);
        assert!(t.group_has_stopped(pa));
        // A stopped child that dies no longer counts as stopped, and is reaped as usual.
        t.exit(a, crate::ExitStatus::signaled(9, false).unwrap(), |_| 0).unwrap();
        assert_eq!(t.stopped_processes(), 0);
        assert!(!t.group_has_stopped(pa) && !t.is_stopped(a));
        assert_eq!(wait(&mut t, sh, WaitFor::Any, true, true), Some((pa, 9)));
    }
}
