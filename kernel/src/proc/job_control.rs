//! # The console's job control: its session, its foreground process group, ISIG and SIGTTIN
//!
//! POSIX job control gives a terminal a *controlling session* and, in it, one *foreground
//! process group*: the group whose processes may read the terminal and which receives the
//! signals typed on it (Linux: `tty->session`, `tty->pgrp`). Tally has one terminal, the
//! console, so the two numbers live here, under the task table's lock, as [`ConsoleJobs`].
//!
//! * A session leader takes the console with `ioctl(TIOCSCTTY)` (the shell does, once init
//!   has made it lead a session: `spawn` with `POSIX_SPAWN_SETSID`); the foreground group is
//!   then its own. `tcsetpgrp` (`TIOCSPGRP`) changes it to another group of the session, as a
//!   shell does for each foreground job and again to take the console back.
//! * A process's controlling terminal is the console exactly when its session is the
//!   console's (Tally keeps no per-process terminal pointer).
//! * **ISIG**: the console's input hands ^C, ^\ and ^Z to [`signal_foreground`]: SIGINT,
//!   SIGQUIT, SIGTSTP to every process of the foreground group.
//! * **SIGTTIN**: [`console_read_check`] runs at the top of the console's `read`: a process
//!   of the session that is not in the foreground group gets SIGTTIN (its whole group does,
//!   as on Linux) and stops right there; when continued, the check runs again — so a job
//!   brought to the foreground with `fg` simply goes on reading (Linux restarts the read the
//!   same way). A reader that ignores or blocks SIGTTIN, or whose group is orphaned, gets `EIO`.
//! * **Hang-up**: when the session leader dies (or gives the console up with `TIOCNOTTY`)
//!   the foreground group gets SIGHUP and SIGCONT and the console belongs to nobody; when a
//!   process's death leaves a process group orphaned with a stopped member, that group gets
//!   SIGHUP and SIGCONT (POSIX), so no job stays stopped with nobody left to continue it.
//!
//! Without a controlling session (a scenario that starts a program directly), there is no
//! job control on the console: every read is allowed and ISIG characters signal nobody.
//! See `docs/job-control.md`.

use alloc::vec::Vec;
use tally_tasktable::TaskKey;
use tally_uapi::errno::{EINVAL, EIO, ENOTTY, EPERM, ESRCH};
use tally_uapi::signal::{SIGCONT, SIGHUP, SIGTTIN};

use super::Procs;
use crate::sched;

/// The console's controlling session and foreground group (0: none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConsoleJobs {
    sid: i32,
    pgrp: i32,
}

/// The console's ISIG character for `sig` was typed: send `sig` to every process of the
/// console's foreground process group (nothing if there is none). Callable from the
/// console's interrupt handler.
pub fn signal_foreground(sig: u8) {
    super::with(|p| {
        let pgrp = p.console.pgrp;
        if pgrp > 0 {
            p.signal_group(pgrp, sig, hal::tsc::read());
        }
    });
}

/// What the top of a console read found.
enum ReadCheck {
    Allowed,
    Refused(i32),
    /// SIGTTIN was sent to the caller's group: stop, then check again.
    Stopped,
}

/// Called at the top of the console's read: `Ok` if the caller may read the console (it
/// is in the foreground group, or the console is not its controlling terminal, or there is
/// no job control on it). A background reader of the console's session gets SIGTTIN and
/// stops here; once continued, it is checked again. `EIO` if it ignores or blocks SIGTTIN,
/// or its group is orphaned; `ERESTARTSYS` if it is killed or catches SIGTTIN meanwhile (its
/// handler runs, and the read is restarted with `SA_RESTART`, else fails with `EINTR`).
pub fn console_read_check() -> Result<(), i32> {
    loop {
        let check = hal::cpu::without_interrupts(|| {
            let check = super::with(|p| {
                let me = sched::current();
                let (Ok(pgid), Ok(sid)) = (p.table.pgid(me), p.table.sid(me)) else {
                    return ReadCheck::Allowed;
                };
                let c = p.console;
                if c.sid == 0 || c.sid != sid || c.pgrp == pgid {
                    return ReadCheck::Allowed;
                }
                // Ignored or blocked SIGTTIN, or an orphaned group: EIO (Linux's
                // `__tty_check_change`), never a stop nobody could end.
                let blocked = p.signals.thread(me).blocked.contains(SIGTTIN);
                if p.table.is_ignored(me, SIGTTIN) || blocked || p.table.is_orphaned_group(pgid) {
                    return ReadCheck::Refused(EIO);
                }
                p.signal_group(pgid, SIGTTIN, hal::tsc::read());
                ReadCheck::Stopped
            });
            if let ReadCheck::Stopped = check {
                super::stop_if_requested();
            }
            check
        });
        match check {
            ReadCheck::Allowed => return Ok(()),
            ReadCheck::Refused(e) => return Err(e),
            // Killed, or SIGTTIN caught (its handler runs; the read restarts with SA_RESTART).
            ReadCheck::Stopped if sched::interrupted() => return Err(tally_sig::ERESTARTSYS),
            ReadCheck::Stopped => {}
        }
    }
}

/// `tcgetpgrp` (`TIOCGPGRP` on the console): the foreground group. `ENOTTY` if the console
/// is not the caller's controlling terminal.
pub fn tcgetpgrp() -> Result<i32, i32> {
    super::with(|p| {
        let sid = p.table.sid(sched::current())?;
        if p.console.sid == 0 || p.console.sid != sid {
            return Err(ENOTTY);
        }
        Ok(p.console.pgrp)
    })
}

