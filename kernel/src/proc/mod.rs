//! # proc — processes: who exists, what they own, how they start and end
//!
//! Who exists. This layer holds the task table (`tally_tasktable::TaskTable`: pids, thread
//! groups, parents and children, zombies, and where the numbers of dead tasks go) behind
//! its own lock, and what a process owns: its memory map (`vm.rs`) and its descriptors
//! (`crate::file`). Who *runs* is the scheduler's, one layer down: a task here is a task
//! there, named by the slot of its `TaskKey`. Lock order: this lock, then the scheduler's.
//!
//! Life of a task: created by [`spawn`] (a kernel thread), [`spawn_program`] (a program
//! from the ramdisk), [`create_thread`] (a thread of the caller's process), or in place by
//! [`exec_program`] (init becoming `/bin/init`); it ends in [`exit()`]/[`exit_group`] (or a
//! fatal signal), which tells whoever registered for exits (`notify.rs`: the taskstats
//! bus), and stays a zombie until its parent's [`wait`] reaps it.
//!
//! | file | what |
//! |---|---|
//! | `create.rs` | entering a task in the table and the run queue; kernel threads; init |
//! | `user.rs`, `exec.rs`, `ramdisk.rs` | user processes: ring 3, loading a Linux ELF program (ramdisk or `/var`) with its initial stack, exec in place, `execve` |
//! | `fork.rs` | `fork`, `vfork`, `clone` of a process: a copy of the caller, memory shared copy-on-write |
//! | `threads.rs` | more threads in a process |
//! | `vm.rs` | a process's memory map: regions, demand-zero paging, `brk`, `mmap` |
//! | `vm_file.rs` | programs on `/var` paged in on demand: major faults, PAGING_SLEEP |
//! | `oom.rs` | out of memory: overcommit refused at `brk`/`mmap`, the OOM killer at a fault |
//! | `exit.rs` | exit, `exit_group`, and how the other threads of a process follow |
//! | `reap.rs` | `wait`: collecting a zombie and what it used |
//! | `notify.rs` | who hears of exits |
//! | `cputime.rs` | a process's clocks and CPU time, summed over its threads |
//! | `ids.rs` | who the running task is; the identity an accounting record carries |
//! | `signal.rs` | dispositions, masks, pending signals; `kill`, SIGCHLD, and counting the signals a task receives |
//! | `sigcalls.rs` | the signal calls' process side: `rt_sigaction`, `rt_sigprocmask`, `rt_sigtimedwait`, `sigaltstack`, `tgkill`... |
//! | `sigdeliver.rs` | on the way back to user mode: a signal's action, or a handler's `rt_sigframe`; `rt_sigreturn` |
//! | `job_stop.rs` | job control: stopping and continuing a process, telling its parent |
//! | `job_control.rs` | the console's session and foreground group: ISIG, SIGTTIN, `tcsetpgrp`, hang-ups |
//! | `prio.rs` | nice, scheduling policy, uid and the privilege checks |
//!
//! Processes from user space: `docs/user-mode.md`; the floors and the locks: `docs/architecture.md`.

mod cputime;
mod create;
mod exec;
mod exit;
pub mod fork;
pub mod futex;
mod ids;
mod job_control;
mod job_stop;
mod notify;
pub mod oom;
mod prio;
pub mod ramdisk;
mod reap;
mod sigcalls;
mod sigdeliver;
pub mod signal;
mod threads;
mod user;
pub mod vm;
pub mod vm_file;

pub use cputime::{current_process_cpu_ticks, on_cpu, ProcessClocks};
pub use create::{init, spawn, spawn_daemon, spawn_thread, SpawnAttr};
pub use exec::{exec_program, execve, spawn_program, spawn_program_in, spawn_program_vm};
pub use exit::{exit, exit_group, exit_signaled, interrupt_return_to_user, recent_exits, return_to_user, ExitLogEntry};
pub use ids::{
    current_gid, current_ids, current_pid, current_ppid, current_tid, current_uid, is_zombie, nr_tasks, ppid, Identity,
};
pub use job_control::{
    console_read_check, getpgid, getsid, give_up_tty, set_controlling_tty, setpgid, setsid, signal_foreground,
    tcgetpgrp, tcsetpgrp, ConsoleJobs,
};
pub use job_stop::stop_if_requested;
pub use notify::{register_exit_observer, register_spawn_observer, ExitEvent, ExitObserver, SpawnObserver};
pub use prio::{set_nice, set_scheduler, set_uid, superuser_used, use_privilege};
pub use reap::{wait, wait_child, WaitOptions, WaitResult, Waited};
pub use sigcalls::{
    begin_wait_mask, end_wait_mask, pause, sigaction, sigaltstack, sigpending, sigprocmask, sigsuspend, sigtimedwait,
    tgkill,
};
pub use sigdeliver::{fault_signal, sigreturn_regs};
pub use signal::{kill, raise};
pub use threads::{clone_thread, create_thread};
pub use user::{
    current_file, current_files, current_vm, exec_user, resolve_for_copy, set_clear_child_tid, set_clear_child_tid_of,
    spawn_user, user_page_fault, user_page_in, UserFault, UserStart,
};

