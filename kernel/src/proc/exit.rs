//! Death of a task: `exit`, `exit_group`, a fatal signal, and how the other threads of a
//! process follow.
//!
//! One death is special: when init's (pid 1's) last thread exits, the run ends with it
//! ([`init_ended`]): the kernel prints init's status and ends QEMU with it.
//!
//! ## The steps of an exit ([`exit_with`])
//!
//! 1. [`decide`], under the table's lock: the status (an `exit_group` already under way
//!    wins), whether this is the process's last thread, its memory map and descriptors;
//! 2. with no lock held, a thread that has a clear-child-tid address (`set_tid_address`,
//!    `CLONE_CHILD_CLEARTID`) gets 0 written there and one futex waiter woken (`futex.rs`):
//!    `pthread_join`'s wake-up;
//! 3. [`let_go_of_resources`], with no lock held: the last thread closes the process's
//!    descriptors (closing a pipe end wakes its peers, closing a socket takes the bus's
//!    lock) and frees its memory (Linux's `exit_mm`: a zombie holds no user pages), and the
//!    memory numbers are read once;
//! 4. [`leave_table`], under the table's lock: the thread's clocks, delays and counters are
//!    read at one TSC value and become its process's totals (`tally_tasktable`'s exit); the
//!    parent is woken and counts a SIGCHLD; an [`ExitEvent`] is built from those very numbers
//!    if an observer listens;
//! 5. the observers hear of it (`notify.rs`), with no lock held;
//! 6. the scheduler switches away for good (`sched::exit_current`), releasing the thread if
//!    nobody will reap it.
//!
//! Interrupts stay off from step 1 to the switch: no other task runs in between, so what is
//! decided in one step still holds in the next.
//!
//! ## How a process dies when it has several threads
//!
//! `exit` ends the calling thread only. `exit_group` — and a fatal signal, which is an
//! `exit_group` with a signal status — ends the whole process. The other threads of the
//! process are somewhere the caller cannot simply cut them off: preempted in user mode,
//! asleep in `nanosleep` or `wait4`, halfway through a system call holding a disk lock. So,
//! as Linux does with its group `SIGKILL`, the kernel *asks* them:
//!
//! 1. the caller records the status on the process (`Payload::group_exit`, on the leader),
//!    marks every other thread killed (`sched::kill`), and wakes those in an interruptible
//!    sleep (their sleeps end early: `nanosleep` returns, `wait4` fails with `EINTR`); a
//!    thread in an uninterruptible sleep (a disk request) finishes it first;
//! 2. the caller exits;
//! 3. every other thread, the next time it would return to user mode — at the end of a
//!    system call ([`return_to_user`] in the syscall layer's `leave`), of an interrupt that
//!    came from user mode ([`exit_if_killed`] in `irq`), or before its very first
//!    instruction — exits instead, with the process's status. Nothing is left on its kernel
//!    stack at those points, so nothing leaks and no lock stays held.
//!
//! Each thread leaves through the task table's `exit`, the last one through `exit_group`
//! (which stamps the group status on the process); only then is the process a zombie its
//! parent can reap, and its memory is freed when that last thread goes.

use alloc::sync::Arc;
use alloc::vec::Vec;
use tally_memacct::MemUsage;
use tally_tasktable::{ExitStatus, Released, TaskKey, INIT_PID};

use super::notify::{self, ExitEvent};
use super::vm::Vm;
use super::{Payload, Procs, Totals};
use crate::base::config::EXIT_LOG_LEN;
use crate::file::FileTable;
use crate::sched::{self, slot_of};

/// End the current task with exit code `code`. A process leader stays a zombie until its
/// parent waits for it.
pub fn exit(code: i32) -> ! {
    exit_with(ExitStatus::exited(code), false)
}

/// End the current task's whole process with exit code `code` (`exit_group`).
pub fn exit_group(code: i32) -> ! {
    exit_with(ExitStatus::exited(code), true)
}

/// End the current task's process as killed by signal `sig` (a fatal exception in user
/// mode). For the signals whose default action is to dump core (SIGQUIT, SIGILL, SIGTRAP,
/// SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGSYS) the status carries the core flag, so the
/// accounting records say ACORE as well as AXSIG, as Linux's `ac_flag` does for such a
/// death. Tally writes no core file: the flag records how the task died, not a file.
pub fn exit_signaled(sig: u8) -> ! {
    let core = tally_uapi::signal::default_action(sig) == tally_uapi::signal::DefaultAction::Core;
    let status = ExitStatus::signaled(sig, core).unwrap_or(ExitStatus::exited(128 + sig as i32));
    sched::with_current_counters(|c| c.signals += 1);
    exit_with(status, true)
}

