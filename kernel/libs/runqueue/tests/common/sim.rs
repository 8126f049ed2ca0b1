//! A random-event driver for the simulated system, with an independent accounting model.
//!
//! The model (`Shadow`) never looks at a clock: after every event it asks where the
//! scheduler has each task (running, on which array, blocked why, interrupt depth) and
//! charges the next span of simulated time to the state that place implies, and the span's
//! interrupt time to the innermost IRQ line. After every event the real clocks (lazy flip
//! applied) must equal the model exactly, per task and per state, and per IRQ line.

use super::{Sys, TIMER_LINE};
use proptest::prelude::*;
use tally_runqueue::{
    BlockReason, MicroState, Policy, PrevAction, SchedConfig, SchedEntity, SleepKind, TaskSlot, TaskState, TaskStore,
    NR_MICROSTATES,
};

/// At most this many tasks (idle included).
pub const MAX_TASKS: usize = 10;
/// Interrupt nesting limit of the simulation.
pub const MAX_DEPTH: usize = 3;
/// IRQ lines used: a few real ones and one beyond `NR_IRQ_LINES` (the stray slot).
pub const LINES: [usize; 4] = [TIMER_LINE, 1, 14, 200];

#[derive(Clone, Debug)]
pub enum Ev {
    /// scheduler_tick, wherever we are.
    Tick,
    /// A whole timer interrupt: enter, tick, maybe schedule inside, exit, maybe schedule.
    TimerIrq {
        resched_inside: bool,
    },
    IrqEnter(u8),
    IrqExit,
    /// schedule(Preempted): a preemption point (inside an interrupt: the handover).
    Schedule,
    /// The current task blocks: 0..=4 sleep kinds, 5 stop, 6 exit (task context only).
    Block(u8),
    Yield,
    Wake(u8),
    Create {
        nice: i8,
        policy: u8,
        rt: u8,
        user: bool,
        usr_mode: bool,
    },
    Nice(u8, i8),
    SetSched(u8, u8, u8),
    Remove(u8, u8),
    /// The current task switches between user and kernel mode.
    SetRunning(bool),
}

pub fn block_reason(code: u8) -> BlockReason {
    match code % 7 {
        0 => BlockReason::Sleep(SleepKind::Interruptible),
        1 => BlockReason::Sleep(SleepKind::Uninterruptible),
        2 => BlockReason::Sleep(SleepKind::Paging),
        3 => BlockReason::Sleep(SleepKind::Futex),
        4 => BlockReason::Sleep(SleepKind::Poll),
        5 => BlockReason::Stop,
        _ => BlockReason::Exit,
    }
}

/// Mostly normal tasks: a FIFO task that never blocks would otherwise own the CPU.
fn policy(code: u8) -> Policy {
    match code % 12 {
        0..=7 => Policy::Normal,
        8 => Policy::Batch,
        9 | 10 => Policy::RoundRobin,
        _ => Policy::Fifo,
    }
}

fn rt_priority(policy: Policy, rt: u8) -> u32 {
    if policy.is_realtime() {
        1 + (rt as u32 % 99)
    } else {
        0
    }
}

pub fn ev_strategy() -> impl Strategy<Value = Ev> {
    prop_oneof![
        12 => Just(Ev::Tick),
        8 => any::<bool>().prop_map(|resched_inside| Ev::TimerIrq { resched_inside }),
        // Exits outnumber entries, so the system is mostly in task context with excursions
        // into (nested) interrupts.
        3 => any::<u8>().prop_map(Ev::IrqEnter),
        6 => Just(Ev::IrqExit),
        4 => Just(Ev::Schedule),
        5 => any::<u8>().prop_map(Ev::Block),
        2 => Just(Ev::Yield),
        6 => any::<u8>().prop_map(Ev::Wake),
        3 => (-20i8..=19, any::<u8>(), any::<u8>(), any::<bool>(), any::<bool>())
            .prop_map(|(nice, policy, rt, user, usr_mode)| Ev::Create { nice, policy, rt, user, usr_mode }),
        2 => (any::<u8>(), -20i8..=19).prop_map(|(t, n)| Ev::Nice(t, n)),
        1 => (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(t, p, r)| Ev::SetSched(t, p, r)),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(t, r)| Ev::Remove(t, r)),
        2 => any::<bool>().prop_map(Ev::SetRunning),
    ]
}

