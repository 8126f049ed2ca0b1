//! The benchmarks themselves.

use core::sync::atomic::{compiler_fence, Ordering};
use tally_microstate::{MicroState, MsaClock};

use super::{Bench, Harness};
use crate::sched;

pub const ALL: &[(&str, Bench)] = &[
    ("tsc_read", tsc_read),
    ("msa_transition", msa_transition),
    ("context_switch", super::context_switch::context_switch),
    ("taskstats", super::bus_records::taskstats),
    ("user", super::ubench::user),
    ("acct", super::acct_exit::acct_records),
];

/// The cost of the clock every accounting timestamp uses.
fn tsc_read(h: &mut Harness) {
    let mut sink = 0u64;
    h.measure("tsc_read", 0, 100_000, |_| sink = sink.wrapping_add(hal::tsc::read()));
    core::hint::black_box(sink);
}

/// One microstate transition as a system call makes it, twice (ONCPU_USR → ONCPU_SYS at
/// entry, back on the way out): the TSC read the hot path pays (`sched::msa_now`, none with
/// accounting compiled out) and `MsaClock::switch_on_cpu` — a comparison, a subtraction, an
/// add and two stores, no delay episode. Two transitions per loop iteration, so the loop's
/// own instructions count half; with accounting compiled out the row is that loop alone.
/// Then `msa_transition_delay`: the queue ↔ CPU transition of a context switch
/// (ONACTIVEQUEUE ↔ ONCPU_SYS, `MsaClock::switch`), given a timestamp already read (the
/// scheduler reads one per switch, for both tasks): every one crosses a delay-class
/// boundary, opening a run-queue wait or closing one (its total, longest, shortest).
fn msa_transition(h: &mut Harness) {
    const PAIRS: u64 = 50_000;
    let mut clock = MsaClock::new(hal::tsc::read(), MicroState::OncpuUsr);
    // The clock lives in memory behind a pointer, as a task's does: each switch loads and
    // stores its fields.
    let c = core::hint::black_box(&mut clock);
    let t0 = hal::tsc::read();
    for _ in 0..PAIRS {
        a_system_calls_transitions(c);
    }
    let ticks = hal::tsc::read() - t0;
    h.report("msa_transition", 0, 2 * PAIRS, ticks);
    core::hint::black_box(c);

    let mut clock = MsaClock::new(hal::tsc::read(), MicroState::OncpuSys);
    let states = [MicroState::OnActiveQueue, MicroState::OncpuSys];
    let t0 = hal::tsc::read();
    h.measure("msa_transition_delay", 0, 100_000, |i| {
        let c = core::hint::black_box(&mut clock);
        c.switch(t0 + i, states[(i & 1) as usize]);
    });
    core::hint::black_box(&clock);
}

/// The two transitions of a system call, on their own (not inlined into the loop, so the
/// clock's address stays in a register as it does on the real path). The fence (no
/// instruction) stands for the lock released and taken between them on the real path: the
/// second switch must load what the first stored, not reuse what the compiler knows.
#[inline(never)]
fn a_system_calls_transitions(c: &mut MsaClock) {
    c.switch_on_cpu(sched::msa_now(), MicroState::OncpuSys);
    compiler_fence(Ordering::SeqCst);
    c.switch_on_cpu(sched::msa_now(), MicroState::OncpuUsr);
}
