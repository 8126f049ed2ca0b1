//! # Signals: `kill`, SIGCHLD, and the SIG count
//!
//! Tally has no signal handlers, so a signal is its default action (`tally_uapi::signal`):
//! the process ends, stops, continues, or nothing happens — unless the process ignores the
//! signal (`rt_sigaction` with `SIG_IGN`). What makes signals worth having in an accounting
//! kernel is that they are *counted*: every signal a process receives adds one to the
//! receiving thread's `signals` counter, which `prstat -m` shows as SIG. The sources:
//!
//! * a fatal exception in user mode (the trap layer → `exit_signaled`): counted, then the
//!   process dies of it;
//! * `kill(pid, sig)` ([`kill`]) to a process, a process group or everyone: counted on the
//!   process's leader (or, if it has exited, its first live thread), then acted on
//!   ([`Procs::send_signal`]): a terminating signal ends the process the way `exit_group`
//!   does — every thread is marked and leaves at its next return towards user mode,
//!   sleepers are woken — with the signal as its wait status; a stop signal stops it and
//!   SIGCONT continues it (`job_stop.rs`);
//! * the console's ISIG characters and SIGTTIN, sent by the kernel to a process group
//!   (`job_control.rs`);
//! * SIGCHLD, sent to the parent each time a child process ends, stops or continues
//!   (`Procs::count_signal` from `exit.rs` and `job_stop.rs`): ignored by default, so only
//!   counted — a shell's SIG column grows by one per finished command, as on Solaris.
//!
//! Process 1 and kernel threads count signals but never die or stop of them (Linux's init
//! is protected the same way).

use alloc::vec::Vec;
use tally_tasktable::{ExitState, ExitStatus, TaskKey, INIT_PID};
use tally_uapi::errno::{EINVAL, EPERM, ESRCH};
use tally_uapi::signal::{default_action, DefaultAction, NSIG_STD, SIGSTOP};

use super::Procs;
use crate::sched::{self, slot_of};

impl Procs {
    /// Add one received signal to process `leader`'s receiving thread (the leader itself
    /// while it lives, else its first live thread).
    pub(super) fn count_signal(&mut self, leader: TaskKey) {
        let receiver = match self.table.get(leader) {
            Ok(t) if t.exit_state() == ExitState::Live => Some(leader),
            _ => self.table.threads(leader).ok().and_then(|t| t.first().copied()),
        };
        if let Some(r) = receiver {
            sched::with(|s| {
                if let Some(c) = s.counters_mut(slot_of(r)) {
                    c.signals += 1;
                }
            });
        }
    }
}

/// `kill(pid, sig)`: see `tally_uapi::signal` for the contract (a process, the caller's
/// group, group `-pid`, or everyone with -1).
pub fn kill(pid: i32, sig: i32) -> Result<(), i32> {
    let sig = u8::try_from(sig).ok().filter(|&s| s <= NSIG_STD).ok_or(EINVAL)?;
    super::with(|p| {
        let me = sched::current();
        let my_uid = p.table.get(me)?.uid();
        if pid > 0 {
            let leader = p.table.leader(p.table.lookup(pid)?)?;
            return p.send_checked(leader, sig, my_uid);
        }
        let targets: Vec<TaskKey> = match pid {
            0 => p.table.process_group(p.table.pgid(me)?),
            -1 => {
                let my_proc = p.table.leader(me)?;
                p.table
                    .iter()
                    .filter(|(k, t)| t.is_leader() && *k != my_proc && t.pid() != INIT_PID && t.payload().is_user())
                    .map(|(k, _)| k)
                    .collect()
            }
            n => p.table.process_group(n.checked_neg().ok_or(ESRCH)?),
        };
        // A group: success if at least one process got the signal, else the last error
        // (EPERM if it may signal none of them), as Linux's __kill_pgrp_info.
        let mut result = Err(ESRCH);
        for leader in targets {
            match p.send_checked(leader, sig, my_uid) {
                Ok(()) => result = Ok(()),
                Err(e) if result.is_err() => result = Err(e),
                Err(_) => {}
            }
        }
        result
    })
}

