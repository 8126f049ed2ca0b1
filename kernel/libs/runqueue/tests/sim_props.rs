//! Property tests: a simulated system driven by random events, checked at every step.
//!
//! Events: timer ticks, whole timer interrupts (rescheduling inside or after them), other
//! interrupts nested up to 3 deep, preemption points, sleeps of every kind, stops, exits,
//! yields, wake-ups, task creation (all policies, nice values, user or kernel), nice and
//! policy changes, removal of waiting tasks, user/kernel mode switches. The TSC advances by
//! random amounts between events, often by zero.
//!
//! Checked after every event, exactly (in TSC ticks, no tolerance):
//! (a) every task's clocks sum to `now - created` — raw, and with the lazy flip applied;
//! (b) Σ INTERRUPTED over all tasks, idle included, == Σ handler time over all IRQ lines;
//! every task's microstate agrees with where the scheduler has it (running ⇔ its running
//! state or INTERRUPTED inside an interrupt; active/expired array ⇔ ONACTIVE/ONEXPIRED
//! after lazy-flip resolution; blocked ⇔ its sleep/stop/zombie state), and its clocks equal
//! an independent model per state; each line's handler time equals the model; queues are
//! well-formed, bitmap bit ⇔ queue non-empty, nr_active and nr_running agree with them.

mod common;

use common::sim::{config_strategy, dt_strategy, ev_strategy, Rng, Sim};
use proptest::prelude::*;
use tally_runqueue::SchedConfig;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_step_keeps_every_invariant(
        config in config_strategy(),
        events in proptest::collection::vec((dt_strategy(), ev_strategy()), 1..250),
    ) {
        let mut sim = Sim::new(config);
        sim.check();
        for (dt, ev) in &events {
            sim.step(*dt, ev);
        }
        sim.finish();
    }
}

/// The random generator above must actually reach the interesting paths; this long fixed
/// run shows that it does (and checks every step as well).
#[test]
fn long_random_runs_reach_flips_handovers_and_pending_flips() {
    let mut total = common::sim::Coverage::default();
    for (seed, hz) in [(1u64, 20u32), (2, 100), (3, 1000), (4, 20)] {
        let mut sim = Sim::new(SchedConfig::new(hz, hz as u64 * 1_000));
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
        for _ in 0..3_000 {
            let (dt, ev) = rng.event();
            sim.step(dt, &ev);
        }
        sim.finish();
        let c = sim.coverage;
        total.switches += c.switches;
        total.flips += c.flips;
        total.handovers += c.handovers;
        total.pending_flip_reads += c.pending_flip_reads;
        total.expired_waits += c.expired_waits;
        total.reused_slots += c.reused_slots;
        total.max_depth = total.max_depth.max(c.max_depth);
    }
    assert!(total.switches > 500, "{total:?}");
    assert!(total.flips > 20, "{total:?}");
    assert!(total.handovers > 20, "{total:?}");
    assert!(total.expired_waits > 100, "{total:?}");
    assert!(total.reused_slots > 10, "{total:?}");
    if tally_runqueue::ACCOUNTING_ENABLED {
        assert!(total.pending_flip_reads > 20, "{total:?}");
    }
    assert_eq!(total.max_depth, 3, "{total:?}");
}
