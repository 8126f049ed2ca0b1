//! # Tasks: kernel threads on the O(1) runqueue
//!
//! This module is the glue between three hardware-independent crates and the machine:
//!
//! * `tally_task::TaskTable` — who exists: pids, thread groups, parents, zombies, wait;
//! * `tally_sched::RunQueue` — who runs: the Linux 2.6 O(1) scheduler, which also drives the
//!   microstate clocks (`tally_msa`) at every queue change and context switch;
//! * `arch::context` — how a switch happens: stacks and saved stack pointers.
//!
//! All of it sits in one [`Kernel`] behind one lock, always taken with interrupts disabled:
//! there is one CPU, so "interrupts off" is the whole of the kernel's concurrency control.
//! The scheduler names tasks by `tally_sched::TaskKey`, which is the task-table slot index;
//! the per-task scheduling entity and microstate clock live in [`Hot`], a dense vector by slot,
//! so the scheduler reaches them without a lookup. No scheduling operation walks all tasks
//! (only the reports — `snapshot`, `task_stats` — do).
//!
//! Life of a kernel thread: [`spawn`] creates it (table entry, stack, `SchedEntity`, clock) and
//! hands it to `wake_up_new_task`; the first switch to it enters [`thread_entry`]; it runs,
//! sleeps ([`sleep_ns`]), is preempted on the tick (`irq::dispatch` calls [`preempt_if_needed`]
//! on the way out of every interrupt); it ends in [`exit`] as a zombie until its parent's
//! [`wait`] reaps it. Stacks of dead threads are freed by whichever task runs next, never by
//! the dying thread itself (it is still standing on its stack).
//!
//! A user process (`user.rs`) is such a thread with a memory map (`vm.rs`): its thread runs
//! on its own address space, and its entry function drops to ring 3. Init (pid 1) becomes
//! one in place: a kernel thread until the kernel's part of boot is done, it then execs
//! `/bin/init` (`exec.rs`), keeping its pid and its clocks. From then on it comes
//! back into the kernel through system calls (ONCPU_SYS), exceptions (ONCPU_TRAP) and
//! interrupts, and returns to user mode (ONCPU_USR) — [`set_running_state`] tells the
//! scheduler's microstate clocks which.
//!
//! The rest of the directory, one concern per file:
//!
//! | file | what |
//! |---|---|
//! | `ramdisk.rs`, `exec.rs` | the boot loader's ramdisk; starting a program from it (`spawn`) |
//! | `threads.rs` | more threads in a process; `exit_group` and fatal signals stopping them |
//! | `memacct.rs` | a process's RSS/VM, high-water marks and memory integrals |
//! | `account.rs` | reading the accounting: `msa()` sums, rusage, per-thread exit records |
//! | `prio.rs` | nice, scheduling policy, uid and the privilege checks |
//! | `signal.rs` | `kill`, SIGCHLD, and counting the signals a task receives |

mod account;
mod exec;
mod lifecycle;
pub mod memacct;
mod prio;
mod signal;
pub mod taskstats;
pub mod ramdisk;
mod threads;
mod user;
pub mod vm;
mod waitqueue;

use alloc::collections::{BTreeMap, VecDeque};
use alloc::sync::Arc;
use alloc::vec::Vec;
use spin::Mutex;
use tally_msa::{MicroState, MsaClock, MsaTimes, NR_MICROSTATES};
use tally_sched::{BlockReason, PrevAction, RunQueue, SchedConfig, SchedEntity, SleepKind, TaskKey as SchedKey, TaskStore};
use tally_task::{Accumulate, ExitStatus, TaskKey, TaskTable};
use tally_taskstats::Counters;

use crate::arch::{self, context::Thread};

pub use account::{
    children_totals, current_process_cpu_ticks, msa_breakdown, msa_of, process_usage, recent_exits, task_stats,
    MsaWhich, TaskStat,
};
pub use exec::{exec_program, spawn_program, spawn_program_vm};
pub use lifecycle::{exit, exit_group, exit_if_killed, exit_signaled, kill_pending, return_to_user, sleep_ns, spawn, spawn_thread, wait, wait_child, yield_now, SchedParams, WaitOptions, WaitResult};
pub use prio::{set_nice, set_scheduler, set_uid, superuser_used};
pub use signal::kill;
pub use threads::create_thread;
pub use user::{
    account_read, account_write, account_blocks, current_files, current_ids, current_pid, current_ppid, current_tid, current_uid, current_vm, exec_user, note_minor_fault,
    set_running_state, spawn_user, user_page_fault, syscall_entered,
};
pub use waitqueue::{IrqCompletion, SleepLock, WaitQueue};