impl Procs {
    /// `kill`'s permission check, then [`Procs::send_signal`] (`sig` 0 only checks).
    fn send_checked(&mut self, leader: TaskKey, sig: u8, my_uid: u32) -> Result<(), i32> {
        let their_uid = self.table.get(leader)?.uid();
        if my_uid != 0 && my_uid != their_uid {
            return Err(EPERM);
        }
        if self.table.threads(leader)?.is_empty() || sig == 0 {
            return Ok(()); // a zombie: nothing left to signal (Linux also succeeds)
        }
        if my_uid == 0 && their_uid != 0 {
            self.note_superuser();
        }
        self.send_signal(leader, sig, hal::tsc::read());
        Ok(())
    }

    /// Deliver `sig` (1..=31) to process `leader`, whoever sends it (the caller checked the
    /// right to): count it, then its action — SIGCONT continues the process even if it is
    /// ignored; an ignored signal does nothing more; a stop signal stops the process (for
    /// SIGTSTP, SIGTTIN and SIGTTOU, not in an orphaned group); a terminating signal ends it
    /// the way `exit_group` does — every thread is marked and leaves at its next return
    /// towards user mode, sleepers and stopped threads are woken — with the signal as its
    /// wait status. Init and kernel threads are never stopped or killed.
    pub(super) fn send_signal(&mut self, leader: TaskKey, sig: u8, now: u64) {
        if self.table.threads(leader).map_or(true, |t| t.is_empty()) {
            return;
        }
        self.count_signal(leader);
        let action = default_action(sig);
        if action == DefaultAction::Continue {
            self.continue_job(leader, now);
        }
        if self.table.is_ignored(leader, sig) {
            return;
        }
        let Ok(l) = self.table.get(leader) else { return };
        let protected = l.pid() == INIT_PID || !l.payload().is_user();
        let core = match action {
            DefaultAction::Ignore | DefaultAction::Continue => return,
            _ if protected => return,
            DefaultAction::Stop => {
                let orphaned = self.table.pgid(leader).is_ok_and(|g| self.table.is_orphaned_group(g));
                if sig == SIGSTOP || !orphaned {
                    self.stop_job(leader, sig, now);
                }
                return;
            }
            DefaultAction::Core => true,
            DefaultAction::Terminate => false,
        };
        let status = ExitStatus::signaled(sig, core).unwrap_or_default();
        // Every thread is marked (the caller too, if it signals its own process: it leaves
        // on its way back to user mode) and sleepers are woken, as exit_group does.
        self.kill_group(leader, status, None, now);
    }

    /// Deliver `sig` to every process of group `pgid` (the kernel's own signals: the
    /// console's ISIG characters, SIGTTIN, a hang-up).
    pub(super) fn signal_group(&mut self, pgid: i32, sig: u8, now: u64) {
        for leader in self.table.process_group(pgid) {
            self.send_signal(leader, sig, now);
        }
    }
}

/// Send `sig` to the caller's own process from inside a system call — the kernel's
/// `send_sig(sig, current)`, as a pipe write with no reader left raises SIGPIPE. Counted
/// like any signal; if its default action ends the process, every thread is marked and the
/// caller leaves on its way back to user mode (the call's own result is never seen); a
/// process that ignores it (`SIG_IGN`) only counts it. Init and kernel threads only count
/// it, as for `kill`.
pub fn raise(sig: u8) {
    super::with(|p| {
        if let Ok(leader) = p.table.leader(sched::current()) {
            p.send_signal(leader, sig, hal::tsc::read());
        }
    });
}

/// A process was forked: child `child_pid` of `parent_pid` takes its signal state (handlers,
/// mask, ignored set as Linux's `copy_sighand`/`copy_signal`; pending signals are not
/// inherited). Called by `fork.rs` once the child is in the table, before it runs, with
/// interrupts off and no lock held: it must not sleep.
// H4 implements
pub fn on_fork(parent_pid: i32, child_pid: i32) {
    let _ = (parent_pid, child_pid);
}

/// The running process has exec'd: handled signals go back to their default action
/// (ignored ones stay ignored, the mask stays), as Linux's `flush_signal_handlers`. Called by
/// `execve` past its point of no return.
// H4 implements
pub fn on_exec() {}
