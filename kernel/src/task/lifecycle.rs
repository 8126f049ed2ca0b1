//! Birth, sleep and death of kernel threads (and of user processes, which start as one):
//! spawn, sleep, yield, exit, wait.
//!
//! One death is special: when init's (pid 1's) last thread exits, the run ends with it
//! (`init_ended`): the kernel prints init's status and ends QEMU with it.
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
//!    sets `Hot::killed` on every other thread, and wakes those in an interruptible sleep
//!    (their sleeps end early: `nanosleep` returns, `wait4` fails with `EINTR`); a thread in
//!    an uninterruptible sleep (a disk request) finishes it first;
//! 2. the caller exits;
//! 3. every other thread, the next time it would return to user mode — at the end of a
//!    system call ([`exit_if_killed`] in `syscall::leave`), of an interrupt that came from
//!    user mode (`irq::dispatch`), or before its very first instruction — exits instead,
//!    with the process's status. Nothing is left on its kernel stack at those points, so
//!    nothing leaks and no lock stays held.
//!
//! Each thread leaves through the task table's `exit`, the last one through `exit_group`
//! (which stamps the group status on the process); only then is the process a zombie its
//! parent can reap, and its memory is freed when that last thread goes.

use alloc::sync::Arc;
use tally_microstate::{MicroState, MsaClock, MsaTimes};
use tally_runqueue::{BlockReason, Policy, PrevAction, SchedEntity, SleepKind, TaskState};
use tally_tasktable::{CreateKind, ExitStatus, TaskKey, WaitFor, WaitOutcome, INIT_PID};
use tally_uapi::errno::{EAGAIN, EINTR, ENOMEM};

use super::memacct::MemUsage;
use super::{switch_and_clean, with_kernel, Hot, HotStore, Kernel, Payload, Totals, KERNEL};
use tally_runqueue::TaskStore;
use hal::context::Thread;

/// Most tasks (threads, zombies included) the table may hold: `spawn` and `thread_create`
/// fail with `EAGAIN` beyond it (Linux's `threads-max`/`RLIMIT_NPROC`), long before the
/// kernel heap or the frame pool could run dry.
pub const MAX_TASKS: usize = 1024;

/// First code of every new thread (the trampoline calls it): run the entry, then exit.
pub(super) extern "C" fn thread_entry(_: u64) -> ! {
    super::after_switch();
    let entry = with_kernel(|k| {
        let cur = k.current();
        k.tasks.get(cur).ok().and_then(|t| t.payload().entry)
    });
    hal::cpu::enable_interrupts();
    if let Some((f, arg)) = entry {
        f(arg);
    }
    exit(0)
}

/// How a new thread is scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedParams {
    /// SCHED_NORMAL at a nice value (-20..19).
    Normal(i32),
    /// SCHED_FIFO at a real-time priority (1..99).
    Fifo(u32),
    /// Any policy, with its nice value (kept for when it becomes normal again) and real-time
    /// priority: what a spawned program or a new thread inherits from its creator.
    Custom { policy: Policy, nice: i32, rt_priority: u32 },
}

pub(super) fn new_hot(params: SchedParams, now: u64) -> Result<Hot, i32> {
    let se = match params {
        SchedParams::Normal(nice) => SchedEntity::new(nice.clamp(-20, 19)),
        SchedParams::Fifo(p) => SchedEntity::new(0).with_policy(Policy::Fifo, p).map_err(|e| e.errno())?,
        SchedParams::Custom { policy, nice, rt_priority } => {
            SchedEntity::new(nice.clamp(-20, 19)).with_policy(policy, rt_priority).map_err(|e| e.errno())?
        }
    };
    Ok(Hot { se, clock: MsaClock::new(now, MicroState::OnActiveQueue), killed: false })
}

/// The scheduling parameters of the current task, for a child or thread to inherit.
pub(super) fn inherited_params(k: &mut Kernel) -> SchedParams {
    let me = k.rq.current();
    let mut store = HotStore(&mut k.hot);
    let se = store.entity(me);
    SchedParams::Custom { policy: se.policy(), nice: se.nice(), rt_priority: se.rt_priority() }
}