/// What the task table carries for each task.
pub struct Payload {
    thread: Arc<Thread>,
    entry: Option<(fn(u64), u64)>,
    /// A user process's memory and where its user mode starts (`None`: a kernel thread).
    user: Option<user::UserContext>,
    counters: Counters,
    /// On a process's leader: the status of an `exit_group` (or fatal signal) in progress.
    /// Its other threads have been told to die (`Hot::killed`) and exit with it.
    group_exit: Option<ExitStatus>,
}

impl Payload {
    fn kernel(thread: Arc<Thread>, entry: Option<(fn(u64), u64)>) -> Self {
        Payload { thread, entry, user: None, counters: Counters::default(), group_exit: None }
    }
}

/// The accounting a dead task leaves behind: its microstate clocks (TSC ticks), its
/// counters, and — from the last thread of a process only, since the threads share one
/// memory — the process's memory numbers.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct Totals {
    pub msa: MsaTimes,
    /// Delay episodes (run-queue waits, disk waits, interrupts) for taskstats.
    pub delays: tally_msa::DelayStats,
    pub counters: Counters,
    pub mem: memacct::MemUsage,
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

/// The scheduler's per-task state, by slot, and the one flag every return to user mode
/// checks (kept here, in the dense vector, so the check is one array index).
pub struct Hot {
    se: SchedEntity,
    clock: MsaClock,
    /// The task's process is exiting (`exit_group`, a fatal signal): the task must not
    /// return to user mode but exit (`lifecycle::exit_if_killed`, `return_to_user`).
    killed: bool,
}

struct HotStore<'a>(&'a mut Vec<Option<Hot>>);

impl TaskStore for HotStore<'_> {
    fn task(&mut self, key: SchedKey) -> (&mut SchedEntity, &mut MsaClock) {
        let hot = self.0[key.0 as usize].as_mut().expect("scheduler named a freed task");
        (&mut hot.se, &mut hot.clock)
    }
}

pub struct Kernel {
    tasks: TaskTable<Payload, Totals>,
    hot: Vec<Option<Hot>>,
    /// Task-table key of each slot (to go from the scheduler's key back to the table's).
    keys: Vec<Option<TaskKey>>,
    rq: RunQueue,
    /// Sleepers by wake-up time (TSC), then sequence: the timer list the tick drains.
    sleepers: BTreeMap<(u64, u64), SchedKey>,
    sleep_seq: u64,
    /// Tasks sleeping in `wait()`, by the process whose children they wait for.
    waiters: BTreeMap<TaskKey, Vec<SchedKey>>,
    /// Payloads of released tasks whose stacks may still be in use until the next switch.
    graveyard: Vec<Payload>,
    /// Microstate clocks of every task released so far (for system-wide invariants).
    released_msa: MsaTimes,
    /// The run queue as Solaris io-kstat queues (wait: runnable and waiting; run: on CPU),
    /// times in TSC ticks since `boot_tsc`.
    runq_io: tally_kstat::IoStats,
    boot_tsc: u64,
    /// An interrupt during which the CPU switched tasks: the task switched *to* finishes its
    /// accounting (the seed's INTERRUPTED handover).
    handover_line: Option<u8>,
    /// Exits at which invariant (a) was checked, and how many broke it.
    exit_checks: u64,
    exit_violations: u64,
    /// The last threads to exit, with what they left (`account.rs`).
    exit_log: VecDeque<account::ExitRecord>,
}

static KERNEL: Mutex<Option<Kernel>> = Mutex::new(None);

/// Run `f` on the kernel state with interrupts disabled.
pub(crate) fn with_kernel<R>(f: impl FnOnce(&mut Kernel) -> R) -> R {
    arch::cpu::without_interrupts(|| {
        let mut guard = KERNEL.lock();
        f(guard.as_mut().expect("task::init not called"))
    })
}

impl Kernel {
    fn sched_key(key: TaskKey) -> SchedKey {
        SchedKey(key.index())
    }

    fn table_key(&self, key: SchedKey) -> TaskKey {
        self.keys[key.0 as usize].expect("scheduler named a freed task")
    }

    fn current(&self) -> TaskKey {
        self.table_key(self.rq.current())
    }

    fn insert_hot(&mut self, key: TaskKey, hot: Hot) {
        let i = key.index() as usize;
        if self.hot.len() <= i {
            self.hot.resize_with(i + 1, || None);
            self.keys.resize(i + 1, None);
        }
        self.hot[i] = Some(hot);
        self.keys[i] = Some(key);
    }

