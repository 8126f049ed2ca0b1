//! The scheduler's state: one run queue, each task's hot per-task state, and the lock.
//!
//! Everything the CPU side needs of a task sits in one [`Hot`], kept in a dense vector
//! indexed by the task's slot (the slot index of its task-table `TaskKey`), so the run
//! queue reaches a task's scheduling entity and microstate clock without a lookup. The
//! whole [`Sched`] is behind one spin lock, always taken with interrupts disabled: there is
//! one CPU, so "interrupts off" is the whole of the concurrency control, and an interrupt
//! handler (the tick, a wake-up) can never find the lock held (it is taken with `try_lock`:
//! finding it held is a bug, reported). See `docs/scheduler.md`.

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use hal::context::Thread;
use hal::shared_page::SharedPage;
use spin::{Mutex, MutexGuard};
use tally_kstat::IoStats;
use tally_microstate::{MsaClock, MsaTimes};
use tally_runqueue::{RunQueue, SchedEntity, TaskSlot, TaskStore};
use tally_taskstats::Counters;
use tally_tasktable::TaskKey;
use tally_uapi::msa::vvar::VvarHeader;

/// What a new thread runs first, once the scheduler has finished its switch to it:
/// `body(arg)`, then `exit()` if the body returns.
#[derive(Clone, Copy)]
pub struct ThreadStart {
    pub body: fn(u64),
    pub arg: u64,
    pub exit: fn() -> !,
}

/// The scheduler's per-task state, by slot: everything a context switch, a tick or an
/// accounting hook touches.
pub struct Hot {
    pub(super) se: SchedEntity,
    /// Its microstate clock, in a page of its own: for a thread of a user process the page
    /// is also mapped read-only into the process (the vvar area), so that the thread reads
    /// its clocks without a system call (`tally_uapi::msa::vvar`).
    pub(super) clock: SharedPage<MsaClock>,
    /// Where its process finds that page: its slot, or `NO_PAGE` (a kernel thread, or a
    /// page that could not be mapped). Stored in the vvar header when it gets the CPU.
    pub(super) vvar_slot: u32,
    /// The task's process is exiting (`exit_group`, a fatal signal): the task must not
    /// return to user mode but exit (`proc/exit.rs`). Kept here, so the check on every return
    /// to user mode is one array index under the lock the microstate switch takes anyway.
    pub(super) killed: bool,
    /// A signal the task does not block is pending for it (Linux's `TIF_SIGPENDING`): it
    /// must look at its signals before it returns to user mode, and an interruptible sleep
    /// ends early (`EINTR`). Set and recomputed by the process layer (`proc/signal.rs`).
    pub(super) sigpending: bool,
    /// Job control: the task's process is stopping (SIGSTOP, SIGTSTP, ...): the task stops at
    /// its next return towards user mode, or where it sleeps (`stop.rs`).
    pub(super) stop: bool,
    /// Stopped in place while asleep interruptibly: the sleep it goes back to at SIGCONT.
    /// Cleared when its wake-up comes meanwhile (it then runs when continued).
    pub(super) stopped_sleep: Option<tally_runqueue::SleepKind>,
    /// Its machine state: stack, saved registers, address space.
    pub(super) thread: Arc<Thread>,
    /// What it runs first (taken by [`super::switch::thread_entry`]).
    pub(super) start: Option<ThreadStart>,
    /// Its event counters (context switches, system calls, faults, I/O, signals).
    pub(super) counters: Counters,
    /// Its task-table key, for going from the run queue's slot back to the task.
    pub(super) key: TaskKey,
    /// Its thread and process ids, which never change: published in [`CURRENT_IDS`] while it
    /// runs.
    pub(super) ids: TaskIds,
}

/// A task's thread id and process id (thread-group id): what `gettid` and `getpid` return.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskIds {
    pub tid: i32,
    pub tgid: i32,
}

impl TaskIds {
    const fn to_bits(self) -> u64 {
        (self.tgid as u32 as u64) << 32 | self.tid as u32 as u64
    }

    const fn from_bits(bits: u64) -> Self {
        TaskIds { tid: bits as u32 as i32, tgid: (bits >> 32) as u32 as i32 }
    }
}

