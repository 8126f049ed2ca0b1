//! # Signals: `kill`, dispositions, masks, pending sets, and the SIG count
//!
//! A process's signals are Linux's model ([`tally_sig`] holds the logic, host-tested):
//! each process has a disposition per signal (`rt_sigaction`: default, ignore, or a handler
//! run in user mode) and a pending set shared by its threads (`kill`); each thread has a
//! blocked mask (`rt_sigprocmask`), a pending set of its own (`tgkill`, its faults), and an
//! alternate stack (`sigaltstack`). They live here, under the task table's lock, in
//! [`SignalTables`], made on first use and dropped at exit. A thread with a signal it does
//! not block is flagged in the scheduler (`sched::set_signal_pending`, Linux's
//! `TIF_SIGPENDING`): its interruptible sleep ends (`EINTR`, or a restart) and, on its way
//! back to user mode, `sigdeliver.rs` runs the signal's action or the handler's frame.
//!
//! What makes signals worth having in an accounting kernel is that they are *counted*:
//! every signal a process receives adds one to the receiving thread's `signals` counter,
//! which `prstat -m` shows as SIG. The sources:
//!
//! * a fatal exception in user mode (the trap layer → `exit_signaled`, or a handler's
//!   frame when the process catches it: `sigdeliver.rs`);
//! * `kill(pid, sig)` ([`kill`]) to a process, a process group or everyone, and `tgkill`
//!   to one thread: counted on the process's leader (or, if it has exited, its first live
//!   thread), then acted on ([`Procs::send_signal`]). A signal some thread does not block
//!   and nobody catches takes its default action at once, as Linux's `complete_signal`
//!   does: a terminating signal ends the process the way `exit_group` does — every thread
//!   is marked and leaves at its next return towards user mode, sleepers are woken — with
//!   the signal as its wait status; a stop signal stops it and SIGCONT continues it
//!   (`job_stop.rs`). A caught signal, or one every thread blocks, is made pending;
//! * the console's ISIG characters and SIGTTIN, sent by the kernel to a process group
//!   (`job_control.rs`);
//! * SIGCHLD, sent to the parent each time a child process ends, stops or continues
//!   (`exit.rs`, `job_stop.rs`), with Linux's `siginfo` (`CLD_EXITED`, the status...):
//!   ignored by default, so only counted — a shell's SIG column grows by one per finished
//!   command, as on Solaris — unless the parent catches it or waits for it
//!   (`rt_sigtimedwait` with SIGCHLD blocked).
//!
//! Process 1 and kernel threads count signals but never die or stop of them (Linux's init
//! is protected the same way); init may catch signals. See `docs/user-mode.md` (signals)
//! and `docs/job-control.md`.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use tally_sig::{Act, AltStack, Dispositions, Pending, SigSet};
use tally_tasktable::{ExitState, ExitStatus, TaskKey, INIT_PID};
use tally_uapi::errno::{EINVAL, EPERM, ESRCH};
use tally_uapi::signal::{
    default_action, DefaultAction, SigInfo, CLD_CONTINUED, CLD_DUMPED, CLD_EXITED, CLD_KILLED, CLD_STOPPED, NSIG,
    SIGCHLD, SIGCONT, SIGKILL, SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU, SI_USER,
};

use super::Procs;
use crate::sched::{self, slot_of};

/// A process's signal state (on its leader's key): Linux's `sighand` and shared pending set.
#[derive(Default)]
pub(super) struct ProcessSignals {
    pub(super) actions: Dispositions,
    pub(super) pending: Pending,
}

/// A thread's signal state.
#[derive(Default)]
pub(super) struct ThreadSignals {
    pub(super) blocked: SigSet,
    pub(super) pending: Pending,
    pub(super) altstack: AltStack,
    /// While in `rt_sigtimedwait`: the mask before the waited-for signals were unblocked
    /// (Linux's `real_blocked`): a signal blocked here takes no default action at once.
    pub(super) real_blocked: Option<SigSet>,
    /// `rt_sigsuspend`'s mask to restore once a handler has run (the frame's `uc_sigmask`).
    pub(super) saved_mask: Option<SigSet>,
    /// The fault a pending synchronous signal came from (the frame's `trapno`, `err`, `cr2`).
    pub(super) fault: Option<tally_sig::frame::FaultInfo>,
}

impl ThreadSignals {
    fn blocks(&self, sig: u8) -> bool {
        self.blocked.contains(sig) || self.real_blocked.is_some_and(|r| r.contains(sig))
    }
}

/// Every process's and thread's signal state, by task-table key; an entry is made on first
/// use (a fresh one is all defaults) and dropped when its task exits.
#[derive(Default)]
pub struct SignalTables {
    procs: BTreeMap<TaskKey, Box<ProcessSignals>>,
    threads: BTreeMap<TaskKey, ThreadSignals>,
}

impl SignalTables {
    pub(super) fn process(&mut self, leader: TaskKey) -> &mut ProcessSignals {
        self.procs.entry(leader).or_default()
    }