/// A return-to-user-mode point: if the task's process is being killed, exit now with the
/// process's status instead of returning (see the module documentation).
pub fn exit_if_killed() {
    if sched::kill_pending() {
        exit_killed()
    }
}

/// Going back to ring 3 (after a system call, an interrupt or exception from user mode, or
/// for the first time) with the registers `regs`: exit if the task's process is being
/// killed, let the scheduler switch first if it wants the CPU, stop if the process is
/// stopping, deliver a pending signal (`sigdeliver.rs`: its action, or the handler's frame,
/// which rewrites `regs`), otherwise run in ONCPU_USR from now (`sched::enter_user_mode`:
/// the checks and the state switch under one lock). `from_syscall`: the end of a system
/// call, whose interrupted result (`ERESTARTSYS`...) becomes `EINTR` or a restart here.
/// Call with interrupts off, so no kill and no signal slips in before ring 3; a switch
/// returns here with them still off, and the checks run again.
pub fn return_to_user(regs: &mut hal::regs::UserRegs, from_syscall: bool) {
    // Only an interrupted call (ERESTARTSYS...) has a restart to decide: every other return
    // does nothing more after the switch to ONCPU_USR below.
    let mut syscall = (from_syscall && tally_sig::is_restart(regs.rax)).then_some(regs.orig_rax);
    let interrupted = syscall.is_some();
    loop {
        match sched::enter_user_mode() {
            // A wait with a temporary mask (`rt_sigsuspend`, `ppoll`) cut short by a signal
            // that ran no handler (a stop, an ignored one): the caller's mask comes back, as
            // Linux's `restore_saved_sigmask` (a handler's frame took it otherwise), and
            // what it unblocks is delivered now.
            sched::UserReturn::Ready if interrupted && super::sigcalls::restore_saved_mask() => {}
            sched::UserReturn::Ready => break,
            sched::UserReturn::Killed => exit_killed(),
            sched::UserReturn::Reschedule => sched::preempt_if_needed(),
            sched::UserReturn::Stop => super::stop_if_requested(),
            sched::UserReturn::Signal => super::sigdeliver::deliver(regs, &mut syscall),
        }
    }
    if syscall.is_some() {
        super::sigdeliver::finish(regs, &mut syscall);
    }
}

/// The end of an interrupt or exception that came from user mode (interrupts off, the
/// running microstate already back to what it was): if the process is being killed the
/// thread exits here; if it is stopping, it stops (job control: a thread spinning in user
/// mode stops at the next tick); a pending signal is delivered (its action, or its
/// handler's frame, which rewrites `regs`). One look at the scheduler when there is
/// nothing to do.
pub fn interrupt_return_to_user(regs: &mut hal::regs::UserRegs) {
    while sched::user_return_work() {
        exit_if_killed();
        super::stop_if_requested();
        if sched::signal_pending() {
            super::sigdeliver::deliver(regs, &mut None);
        }
    }
}

fn exit_killed() -> ! {
    // The status given here is only used if the group status is somehow missing.
    exit_with(ExitStatus::signaled(9, false).unwrap_or_default(), false)
}

impl Procs {
    /// Record `status` as the exit status of `member`'s process (the first one wins, as in
    /// Linux) and mark every thread but `spare` to die, waking those asleep interruptibly.
    /// (`exit_group` spares the caller, which is exiting anyway; `kill` spares nobody.)
    pub(super) fn kill_group(&mut self, member: TaskKey, status: ExitStatus, spare: Option<TaskKey>, now: u64) {
        let Ok(leader) = self.table.leader(member) else { return };
        if let Ok(l) = self.table.get_mut(leader) {
            let p = l.payload_mut();
            if p.group_exit.is_none() {
                p.group_exit = Some(status);
            }
        }
        let others: Vec<TaskKey> = self
            .table
            .threads(member)
            .map(|t| t.iter().copied().filter(|&t| Some(t) != spare).collect())
            .unwrap_or_default();
        for t in others {
            sched::kill(slot_of(t), now);
        }
    }
}

/// What step 1 decided.
struct Plan {
    status: ExitStatus,
    /// The process's last live thread is exiting.
    last: bool,
    /// It is init's.
    init: bool,
    vm: Option<Arc<Vm>>,
    files: Option<Arc<FileTable>>,
}

