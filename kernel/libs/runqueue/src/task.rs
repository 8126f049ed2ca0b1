//! What the scheduler keeps in each task, and how it reaches tasks it does not own.
//!
//! The scheduler does not own tasks. The kernel keeps them (Tally's in a vector indexed by
//! slot) and names each one by a small [`TaskSlot`]; it lends the scheduler a [`TaskStore`]
//! that turns a slot into that task's [`SchedEntity`] (the scheduler's fields) and its
//! [`MsaClock`] (its microstate clocks). Tests implement the same trait with a `Vec`.
//!
//! The run queues are *intrusive* lists: the `prev`/`next` links of a queue live inside the
//! entities themselves, as slots. That is what makes every queue operation O(1) — removing an
//! arbitrary task needs only its own links and its two neighbours — without a single pointer
//! and without the scheduler ever walking the set of all tasks.

use crate::prio::{nice_to_prio, prio_to_nice, rt_prio_to_prio, Policy, MAX_USER_RT_PRIO};
use crate::prio_array::ArrayId;
use tally_microstate::{MicroState, MsaClock};

/// Which task, as the scheduler names it: the index of the task's slot wherever the kernel
/// keeps its tasks (the kernel uses the slot index of its task table's `TaskKey`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskSlot(pub u32);

/// Lends the scheduler the per-task state it needs, by slot.
///
/// Called with slots the scheduler was given (by `wake_up_new_task`, the idle task at
/// construction, or as arguments), never made up; it may panic for a slot that names no
/// task, as slice indexing does.
pub trait TaskStore {
    /// The task's scheduling fields and its microstate clocks, from one lookup: the
    /// accounting hooks need both, and each lookup is a bounds check and a branch.
    fn task(&mut self, key: TaskSlot) -> (&mut SchedEntity, &mut MsaClock);
    /// The task's scheduling fields.
    #[inline]
    fn entity(&mut self, key: TaskSlot) -> &mut SchedEntity {
        self.task(key).0
    }
    /// The task's microstate clocks.
    #[inline]
    fn clock(&mut self, key: TaskSlot) -> &mut MsaClock {
        self.task(key).1
    }
}

/// Kinds of sleep a task can block in; each is its own microstate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SleepKind {
    /// `TASK_INTERRUPTIBLE`: waiting for an event (`sleep(2)`, a pipe, a child).
    Interruptible,
    /// `TASK_UNINTERRUPTIBLE`: a short wait that signals cannot cut (disk I/O).
    Uninterruptible,
    /// Waiting for a page to come in from disk (uninterruptible).
    Paging,
    /// Waiting on a futex (interruptible).
    Futex,
    /// Waiting in poll/select (interruptible).
    Poll,
}

impl SleepKind {
    /// The microstate the task's time goes to while it sleeps.
    pub const fn microstate(self) -> MicroState {
        match self {
            SleepKind::Interruptible => MicroState::InterruptibleSleep,
            SleepKind::Uninterruptible => MicroState::UninterruptibleSleep,
            SleepKind::Paging => MicroState::PagingSleep,
            SleepKind::Futex => MicroState::FutexSleep,
            SleepKind::Poll => MicroState::PollSleep,
        }
    }

    /// Uninterruptible sleeps: counted in `nr_uninterruptible`, and their wake-ups earn
    /// only a limited interactivity bonus.
    pub const fn is_uninterruptible(self) -> bool {
        matches!(self, SleepKind::Uninterruptible | SleepKind::Paging)
    }
}

/// Why a task is off the runqueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockReason {
    /// Asleep; a wake-up makes it runnable again.
    Sleep(SleepKind),
    /// Stopped (job control, debugger); a wake-up (SIGCONT) makes it runnable again.
    Stop,
    /// Exited: a zombie until its parent reaps it. Never runnable again.
    Exit,
}

impl BlockReason {
    /// The microstate the task's time goes to while off the runqueue.
    pub const fn microstate(self) -> MicroState {
        match self {
            BlockReason::Sleep(kind) => kind.microstate(),
            BlockReason::Stop => MicroState::Stopped,
            BlockReason::Exit => MicroState::Zombie,
        }
    }
}

/// Where a task is in its life, as far as the scheduler is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// Created, not yet handed to `wake_up_new_task`.
    New,
    /// Running or waiting on a priority array (Linux's `TASK_RUNNING`).
    Runnable,
    /// Off the runqueue, for the given reason.
    Blocked(BlockReason),
}

/// How the task's last wake-up should be credited (Linux 2.6.20's `sleep_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SleepType {
    /// Nothing pending.
    Normal,
    /// Woke from an uninterruptible sleep, or from one long sleep: no extra credit.
    NonInteractive,
    /// Woken by another task: 30% of its runqueue wait is credited as sleep.
    Interactive,
    /// Woken by an interrupt: all of its runqueue wait is credited as sleep.
    Interrupted,
}

/// A task's place in a priority array: which array, which level, and its neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QueueLink {
    pub(crate) array: Option<ArrayId>,
    pub(crate) level: u8,
    pub(crate) prev: Option<TaskSlot>,
    pub(crate) next: Option<TaskSlot>,
}

impl QueueLink {
    pub(crate) const DETACHED: QueueLink = QueueLink { array: None, level: 0, prev: None, next: None };
}

/// Error from a scheduling request with bad arguments (`-EINVAL` to user space).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedError {
    /// A policy/priority combination Linux would refuse.
    InvalidArgument,
}

impl SchedError {
    /// The errno a system call returns for this error.
    pub const fn errno(self) -> i32 {
        match self {
            SchedError::InvalidArgument => tally_uapi::errno::EINVAL,
        }
    }
}

