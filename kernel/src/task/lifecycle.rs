//! Birth, sleep and death of kernel threads (and of user processes, which start as one):
//! spawn, sleep, yield, exit, wait.

use alloc::sync::Arc;
use tally_msa::{MicroState, MsaClock, MsaTimes};
use tally_sched::{BlockReason, Policy, PrevAction, SchedEntity, SleepKind};
use tally_task::{CreateKind, ExitStatus, TaskKey, WaitFor, WaitOutcome};
use tally_uapi::errno::{EAGAIN, ENOMEM};

use super::{switch_and_clean, with_kernel, Hot, HotStore, Kernel, Payload, Totals, KERNEL};
use tally_sched::TaskStore;
use crate::arch::{self, context::Thread};

/// First code of every new thread (the trampoline calls it): run the entry, then exit.
pub(super) extern "C" fn thread_entry(_: u64) -> ! {
    super::after_switch();
    let entry = with_kernel(|k| {
        let cur = k.current();
        k.tasks.get(cur).ok().and_then(|t| t.payload().entry)
    });
    arch::cpu::enable_interrupts();
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
}

fn new_hot(params: SchedParams, now: u64) -> Result<Hot, i32> {
    let se = match params {
        SchedParams::Normal(nice) => SchedEntity::new(nice.clamp(-20, 19)),
        SchedParams::Fifo(p) => SchedEntity::new(0).with_policy(Policy::Fifo, p).map_err(|e| e.errno())?,
    };
    Ok(Hot { se, clock: MsaClock::new(now, MicroState::OnActiveQueue) })
}

pub(super) fn spawn_init(init_main: fn(u64)) {
    with_kernel(|k| {
        let now = arch::tsc::read();
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

/// Enter `payload` (whose thread has not run yet) in the task table as a new process, child
/// of the current task, and queue it. A payload with user state makes a user task.
pub(super) fn start_process(name: &str, params: SchedParams, payload: Payload) -> Result<i32, i32> {
    with_kernel(|k| {
        let now = arch::tsc::read();
        let mut hot = new_hot(params, now)?;
        if payload.user.is_some() {
            hot.se = hot.se.with_user_space();
        }
        let creator = k.current();
        let begin = crate::time::boot_unix_seconds() + crate::time::clock().monotonic_ns(now) / 1_000_000_000;
        let key = k.tasks.create(creator, CreateKind::Process, begin, payload)?;
        let pid = match k.tasks.get_mut(key) {
            Ok(t) => {
                t.set_comm(name.as_bytes());
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
/// deadline, so the sleep lasts up to one tick longer.
pub fn sleep_ns(ns: u64) {
    let deadline = arch::tsc::read().saturating_add(crate::time::clock().ns_to_ticks(ns));
    while arch::tsc::read() < deadline {
        arch::cpu::without_interrupts(|| super::block_current(SleepKind::Interruptible, Some(deadline)));
    }
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
/// mode). No core file is written, so the status does not claim one.
pub fn exit_signaled(sig: u8) -> ! {
    let status = ExitStatus::signaled(sig, false).unwrap_or(ExitStatus::exited(128 + sig as i32));
    exit_with(status, true)
}

/// End the current thread (`group`: its whole process) with `status`.
///
/// Not yet for multi-threaded processes: with `group`, the other threads of the process are
/// recorded as exited by the task table, but the kernel does not yet stop them (nothing
/// creates a second thread in a process so far; `thread_create` must add that).
fn exit_with(status: ExitStatus, group: bool) -> ! {
    arch::cpu::without_interrupts(|| {
        // A process's memory goes with its last thread (Linux's exit_mm), while the thread
        // still runs: a zombie holds no user pages. Its address space stays active until the
        // switch below; only its (now empty) top-level table lives on with the thread.
        {
            let vm = with_kernel(|k| {
                let cur = k.current();
                let last = group || k.tasks.threads(cur).is_ok_and(|t| t.len() <= 1);
                let payload = k.tasks.get(cur).ok()?.payload();
                if last { payload.user.as_ref().map(|u| Arc::clone(u.vm())) } else { None }
            });
            if let Some(vm) = vm {
                vm.teardown();
            }
        }
        let threads = {
            let mut guard = KERNEL.lock();
            let k = guard.as_mut().expect("task::init not called");
            let now = arch::tsc::read();
            let me = k.rq.current();
            let cur = k.current();
            let clocks = k.rq.msa_snapshot(&mut HotStore(&mut k.hot), me, now);
            check_at_exit(k, me, &clocks, now);
            let harvest = |p: &mut Payload| Totals { msa: clocks, counters: p.counters };
            let result = if group { k.tasks.exit_group(cur, status, harvest) } else { k.tasks.exit(cur, status, harvest) };
            let report = match result {
                Ok(r) => r,
                Err(e) => panic!("task {} cannot exit: errno {e}", me.0),
            };
            if !report.killed.is_empty() {
                log::warn!("exit_group: {} other thread(s) not stopped (threads are not supported yet)", report.killed.len());
            }
            if let Some(p) = &report.process {
                for parent in [p.wake_parent, p.wake_init].into_iter().flatten() {
                    wake_waiters(k, parent, now);
                }
            }
            let threads = k.pick(PrevAction::Block(BlockReason::Exit));
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

/// Invariant (a) at every exit, to the TSC tick: the clocks sum to the task's age.
fn check_at_exit(k: &mut Kernel, me: tally_sched::TaskKey, clocks: &MsaTimes, now: u64) {
    if !tally_msa::ACCOUNTING_ENABLED {
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
    /// The child's clocks at its exit (all its threads), in TSC ticks.
    pub totals: Totals,
    /// The child's clocks when it was reaped (including its time as a zombie).
    pub at_reap: MsaTimes,
}

/// Wait for a child process (`pid` = `None` for any) to end; reap it.
pub fn wait(pid: Option<i32>) -> Result<WaitResult, i32> {
    let target = pid.map_or(WaitFor::Any, WaitFor::Pid);
    loop {
        enum Step {
            Done(Result<WaitResult, i32>),
            Slept(Option<(Arc<Thread>, Arc<Thread>)>),
        }
        let step = arch::cpu::without_interrupts(|| {
            let step = {
                let mut guard = KERNEL.lock();
                let k = guard.as_mut().expect("task::init not called");
                let now = arch::tsc::read();
                let cur = k.current();
                match k.tasks.wait(cur, target, false) {
                    Ok(WaitOutcome::Reaped(r)) => {
                        let at_reap = k.rq.msa_snapshot(&mut HotStore(&mut k.hot), Kernel::sched_key(r.key), now);
                        release(k, r.key, r.payload, now);
                        Step::Done(Ok(WaitResult { pid: r.pid, status: r.status, totals: r.total, at_reap }))
                    }
                    Ok(WaitOutcome::Sleep { queue }) => {
                        let me = k.rq.current();
                        k.waiters.entry(queue).or_default().push(me);
                        Step::Slept(k.pick(PrevAction::Block(BlockReason::Sleep(SleepKind::Interruptible))))
                    }
                    Ok(WaitOutcome::NotReady) => Step::Done(Err(EAGAIN)),
                    Err(e) => Step::Done(Err(e)),
                }
            };
            if let Step::Slept(threads) = step {
                switch_and_clean(threads);
                return Step::Slept(None);
            }
            step
        });
        if let Step::Done(result) = step {
            return result;
        }
    }
}