/// End the current thread (`group`: its whole process) with `status`, in the steps of the
/// module documentation.
fn exit_with(status: ExitStatus, group: bool) -> ! {
    hal::cpu::without_interrupts(|| {
        let plan = decide(status, group);
        if plan.init && plan.last {
            let status = plan.status;
            drop(plan);
            init_ended(status);
        }
        if let Some(vm) = &plan.vm {
            // `set_tid_address`/`CLONE_CHILD_CLEARTID`: 0 at the address, one futex waiter
            // woken (`pthread_join`), while the memory is still there (Linux's `mm_release`).
            super::futex::clear_child_tid(vm, super::user::clear_child_tid(sched::current()));
        }
        let listening = notify::listening();
        let (status, last) = (plan.status, plan.last);
        let (mem, record_mem) = let_go_of_resources(plan, listening);
        let (event, released) = leave_table(status, last, mem, record_mem, listening);
        if let Some(event) = event {
            notify::exited(&event);
        }
        let keys: Vec<TaskKey> = released.iter().map(|r| r.key).collect();
        // Their process state goes now; their stacks go once the CPU has left them. Nothing
        // that owns memory may stay on this stack: the switch below never returns.
        drop(released);
        sched::exit_current(keys)
    })
}

/// Step 1: start the group exit if asked, and decide the status and what the exit frees.
fn decide(status: ExitStatus, group: bool) -> Plan {
    super::with(|p| {
        let cur = sched::current();
        if group {
            p.kill_group(cur, status, Some(cur), hal::tsc::read());
        }
        let group_status = p.table.leader(cur).and_then(|l| p.table.get(l)).ok().and_then(|l| l.payload().group_exit);
        let last = p.table.threads(cur).is_ok_and(|t| t.len() <= 1);
        let init = p.table.get(cur).is_ok_and(|t| t.tgid() == INIT_PID);
        let payload = p.table.get(cur).ok().map(|t| t.payload());
        Plan {
            status: group_status.unwrap_or(status),
            last,
            init,
            vm: payload.and_then(Payload::vm).cloned(),
            files: payload.and_then(Payload::files).cloned(),
        }
    })
}

/// Step 3: the last thread closes the descriptors and frees the memory. Returns the memory
/// numbers the process's totals receive (the final ones from the last thread, none from
/// the others, which would count the process's memory twice), and those the thread's exit
/// record shows when an observer `listening` (a thread that is not the last: its process's
/// memory as it is now). The plan's references to the map and the descriptors go here.
fn let_go_of_resources(plan: Plan, listening: bool) -> (MemUsage, MemUsage) {
    if let (Some(files), true) = (&plan.files, plan.last) {
        files.close_all();
    }
    // A process's memory goes with its last thread, while the thread still runs. Its
    // address space stays active until the final switch; only its (now empty) top-level
    // table lives on with the thread.
    let mem = match (&plan.vm, plan.last) {
        // The last *user* of the map frees it; a `vfork` child only gives it back.
        (Some(vm), true) => vm.release(super::current_process_cpu_ticks()),
        _ => MemUsage::default(),
    };
    let record_mem = match (&plan.vm, plan.last, listening) {
        (Some(vm), false, true) => vm.usage(super::current_process_cpu_ticks()),
        _ => mem,
    };
    (mem, record_mem)
}