/// Check a `sched_setscheduler` request as Linux does: RT policies take an RT priority in
/// 1..=99, the others take 0.
pub(crate) fn check_policy(policy: Policy, rt_priority: u32) -> Result<(), SchedError> {
    let ok = if policy.is_realtime() { (1..MAX_USER_RT_PRIO as u32).contains(&rt_priority) } else { rt_priority == 0 };
    if ok {
        Ok(())
    } else {
        Err(SchedError::InvalidArgument)
    }
}

/// The scheduler's part of a task (Linux keeps these fields in `task_struct`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedEntity {
    pub(crate) policy: Policy,
    /// 100..=139, from the nice value (kept for RT tasks too, for when they return to normal).
    pub(crate) static_prio: i32,
    /// 1..=99 for RT tasks, 0 otherwise.
    pub(crate) rt_priority: u32,
    /// Dynamic priority: the queue level the task is (or will be) on.
    pub(crate) prio: i32,
    /// Ticks left in the current slice.
    pub(crate) time_slice: u32,
    /// Sleep average, TSC ticks (see `interactivity.rs`).
    pub(crate) sleep_avg: u64,
    /// TSC of the last wake-up or context switch (Linux's `p->timestamp`).
    pub(crate) timestamp: u64,
    pub(crate) sleep_type: SleepType,
    /// No user address space (Linux: `p->mm == NULL`): exempt from the one-long-sleep cap.
    pub(crate) kernel_thread: bool,
    /// The on-CPU microstate this task runs in, and resumes in when it next gets the CPU.
    pub(crate) running_state: MicroState,
    pub(crate) state: TaskState,
    pub(crate) link: QueueLink,
    /// Set while the task's clock says `ONEXPIREDQUEUE`: the array-flip generation current
    /// when that was written. If the runqueue has flipped since, the task has been on the
    /// active array from the flip on, though its clock does not say so yet (the lazy flip,
    /// see `msa_hooks.rs`).
    pub(crate) expired_since_flip: Option<u32>,
}

impl Default for SchedEntity {
    fn default() -> Self {
        SchedEntity::new(0)
    }
}

impl SchedEntity {
    /// A new `SCHED_NORMAL` kernel thread at `nice` (clamped to -20..=19), running in
    /// `ONCPU_SYS`. It becomes runnable with `RunQueue::wake_up_new_task`.
    pub fn new(nice: i32) -> Self {
        let static_prio = nice_to_prio(nice.clamp(crate::prio::MIN_NICE, crate::prio::MAX_NICE));
        SchedEntity {
            policy: Policy::Normal,
            static_prio,
            rt_priority: 0,
            prio: static_prio,
            time_slice: 0,
            sleep_avg: 0,
            timestamp: 0,
            sleep_type: SleepType::Normal,
            kernel_thread: true,
            running_state: MicroState::OncpuSys,
            state: TaskState::New,
            link: QueueLink::DETACHED,
            expired_since_flip: None,
        }
    }

    /// The same, with another policy (before the task is started; afterwards use
    /// `RunQueue::set_scheduler`).
    pub fn with_policy(mut self, policy: Policy, rt_priority: u32) -> Result<Self, SchedError> {
        check_policy(policy, rt_priority)?;
        self.policy = policy;
        self.rt_priority = rt_priority;
        self.prio = if policy.is_realtime() { rt_prio_to_prio(rt_priority) } else { self.static_prio };
        Ok(self)
    }

    /// Mark the task as having a user address space (it is then subject to the user-task
    /// limits on sleep credit).
    pub fn with_user_space(mut self) -> Self {
        self.kernel_thread = false;
        self
    }

    /// The same, for a task that is already running: a kernel thread that execs a user
    /// program in place (init, pid 1). Its clocks and its place on the queues stay as they
    /// are; only the user-task limits apply from now on.
    pub fn set_user_space(&mut self) {
        self.kernel_thread = false;
    }

    /// The on-CPU state the task starts in (default `ONCPU_SYS`).
    pub fn with_running_state(mut self, state: MicroState) -> Self {
        self.running_state = state;
        self
    }

    /// Scheduling policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }
    /// Nice value, -20..=19.
    pub fn nice(&self) -> i32 {
        prio_to_nice(self.static_prio)
    }
    /// Static priority, 100..=139.
    pub fn static_prio(&self) -> i32 {
        self.static_prio
    }
    /// RT priority (0 for normal tasks).
    pub fn rt_priority(&self) -> u32 {
        self.rt_priority
    }
    /// Dynamic priority, 0..=139 (140 for the idle task).
    pub fn prio(&self) -> i32 {
        self.prio
    }
    /// Ticks left in the current timeslice.
    pub fn time_slice(&self) -> u32 {
        self.time_slice
    }
    /// Sleep average, TSC ticks.
    pub fn sleep_avg(&self) -> u64 {
        self.sleep_avg
    }
    /// True for kernel threads (the default).
    pub fn is_kernel_thread(&self) -> bool {
        self.kernel_thread
    }
    /// The on-CPU microstate the task runs (and resumes) in.
    pub fn running_state(&self) -> MicroState {
        self.running_state
    }
    /// Runnable, blocked, or new.
    pub fn state(&self) -> TaskState {
        self.state
    }
    /// The priority array the task is queued on (the current task stays queued while it
    /// runs, as in Linux; the idle task never is).
    pub fn array(&self) -> Option<ArrayId> {
        self.link.array
    }
    /// The level (dynamic priority at enqueue time) it is queued at.
    pub fn queue_level(&self) -> Option<usize> {
        self.link.array.map(|_| self.link.level as usize)
    }
    /// The task before this one in its queue.
    pub fn queue_prev(&self) -> Option<TaskSlot> {
        self.link.prev
    }
    /// The task after this one in its queue.
    pub fn queue_next(&self) -> Option<TaskSlot> {
        self.link.next
    }
}