/// Time between events: often zero (several things at one TSC value), often small, and
/// sometimes several ticks' worth.
pub fn dt_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![2 => Just(0u64), 3 => 1u64..20, 5 => 20u64..30_000]
}

pub fn config_strategy() -> impl Strategy<Value = SchedConfig> {
    (prop_oneof![Just(20u32), Just(100), Just(1000)], prop_oneof![Just(1_000u64), Just(10_000)])
        .prop_map(|(hz, per_tick)| SchedConfig::new(hz, hz as u64 * per_tick))
}

/// How much of the interesting behaviour a run reached.
#[derive(Clone, Copy, Debug, Default)]
pub struct Coverage {
    pub switches: u64,
    pub flips: u64,
    pub handovers: u64,
    pub pending_flip_reads: u64,
    pub max_depth: usize,
    pub expired_waits: u64,
    pub reused_slots: u64,
}

pub struct Sim {
    pub sys: Sys,
    /// Model: expected time per task per state, and each task's state for the next span.
    shadow: Vec<[u64; NR_MICROSTATES]>,
    state: Vec<MicroState>,
    /// Model: expected handler time per line (index into LINES), and the lines in progress.
    line_time: [u64; LINES.len()],
    stack: Vec<usize>,
    pub coverage: Coverage,
    /// FNV-1a over every scheduling decision (not clocks): equal with or without accounting.
    pub digest: u64,
    check_accounting: bool,
}

impl Sim {
    pub fn new(config: SchedConfig) -> Sim {
        let mut sim = Sim {
            sys: Sys::new(config),
            shadow: vec![[0; NR_MICROSTATES]],
            state: vec![MicroState::OncpuSys],
            line_time: [0; LINES.len()],
            stack: Vec::new(),
            coverage: Coverage::default(),
            digest: 0xcbf2_9ce4_8422_2325,
            check_accounting: tally_runqueue::ACCOUNTING_ENABLED,
        };
        // As `irq::init`: the clock tick is a hard interrupt.
        sim.sys.rq.irq_mut().set_line_kind(TIMER_LINE, tally_runqueue::IntrKind::Hard);
        sim
    }

    fn pick(&self, i: u8) -> TaskSlot {
        TaskSlot(i as u32 % self.sys.store.tasks.len() as u32)
    }

