//! A task's life as the scheduler sees it: admitted with its parameters, switched away from
//! for good when it exits, released when the task table lets it go.
//!
//! The `proc` layer decides who exists (the task table) and calls these at the matching
//! points: [`new_thread`] before a task is entered in the table (so a failure leaves no
//! trace), [`admit`] right after, [`exit_current`] as the last step of an exit, [`release`]
//! when a task leaves the table (reaped, or a thread released at its exit).

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use hal::address_space::AddressSpace;
use hal::context::Thread;
use hal::shared_page::SharedPage;
use tally_kstat::IoStats;
use tally_microstate::{MicroState, MsaClock, MsaTimes, ACCOUNTING_ENABLED, NR_MICROSTATES};
use tally_runqueue::{BlockReason, Policy, PrevAction, RunQueue, SchedConfig, SchedEntity, TaskSlot, TaskStore};
use tally_taskstats::Counters;
use tally_tasktable::TaskKey;
use tally_uapi::errno::ENOMEM;
use tally_uapi::msa::vvar::{thread_page, ThreadClock, VvarHeader, NO_PAGE, VVAR_BASE, VVAR_MAGIC, VVAR_THREADS};

use super::state::{self, slot_of, Hot, Sched, Store, TaskIds, ThreadStart};
use super::switch::{switch_and_clean, thread_entry};

// Every scheduler slot has a clock page in the vvar area.
const _: () = assert!(crate::base::config::MAX_TASKS <= VVAR_THREADS as usize);

/// How a new task is scheduled.
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

impl SchedParams {
    /// The scheduling entity these parameters describe; the errno for invalid ones.
    pub fn entity(self) -> Result<SchedEntity, i32> {
        match self {
            SchedParams::Normal(nice) => Ok(SchedEntity::new(nice.clamp(-20, 19))),
            SchedParams::Fifo(p) => SchedEntity::new(0).with_policy(Policy::Fifo, p).map_err(|e| e.errno()),
            SchedParams::Custom { policy, nice, rt_priority } => {
                SchedEntity::new(nice.clamp(-20, 19)).with_policy(policy, rt_priority).map_err(|e| e.errno())
            }
        }
    }
}

/// Make the boot thread the idle task (task-table key `idle`), which has been running in
/// the kernel since TSC `entry_tsc`. Call once, before any other task exists.
pub fn init(idle: TaskKey, entry_tsc: u64) {
    let now = hal::tsc::read();
    let config = SchedConfig::new(crate::base::config::HZ, crate::base::time::clock().hz());
    let mut tasks = Vec::new();
    tasks.resize_with(idle.index() as usize + 1, || None);
    let clock = SharedPage::new(MsaClock::new(entry_tsc, MicroState::OncpuSys)).expect("no frame for a clock page");
    let vvar = SharedPage::new(VvarHeader {
        magic: VVAR_MAGIC,
        current: NO_PAGE,
        tsc_hz: crate::base::time::clock().hz(),
        accounting: ACCOUNTING_ENABLED as u32,
        _reserved: 0,
    })
    .expect("no frame for the vvar header");
    tasks[idle.index() as usize] = Some(Hot {
        se: SchedEntity::new(19),
        clock,
        vvar_slot: NO_PAGE,
        killed: false,
        sigpending: false,
        stop: false,
        stopped_sleep: None,
        thread: Thread::boot(),
        start: None,
        counters: Counters::default(),
        key: idle,
        ids: TaskIds::default(),
    });
    let rq = RunQueue::new(config, slot_of(idle), &mut Store(&mut tasks), now);
    state::install(Sched {
        rq,
        tasks,
        sleepers: BTreeMap::new(),
        sleep_seq: 0,
        graveyard: Vec::new(),
        released_msa: [0; NR_MICROSTATES],
        runq_io: IoStats::new(),
        boot_tsc: entry_tsc,
        handover_line: None,
        exit_checks: 0,
        exit_violations: 0,
        vvar,
    });
    crate::sync::install(&super::sleep::WaitQueueHooks);
}

/// What a new task needs before it can be entered in the table: see [`new_thread`].
pub struct NewThread {
    thread: Arc<Thread>,
    clock: SharedPage<MsaClock>,
    space: Option<Arc<AddressSpace>>,
}