/// The run queue and the tasks it schedules.
pub struct Sched {
    pub(super) rq: RunQueue,
    pub(super) tasks: Vec<Option<Hot>>,
    /// Sleepers by wake-up time (TSC), then sequence: the timer list the tick drains.
    pub(super) sleepers: BTreeMap<(u64, u64), TaskSlot>,
    pub(super) sleep_seq: u64,
    /// Threads of released tasks whose stacks may still be in use until the next switch.
    pub(super) graveyard: Vec<Arc<Thread>>,
    /// Microstate clocks of every task released so far (for system-wide invariants).
    pub(super) released_msa: MsaTimes,
    /// The run queue as Solaris io-kstat queues (wait: runnable and waiting; run: on CPU),
    /// times in TSC ticks since `boot_tsc`.
    pub(super) runq_io: IoStats,
    pub(super) boot_tsc: u64,
    /// An interrupt during which the CPU switched tasks: the task switched *to* finishes its
    /// accounting (the INTERRUPTED handover of the Linux micro-state accounting patch).
    pub(super) handover_line: Option<u8>,
    /// Exits at which invariant (a) was checked, and how many broke it.
    pub(super) exit_checks: u64,
    pub(super) exit_violations: u64,
    /// The vvar header page, mapped into every user process (`tally_uapi::msa::vvar`).
    pub(super) vvar: SharedPage<VvarHeader>,
}

static SCHED: Mutex<Option<Sched>> = Mutex::new(None);

/// The task-table key of the running task (`TaskKey::to_bits`), written under the lock
/// whenever the run queue's current task changes, so a task asks who it is with one load.
static CURRENT: AtomicU64 = AtomicU64::new(u64::MAX);

/// The running task's [`TaskIds`], written with [`CURRENT`]: `getpid` is one load, with no
/// lock and no table lookup.
static CURRENT_IDS: AtomicU64 = AtomicU64::new(0);

/// The lock, with interrupts already off. Nobody can be holding it: there is one CPU and
/// the lock is only ever taken with interrupts off, so no interrupt handler can cut in
/// while it is held. Finding it held means the kernel re-entered it (a bug), which is
/// reported here rather than spun on forever.
#[inline(always)]
fn lock() -> MutexGuard<'static, Option<Sched>> {
    SCHED.try_lock().expect("the scheduler's lock taken while held (re-entered)")
}

/// Run `f` on the scheduler state with interrupts disabled.
pub(crate) fn with<R>(f: impl FnOnce(&mut Sched) -> R) -> R {
    hal::cpu::without_interrupts(|| f(lock().as_mut().expect("sched::init not called")))
}

/// [`with`], or `None` before [`super::init`] (interrupt hooks may run that early).
pub(crate) fn try_with<R>(f: impl FnOnce(&mut Sched) -> R) -> Option<R> {
    hal::cpu::without_interrupts(|| lock().as_mut().map(f))
}

/// [`with`] for code that already runs with interrupts disabled (interrupt handlers, the
/// switch path, system-call entry): the lock without saving and restoring the interrupt
/// flag around it.
pub(super) fn with_irqs_off<R>(f: impl FnOnce(&mut Sched) -> R) -> R {
    f(lock().as_mut().expect("sched::init not called"))
}

/// [`with_irqs_off`], or `None` before [`super::init`].
pub(super) fn try_with_irqs_off<R>(f: impl FnOnce(&mut Sched) -> R) -> Option<R> {
    lock().as_mut().map(f)
}

pub(super) fn install(s: Sched) {
    if let Some(hot) = s.tasks[s.rq.current().0 as usize].as_ref() {
        set_current(hot);
    }
    hal::cpu::without_interrupts(|| *SCHED.lock() = Some(s));
}

/// `hot`'s task is now the running one (its key and ids are published for [`current`] and
/// [`current_ids`]).
pub(super) fn set_current(hot: &Hot) {
    CURRENT.store(hot.key.to_bits(), Ordering::Relaxed);
    CURRENT_IDS.store(hot.ids.to_bits(), Ordering::Relaxed);
}

/// The running task. A task always gets its own key: the word changes only when the CPU
/// switches tasks, and then the reader is not running.
#[inline]
pub fn current() -> TaskKey {
    TaskKey::from_bits(CURRENT.load(Ordering::Relaxed))
}

/// The running task's thread and process ids (as [`current`], one load).
#[inline]
pub fn current_ids() -> TaskIds {
    TaskIds::from_bits(CURRENT_IDS.load(Ordering::Relaxed))
}

/// The run queue's name for a task: its table key's slot.
#[inline]
pub fn slot_of(key: TaskKey) -> TaskSlot {
    TaskSlot(key.index())
}