pub(super) fn spawn_init(init_main: fn(u64)) {
    with_kernel(|k| {
        let now = hal::tsc::read();
        let thread = Thread::spawn(thread_entry, 0).expect("no memory for init's stack");
        let key = k
            .tasks
            .create_init(b"init", 0, 0, crate::time::boot_unix_seconds(), Payload::kernel(thread, Some((init_main, 0))))
            .expect("init created twice");
        k.insert_hot(key, new_hot(SchedParams::Normal(0), now).expect("nice 0 is valid"));
        k.rq.wake_up_new_task(&mut HotStore(&mut k.hot), Kernel::sched_key(key), now);
        k.runq_changed(now);
    });
}

/// Start a kernel thread running `entry(arg)` as a new process, child of the current task.
/// Returns its pid.
pub fn spawn(name: &str, params: SchedParams, entry: fn(u64), arg: u64) -> Result<i32, i32> {
    let thread = Thread::spawn(thread_entry, 0).map_err(|_| ENOMEM)?;
    start_process(name, params, Payload::kernel(thread, Some((entry, arg))))
}

/// Start a kernel thread running `entry(arg)` as a new thread of the current task's process
/// (same tgid, same parent); returns its tid.
pub fn spawn_thread(params: SchedParams, entry: fn(u64), arg: u64) -> Result<i32, i32> {
    let thread = Thread::spawn(thread_entry, 0).map_err(|_| ENOMEM)?;
    start_task("", params, Payload::kernel(thread, Some((entry, arg))), CreateKind::Thread, false)
}

/// Enter `payload` (whose thread has not run yet) in the task table as a new process, child
/// of the current task, and queue it. A payload with user state makes a user task.
pub(super) fn start_process(name: &str, params: SchedParams, payload: Payload) -> Result<i32, i32> {
    start_task(name, params, payload, CreateKind::Process, false)
}

/// [`start_process`] for every kind of task: `kind` says process or thread of the
/// creator's process; `exec` marks a program that was loaded (not a copy of its creator,
/// so the accounting flag AFORK is cleared and the name is the program's). `EAGAIN` beyond
/// [`MAX_TASKS`].
pub(super) fn start_task(name: &str, params: SchedParams, payload: Payload, kind: CreateKind, exec: bool) -> Result<i32, i32> {
    with_kernel(|k| {
        if k.tasks.len() >= MAX_TASKS {
            return Err(EAGAIN);
        }
        let now = hal::tsc::read();
        let mut hot = new_hot(params, now)?;
        if payload.user.is_some() {
            hot.se = hot.se.with_user_space();
        }
        let creator = k.current();
        if kind == CreateKind::Thread {
            // Checked under the same lock exit_group marks threads under: a process being
            // killed cannot gain a thread the kill did not see.
            let dying = k.tasks.leader(creator).and_then(|l| k.tasks.get(l)).is_ok_and(|l| l.payload().group_exit.is_some());
            if dying {
                return Err(EINTR);
            }
        }
        let begin = crate::time::boot_unix_seconds() + crate::time::clock().monotonic_ns(now) / 1_000_000_000;
        let key = k.tasks.create(creator, kind, begin, payload)?;
        let pid = match k.tasks.get_mut(key) {
            Ok(t) => {
                match (kind, exec) {
                    (CreateKind::Thread, _) => {}
                    (_, true) => t.exec(name.as_bytes()),
                    (_, false) => t.set_comm(name.as_bytes()),
                }
                t.pid()
            }
            Err(e) => return Err(e),
        };
        k.insert_hot(key, hot);
        k.rq.wake_up_new_task(&mut HotStore(&mut k.hot), Kernel::sched_key(key), now);
        k.runq_changed(now);
        Ok(pid)
    })
}