/// Step 4: the thread leaves the table; its numbers go to its process's totals and, if an
/// observer listens, into the exit event, taken from the very same reading. Returns the
/// event and the tasks the table released (the thread itself, unless it is a leader that
/// stays a zombie).
fn leave_table(
    status: ExitStatus,
    last: bool,
    mem: MemUsage,
    record_mem: MemUsage,
    listening: bool,
) -> (Option<ExitEvent>, Vec<Released<Payload>>) {
    super::with(|p| {
        let now = hal::tsc::read();
        let cur = sched::current();
        let me = slot_of(cur);
        let (clocks, delays, counters) = sched::with(|s| {
            let clocks = s.msa_snapshot(me, now);
            let delays = s.delays(me, now);
            s.check_clocks_at_exit(me, &clocks, now);
            (clocks, delays, s.counters(me))
        });
        let totals = Totals { msa: clocks, delays, counters, mem };
        let thread = if listening { p.identity(cur).ok() } else { None };
        let (pid, tgid) = p.table.get(cur).map(|t| (t.pid(), t.tgid())).unwrap_or((0, 0));
        // The last thread of a process being killed stamps the group status on it.
        let harvest = |_: &mut Payload| totals.clone();
        let result = if last && p.group_exiting(cur) {
            p.table.exit_group(cur, status, harvest)
        } else {
            p.table.exit(cur, status, harvest)
        };
        let report = match result {
            Ok(r) => r,
            Err(e) => panic!("task {} cannot exit: errno {e}", me.0),
        };
        p.log_exit(pid, tgid, totals.clone());
        p.signals.exited(cur, report.process.as_ref().map(|x| x.leader));
        if !report.killed.is_empty() {
            // Cannot happen: exit_group is only called for the last live thread.
            log::error!("exit: {} thread(s) ended by the table without stopping", report.killed.len());
        }
        if last {
            // A `vfork` child that never exec'd: its parent may run again.
            p.vfork_done(cur);
        }
        let mut process = None;
        if let Some(x) = &report.process {
            if listening {
                process = p.identity(x.leader).ok().map(|id| (id, x.total.clone()));
            }
            // The parent receives SIGCHLD (default action: ignore; counted: `signal.rs`).
            if let Some(parent) = x.wake_parent {
                p.sigchld(parent, x.leader, None, x.status);
            }
            for parent in [x.wake_parent, x.wake_init].into_iter().flatten() {
                p.wake_waiters(parent);
            }
            p.job_control_after_death(x.leader, x.tgid, &x.adopted, now);
        }
        let event = thread.map(|thread| ExitEvent {
            thread,
            thread_totals: Totals { mem: record_mem, ..totals },
            status,
            process,
            now,
        });
        (event, report.released)
    })
}

/// The last thread of init (pid 1) is exiting: the system ends with it. Linux panics at
/// this point ("Attempted to kill init!"); in Tally init's end is the normal way a run ends
/// (`/bin/init` exits when the program it started does), so QEMU exits cleanly and hands on
/// init's exit code (`hal::qemu`: 0 is success) — or the failure status if init died of a
/// signal (a fault in pid 1). Before that, invariant (a) is checked one last time, on init,
/// whose clocks span the kernel's part of boot and the exec, the tally of every exit's
/// check is printed, and invariant (b) is checked over the whole run. Called with interrupts off; never returns.
fn init_ended(status: ExitStatus) -> ! {
    sched::with(|s| {
        let now = hal::tsc::read();
        let me = s.current_slot();
        let clocks = s.msa_snapshot(me, now);
        s.check_clocks_at_exit(me, &clocks, now);
    });
    let (checked, broken) = sched::exit_invariant_counts();
    if tally_microstate::ACCOUNTING_ENABLED {
        println!(
            "kernel: microstate clocks summed to the task's age at {checked} exits (init's included), broken at \
            {broken}"
        );
        // Invariant (b), over the whole run: every task's INTERRUPTED time, live or gone, is
        // the interrupt handlers' time (interrupts are off: nothing moves meanwhile).
        let live: alloc::vec::Vec<_> = super::with(|p| p.table.iter().map(|(key, _)| sched::slot_of(key)).collect());
        let (interrupted, handlers) = sched::interrupt_invariant(&live, hal::tsc::read());
        let verdict = if interrupted == handlers { "equals" } else { "DIFFERS FROM" };
        println!("kernel: INTERRUPTED over every task ({interrupted} ticks) {verdict} the interrupt handlers' time ({handlers} ticks)");
    }
    let raw = status.raw();
    if tally_tasktable::wifexited(raw) {
        let code = tally_tasktable::wexitstatus(raw) as u8;
        println!("kernel: init (pid 1) ended with status {code}");
        hal::qemu::exit_with_code(code)
    }
    let sig = tally_tasktable::wtermsig(raw);
    println!("kernel: init (pid 1) killed by signal {sig}: failure");
    hal::qemu::exit(hal::qemu::ExitCode::Failure)
}

/// What one thread left when it exited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitLogEntry {
    pub pid: i32,
    pub tgid: i32,
    pub totals: Totals,
}

impl Procs {
    /// Keep what a thread left in the log of the last [`EXIT_LOG_LEN`] exits — the
    /// per-thread records Linux's taskstats sends at each exit — so a test can check that a
    /// process's total is exactly the sum of what its threads left.
    fn log_exit(&mut self, pid: i32, tgid: i32, totals: Totals) {
        if self.exit_log.len() >= EXIT_LOG_LEN {
            self.exit_log.pop_front();
        }
        self.exit_log.push_back(ExitLogEntry { pid, tgid, totals });
    }
}

/// The exit log's entries of process `tgid`, oldest first.
pub fn recent_exits(tgid: i32) -> Vec<ExitLogEntry> {
    super::with(|p| p.exit_log.iter().filter(|r| r.tgid == tgid).cloned().collect())
}
