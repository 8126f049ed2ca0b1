//! # Stopping and continuing a process (job control), and telling its parent
//!
//! A stop signal (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU) stops *every thread* of the process;
//! SIGCONT resumes them. The process-level state — stop asked for, stop complete, the report
//! for the parent — is the task table's (`tally_tasktable`'s `jobs.rs`); each thread's stop is
//! the scheduler's (`sched/stop.rs`), which charges the time to the STOPPED microstate. The
//! flow:
//!
//! 1. [`Procs::stop_job`] asks the table for the stop and each thread to stop: a thread asleep
//!    interruptibly stops where it sleeps, at once; the others stop at their next return
//!    towards user mode ([`stop_if_requested`], called by the system-call exit and by an
//!    interrupt that came from user mode — a thread spinning in user mode stops at the next
//!    tick — and by the console's read for SIGTTIN);
//! 2. the thread that completes the stop (the last to stop, or the signal's sender if all
//!    were asleep) completes it in the table, which leaves a "stopped" report; the parent
//!    gets SIGCHLD (counted) and its `wait4` sleepers are woken (`WUNTRACED`);
//! 3. [`Procs::continue_job`] (SIGCONT, even if ignored) cancels the stop, resumes every
//!    thread — each back to what it was doing: its sleep, or the run queue — and, if the
//!    stop had completed, leaves a "continued" report and tells the parent the same way
//!    (`WCONTINUED`).
//!
//! A thread in an uninterruptible sleep (a disk request) finishes it and stops on its way
//! back to user mode; until then the process's stop is not complete. SIGKILL (any
//! terminating signal) ends a stopped process: the kill wakes the stopped threads
//! (`sched::kill`). See `docs/job-control.md`.

use tally_tasktable::{ExitStatus, TaskKey};

use super::Procs;
use crate::sched::{self, slot_of};

impl Procs {
    /// Stop process `leader` with `sig` (see the module documentation, step 1).
    pub(super) fn stop_job(&mut self, leader: TaskKey, sig: u8, now: u64) {
        if !self.table.request_stop(leader, sig).unwrap_or(false) {
            return; // stopping or stopped already
        }
        let threads = self.table.threads(leader).map(|t| t.to_vec()).unwrap_or_default();
        let mut all_stopped = !threads.is_empty();
        for t in threads {
            if !sched::stop_thread(slot_of(t), now) {
                all_stopped = false;
            }
        }
        if all_stopped {
            self.stop_completed(leader);
        }
    }

    /// Every thread of `leader`'s process has stopped (step 2).
    fn stop_completed(&mut self, leader: TaskKey) {
        if let Ok(Some(_)) = self.table.complete_stop(leader) {
            self.tell_parent(leader, true);
        }
    }

    /// Continue process `leader` (step 3).
    pub(super) fn continue_job(&mut self, leader: TaskKey, now: u64) {
        let was_stopped = self.table.continue_process(leader).unwrap_or(false);
        for &t in self.table.threads(leader).unwrap_or(&[]) {
            sched::continue_thread(slot_of(t), now);
        }
        if was_stopped {
            self.tell_parent(leader, false);
        }
    }

    /// The parent of `leader`'s process gets SIGCHLD (`CLD_STOPPED` or `CLD_CONTINUED`;
    /// counted, ignored by default: `signal.rs`) and its `wait4` sleepers are woken to
    /// collect the report.
    fn tell_parent(&mut self, leader: TaskKey, stopped: bool) {
        if let Ok(Some(parent)) = self.table.parent(leader) {
            self.sigchld(parent, leader, Some(stopped), ExitStatus::exited(0));
            self.wake_waiters(parent);
        }
    }
}

/// A return towards user mode (interrupts off): if the running thread's process is
/// stopping, stop here — completing the process's stop if this is its last thread to stop
/// — until SIGCONT or a kill. Returns at once otherwise.
pub fn stop_if_requested() {
    if !sched::stop_pending() {
        return;
    }
    super::with(|p| {
        let me = sched::current();
        let Ok(leader) = p.table.leader(me) else { return };
        let others_stopped = p
            .table
            .threads(leader)
            .map(|ts| ts.iter().filter(|&&t| t != me).all(|&t| sched::is_stopped(slot_of(t))))
            .unwrap_or(false);
        if others_stopped {
            p.stop_completed(leader);
        }
    });
    // Interrupts stay off from the check to the block: no SIGCONT can slip in between.
    sched::stop_current();
}