    pub(super) fn thread(&mut self, t: TaskKey) -> &mut ThreadSignals {
        self.threads.entry(t).or_default()
    }

    fn thread_ref(&self, t: TaskKey) -> Option<&ThreadSignals> {
        self.threads.get(&t)
    }

    /// Thread `t` exited (and, with `process`, its process's last thread did).
    pub(super) fn exited(&mut self, t: TaskKey, process: Option<TaskKey>) {
        self.threads.remove(&t);
        if let Some(leader) = process {
            self.procs.remove(&leader);
        }
    }
}

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
    let sig = u8::try_from(sig).ok().filter(|&s| s <= NSIG).ok_or(EINVAL)?;
    super::with(|p| {
        let me = sched::current();
        let my_uid = p.table.get(me)?.uid();
        let info = SigInfo::from_process(sig, SI_USER, sched::current_ids().tgid, my_uid);
        if pid > 0 {
            let leader = p.table.leader(p.table.lookup(pid)?)?;
            return p.send_checked(leader, info, my_uid);
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
            match p.send_checked(leader, info, my_uid) {
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
    fn send_checked(&mut self, leader: TaskKey, info: SigInfo, my_uid: u32) -> Result<(), i32> {
        let their_uid = self.table.get(leader)?.uid();
        if my_uid != 0 && my_uid != their_uid {
            return Err(EPERM);
        }
        if self.table.threads(leader)?.is_empty() || info.signo == 0 {
            return Ok(()); // a zombie: nothing left to signal (Linux also succeeds)
        }
        if my_uid == 0 && their_uid != 0 {
            self.note_superuser();
        }
        self.send_signal(leader, info, hal::tsc::read());
        Ok(())
    }

    /// Deliver `info` (signal 1..=64) to process `leader`, whoever sends it (the caller
    /// checked the right to): count it, then (Linux's `prepare_signal` and
    /// `complete_signal`) — SIGCONT continues the process even if it is ignored or caught,
    /// and discards pending stop signals (a stop signal discards a pending SIGCONT); a
    /// caught signal, or one every thread blocks, is made pending for the process and the
    /// first thread that does not block it is flagged and woken; otherwise an ignored signal
    /// does nothing more, a stop signal stops the process (for SIGTSTP, SIGTTIN and SIGTTOU,
    /// not in an orphaned group), and a terminating signal ends it the way `exit_group`
    /// does, with the signal as its wait status. Init and kernel threads are never stopped
    /// or killed.
    pub(super) fn send_signal(&mut self, leader: TaskKey, info: SigInfo, now: u64) {
        let Ok(threads) = self.table.threads(leader).map(|t| t.to_vec()) else { return };
        if threads.is_empty() {
            return;
        }
        let sig = info.signo as u8;
        self.count_signal(leader);
        let action = default_action(sig);
        let stops =
            SigSet::of(SIGSTOP).union(SigSet::of(SIGTSTP)).union(SigSet::of(SIGTTIN)).union(SigSet::of(SIGTTOU));
        if action == DefaultAction::Continue {
            self.continue_job(leader, now);
            self.discard_pending(leader, &threads, stops);
        } else if stops.contains(sig) {
            self.discard_pending(leader, &threads, SigSet::of(SIGCONT));
        }
        let Ok(l) = self.table.get(leader) else { return };
        if !l.payload().is_user() {
            return; // kernel threads only count signals
        }
        let protected = l.pid() == INIT_PID;
        let act = self.signals.process(leader).actions.act(sig);
        let unblocked = sig == SIGKILL || sig == SIGSTOP;
        let blocked_everywhere =
            !unblocked && threads.iter().all(|&t| self.signals.thread_ref(t).is_some_and(|s| s.blocks(sig)));
        if matches!(act, Act::Handle(_)) || blocked_everywhere {
            if self.signals.process(leader).pending.post(info) {
                let target = threads.iter().copied().find(|&t| !self.signals.thread(t).blocked.contains(sig));
                if let Some(t) = target {
                    sched::set_signal_pending(slot_of(t), true, now);
                }
            }
            return;
        }
        self.default_action(leader, sig, act, protected, now);
    }

    /// Deliver `info` to thread `t` alone (`tgkill`, `tkill`): pending for the thread if it
    /// is caught or the thread blocks it, else the process's default action as for `kill`.
    pub(super) fn send_to_thread(&mut self, t: TaskKey, info: SigInfo, now: u64) {
        let Ok(leader) = self.table.leader(t) else { return };
        let sig = info.signo as u8;
        let act = self.signals.process(leader).actions.act(sig);
        let blocked = sig != SIGKILL && sig != SIGSTOP && self.signals.thread(t).blocks(sig);
        if matches!(act, Act::Handle(_)) || blocked {
            self.count_signal(leader);
            if self.signals.thread(t).pending.post(info) && !self.signals.thread(t).blocked.contains(sig) {
                sched::set_signal_pending(slot_of(t), true, now);
            }
            return;
        }
        self.send_signal(leader, info, now);
    }

    /// A signal's default action (or nothing, if it is ignored), at once or when it is
    /// dequeued: see [`Procs::send_signal`].
    pub(super) fn default_action(&mut self, leader: TaskKey, sig: u8, act: Act, protected: bool, now: u64) {
        let core = match act {
            Act::Ignore | Act::Handle(_) | Act::Default(DefaultAction::Ignore | DefaultAction::Continue) => return,
            _ if protected => return,
            Act::Default(DefaultAction::Stop) => {
                let orphaned = self.table.pgid(leader).is_ok_and(|g| self.table.is_orphaned_group(g));
                if sig == SIGSTOP || !orphaned {
                    self.stop_job(leader, sig, now);
                }
                return;
            }
            Act::Default(DefaultAction::Core) => true,
            Act::Default(DefaultAction::Terminate) => false,
        };
        let status = ExitStatus::signaled(sig, core).unwrap_or_default();
        // Every thread is marked (the caller too, if it signals its own process: it leaves
        // on its way back to user mode) and sleepers are woken, as exit_group does.
        self.kill_group(leader, status, None, now);
    }

    /// Forget `sigs` pending for process `leader` and its `threads`.
    fn discard_pending(&mut self, leader: TaskKey, threads: &[TaskKey], sigs: SigSet) {
        self.signals.process(leader).pending.discard(sigs);
        for &t in threads {
            self.signals.thread(t).pending.discard(sigs);
        }
    }

    /// Deliver `sig` to every process of group `pgid` (the kernel's own signals: the
    /// console's ISIG characters, SIGTTIN, a hang-up).
    pub(super) fn signal_group(&mut self, pgid: i32, sig: u8, now: u64) {
        for leader in self.table.process_group(pgid) {
            self.send_signal(leader, SigInfo::kernel(sig), now);
        }
    }

    /// Thread `t`'s "signal pending" flag again (Linux's `recalc_sigpending`): a signal
    /// pending for it or its process that it does not block.
    pub(super) fn recalc_sigpending(&mut self, t: TaskKey) {
        let Ok(leader) = self.table.leader(t) else { return };
        let shared = self.signals.process(leader).pending.set();
        let me = self.signals.thread(t);
        let pending = !me.pending.set().union(shared).minus(me.blocked).is_empty();
        sched::set_signal_pending(slot_of(t), pending, hal::tsc::read());
    }

    /// The parent of `child` (a process's leader) hears of it: SIGCHLD with Linux's
    /// `siginfo` (`CLD_*`, the child's pid and uid, its status), counted, and acted on as
    /// any signal (ignored by default). `stopped`: `Some(true)` a stop, `Some(false)` a
    /// continue, `None` an exit with `status`. A parent with `SA_NOCLDSTOP` hears of
    /// stops and continues only by `wait4`, as on Linux — the signal is still counted.
    pub(super) fn sigchld(&mut self, parent: TaskKey, child: TaskKey, stopped: Option<bool>, status: ExitStatus) {
        let Ok(c) = self.table.get(child) else { return };
        let (pid, uid) = (c.pid(), c.uid());
        let (code, value) = match stopped {
            Some(true) => (CLD_STOPPED, self.table.stop_requested(child).unwrap_or(SIGSTOP) as i32),
            Some(false) => (CLD_CONTINUED, SIGCONT as i32),
            None if status.is_signaled() => {
                let sig = status.raw() & 0x7f;
                (if status.core_dumped() { CLD_DUMPED } else { CLD_KILLED }, sig)
            }
            None => (CLD_EXITED, (status.raw() >> 8) & 0xff),
        };
        if stopped.is_some() {
            if let Ok(pl) = self.table.leader(parent) {
                if !self.signals.process(pl).actions.wants_stop_reports() {
                    self.count_signal(parent);
                    return;
                }
            }
        }
        let info = SigInfo { signo: SIGCHLD as i32, code, pid, uid, status: value, ..Default::default() };
        if let Ok(pl) = self.table.leader(parent) {
            self.send_signal(pl, info, hal::tsc::read());
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
            p.send_signal(leader, SigInfo::kernel(sig), hal::tsc::read());
        }
    });
}

/// Signal state at `fork`: the child gets the parent's dispositions and mask, nothing
/// pending (`sigcalls.rs`). Called by `fork.rs` once the child is in the table, before it
/// runs, with interrupts off and no lock held: it must not sleep.
pub fn on_fork(parent_pid: i32, child_pid: i32) {
    super::sigcalls::fork_signals(parent_pid, child_pid)
}

/// Signal state at `execve`: handlers back to `SIG_DFL`, ignored signals and the mask kept,
/// no alternate stack (`sigcalls.rs`). Called by `execve` past its point of no return.
pub fn on_exec() {
    super::sigcalls::exec_signals()
}
