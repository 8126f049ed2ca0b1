//! Test harness: a simulated single-CPU system around a `RunQueue`.
//!
//! Tasks live in a `Vec` (the kernel uses a slab; both implement `TaskStore`), the TSC is a
//! number the test advances, and the timer interrupt is `tick()`: irq enter, scheduler_tick,
//! irq exit, then schedule() if a reschedule was requested.
#![allow(dead_code)]

pub mod sim;

use tally_runqueue::{
    MicroState, MsaClock, PrevAction, RunQueue, SchedConfig, SchedEntity, Switch, TaskSlot, TaskState, TaskStore,
    MAX_PRIO,
};

/// The IRQ line the simulated timer uses.
pub const TIMER_LINE: usize = 0;

pub struct Task {
    pub se: SchedEntity,
    pub clock: MsaClock,
    pub created: u64,
}

#[derive(Default)]
pub struct Store {
    pub tasks: Vec<Task>,
}

impl TaskStore for Store {
    fn task(&mut self, key: TaskSlot) -> (&mut SchedEntity, &mut MsaClock) {
        let t = &mut self.tasks[key.0 as usize];
        (&mut t.se, &mut t.clock)
    }
}

impl Store {
    pub fn add(&mut self, se: SchedEntity, now: u64) -> TaskSlot {
        self.tasks.push(Task { se, clock: MsaClock::new(now, MicroState::OnActiveQueue), created: now });
        TaskSlot(self.tasks.len() as u32 - 1)
    }
    pub fn se(&self, key: TaskSlot) -> &SchedEntity {
        &self.tasks[key.0 as usize].se
    }
    pub fn keys(&self) -> impl Iterator<Item = TaskSlot> {
        (0..self.tasks.len() as u32).map(TaskSlot)
    }
}

pub struct Sys {
    pub store: Store,
    pub rq: RunQueue,
    pub now: u64,
    /// Timer ticks each task was current for (indexed by key).
    pub ticks_run: Vec<u64>,
    /// Clocks of reaped tasks, summed: still part of "all tasks" for invariant (b).
    pub reaped: tally_runqueue::MsaTimes,
}

impl Sys {
    /// A system at TSC 0 running its idle task (key 0).
    pub fn new(config: SchedConfig) -> Sys {
        let mut store = Store::default();
        let idle = store.add(SchedEntity::new(0), 0);
        let rq = RunQueue::new(config, idle, &mut store, 0);
        Sys { store, rq, now: 0, ticks_run: vec![0], reaped: [0; tally_runqueue::NR_MICROSTATES] }
    }

    pub fn hz1000() -> Sys {
        Sys::new(SchedConfig::new(1000, 1_000_000))
    }

    pub fn tsc_per_tick(&self) -> u64 {
        self.rq.config().tsc_per_tick()
    }

    pub fn spawn(&mut self, se: SchedEntity) -> TaskSlot {
        let key = self.store.add(se, self.now);
        self.ticks_run.push(0);
        assert!(self.rq.wake_up_new_task(&mut self.store, key, self.now));
        key
    }

    /// Reuse the slot of a reaped zombie for a new task (as a slab would).
    pub fn respawn(&mut self, key: TaskSlot, se: SchedEntity) {
        assert_eq!(self.store.se(key).state(), TaskState::Blocked(tally_runqueue::BlockReason::Exit));
        // Reaping: the parent collects the zombie's clocks (as MSA_CHILDREN would).
        let now = self.now;
        self.store.tasks[key.0 as usize].clock.add_to(now, &mut self.reaped);
        self.store.tasks[key.0 as usize] =
            Task { se, clock: MsaClock::new(self.now, MicroState::OnActiveQueue), created: self.now };
        self.ticks_run[key.0 as usize] = 0;
        assert!(self.rq.wake_up_new_task(&mut self.store, key, self.now));
    }

    pub fn advance(&mut self, tsc: u64) {
        self.now += tsc;
    }

    pub fn schedule(&mut self, action: PrevAction) -> Switch {
        self.rq.schedule(&mut self.store, self.now, action)
    }

    pub fn wake(&mut self, key: TaskSlot) -> bool {
        self.rq.wake_up(&mut self.store, key, self.now)
    }

    pub fn current(&self) -> TaskSlot {
        self.rq.current()
    }

    /// One timer period: the current task runs for a tick, then the timer interrupt (a
    /// small handler) ticks, and schedule() runs after the interrupt if asked to.
    pub fn tick(&mut self) {
        let per = self.tsc_per_tick();
        self.advance(per - per / 100);
        let curr = self.current();
        self.ticks_run[curr.0 as usize] += 1;
        self.rq.irq_enter(&mut self.store, TIMER_LINE, self.now);
        self.advance(per / 200);
        self.rq.scheduler_tick(&mut self.store, self.now);
        self.advance(per / 200);
        self.rq.irq_exit(&mut self.store, TIMER_LINE, self.now);
        if self.rq.need_resched() {
            self.schedule(PrevAction::Preempted);
        }
    }