    /// Take a released task's scheduler state out of the dense vector.
    fn remove_hot(&mut self, key: TaskKey, payload: Payload) {
        let i = key.index() as usize;
        self.hot[i] = None;
        self.keys[i] = None;
        self.graveyard.push(payload);
    }

    /// Integrate the run queue's new shape (tasks waiting for the CPU, and whether a
    /// non-idle task has it) after every runqueue change, in TSC ticks since boot. Only a
    /// change of length needs the sums brought up to date (over an interval of constant
    /// length they are folded in at the next change, or by the reader), so a switch between
    /// two runnable tasks costs two comparisons. The `unix:0:runq` kstat converts to ns.
    /// (A kstat, not microstate accounting: it is kept with the `accounting` feature off too,
    /// so `cargo xtask bench`'s ratio measures microstate accounting alone.)
    fn runq_changed(&mut self, now: u64) {
        let running = (self.rq.current() != self.rq.idle()) as u32;
        let queued = self.rq.nr_running().saturating_sub(running);
        if queued != self.runq_io.waitq().cnt() || running != self.runq_io.runq().cnt() {
            let since_boot = now.saturating_sub(self.boot_tsc) as i64;
            self.runq_io.set_queue_lengths(since_boot, queued, running);
        }
    }

    /// Run `schedule()` and return the threads to switch between, if any. A switch is
    /// counted for the task leaving the CPU: voluntary if it blocks or yields, involuntary
    /// if it is preempted (an exiting task's counters were already harvested).
    fn pick(&mut self, action: PrevAction) -> Option<(Arc<Thread>, Arc<Thread>)> {
        self.pick_from(action, None)
    }

    /// [`Kernel::pick`] for a task that may have left the table already (a thread that was
    /// released at its exit): its thread is given instead of looked up.
    fn pick_from(&mut self, action: PrevAction, prev_thread: Option<Arc<Thread>>) -> Option<(Arc<Thread>, Arc<Thread>)> {
        let now = arch::tsc::read();
        let sw = self.rq.schedule(&mut HotStore(&mut self.hot), now, action);
        self.runq_changed(now);
        if !sw.is_switch() {
            return None;
        }
        if sw.prev != self.rq.idle() && action != PrevAction::Block(BlockReason::Exit) {
            let key = self.table_key(sw.prev);
            if let Ok(t) = self.tasks.get_mut(key) {
                let c = &mut t.payload_mut().counters;
                match action {
                    PrevAction::Preempted => c.nivcsw += 1,
                    _ => c.nvcsw += 1,
                }
            }
        }
        let thread = |k: &Kernel, s: SchedKey| {
            k.tasks.get(k.table_key(s)).map(|t| Arc::clone(&t.payload().thread)).expect("runnable task not in the table")
        };
        let prev = match prev_thread {
            Some(t) => t,
            None => thread(self, sw.prev),
        };
        Some((prev, thread(self, sw.next)))
    }
}

/// Switch away from the current task as the scheduler decides; returns when it runs again.
fn schedule(action: PrevAction) {
    arch::cpu::without_interrupts(|| {
        let threads = KERNEL.lock().as_mut().expect("task::init not called").pick(action);
        switch_and_clean(threads);
    });
}

/// With interrupts off and the kernel lock released: switch (if the scheduler chose another
/// task), and once back on the CPU finish what the switch left over.
fn switch_and_clean(threads: Option<(Arc<Thread>, Arc<Thread>)>) {
    if let Some((prev, next)) = threads {
        arch::context::switch(prev, next);
    }
    after_switch();
}

/// The first thing a task does when it gets the CPU (back): if the task before it switched
/// inside an interrupt, this task inherited that interrupt (it has been INTERRUPTED since
/// the switch) and now ends it; and free what dead tasks left behind — their stacks are
/// certainly not in use any more, since this task is the one running.
fn after_switch() {
    let dead = {
        let mut guard = KERNEL.lock();
        let k = guard.as_mut().expect("task::init not called");
        if let Some(line) = k.handover_line.take() {
            k.rq.irq_exit(&mut HotStore(&mut k.hot), line as usize, arch::tsc::read());
        }
        core::mem::take(&mut k.graveyard)
    };
    drop(dead);
}

