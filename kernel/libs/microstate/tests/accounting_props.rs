//! Property tests: random state changes, nested interrupts and context switches inside
//! interrupts, checked at every step against an independent model that charges every span
//! of simulated time to the state each task is known to be in.
//!
//! Invariants, exact in TSC ticks:
//! (a) every task's clocks add up to `now - created`, and equal the model per state;
//! (b) Σ INTERRUPTED over all tasks == Σ handler time over all lines, and each line's handler
//!     time equals the model (exclusive attribution: the innermost handler is charged).
#![cfg(feature = "accounting")]

use proptest::prelude::*;
use tally_microstate::{IrqAccounting, MicroState, MsaClock, NR_MICROSTATES};

const TASKS: usize = 4;
const LINES: usize = 4;

#[derive(Clone, Debug)]
enum Op {
    /// The current task changes the state it runs in (user/sys/trap).
    SetRunning(u8),
    /// Context switch to task `next`; the outgoing one goes to a non-running state.
    Switch {
        next: u8,
        prev_to: u8,
    },
    IrqEnter(u8),
    IrqExit,
}

fn op() -> impl Strategy<Value = (u64, Op)> {
    let dt = prop_oneof![Just(0u64), 1u64..10, 10u64..5_000];
    let op = prop_oneof![
        1 => (0u8..3).prop_map(Op::SetRunning),
        3 => (0u8..TASKS as u8, 0u8..NR_MICROSTATES as u8).prop_map(|(next, prev_to)| Op::Switch { next, prev_to }),
        3 => (0u8..LINES as u8 + 1).prop_map(Op::IrqEnter),
        3 => Just(Op::IrqExit),
    ];
    (dt, op)
}

struct Model {
    now: u64,
    clocks: Vec<MsaClock>,
    created: Vec<u64>,
    /// Expected state per task, and expected time per state.
    state: Vec<MicroState>,
    expect: Vec<[u64; NR_MICROSTATES]>,
    /// Expected handler time per line (index LINES = a line beyond NR_IRQ_LINES: stray).
    line_expect: Vec<u64>,
    /// Lines of the interrupts in progress, outermost first.
    stack: Vec<usize>,
    current: usize,
    running: MicroState,
    irq: IrqAccounting,
}

fn line_number(i: usize) -> usize {
    if i == LINES {
        1_000 // beyond NR_IRQ_LINES: the stray slot
    } else {
        i
    }
}

impl Model {
    fn new() -> Self {
        let created: Vec<u64> = (0..TASKS as u64).map(|i| i * 7).collect();
        let now = *created.last().unwrap();
        let mut clocks: Vec<MsaClock> = created.iter().map(|&c| MsaClock::new(c, MicroState::OnActiveQueue)).collect();
        let mut expect = vec![[0u64; NR_MICROSTATES]; TASKS];
        for i in 0..TASKS {
            expect[i][MicroState::OnActiveQueue.index()] = now - created[i];
        }
        let mut state = vec![MicroState::OnActiveQueue; TASKS];
        clocks[0].switch(now, MicroState::OncpuSys);
        state[0] = MicroState::OncpuSys;
        Model {
            now,
            clocks,
            created,
            state,
            expect,
            line_expect: vec![0; LINES + 1],
            stack: Vec::new(),
            current: 0,
            running: MicroState::OncpuSys,
            irq: IrqAccounting::new(),
        }
    }

    fn advance(&mut self, dt: u64) {
        for i in 0..TASKS {
            self.expect[i][self.state[i].index()] += dt;
        }
        if let Some(&line) = self.stack.last() {
            self.line_expect[line] += dt;
        }
        self.now += dt;
    }

    fn apply(&mut self, op: &Op) {
        let now = self.now;
        let cur = self.current;
        match *op {
            Op::SetRunning(r) => {
                let s = [MicroState::OncpuUsr, MicroState::OncpuSys, MicroState::OncpuTrap][r as usize];
                self.running = s;
                if self.irq.in_irq() {
                    self.irq.set_resume_state(s);
                } else {
                    self.clocks[cur].switch(now, s);
                    self.state[cur] = s;
                }
            }
            Op::Switch { next, prev_to } => {
                let next = next as usize;
                if next == cur {
                    return;
                }
                let mut prev_to = MicroState::ALL[prev_to as usize];
                if prev_to.is_on_cpu() || prev_to == MicroState::Interrupted {
                    prev_to = MicroState::OnActiveQueue;
                }
                let (a, b) = two(&mut self.clocks, cur, next);
                self.irq.context_switch(now, a, prev_to, b, MicroState::OncpuSys);
                self.state[cur] = prev_to;
                self.running = MicroState::OncpuSys;
                self.state[next] = if self.irq.in_irq() { MicroState::Interrupted } else { MicroState::OncpuSys };
                self.current = next;
            }
            Op::IrqEnter(l) => {
                if self.stack.len() == 3 {
                    return;
                }
                let l = l as usize;
                self.irq.irq_enter(line_number(l), now, &mut self.clocks[cur]);
                self.stack.push(l);
                self.state[cur] = MicroState::Interrupted;
            }
            Op::IrqExit => {
                if let Some(l) = self.stack.pop() {
                    self.irq.irq_exit(line_number(l), now, &mut self.clocks[cur]);
                    if self.stack.is_empty() {
                        self.state[cur] = self.running;
                    }
                }
            }
        }
    }

    fn check(&self) {
        let now = self.now;
        let mut interrupted = 0;
        for i in 0..TASKS {
            let snap = self.clocks[i].snapshot(now);
            assert_eq!(snap.iter().sum::<u64>(), now - self.created[i], "(a) task {i}");
            assert_eq!(snap, self.expect[i], "per-state clocks of task {i}");
            assert_eq!(self.clocks[i].state(), self.state[i], "state of task {i}");
            interrupted += snap[MicroState::Interrupted.index()];
        }
        assert_eq!(interrupted, self.irq.total_handler_ticks(now), "(b)");
        for l in 0..=LINES {
            assert_eq!(self.irq.handler_ticks(line_number(l), now), self.line_expect[l], "line {l}");
        }
        assert_eq!(self.irq.depth(), self.stack.len());
        assert_eq!(self.irq.mismatched_exits(), 0);
    }
}

fn two<T>(v: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    if a < b {
        let (x, y) = v.split_at_mut(b);
        (&mut x[a], &mut y[0])
    } else {
        let (x, y) = v.split_at_mut(a);
        (&mut y[0], &mut x[b])
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn clocks_and_irq_lines_agree_with_the_model(ops in proptest::collection::vec(op(), 1..300)) {
        let mut m = Model::new();
        m.check();
        for (dt, op) in &ops {
            m.advance(*dt);
            m.check();
            m.apply(op);
            m.check();
        }
        // Close every interrupt: the identity still holds and counts add up.
        while !m.stack.is_empty() {
            m.advance(3);
            m.apply(&Op::IrqExit);
            m.check();
        }
        let enters = ops.iter().filter(|(_, o)| matches!(o, Op::IrqEnter(_))).count() as u64;
        let events: u64 = (0..=LINES).map(|l| m.irq.line_stats(line_number(l)).timer.num_events).sum();
        prop_assert!(events <= enters);
    }
}
