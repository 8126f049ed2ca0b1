//! `wait`: collecting a child that has ended, and what it used.
//!
//! A process whose last thread has exited stays in the table as a zombie (its leader) until
//! its parent reaps it. The task table decides what can be reaped
//! (`tally_tasktable`'s `wait`); this file sleeps the caller until there is something
//! (INTERRUPTIBLE_SLEEP, on the waited-for process's list, woken by an exit, `exit.rs`, or by
//! a child's stop or continue, `job_stop.rs`), and lets the reaped task go from the
//! scheduler too.

use tally_microstate::MsaTimes;
use tally_runqueue::SleepKind;
use tally_sig::ERESTARTSYS;
use tally_tasktable::{ExitStatus, TaskKey, WaitFor, WaitOpts, WaitOutcome};
use tally_uapi::errno::EAGAIN;

use super::{Procs, Totals};
use crate::sched::{self, slot_of};

/// What `wait` reports about a reaped child.
#[derive(Debug, Clone)]
pub struct WaitResult {
    pub pid: i32,
    pub status: ExitStatus,
    /// The child's accounting at its exit (all its threads), clocks in TSC ticks.
    pub totals: Totals,
    /// What the child had collected from its own reaped children.
    pub children_total: Totals,
    /// The child's clocks when it was reaped (including its time as a zombie).
    pub at_reap: MsaTimes,
}

/// How [`wait_child`] waits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaitOptions {
    /// `WNOHANG`: do not sleep; `Ok(None)` if no matching child has ended.
    pub nohang: bool,
    /// `WUNTRACED`: also report a child that stopped.
    pub untraced: bool,
    /// `WCONTINUED`: also report a child continued by SIGCONT.
    pub continued: bool,
}

/// What [`wait_child`] found. (Returned once per wait and unpacked at once: its size does
/// not matter, and boxing the common case would cost every `wait4` an allocation.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Waited {
    /// A child that ended, reaped.
    Reaped(WaitResult),
    /// A child that stopped or continued (job control): its pid and wait status.
    Job { pid: i32, status: i32 },
}

/// Wait for a child process (`pid` = `None` for any) to end; reap it. (Kernel callers.)
pub fn wait(pid: Option<i32>) -> Result<WaitResult, i32> {
    match wait_child(pid.map_or(WaitFor::Any, WaitFor::Pid), WaitOptions::default())? {
        Some(Waited::Reaped(r)) => Ok(r),
        _ => Err(EAGAIN), // no stop is reported without WUNTRACED
    }
}

/// `wait4`'s work: reap a child matching `target` (or, with `untraced`/`continued`, collect
/// its stop or continue); sleep (INTERRUPTIBLE_SLEEP) until there is one unless `nohang`
/// (`Ok(None)`). `ECHILD`: no such child; `ERESTARTSYS` (`EINTR`, or a restart with
/// `SA_RESTART`): the caller's process is being killed or a signal came, with no child
/// ready (Linux's `do_wait` looks at the children first).
pub fn wait_child(target: WaitFor, options: WaitOptions) -> Result<Option<Waited>, i32> {
    // A value that lives for one step on the stack: its size does not matter.
    #[allow(clippy::large_enum_variant)]
    enum Step {
        Done(Result<Option<Waited>, i32>),
        Sleep(TaskKey),
        Woken,
    }
    loop {
        let step = hal::cpu::without_interrupts(|| {
            let step = super::with(|p| {
                let now = hal::tsc::read();
                let cur = sched::current();
                let opts =
                    WaitOpts { nohang: options.nohang, untraced: options.untraced, continued: options.continued };
                match p.table.wait_opts(cur, target, opts) {
                    Ok(WaitOutcome::Reaped(r)) => {
                        let at_reap = sched::with(|s| s.msa_snapshot(slot_of(r.key), now));
                        sched::release(r.key, now);
                        Step::Done(Ok(Some(Waited::Reaped(WaitResult {
                            pid: r.pid,
                            status: r.status,
                            totals: r.total,
                            children_total: r.children_total,
                            at_reap,
                        }))))
                    }
                    Ok(WaitOutcome::Job { pid, status }) => Step::Done(Ok(Some(Waited::Job { pid, status }))),
                    // Checked with interrupts off up to the sleep: a signal cannot slip in.
                    Ok(WaitOutcome::Sleep { .. }) if sched::interrupted() => Step::Done(Err(ERESTARTSYS)),
                    Ok(WaitOutcome::Sleep { queue }) => {
                        p.waiters.entry(queue).or_default().push(slot_of(cur));
                        Step::Sleep(queue)
                    }
                    Ok(WaitOutcome::NotReady) => Step::Done(Ok(None)),
                    Err(e) => Step::Done(Err(e)),
                }
            });
            let Step::Sleep(queue) = step else { return step };
            // Registered and blocked with interrupts off throughout: no exit can wake the
            // list in between.
            sched::block_current(SleepKind::Interruptible, None);
            // Woken by a child's exit (which emptied the list) or for another reason (a
            // kill): either way, leave the list, so no later exit wakes a stale slot.
            super::with(|p| {
                let me = slot_of(sched::current());
                if let Some(list) = p.waiters.get_mut(&queue) {
                    list.retain(|&s| s != me);
                    if list.is_empty() {
                        p.waiters.remove(&queue);
                    }
                }
            });
            Step::Woken
        });
        if let Step::Done(result) = step {
            return result;
        }
    }
}

impl Procs {
    /// Wake every task waiting for a child of `process` to end.
    pub(super) fn wake_waiters(&mut self, process: TaskKey) {
        if let Some(list) = self.waiters.remove(&process) {
            for slot in list {
                sched::wake(slot);
            }
        }
    }
}