/// Lends the run queue the per-task state, by slot.
pub(super) struct Store<'a>(pub(super) &'a mut Vec<Option<Hot>>);

impl TaskStore for Store<'_> {
    #[inline]
    fn task(&mut self, slot: TaskSlot) -> (&mut SchedEntity, &mut MsaClock) {
        let hot = self.0[slot.0 as usize].as_mut().expect("scheduler named a freed task");
        (&mut hot.se, &mut *hot.clock)
    }
}

impl Sched {
    /// The running task's slot.
    pub(crate) fn current_slot(&self) -> TaskSlot {
        self.rq.current()
    }

    /// The per-task state of `slot`, if a task has it.
    pub(crate) fn hot(&self, slot: TaskSlot) -> Option<&Hot> {
        self.tasks.get(slot.0 as usize).and_then(Option::as_ref)
    }

    pub(super) fn hot_mut(&mut self, slot: TaskSlot) -> Option<&mut Hot> {
        self.tasks.get_mut(slot.0 as usize).and_then(Option::as_mut)
    }

    /// The running task's per-task state.
    pub(super) fn current_hot(&mut self) -> &mut Hot {
        let slot = self.rq.current();
        self.hot_mut(slot).expect("the running task has no scheduler state")
    }

    /// The run queue and the running task's per-task state, borrowed together: the
    /// system-call paths touch both, and look the task up once.
    pub(super) fn rq_and_current(&mut self) -> (&mut RunQueue, &mut Hot) {
        let slot = self.rq.current();
        let hot = self.tasks.get_mut(slot.0 as usize).and_then(Option::as_mut);
        (&mut self.rq, hot.expect("the running task has no scheduler state"))
    }

    /// Integrate the run queue's new shape (tasks waiting for the CPU, and whether a
    /// non-idle task has it) after every run-queue change, in TSC ticks since boot. Only a
    /// change of length needs the sums brought up to date (over an interval of constant
    /// length they are folded in at the next change, or by the reader), so a switch between
    /// two runnable tasks costs two comparisons. The `unix:0:runq` kstat converts to ns.
    /// (A kstat, not microstate accounting: it is kept with the `accounting` feature off too,
    /// so `cargo xtask bench`'s ratio measures microstate accounting alone.)
    pub(super) fn runq_changed(&mut self, now: u64) {
        let running = (self.rq.current() != self.rq.idle()) as u32;
        let queued = self.rq.nr_running().saturating_sub(running);
        if queued != self.runq_io.waitq().cnt() || running != self.runq_io.runq().cnt() {
            let since_boot = now.saturating_sub(self.boot_tsc) as i64;
            self.runq_io.set_queue_lengths(since_boot, queued, running);
        }
    }

    /// The microstate clocks of `slot` at TSC `now` (the open interval included).
    pub(crate) fn msa_snapshot(&mut self, slot: TaskSlot, now: u64) -> MsaTimes {
        self.rq.msa_snapshot(&mut Store(&mut self.tasks), slot, now)
    }

    /// Add the clocks of `slot` at `now` to `sum` (the fast path of a process sum).
    #[inline]
    pub(crate) fn msa_add_to(&mut self, slot: TaskSlot, now: u64, sum: &mut MsaTimes) {
        self.rq.msa_add_to(&mut Store(&mut self.tasks), slot, now, sum)
    }

    /// The delay episodes of `slot` up to `now` (run-queue waits, disk waits, interrupts).
    pub(crate) fn delays(&mut self, slot: TaskSlot, now: u64) -> tally_microstate::DelayStats {
        Store(&mut self.tasks).clock(slot).delays(now)
    }

    /// The TSC value at which `slot` was created (its microstate clock started).
    pub(crate) fn created(&mut self, slot: TaskSlot) -> u64 {
        Store(&mut self.tasks).clock(slot).created()
    }

    /// The scheduling entity of `slot` (nice, policy, real-time priority).
    pub(crate) fn entity(&self, slot: TaskSlot) -> &SchedEntity {
        &self.hot(slot).expect("the scheduler names a freed task").se
    }

    /// The event counters of `slot` (zero for a slot without a task).
    pub(crate) fn counters(&self, slot: TaskSlot) -> Counters {
        self.hot(slot).map(|h| h.counters).unwrap_or_default()
    }

    /// The event counters of `slot`, to change them (`None` for a slot without a task).
    pub(crate) fn counters_mut(&mut self, slot: TaskSlot) -> Option<&mut Counters> {
        self.hot_mut(slot).map(|h| &mut h.counters)
    }
}