use alloc::collections::{BTreeMap, VecDeque};
use alloc::sync::Arc;
use alloc::vec::Vec;
use spin::Mutex;
use tally_memacct::MemUsage;
use tally_microstate::{DelayStats, MsaTimes};
use tally_runqueue::TaskSlot;
use tally_taskstats::Counters;
use tally_tasktable::{Accumulate, ExitStatus, TaskKey, TaskTable};

use crate::file::FileTable;

/// What the task table carries for each task: the process-level state. (The CPU-level
/// state — stack, clocks, counters — is the scheduler's.)
pub struct Payload {
    /// A user process's memory, descriptors and where its user mode starts (`None`: a
    /// kernel thread).
    user: Option<user::UserContext>,
    /// On a process's leader: the status of an `exit_group` (or fatal signal) in progress.
    /// Its other threads have been told to die and exit with it.
    group_exit: Option<ExitStatus>,
    /// On a `vfork` child: the parent thread sleeping until this child execs or exits
    /// (`fork.rs`); taken (and the parent woken) at the first of the two.
    vfork_parent: Option<TaskKey>,
}

impl Payload {
    fn kernel() -> Self {
        Payload { user: None, group_exit: None, vfork_parent: None }
    }

    /// The process's memory map, if it has a user mode.
    pub fn vm(&self) -> Option<&Arc<vm::Vm>> {
        self.user.as_ref().map(|u| u.vm())
    }

    /// The process's descriptors, if it has a user mode.
    pub fn files(&self) -> Option<&Arc<FileTable>> {
        self.user.as_ref().map(|u| u.files())
    }

    /// Is this a task with a user mode (not a kernel thread)?
    pub fn is_user(&self) -> bool {
        self.user.is_some()
    }
}

/// The accounting a dead task leaves behind: its microstate clocks (TSC ticks), its delay
/// episodes, its counters, and — from the last thread of a process only, since the threads
/// share one memory — the process's memory numbers.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct Totals {
    pub msa: MsaTimes,
    /// Delay episodes (run-queue waits, disk waits, interrupts) for taskstats.
    pub delays: DelayStats,
    pub counters: Counters,
    pub mem: MemUsage,
}

impl Accumulate for Totals {
    fn add(&mut self, other: &Self) {
        for (a, b) in self.msa.iter_mut().zip(other.msa.iter()) {
            *a = a.wrapping_add(*b);
        }
        self.delays.add(&other.delays);
        self.counters.add(&other.counters);
        self.mem.add(&other.mem);
    }
}

/// The task table and what waits on it.
pub struct Procs {
    table: TaskTable<Payload, Totals>,
    /// Tasks sleeping in `wait()`, by the process whose children they wait for.
    waiters: BTreeMap<TaskKey, Vec<TaskSlot>>,
    /// The last threads to exit, with what they left (`exit.rs`).
    exit_log: VecDeque<ExitLogEntry>,
    /// The console's controlling session and foreground group (`job_control.rs`).
    console: ConsoleJobs,
    /// Every process's dispositions and pending signals, every thread's mask (`signal.rs`).
    signals: signal::SignalTables,
}

impl Procs {
    /// The task table, for the readers of the accounting (`acct`).
    pub fn table(&self) -> &TaskTable<Payload, Totals> {
        &self.table
    }
}

static PROCS: Mutex<Option<Procs>> = Mutex::new(None);

/// Run `f` on the task table with interrupts disabled. Lock order: this, then `sched`'s.
pub(crate) fn with<R>(f: impl FnOnce(&mut Procs) -> R) -> R {
    hal::cpu::without_interrupts(|| f(PROCS.lock().as_mut().expect("proc::init not called")))
}