/// Called at the end of an interrupt handler, still inside the interrupt. If the handler
/// asked for a reschedule (the tick used up the slice, a wake-up preempts), switch now: the
/// outgoing task's INTERRUPTED time ends at the switch and the incoming task inherits the
/// interrupt until it ends it in [`after_switch`]. Otherwise end the interrupt's accounting
/// here. One lock acquisition either way.
pub fn irq_return(line: u8) {
    let threads = {
        let mut guard = KERNEL.lock();
        let Some(k) = guard.as_mut() else { return };
        let switch = if k.rq.need_resched() && k.rq.irq().depth() == 1 { k.pick(PrevAction::Preempted) } else { None };
        match switch {
            Some(t) => {
                k.handover_line = Some(line);
                t
            }
            None => {
                k.rq.irq_exit(&mut HotStore(&mut k.hot), line as usize, arch::tsc::read());
                return;
            }
        }
    };
    switch_and_clean(Some(threads));
}

/// The dense per-slot vector holding only the idle (boot) task's scheduler state.
fn boot_hot(idle: TaskKey, entry_tsc: u64) -> Vec<Option<Hot>> {
    let mut hot = Vec::new();
    hot.resize_with(idle.index() as usize + 1, || None);
    hot[idle.index() as usize] =
        Some(Hot { se: SchedEntity::new(19), clock: MsaClock::new(entry_tsc, MicroState::OncpuSys), killed: false });
    hot
}

/// The scheduler's name for the running task (`None` before `init`).
pub(crate) fn current_sched_key() -> Option<SchedKey> {
    arch::cpu::without_interrupts(|| KERNEL.lock().as_ref().map(|k| k.rq.current()))
}

/// Block the running task in `kind` sleep until [`wake`] (or, with a deadline, until the
/// first tick at or after it). Call with interrupts disabled, after registering the task
/// where its waker will find it. Returns once the task runs again.
pub(crate) fn block_current(kind: SleepKind, deadline: Option<u64>) {
    let (threads, timer) = {
        let mut guard = KERNEL.lock();
        let k = guard.as_mut().expect("task::init not called");
        let timer = deadline.map(|when| {
            k.sleep_seq += 1;
            k.sleepers.insert((when, k.sleep_seq), k.rq.current());
            (when, k.sleep_seq)
        });
        (k.pick(PrevAction::Block(BlockReason::Sleep(kind))), timer)
    };
    switch_and_clean(threads);
    if let Some(t) = timer {
        // Woken before the deadline: the timer entry must not wake a later, unrelated sleep.
        KERNEL.lock().as_mut().expect("initialised").sleepers.remove(&t);
    }
}

/// Make a sleeping task runnable (no effect on a task that is not asleep). Callable from
/// interrupt handlers; a wake-up of a higher-priority task asks for a reschedule.
pub(crate) fn wake(key: SchedKey) {
    arch::cpu::without_interrupts(|| {
        if let Some(k) = KERNEL.lock().as_mut() {
            let now = arch::tsc::read();
            if k.rq.wake_up(&mut HotStore(&mut k.hot), key, now) {
                k.runq_changed(now);
            }
        }
    });
}

/// Make the boot thread the idle task (pid 0) and create init (pid 1), which runs `init_main`.
pub fn init(entry_tsc: u64, init_main: fn(u64)) {
    let now = arch::tsc::read();
    let mut tasks: TaskTable<Payload, Totals> = TaskTable::new();
    let idle = tasks.create_idle(b"idle", Payload::kernel(Thread::boot(), None)).expect("fresh table");
    // The boot thread has been running in the kernel since kernel entry.
    let config = SchedConfig::new(crate::irq::HZ, crate::time::clock().hz());
    let mut hot = boot_hot(idle, entry_tsc);
    let rq = RunQueue::new(config, Kernel::sched_key(idle), &mut HotStore(&mut hot), now);
    let mut keys = alloc::vec![None; hot.len()];
    keys[idle.index() as usize] = Some(idle);
    let k = Kernel {
        tasks,
        hot,
        keys,
        rq,
        sleepers: BTreeMap::new(),
        sleep_seq: 0,
        waiters: BTreeMap::new(),
        graveyard: Vec::new(),
        released_msa: [0; NR_MICROSTATES],
        runq_io: tally_kstat::IoStats::new(),
        boot_tsc: entry_tsc,
        handover_line: None,
        exit_checks: 0,
        exit_violations: 0,
        exit_log: VecDeque::new(),
    };
    *KERNEL.lock() = Some(k);
    lifecycle::spawn_init(init_main);
}

/// The idle loop: the boot thread's life from now on.
pub fn idle_loop() -> ! {
    loop {
        preempt_if_needed();
        arch::cpu::wait_for_interrupt();
    }
}