/// A kernel stack, machine state and clock page for a new task (on the address space
/// `space` for a thread of a user process, else on the kernel's; a user space gets the
/// vvar header mapped if it has not yet). Made before the task is entered in the table, so
/// running out of memory leaves nothing to undo. `ENOMEM` if there is no room.
pub fn new_thread(space: Option<Arc<AddressSpace>>) -> Result<NewThread, i32> {
    if let Some(space) = &space {
        map_vvar_header(space)?;
    }
    let clock = SharedPage::new(MsaClock::new(0, MicroState::OnActiveQueue)).map_err(|_| ENOMEM)?;
    let thread = match &space {
        Some(space) => Thread::spawn_user(thread_entry, 0, Arc::clone(space)),
        None => Thread::spawn(thread_entry, 0),
    };
    Ok(NewThread { thread: thread.map_err(|_| ENOMEM)?, clock, space })
}

/// Map the vvar header into a user address space (done once per space; `ENOMEM` if a page
/// table cannot be had). Every user process has it, so the runtime may read it blindly.
pub fn map_vvar_header(space: &Arc<AddressSpace>) -> Result<(), i32> {
    match state::with(|s| s.vvar.map_into(space, VVAR_BASE)) {
        Ok(()) | Err(hal::address_space::SpaceError::AlreadyMapped) => Ok(()),
        Err(_) => Err(ENOMEM),
    }
}

impl Sched {
    /// Map `clock`, the clock page of the task in `slot`, into its process's `space`; the
    /// value for [`Hot::vvar_slot`]: `slot`, or `NO_PAGE` if it has no page there (a slot
    /// beyond the vvar area, no memory for a page table: the runtime then asks the kernel).
    fn map_clock_page(space: &Arc<AddressSpace>, clock: &mut SharedPage<MsaClock>, slot: u32) -> u32 {
        if slot < VVAR_THREADS && clock.map_into(space, thread_page(slot)).is_ok() {
            slot
        } else {
            NO_PAGE
        }
    }
}

/// Admit task `key` (ids `ids`), just entered in the task table, to the run queue: it runs
/// `start` on `new`'s thread when first switched to, scheduled by `entity` (marked as having
/// a user space if `user`), its clock started at TSC `now` on the active queue.
pub fn admit(
    key: TaskKey,
    ids: TaskIds,
    entity: SchedEntity,
    user: bool,
    new: NewThread,
    start: ThreadStart,
    now: u64,
) {
    let se = if user { entity.with_user_space() } else { entity };
    let NewThread { thread, mut clock, space } = new;
    *clock = MsaClock::new(now, MicroState::OnActiveQueue);
    let vvar_slot = match &space {
        Some(space) => Sched::map_clock_page(space, &mut clock, key.index()),
        None => NO_PAGE,
    };
    let hot = Hot {
        se,
        clock,
        vvar_slot,
        killed: false,
        sigpending: false,
        stop: false,
        stopped_sleep: None,
        thread,
        start: Some(start),
        counters: Counters::default(),
        key,
        ids,
    };
    state::with(|s| {
        let i = key.index() as usize;
        if s.tasks.len() <= i {
            s.tasks.resize_with(i + 1, || None);
        }
        s.tasks[i] = Some(hot);
        s.rq.wake_up_new_task(&mut Store(&mut s.tasks), slot_of(key), now);
        s.runq_changed(now);
    });
}

/// The scheduling parameters of the current task, for a child or thread to inherit.
pub fn inherited_params() -> SchedParams {
    state::with(|s| {
        let se = s.entity(s.rq.current());
        SchedParams::Custom { policy: se.policy(), nice: se.nice(), rt_priority: se.rt_priority() }
    })
}

/// The running task becomes a thread of a user process in place (an exec, `proc/user.rs`):
/// its thread switches to `space` at once and the run queue counts it as having a user
/// space. Call with interrupts disabled, from the task itself.
/// Its clock page is mapped into `space` (which must have the vvar header already:
/// [`map_vvar_header`]) and named the running one at once.
pub fn exec_user_space(space: Arc<AddressSpace>) {
    let thread = state::with(|s| {
        let me = s.rq.current();
        Store(&mut s.tasks).entity(me).set_user_space();
        let hot = s.current_hot();
        hot.vvar_slot = Sched::map_clock_page(&space, &mut hot.clock, me.0);
        let (thread, slot) = (Arc::clone(&hot.thread), hot.vvar_slot);
        s.vvar.current = slot;
        thread
    });
    thread.exec_user(space);
}