/// Give up the CPU (2.6 `sched_yield`: a normal task goes to the expired array).
pub fn yield_now() {
    super::schedule(PrevAction::Yield);
}

/// Sleep (interruptibly) for at least `ns` nanoseconds; woken by the tick that passes the
/// deadline, so the sleep lasts up to one tick longer. Returns early (false) if the task's
/// process is being killed (see the module documentation); true after the full sleep.
pub fn sleep_ns(ns: u64) -> bool {
    let deadline = hal::tsc::read().saturating_add(crate::time::clock().ns_to_ticks(ns));
    while hal::tsc::read() < deadline {
        if kill_pending() {
            return false;
        }
        hal::cpu::without_interrupts(|| super::block_current(SleepKind::Interruptible, Some(deadline)));
    }
    true
}

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
/// accounting records say ACORE as well as AXSIG, as seed 000's `ac_flag` does for such a
/// death. Tally writes no core file: the flag records how the task died, not a file.
pub fn exit_signaled(sig: u8) -> ! {
    let core = tally_uapi::signal::default_action(sig) == tally_uapi::signal::DefaultAction::Core;
    let status = ExitStatus::signaled(sig, core).unwrap_or(ExitStatus::exited(128 + sig as i32));
    with_kernel(|k| {
        let cur = k.current();
        if let Ok(t) = k.tasks.get_mut(cur) {
            t.payload_mut().counters.signals += 1;
        }
    });
    exit_with(status, true)
}

/// Is the current task's process being killed (so the task must not go back to user mode)?
pub fn kill_pending() -> bool {
    hal::cpu::without_interrupts(|| {
        KERNEL.lock().as_mut().is_some_and(|k| {
            let me = k.rq.current();
            k.hot.get(me.0 as usize).and_then(|h| h.as_ref()).is_some_and(|h| h.killed)
        })
    })
}

/// A return-to-user-mode point: if the task's process is being killed, exit now with the
/// process's status instead of returning (see the module documentation).
pub fn exit_if_killed() {
    if kill_pending() {
        exit_killed()
    }
}

/// Going back to ring 3 (after a system call, or for the first time): exit if the task's
/// process is being killed, otherwise run in ONCPU_USR from now — the check and the state
/// switch under one lock. Call with interrupts off, so no kill slips in before ring 3.
pub fn return_to_user() {
    let killed = with_kernel(|k| {
        let me = k.rq.current();
        let killed = k.hot.get(me.0 as usize).and_then(|h| h.as_ref()).is_some_and(|h| h.killed);
        if !killed {
            k.rq.set_running_state(&mut HotStore(&mut k.hot), me, MicroState::OncpuUsr, hal::tsc::read());
        }
        killed
    });
    if killed {
        exit_killed()
    }
}

fn exit_killed() -> ! {
    // The status given here is only used if the group status is somehow missing.
    exit_with(ExitStatus::signaled(9, false).unwrap_or_default(), false)
}

/// Step 1 of the module documentation, for the process of the current task `cur`: record
/// `status` (unless an exit_group is already under way: the first one wins, as in Linux),
/// mark the other threads and wake those asleep interruptibly.
pub(super) fn start_group_exit(k: &mut Kernel, cur: TaskKey, status: ExitStatus, now: u64) {
    kill_group(k, cur, status, Some(cur), now);
}

/// Record `status` as the exit status of `member`'s process (the first one wins) and mark
/// every thread but `spare` to die, waking those asleep interruptibly. (`exit_group` spares
/// the caller, which is exiting anyway; `kill` spares nobody.)
pub(super) fn kill_group(k: &mut Kernel, member: TaskKey, status: ExitStatus, spare: Option<TaskKey>, now: u64) {
    let Ok(leader) = k.tasks.leader(member) else { return };
    if let Ok(l) = k.tasks.get_mut(leader) {
        let p = l.payload_mut();
        if p.group_exit.is_none() {
            p.group_exit = Some(status);
        }
    }
    let others: alloc::vec::Vec<TaskKey> = k
        .tasks
        .threads(member)
        .map(|t| t.iter().copied().filter(|&t| Some(t) != spare).collect())
        .unwrap_or_default();
    for t in others {
        let s = Kernel::sched_key(t);
        let Some(hot) = k.hot.get_mut(s.0 as usize).and_then(|h| h.as_mut()) else { continue };
        hot.killed = true;
        if hot.se.state() == TaskState::Blocked(BlockReason::Sleep(SleepKind::Interruptible))
            && k.rq.wake_up(&mut HotStore(&mut k.hot), s, now)
        {
            k.runq_changed(now);
        }
    }
}