    /// Like `tick`, but schedule() runs inside the interrupt (the handover path).
    pub fn tick_resched_in_irq(&mut self) {
        let per = self.tsc_per_tick();
        self.advance(per - per / 100);
        let curr = self.current();
        self.ticks_run[curr.0 as usize] += 1;
        self.rq.irq_enter(&mut self.store, TIMER_LINE, self.now);
        self.advance(per / 200);
        self.rq.scheduler_tick(&mut self.store, self.now);
        if self.rq.need_resched() {
            self.schedule(PrevAction::Preempted);
        }
        self.advance(per / 200);
        self.rq.irq_exit(&mut self.store, TIMER_LINE, self.now);
    }

    pub fn run_ticks(&mut self, n: u64) {
        for _ in 0..n {
            self.tick();
        }
    }

    /// Microstate clocks of `key` at now, lazy flip applied.
    pub fn msa(&mut self, key: TaskSlot) -> tally_runqueue::MsaTimes {
        self.rq.msa_snapshot(&mut self.store, key, self.now)
    }

    pub fn state_of(&mut self, key: TaskSlot) -> MicroState {
        self.rq.microstate(&mut self.store, key)
    }

    /// The microstate a task must be in, judging only by where the scheduler has it.
    pub fn expected_state(&self, key: TaskSlot) -> MicroState {
        let se = self.store.se(key);
        if key == self.rq.current() {
            return if self.rq.irq().in_irq() { MicroState::Interrupted } else { se.running_state() };
        }
        if key == self.rq.idle() {
            return MicroState::OnActiveQueue;
        }
        match se.state() {
            TaskState::New => MicroState::OnActiveQueue,
            TaskState::Blocked(reason) => reason.microstate(),
            TaskState::Runnable => match se.array() {
                Some(id) if id == self.rq.active().id() => MicroState::OnActiveQueue,
                Some(_) => MicroState::OnExpiredQueue,
                None => panic!("runnable task {key:?} on no array"),
            },
        }
    }

    /// Check every structural and accounting invariant (walks everything: test-only).
    pub fn check(&mut self) {
        check_structure(&self.rq, &self.store);
        let now = self.now;
        let mut interrupted = self.reaped[MicroState::Interrupted.index()];
        for key in self.store.keys().collect::<Vec<_>>() {
            let snap = self.rq.msa_snapshot(&mut self.store, key, now);
            let mut added = [0; tally_runqueue::NR_MICROSTATES];
            self.rq.msa_add_to(&mut self.store, key, now, &mut added);
            assert_eq!(added, snap, "msa_add_to adds exactly msa_snapshot for {key:?}");
            if tally_runqueue::ACCOUNTING_ENABLED {
                let created = self.store.tasks[key.0 as usize].created;
                assert_eq!(snap.iter().sum::<u64>(), now - created, "(a) clocks of {key:?} sum to its age");
                let raw: u64 = self.store.tasks[key.0 as usize].clock.snapshot(now).iter().sum();
                assert_eq!(raw, now - created, "(a) raw clocks of {key:?}");
                assert_eq!(self.state_of(key), self.expected_state(key), "state of {key:?} agrees with its place");
            } else {
                assert!(snap.iter().all(|&t| t == 0));
            }
            interrupted += snap[MicroState::Interrupted.index()];
        }
        assert_eq!(interrupted, self.rq.irq().total_handler_ticks(now), "(b) INTERRUPTED == handler time");
    }
}

/// Structural invariants of the runqueue, by walking every queue.
pub fn check_structure(rq: &RunQueue, store: &Store) {
    let mut queued = 0u32;
    for array in [rq.active(), rq.expired()] {
        let mut in_array = 0u32;
        assert!(array.bit(MAX_PRIO as usize), "delimiter bit");
        for level in 0..MAX_PRIO as usize {
            let head = array.head(level);
            assert_eq!(array.bit(level), head.is_some(), "bit {level} ⇔ queue non-empty");
            let mut prev = None;
            let mut cur = head;
            while let Some(k) = cur {
                let se = store.se(k);
                assert_eq!(se.array(), Some(array.id()), "{k:?} knows its array");
                assert_eq!(se.queue_level(), Some(level), "{k:?} knows its level");
                assert_eq!(se.queue_prev(), prev, "{k:?} back link");
                assert_eq!(se.state(), TaskState::Runnable);
                in_array += 1;
                assert!(in_array <= store.tasks.len() as u32, "cycle in queue");
                prev = Some(k);
                cur = se.queue_next();
            }
            assert_eq!(array.tail(level), prev, "tail of level {level}");
        }
        assert_eq!(array.nr_active(), in_array, "nr_active");
        queued += in_array;
    }
    assert_eq!(rq.nr_running(), queued, "nr_running == tasks on the arrays");
    let on_arrays = store.tasks.iter().filter(|t| t.se.array().is_some()).count() as u32;
    assert_eq!(on_arrays, queued, "no task thinks it is queued when it is not");
    let runnable = store
        .tasks
        .iter()
        .enumerate()
        .filter(|(i, t)| *i as u32 != rq.idle().0 && t.se.state() == TaskState::Runnable)
        .count() as u32;
    assert_eq!(runnable, queued, "runnable ⇔ queued (idle aside)");
    assert!(store.se(rq.idle()).array().is_none(), "idle is never queued");
    let curr = rq.current();
    if curr != rq.idle() {
        assert!(store.se(curr).array().is_some(), "the running task stays on its array");
    }
    let first = rq.active().first_level();
    if rq.active().nr_active() == 0 {
        assert_eq!(first, MAX_PRIO as usize);
    }
}