/// Set the running thread's FS base (`arch_prctl(ARCH_SET_FS)`, a thread's TLS pointer):
/// `EPERM` for an address outside the user half, as Linux refuses one at or above
/// `TASK_SIZE_MAX`. Restored at every switch to the thread (`hal::context`).
pub fn set_fs_base(v: u64) -> Result<(), i32> {
    let thread = state::with(|s| Arc::clone(&s.current_hot().thread));
    if thread.set_fs_base(v) {
        Ok(())
    } else {
        Err(tally_uapi::errno::EPERM)
    }
}

/// The running thread's FS base.
pub fn fs_base() -> u64 {
    state::with(|s| s.current_hot().thread.fs_base())
}

/// A task leaves the scheduler for good (the task table released it: reaped, or a thread
/// released at its exit): its clocks join the released total, its state goes, and its
/// stack is freed by the next task to run (it may still be the one running).
pub fn release(key: TaskKey, now: u64) {
    state::with(|s| s.release(slot_of(key), now));
}

impl Sched {
    pub(super) fn release(&mut self, slot: TaskSlot, now: u64) {
        let clocks = self.msa_snapshot(slot, now);
        for (a, b) in self.released_msa.iter_mut().zip(clocks.iter()) {
            *a = a.wrapping_add(*b);
        }
        if let Some(hot) = self.tasks.get_mut(slot.0 as usize).and_then(Option::take) {
            self.graveyard.push(hot.thread);
            super::switch::note_after_switch_work();
        }
    }

    /// Invariant (a) at an exit, to the TSC tick: the clocks of `slot` sum to its age.
    /// Counted in [`exit_invariant_counts`]; a violation is logged.
    pub(crate) fn check_clocks_at_exit(&mut self, slot: TaskSlot, clocks: &MsaTimes, now: u64) {
        if !ACCOUNTING_ENABLED {
            return;
        }
        let created = self.created(slot);
        self.exit_checks += 1;
        if clocks.iter().sum::<u64>() != now - created {
            self.exit_violations += 1;
            log::error!("microstate invariant broken at exit of task slot {}", slot.0);
        }
    }
}

/// The exiting task's last step: switch away for good, releasing `released` (tasks the
/// table let go at this exit, itself included if it is a thread nobody will reap) once the
/// scheduler has switched it out. Call with interrupts disabled; never returns.
pub fn exit_current(released: Vec<TaskKey>) -> ! {
    let threads = state::with(|s| {
        let now = hal::tsc::read();
        let threads = s.pick(PrevAction::Block(BlockReason::Exit));
        for &key in &released {
            s.release(slot_of(key), now);
        }
        threads
    });
    // Nothing that owns memory may stay on this stack: the switch never returns.
    drop(released);
    switch_and_clean(threads);
    unreachable!("an exited task was scheduled again")
}

/// (exits checked, exits that broke invariant (a)).
pub fn exit_invariant_counts() -> (u64, u64) {
    state::with(|s| (s.exit_checks, s.exit_violations))
}

/// `setpriority` on task `key`: see `tally_runqueue::RunQueue::set_nice`.
pub fn set_nice(key: TaskKey, nice: i32) {
    state::with(|s| s.rq.set_nice(&mut Store(&mut s.tasks), slot_of(key), nice, hal::tsc::read()));
}

/// `sched_setscheduler` on task `key`: see `tally_runqueue::RunQueue::set_scheduler`.
pub fn set_scheduler(key: TaskKey, policy: Policy, rt_priority: u32) -> Result<(), i32> {
    state::with(|s| {
        s.rq.set_scheduler(&mut Store(&mut s.tasks), slot_of(key), policy, rt_priority, hal::tsc::read())
            .map_err(|e| e.errno())
    })
}

/// For the self-tests: task `key`'s clock page as its process sees it — read through
/// `space` at the task's user address, the way its own code would — and the kernel's own
/// reading of that clock, at one TSC value: (page image, now, `snapshot(now)`). `None` if
/// the task has no page there.
pub fn clock_page_reading(key: TaskKey, space: &AddressSpace) -> Option<(ThreadClock, u64, MsaTimes)> {
    state::with(|s| {
        let hot = s.hot(slot_of(key))?;
        if hot.vvar_slot == NO_PAGE {
            return None;
        }
        let mut bytes = [0u8; core::mem::size_of::<ThreadClock>()];
        space.read(thread_page(hot.vvar_slot), &mut bytes).ok()?;
        let now = hal::tsc::read();
        Some((ThreadClock::from_bytes(&bytes), now, hot.clock.snapshot(now)))
    })
}
