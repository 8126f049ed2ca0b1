//! # Signals: `kill`, SIGCHLD, and the SIG count
//!
//! Tally has no signal handlers, so a signal is its default action (`tally_uapi::signal`):
//! the process ends, or nothing happens. What makes signals worth having in an accounting
//! kernel is that they are *counted*: every signal a process receives adds one to the
//! receiving thread's `signals` counter, which `prstat -m` shows as SIG. Three sources:
//!
//! * a fatal exception in user mode (the trap layer → `exit_signaled`): counted, then the
//!   process dies of it;
//! * `kill(pid, sig)` ([`kill`]): counted on the process's leader (or, if it has exited,
//!   its first live thread); a terminating signal then ends the process the way
//!   `exit_group` does — every thread is marked and leaves at its next return towards
//!   user mode, sleepers are woken — with the signal as its wait status;
//! * SIGCHLD, sent to the parent each time a child process ends (`Procs::count_signal` from
//!   `exit.rs`): ignored by default, so only counted — a shell's SIG column grows by
//!   one per finished command, as on Solaris.
//!
//! Process 1 and kernel threads count signals but never die of them (Linux's init is
//! protected the same way).

use tally_tasktable::{ExitState, ExitStatus, TaskKey, INIT_PID};
use tally_uapi::errno::{EINVAL, EPERM};
use tally_uapi::signal::{default_action, DefaultAction, NSIG_STD};

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

/// `kill(pid, sig)`: see `tally_uapi::signal` for the contract.
pub fn kill(pid: i32, sig: i32) -> Result<(), i32> {
    if pid <= 0 {
        return Err(EINVAL); // 0 and < 0 name process groups; Tally has none
    }
    let sig = u8::try_from(sig).ok().filter(|&s| s <= NSIG_STD).ok_or(EINVAL)?;
    super::with(|p| {
        let target = p.table.lookup(pid)?;
        let leader = p.table.leader(target)?;
        let (my_uid, their_uid) = (p.table.get(sched::current())?.uid(), p.table.get(leader)?.uid());
        if my_uid != 0 && my_uid != their_uid {
            return Err(EPERM);
        }
        if p.table.threads(leader)?.is_empty() {
            return Ok(()); // a zombie: nothing left to signal (Linux also succeeds)
        }
        if sig == 0 {
            return Ok(());
        }
        if my_uid == 0 && their_uid != 0 {
            p.note_superuser();
        }
        p.count_signal(leader);
        let protected = p.table.get(leader)?.pid() == INIT_PID || !p.table.get(leader)?.payload().is_user();
        let core = match default_action(sig) {
            DefaultAction::Ignore => return Ok(()),
            _ if protected => return Ok(()),
            DefaultAction::Core => true,
            DefaultAction::Terminate => false,
        };
        let status = ExitStatus::signaled(sig, core).unwrap_or_default();
        // Every thread is marked (the caller too, if it signals its own process: it leaves
        // on its way back to user mode) and sleepers are woken, as exit_group does.
        p.kill_group(leader, status, None, hal::tsc::read());
        Ok(())
    })
}

/// Send `sig` to the caller's own process from inside a system call — the kernel's
/// `send_sig(sig, current)`, as a pipe write with no reader left raises SIGPIPE. Counted
/// like any signal; if its default action ends the process, every thread is marked and the
/// caller leaves on its way back to user mode (the call's own result is never seen). Init
/// and kernel threads only count it, as for `kill`.
pub fn raise(sig: u8) {
    super::with(|p| {
        let Ok(leader) = p.table.leader(sched::current()) else { return };
        p.count_signal(leader);
        let protected = p.table.get(leader).map_or(true, |l| l.pid() == INIT_PID || !l.payload().is_user());
        let core = match default_action(sig) {
            DefaultAction::Ignore => return,
            _ if protected => return,
            DefaultAction::Core => true,
            DefaultAction::Terminate => false,
        };
        let status = ExitStatus::signaled(sig, core).unwrap_or_default();
        p.kill_group(leader, status, None, hal::tsc::read());
    });
}