/// End the current thread (`group`: its whole process) with `status`. See the module
/// documentation for how the other threads of a process follow.
fn exit_with(status: ExitStatus, group: bool) -> ! {
    hal::cpu::without_interrupts(|| {
        // Interrupts stay off from here to the final switch: no other task runs in between,
        // so what is decided in the first step still holds in the second.
        let (status, last, init, vm, files) = with_kernel(|k| {
            let cur = k.current();
            let now = hal::tsc::read();
            if group {
                start_group_exit(k, cur, status, now);
            }
            let group_status =
                k.tasks.leader(cur).and_then(|l| k.tasks.get(l)).ok().and_then(|l| l.payload().group_exit);
            let last = k.tasks.threads(cur).is_ok_and(|t| t.len() <= 1);
            let init = k.tasks.get(cur).is_ok_and(|t| t.tgid() == INIT_PID);
            let user = k.tasks.get(cur).ok().and_then(|t| t.payload().user.as_ref());
            let vm = user.map(|u| Arc::clone(u.vm()));
            let files = user.map(|u| Arc::clone(u.files()));
            (group_status.unwrap_or(status), last, init, vm, files)
        });
        if init && last {
            drop((vm, files));
            init_ended(status);
        }
        // The last thread closes the process's descriptors (outside the kernel lock: closing
        // a pipe end wakes its peers, closing a socket takes the bus lock).
        if let (Some(files), true) = (files, last) {
            files.close_all();
        }
        // A process's memory goes with its last thread (Linux's exit_mm), while the thread
        // still runs: a zombie holds no user pages. Its address space stays active until the
        // switch below; only its (now empty) top-level table lives on with the thread. The
        // memory numbers are harvested here, once per process.
        let mem = match (&vm, last) {
            (Some(vm), true) => vm.teardown(super::current_process_cpu_ticks()),
            _ => MemUsage::default(),
        };
        // Taskstats listeners get the exit record(s) (crate::bus); a thread that is not the
        // last shows its process's memory as it is now (only the last one's numbers go into
        // the accumulators, which would otherwise count the process's memory twice).
        let listening = crate::bus::exit_listeners();
        let record_mem = match (&vm, last, listening) {
            (Some(vm), false, true) => vm.usage(super::current_process_cpu_ticks()),
            _ => mem,
        };
        drop(vm);
        // Step 2a, under the lock: the task leaves the table; its records are taken from the
        // very numbers its accumulators receive.
        let (report, my_thread, records) = {
            let mut guard = KERNEL.lock();
            let k = guard.as_mut().expect("task::init not called");
            let now = hal::tsc::read();
            let me = k.rq.current();
            let cur = k.current();
            let clocks = k.rq.msa_snapshot(&mut HotStore(&mut k.hot), me, now);
            let delays = HotStore(&mut k.hot).clock(me).delays(now);
            check_at_exit(k, me, &clocks, now);
            let mut record = None;
            let harvest = |p: &mut Payload| {
                let t = Totals { msa: clocks, delays, counters: p.counters, mem };
                record = Some(t.clone());
                t
            };
            // The last thread of a process being killed stamps the group status on it.
            let group_exiting = k.tasks.leader(cur).and_then(|l| k.tasks.get(l)).is_ok_and(|l| l.payload().group_exit.is_some());
            let (pid, tgid) = k.tasks.get(cur).map(|t| (t.pid(), t.tgid())).unwrap_or((0, 0));
            // A thread that is not its process's leader leaves the table at once (nobody
            // waits for threads), so the switch away needs its thread from here, and its
            // identity for the record.
            let my_thread = k.tasks.get(cur).ok().map(|t| Arc::clone(&t.payload().thread));
            let mut pid_record = None;
            if listening {
                let t = Totals { msa: clocks, delays, counters: k.tasks.get(cur).map(|t| t.payload().counters).unwrap_or_default(), mem: record_mem };
                pid_record = super::taskstats::exiting_thread(k, cur, now, status, &t);
            }
            let result = if last && group_exiting {
                k.tasks.exit_group(cur, status, harvest)
            } else {
                k.tasks.exit(cur, status, harvest)
            };
            let report = match result {
                Ok(r) => r,
                Err(e) => panic!("task {} cannot exit: errno {e}", me.0),
            };
            if let Some(totals) = record {
                super::account::log_exit(k, pid, tgid, totals);
            }
            if !report.killed.is_empty() {
                // Cannot happen: exit_group is only called for the last live thread.
                log::error!("exit: {} thread(s) ended by the table without stopping", report.killed.len());
            }
            let mut tgid_record = None;
            if let Some(p) = &report.process {
                if listening {
                    tgid_record = super::taskstats::exited_group(k, p.leader, now, p.status, &p.total);
                }
                // The parent receives SIGCHLD (default action: ignore; counted).
                if let Some(parent) = p.wake_parent {
                    super::signal::count_received(k, parent);
                }
                for parent in [p.wake_parent, p.wake_init].into_iter().flatten() {
                    wake_waiters(k, parent, now);
                }
            }
            (report, my_thread, pid_record.map(|p| (p, tgid_record)))
        };
        // Step 2b, with interrupts still off but outside the kernel lock (the bus has its
        // own, and waking a reader takes the kernel's): hand the records to the listeners.
        // Delivery never blocks; a full receive buffer drops and counts.
        if let Some((pid_record, tgid_record)) = records {
            crate::bus::deliver_exit(pid_record, tgid_record);
        }
        // Step 2c: switch away for good.
        let threads = {
            let mut guard = KERNEL.lock();
            let k = guard.as_mut().expect("task::init not called");
            let now = hal::tsc::read();
            let threads = k.pick_from(PrevAction::Block(BlockReason::Exit), my_thread);
            // Threads released at exit (auto-reaped) leave the scheduler now; their stacks are
            // freed by the next task, after the switch.
            for r in report.released {
                release(k, r.key, r.payload, now);
            }
            threads
        };
        switch_and_clean(threads);
    });
    unreachable!("an exited task was scheduled again")
}

