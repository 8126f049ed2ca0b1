//! Accounting must never change a scheduling decision.
//!
//! A fixed pseudo-random scenario (the same driver as the property tests, every step
//! checked) is folded into a digest of every decision the scheduler makes: who runs, who is
//! woken, need_resched, array flips, and every task's priority, slice, array, level and
//! sleep average after every event. The digest is pinned here and must come out the same
//! in both builds:
//!
//! ```text
//!   cargo test -p tally-runqueue                        # accounting compiled in
//!   cargo test -p tally-runqueue --no-default-features  # accounting compiled out
//! ```
//!
//! If a deliberate change to the scheduler changes the digest, update the constant (after
//! checking that both builds agree on the new value).

mod common;

use common::sim::{Rng, Sim};
use tally_runqueue::SchedConfig;

const PINNED_DIGEST: u64 = 0xac10_5716_ea9b_0ddf;

#[test]
fn scheduling_decisions_do_not_depend_on_accounting() {
    let mut digest = 0u64;
    for (seed, hz) in [(11u64, 20u32), (12, 100), (13, 1000)] {
        let mut sim = Sim::new(SchedConfig::new(hz, hz as u64 * 997));
        let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ seed);
        for _ in 0..2_000 {
            let (dt, ev) = rng.event();
            sim.step(dt, &ev);
        }
        sim.finish();
        digest = digest.rotate_left(17) ^ sim.digest;
    }
    assert_eq!(
        digest,
        PINNED_DIGEST,
        "decision digest {digest:#018x} (accounting {})",
        tally_runqueue::ACCOUNTING_ENABLED
    );
}