    fn hash(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.digest ^= b as u64;
            self.digest = self.digest.wrapping_mul(0x100_0000_01b3);
        }
    }

    /// Span of `dt` TSC ticks with nothing happening: the model charges it to the state
    /// each task's place implies.
    fn advance(&mut self, dt: u64) {
        self.snapshot_states();
        for (i, s) in self.state.iter().enumerate() {
            self.shadow[i][s.index()] += dt;
        }
        if let Some(&line) = self.stack.last() {
            self.line_time[line] += dt;
        }
        self.sys.advance(dt);
    }

    fn snapshot_states(&mut self) {
        let n = self.sys.store.tasks.len();
        self.state = (0..n as u32).map(|k| self.sys.expected_state(TaskSlot(k))).collect();
    }

    fn schedule(&mut self, action: PrevAction) {
        let in_irq = self.sys.rq.irq().in_irq();
        let gen = self.sys.rq.flip_generation();
        let sw = self.sys.schedule(action);
        if sw.is_switch() {
            self.coverage.switches += 1;
            if in_irq {
                self.coverage.handovers += 1;
            }
        }
        if self.sys.rq.flip_generation() != gen {
            self.coverage.flips += 1;
        }
        self.hash(sw.prev.0 as u64);
        self.hash(sw.next.0 as u64);
    }

    fn irq_enter(&mut self, line_index: usize) {
        if self.stack.len() >= MAX_DEPTH {
            return;
        }
        self.sys.rq.irq_enter(&mut self.sys.store, LINES[line_index], self.sys.now);
        self.stack.push(line_index);
        self.coverage.max_depth = self.coverage.max_depth.max(self.stack.len());
    }

    fn irq_exit(&mut self) {
        if let Some(line_index) = self.stack.pop() {
            self.sys.rq.irq_exit(&mut self.sys.store, LINES[line_index], self.sys.now);
        }
    }

    /// Apply one event `dt` TSC ticks after the previous one, then check everything.
    pub fn step(&mut self, dt: u64, ev: &Ev) {
        self.advance(dt);
        self.check();
        let now = self.sys.now;
        let curr = self.sys.current();
        let idle = self.sys.rq.idle();
        let in_irq = !self.stack.is_empty();
        match *ev {
            Ev::Tick => self.sys.rq.scheduler_tick(&mut self.sys.store, now),
            Ev::TimerIrq { resched_inside } => {
                if self.stack.len() < MAX_DEPTH {
                    self.irq_enter(0);
                    let d = dt % 7;
                    self.advance(d);
                    self.sys.rq.scheduler_tick(&mut self.sys.store, self.sys.now);
                    if resched_inside && self.sys.rq.need_resched() {
                        self.schedule(PrevAction::Preempted);
                    }
                    self.check_now();
                    self.advance(d / 2);
                    self.irq_exit();
                    if !in_irq && self.sys.rq.need_resched() {
                        self.schedule(PrevAction::Preempted);
                    }
                }
            }
            Ev::IrqEnter(l) => self.irq_enter(l as usize % LINES.len()),
            Ev::IrqExit => self.irq_exit(),
            Ev::Schedule => self.schedule(PrevAction::Preempted),
            Ev::Block(code) => {
                if !in_irq && curr != idle {
                    self.schedule(PrevAction::Block(block_reason(code)));
                }
            }
            Ev::Yield => {
                if !in_irq && curr != idle {
                    self.schedule(PrevAction::Yield);
                }
            }
            Ev::Wake(i) => {
                let key = self.pick(i);
                let woke = self.sys.wake(key);
                self.hash(woke as u64);
            }
            Ev::Create { nice, policy: p, rt, user, usr_mode } => {
                let p = policy(p);
                let mut se = SchedEntity::new(nice as i32).with_policy(p, rt_priority(p, rt)).unwrap();
                if user {
                    se = se.with_user_space();
                }
                if usr_mode {
                    se = se.with_running_state(MicroState::OncpuUsr);
                }
                if self.sys.store.tasks.len() < MAX_TASKS {
                    self.sys.spawn(se);
                    self.shadow.push([0; NR_MICROSTATES]);
                } else if let Some(zombie) = self
                    .sys
                    .store
                    .keys()
                    .find(|&k| self.sys.store.se(k).state() == TaskState::Blocked(BlockReason::Exit))
                {
                    // The parent reaped it; the slot is reused.
                    self.sys.respawn(zombie, se);
                    self.shadow[zombie.0 as usize] = [0; NR_MICROSTATES];
                    self.coverage.reused_slots += 1;
                }
            }
            Ev::Nice(i, nice) => {
                let key = self.pick(i);
                self.sys.rq.set_nice(&mut self.sys.store, key, nice as i32, now);
            }
            Ev::SetSched(i, p, rt) => {
                let key = self.pick(i);
                let p = policy(p);
                let r = self.sys.rq.set_scheduler(&mut self.sys.store, key, p, rt_priority(p, rt), now);
                assert_eq!(r.is_err(), key == idle);
            }
            Ev::Remove(i, code) => {
                let key = self.pick(i);
                let removed = self.sys.rq.remove(&mut self.sys.store, key, block_reason(code), now);
                self.hash(removed as u64);
            }
            Ev::SetRunning(usr) => {
                let s = if usr { MicroState::OncpuUsr } else { MicroState::OncpuSys };
                if in_irq {
                    self.sys.rq.set_running_state(&mut self.sys.store, curr, s, now);
                } else {
                    // The system-call paths' hook: it relies on the current task being in
                    // an on-CPU state outside interrupts (asserted in debug builds).
                    let (se, clock) = self.sys.store.task(curr);
                    self.sys.rq.set_current_running_state(se, clock, s, now);
                }
            }
        }
        self.check_now();
        self.record_decisions();
    }

    /// Fold the scheduler's visible decisions into the digest.
    fn record_decisions(&mut self) {
        self.hash(self.sys.current().0 as u64);
        self.hash(self.sys.rq.need_resched() as u64);
        self.hash(self.sys.rq.flip_generation() as u64);
        for k in 0..self.sys.store.tasks.len() {
            let se = &self.sys.store.tasks[k].se;
            let v = (se.prio() as u64) << 40
                | (se.time_slice() as u64) << 8
                | se.array().map_or(3, |a| a.index() as u64) << 4
                | se.queue_level().unwrap_or(255) as u64 >> 4;
            let sleep_avg = se.sleep_avg();
            self.hash(v);
            self.hash(sleep_avg);
        }
    }

    /// The invariants, without the model's per-state comparison (mid-event states).
    fn check_now(&mut self) {
        self.sys.check();
        assert_eq!(self.sys.rq.irq().depth(), self.stack.len());
    }

    /// Everything: structure, (a), (b), state agreement, and exact per-state and per-line
    /// agreement with the model.
    pub fn check(&mut self) {
        self.check_now();
        for k in 0..self.sys.store.tasks.len() as u32 {
            if self.sys.expected_state(TaskSlot(k)) == MicroState::OnExpiredQueue {
                self.coverage.expired_waits += 1;
            }
        }
        if !self.check_accounting {
            return;
        }
        let now = self.sys.now;
        for k in 0..self.sys.store.tasks.len() as u32 {
            let key = TaskSlot(k);
            let real = self.sys.msa(key);
            assert_eq!(real, self.shadow[k as usize], "clocks of {key:?} vs model at {now}");
            let raw_state = self.sys.store.tasks[k as usize].clock.state();
            if raw_state != self.sys.state_of(key) {
                self.coverage.pending_flip_reads += 1;
            }
        }
        for (i, &line) in LINES.iter().enumerate() {
            assert_eq!(self.sys.rq.irq().handler_ticks(line, now), self.line_time[i], "line {line}");
        }
        assert_eq!(self.sys.rq.irq().mismatched_exits(), 0);
    }

    /// Close all interrupts and check once more.
    pub fn finish(&mut self) {
        while !self.stack.is_empty() {
            self.advance(5);
            self.irq_exit();
            self.check_now();
        }
        self.advance(1);
        self.check();
    }
}

/// A small deterministic generator (xorshift64*) for fixed scenarios.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn event(&mut self) -> (u64, Ev) {
        let dt = match self.below(10) {
            0 | 1 => 0,
            2..=4 => self.below(20),
            _ => self.below(30_000),
        };
        let b = self.next() as u8;
        let c = self.next() as u8;
        let ev = match self.below(60) {
            0..=11 | 56..=59 => Ev::Tick,
            12..=19 => Ev::TimerIrq { resched_inside: b & 1 == 1 },
            20..=22 => Ev::IrqEnter(b),
            23..=28 => Ev::IrqExit,
            29..=32 => Ev::Schedule,
            33..=37 => Ev::Block(b),
            38..=39 => Ev::Yield,
            40..=45 => Ev::Wake(b),
            46..=48 => {
                Ev::Create { nice: (b % 40) as i8 - 20, policy: c, rt: b, user: c & 16 != 0, usr_mode: c & 32 != 0 }
            }
            49..=50 => Ev::Nice(b, (c % 40) as i8 - 20),
            51 => Ev::SetSched(b, c, b.wrapping_add(c)),
            52..=53 => Ev::Remove(b, c),
            _ => Ev::SetRunning(b & 1 == 1),
        };
        (dt, ev)
    }
}