/// The last thread of init (pid 1) is exiting: the system ends with it. Linux panics at
/// this point ("Attempted to kill init!"); in Tally init's end is the normal way a run ends
/// (`/bin/init` exits when the program it started does), so QEMU exits cleanly and hands on
/// init's exit code (`hal::qemu`: 0 is success) — or the failure status if init died of a
/// signal (a fault in pid 1). Before that, invariant (a) is checked one last time, on init,
/// whose clocks span the kernel's part of boot and the exec, and the tally of every exit's
/// check is printed. Called with interrupts off; never returns.
fn init_ended(status: ExitStatus) -> ! {
    let (checked, broken) = with_kernel(|k| {
        let now = hal::tsc::read();
        let me = k.rq.current();
        let clocks = k.rq.msa_snapshot(&mut HotStore(&mut k.hot), me, now);
        check_at_exit(k, me, &clocks, now);
        (k.exit_checks, k.exit_violations)
    });
    if tally_microstate::ACCOUNTING_ENABLED {
        println!("kernel: microstate clocks summed to the task's age at {checked} exits (init's included), broken at {broken}");
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

/// Invariant (a) at every exit, to the TSC tick: the clocks sum to the task's age.
fn check_at_exit(k: &mut Kernel, me: tally_runqueue::TaskSlot, clocks: &MsaTimes, now: u64) {
    if !tally_microstate::ACCOUNTING_ENABLED {
        return;
    }
    let created = HotStore(&mut k.hot).clock(me).created();
    k.exit_checks += 1;
    if clocks.iter().sum::<u64>() != now - created {
        k.exit_violations += 1;
        log::error!("microstate invariant broken at exit of task slot {}", me.0);
    }
}

fn wake_waiters(k: &mut Kernel, process: TaskKey, now: u64) {
    if let Some(list) = k.waiters.remove(&process) {
        for s in list {
            if k.rq.wake_up(&mut HotStore(&mut k.hot), s, now) {
                k.runq_changed(now);
            }
        }
    }
}

/// A task leaves the table for good: its clocks join the released total, its state goes.
fn release(k: &mut Kernel, key: TaskKey, payload: Payload, now: u64) {
    let s = Kernel::sched_key(key);
    let clocks: MsaTimes = k.rq.msa_snapshot(&mut HotStore(&mut k.hot), s, now);
    for (a, b) in k.released_msa.iter_mut().zip(clocks.iter()) {
        *a = a.wrapping_add(*b);
    }
    k.remove_hot(key, payload);
}

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
}

/// Wait for a child process (`pid` = `None` for any) to end; reap it. (Kernel callers.)
pub fn wait(pid: Option<i32>) -> Result<WaitResult, i32> {
    wait_child(pid.map_or(WaitFor::Any, WaitFor::Pid), WaitOptions::default())?.ok_or(EAGAIN)
}

/// `wait4`'s work: reap a child matching `target`; sleep (INTERRUPTIBLE_SLEEP) until one
/// ends unless `nohang` (`Ok(None)`). `ECHILD`: no such child; `EINTR`: the caller's process
/// is being killed.
pub fn wait_child(target: WaitFor, options: WaitOptions) -> Result<Option<WaitResult>, i32> {
    loop {
        if kill_pending() {
            return Err(EINTR);
        }
        enum Step {
            Done(Result<Option<WaitResult>, i32>),
            Slept(TaskKey, Option<(Arc<Thread>, Arc<Thread>)>),
        }
        let step = hal::cpu::without_interrupts(|| {
            let step = {
                let mut guard = KERNEL.lock();
                let k = guard.as_mut().expect("task::init not called");
                let now = hal::tsc::read();
                let cur = k.current();
                match k.tasks.wait(cur, target, options.nohang) {
                    Ok(WaitOutcome::Reaped(r)) => {
                        let at_reap = k.rq.msa_snapshot(&mut HotStore(&mut k.hot), Kernel::sched_key(r.key), now);
                        release(k, r.key, r.payload, now);
                        Step::Done(Ok(Some(WaitResult {
                            pid: r.pid,
                            status: r.status,
                            totals: r.total,
                            children_total: r.children_total,
                            at_reap,
                        })))
                    }
                    Ok(WaitOutcome::Sleep { queue }) => {
                        let me = k.rq.current();
                        k.waiters.entry(queue).or_default().push(me);
                        Step::Slept(queue, k.pick(PrevAction::Block(BlockReason::Sleep(SleepKind::Interruptible))))
                    }
                    Ok(WaitOutcome::NotReady) => Step::Done(Ok(None)),
                    Err(e) => Step::Done(Err(e)),
                }
            };
            if let Step::Slept(queue, threads) = step {
                switch_and_clean(threads);
                // Woken by a child's exit (which emptied the list) or for another reason (a
                // kill): either way, leave the list, so no later exit wakes a stale key.
                let mut guard = KERNEL.lock();
                let k = guard.as_mut().expect("initialised");
                let me = k.rq.current();
                if let Some(list) = k.waiters.get_mut(&queue) {
                    list.retain(|&s| s != me);
                    if list.is_empty() {
                        k.waiters.remove(&queue);
                    }
                }
                return Step::Slept(queue, None);
            }
            step
        });
        if let Step::Done(result) = step {
            return result;
        }
    }
}

