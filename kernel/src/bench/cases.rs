//! The benchmarks themselves.

use tally_microstate::{MicroState, MsaClock};

use super::{Bench, Harness};

pub const ALL: &[(&str, Bench)] = &[
    ("tsc_read", tsc_read),
    ("msa_transition", msa_transition),
    ("context_switch", super::context_switch::context_switch),
    ("taskstats", super::bus_records::taskstats),
    ("user", super::ubench::user),
    ("acct", super::acct_records::acct_records),
];

/// The cost of the clock every accounting timestamp uses.
fn tsc_read(h: &mut Harness) {
    let mut sink = 0u64;
    h.measure("tsc_read", 0, 100_000, |_| sink = sink.wrapping_add(hal::tsc::read()));
    core::hint::black_box(sink);
}

/// One microstate transition (the single-clock update), given a timestamp already read, as
/// the scheduler does it. With accounting compiled out it is empty: the ratio is its cost.
fn msa_transition(h: &mut Harness) {
    let mut clock = MsaClock::new(hal::tsc::read(), MicroState::OncpuSys);
    let states = [MicroState::OnActiveQueue, MicroState::OncpuSys];
    let t0 = hal::tsc::read();
    h.measure("msa_transition", 0, 100_000, |i| {
        let c = core::hint::black_box(&mut clock);
        c.switch(t0 + i, states[(i & 1) as usize]);
    });
    core::hint::black_box(&clock);
}