/// Interrupt entry accounting: the current task becomes INTERRUPTED, the line's timer starts.
pub fn irq_enter(line: u8, now: u64) {
    if let Some(k) = KERNEL.lock().as_mut() {
        k.rq.irq_enter(&mut HotStore(&mut k.hot), line as usize, now);
    }
}

/// Record how the interrupt in progress ended (spurious, ...).
pub fn irq_outcome(kind: tally_msa::IntrKind) {
    if let Some(k) = KERNEL.lock().as_mut() {
        k.rq.irq_mut().set_outcome(kind);
    }
}

/// Set the kind a line's interrupts count as (the timer's are "watchdog" interrupts).
pub fn set_line_kind(line: u8, kind: tally_msa::IntrKind) {
    with_kernel(|k| k.rq.irq_mut().set_line_kind(line as usize, kind));
}

/// The timer tick: charge the current task, wake sleepers whose time has come.
pub fn tick(now: u64) {
    if let Some(k) = KERNEL.lock().as_mut() {
        k.rq.scheduler_tick(&mut HotStore(&mut k.hot), now);
        while let Some((&(when, seq), &key)) = k.sleepers.first_key_value() {
            if when > now {
                break;
            }
            k.sleepers.remove(&(when, seq));
            k.rq.wake_up(&mut HotStore(&mut k.hot), key, now);
        }
        k.runq_changed(now);
    }
}

/// On the way out of an interrupt (and in the idle loop): switch if the scheduler asked to.
pub fn preempt_if_needed() {
    let needed = arch::cpu::without_interrupts(|| KERNEL.lock().as_ref().is_some_and(|k| k.rq.need_resched()));
    if needed {
        schedule(PrevAction::Preempted);
    }
}

/// The running task's microstate clocks now (TSC ticks).
pub fn current_msa() -> MsaTimes {
    with_kernel(|k| {
        let me = k.rq.current();
        k.rq.msa_snapshot(&mut HotStore(&mut k.hot), me, arch::tsc::read())
    })
}

/// Parent pid of `pid` (its process's parent), if `pid` exists.
pub fn ppid(pid: i32) -> Option<i32> {
    with_kernel(|k| k.tasks.lookup(pid).and_then(|key| k.tasks.ppid(key)).ok())
}

/// Whether `pid` is a zombie (exited, not yet reaped).
pub fn is_zombie(pid: i32) -> bool {
    with_kernel(|k| {
        k.tasks.lookup(pid).and_then(|key| k.tasks.get(key)).is_ok_and(|t| t.state() == tally_task::TaskState::Zombie)
    })
}

/// (exits checked, exits that broke invariant (a)).
pub fn exit_invariant_counts() -> (u64, u64) {
    with_kernel(|k| (k.exit_checks, k.exit_violations))
}

/// The run queue's io-kstat integrals, times in ns since boot (settled by the reader).
pub fn runq_io() -> tally_kstat::IoStats {
    let (io, clock) = with_kernel(|k| (k.runq_io, crate::time::clock()));
    io.rescaled(|ticks| clock.ticks_to_ns(ticks.max(0) as u64) as i64)
}

/// Context switches since boot.
pub fn nr_switches() -> u64 {
    with_kernel(|k| k.rq.nr_switches())
}

/// System-wide accounting at one instant: every task's clocks (live and released) and the
/// total handler time of every IRQ line.
pub struct SystemSnapshot {
    /// (pid, comm, clocks, age in ticks) of each live task.
    pub tasks: Vec<(i32, [u8; 16], MsaTimes, u64)>,
    pub released: MsaTimes,
    pub total_handler_ticks: u64,
    pub irq_lines: [tally_msa::IrqLineStats; crate::irq::NR_LINES],
}

pub fn snapshot() -> SystemSnapshot {
    with_kernel(|k| {
        let now = arch::tsc::read();
        let mut tasks = Vec::new();
        let keys: Vec<TaskKey> = k.tasks.iter().map(|(key, _)| key).collect();
        for key in keys {
            let (pid, comm) = match k.tasks.get(key) {
                Ok(t) => (t.pid(), *t.comm()),
                Err(_) => continue,
            };
            let s = Kernel::sched_key(key);
            let clocks = k.rq.msa_snapshot(&mut HotStore(&mut k.hot), s, now);
            let created = HotStore(&mut k.hot).clock(s).created();
            tasks.push((pid, comm, clocks, now - created));
        }
        SystemSnapshot {
            tasks,
            released: k.released_msa,
            total_handler_ticks: k.rq.irq().total_handler_ticks(now),
            irq_lines: core::array::from_fn(|l| *k.rq.irq().line_stats(l)),
        }
    })
}