/// `tcsetpgrp` (`TIOCSPGRP`): make `pgrp` the console's foreground group. `ENOTTY` not
/// the caller's controlling terminal, `EINVAL` negative, `ESRCH` no such group, `EPERM` a
/// group of another session. (A background caller is allowed: Tally has no SIGTTOU for it,
/// as if the caller ignored SIGTTOU as every job-control shell does.)
pub fn tcsetpgrp(pgrp: i32) -> Result<(), i32> {
    super::with(|p| {
        let sid = p.table.sid(sched::current())?;
        if p.console.sid == 0 || p.console.sid != sid {
            return Err(ENOTTY);
        }
        if pgrp < 0 {
            return Err(EINVAL);
        }
        match p.table.session_of_group(pgrp) {
            None => Err(ESRCH),
            Some(s) if s != sid => Err(EPERM),
            Some(_) => {
                p.set_console(ConsoleJobs { pgrp, ..p.console });
                Ok(())
            }
        }
    })
}

/// `TIOCSCTTY`: the caller, a session leader, makes the console its controlling terminal;
/// its group becomes the foreground group. `EPERM` if it does not lead a session, or the
/// console belongs to another session (unless `steal` and the caller is root, as Linux's
/// `arg == 1`). Taking it again is a no-op.
pub fn set_controlling_tty(steal: bool) -> Result<(), i32> {
    super::with(|p| {
        let me = sched::current();
        let leader = p.table.leader(me)?;
        let (pid, sid, pgid) = (p.table.get(leader)?.pid(), p.table.sid(me)?, p.table.pgid(me)?);
        if sid != pid {
            return Err(EPERM);
        }
        if p.console.sid == sid {
            return Ok(());
        }
        let live_owner = p.console.sid != 0 && p.table.lookup(p.console.sid).is_ok();
        if live_owner && !(steal && p.table.get(me)?.uid() == 0) {
            return Err(EPERM);
        }
        p.set_console(ConsoleJobs { sid, pgrp: pgid });
        Ok(())
    })
}

/// `TIOCNOTTY`: the caller gives its controlling terminal up. `ENOTTY` if the console is
/// not its controlling terminal. A session leader hangs the console up (its foreground group
/// gets SIGHUP and SIGCONT); for any other process there is nothing to change (the
/// controlling terminal follows the session).
pub fn give_up_tty() -> Result<(), i32> {
    super::with(|p| {
        let me = sched::current();
        let sid = p.table.sid(me)?;
        if p.console.sid == 0 || p.console.sid != sid {
            return Err(ENOTTY);
        }
        let leader = p.table.leader(me)?;
        if p.table.get(leader)?.pid() == sid {
            p.hang_up_console(hal::tsc::read());
        }
        Ok(())
    })
}

impl Procs {
    /// The console's session or foreground group changes: readers waiting on the console
    /// are checked again (`drivers::tty::job_control_changed`).
    fn set_console(&mut self, c: ConsoleJobs) {
        if self.console != c {
            self.console = c;
            crate::drivers::tty::job_control_changed();
        }
    }

    /// Is the console `member`'s controlling terminal (its session's)?
    pub(super) fn console_is_controlling(&self, member: TaskKey) -> bool {
        self.console.sid != 0 && self.table.sid(member) == Ok(self.console.sid)
    }

    /// `member`'s process group becomes the console's foreground group (a spawned child's,
    /// before it runs; the caller checked the console is its session's).
    pub(super) fn make_foreground(&mut self, member: TaskKey) {
        if let Ok(pgid) = self.table.pgid(member) {
            if self.console_is_controlling(member) {
                self.set_console(ConsoleJobs { pgrp: pgid, ..self.console });
            }
        }
    }

    /// The console's session ends: SIGHUP and SIGCONT to its foreground group, and the
    /// console belongs to nobody (Linux's `disassociate_ctty`).
    fn hang_up_console(&mut self, now: u64) {
        let pgrp = self.console.pgrp;
        self.set_console(ConsoleJobs::default());
        if pgrp > 0 {
            self.signal_group(pgrp, SIGHUP, now);
            self.signal_group(pgrp, SIGCONT, now);
        }
    }

    /// Process `leader` (pid `tgid`) has died and its children (`adopted`) went to init:
    /// hang the console up if it led the console's session; hang up every process group
    /// its death left orphaned with a stopped member (its own, its children's).
    pub(super) fn job_control_after_death(&mut self, leader: TaskKey, tgid: i32, adopted: &[TaskKey], now: u64) {
        if self.console.sid != 0 && self.console.sid == tgid {
            self.hang_up_console(now);
        }
        let mut groups: Vec<i32> = adopted.iter().filter_map(|&c| self.table.pgid(c).ok()).collect();
        groups.extend(self.table.pgid(leader).ok());
        groups.sort_unstable();
        groups.dedup();
        for g in groups {
            if self.table.group_has_stopped(g) && self.table.is_orphaned_group(g) {
                self.signal_group(g, SIGHUP, now);
                self.signal_group(g, SIGCONT, now);
            }
        }
    }
}

/// `setpgid(pid, pgid)` by the running task (`tally_tasktable`'s rules).
pub fn setpgid(pid: i32, pgid: i32) -> Result<(), i32> {
    super::with(|p| p.table.setpgid(sched::current(), pid, pgid))
}

/// `getpgid(pid)` (0: the caller).
pub fn getpgid(pid: i32) -> Result<i32, i32> {
    super::with(|p| p.table.getpgid(sched::current(), pid))
}

/// `setsid()`: the caller leads a new session (which has no controlling terminal).
pub fn setsid() -> Result<i32, i32> {
    super::with(|p| p.table.setsid(sched::current()))
}

/// `getsid(pid)` (0: the caller).
pub fn getsid(pid: i32) -> Result<i32, i32> {
    super::with(|p| p.table.getsid(sched::current(), pid))
}
