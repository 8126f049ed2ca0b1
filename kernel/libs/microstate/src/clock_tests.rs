//! `MsaClock`'s unit tests (kept out of `clock.rs`, which lab 1 hands out for editing).

use super::*;
use MicroState::*;

#[test]
fn switch_charges_the_state_being_left() {
    let mut c = MsaClock::new(100, OnActiveQueue);
    c.switch(130, OncpuSys);
    c.switch(180, InterruptibleSleep);
    let t = c.settled();
    assert_eq!(t[OnActiveQueue.index()], 30);
    assert_eq!(t[OncpuSys.index()], 50);
    assert_eq!(c.state(), InterruptibleSleep);
    let s = c.snapshot(200);
    assert_eq!(s[InterruptibleSleep.index()], 20);
    assert_eq!(s.iter().sum::<u64>(), 100);
}

#[test]
fn time_going_backwards_never_panics_nor_double_counts() {
    let mut c = MsaClock::new(1_000, OncpuSys);
    c.switch(900, OnActiveQueue); // backwards: nothing charged, last change kept
    assert_eq!(c.last_change(), 1_000);
    assert_eq!(c.state(), OnActiveQueue);
    assert_eq!(c.snapshot(950).iter().sum::<u64>(), 0);
    c.switch(1_100, OncpuSys);
    assert_eq!(c.snapshot(1_100).iter().sum::<u64>(), 100);
    assert_eq!(c.snapshot(1_100)[OnActiveQueue.index()], 100);
}

#[test]
fn snapshot_as_if_switched_splits_the_current_span() {
    let mut c = MsaClock::new(0, OncpuSys);
    c.switch(10, OnExpiredQueue);
    let s = c.snapshot_as_if_switched(25, OnActiveQueue, 40);
    assert_eq!(s[OnExpiredQueue.index()], 15);
    assert_eq!(s[OnActiveQueue.index()], 15);
    assert_eq!(c.state(), OnExpiredQueue, "reading must not modify");
}

#[test]
fn add_to_sums_threads() {
    let a = MsaClock::new(0, OncpuUsr);
    let b = MsaClock::new(5, OncpuSys);
    let mut sum = [0; NR_MICROSTATES];
    a.add_to(10, &mut sum);
    b.add_to(10, &mut sum);
    assert_eq!(sum[OncpuUsr.index()], 10);
    assert_eq!(sum[OncpuSys.index()], 5);
}

#[test]
fn add_to_adds_exactly_the_snapshot() {
    let mut c = MsaClock::new(100, OnActiveQueue);
    c.switch(130, OncpuUsr);
    c.switch(180, OncpuSys);
    c.switch(200, OncpuUsr);
    // A reading before the last change (a TSC going backwards) adds no running span.
    for now in [150, 200, 260] {
        let mut sum = [u64::MAX - 1; NR_MICROSTATES];
        sum[OncpuSys.index()] = 7;
        let mut expected = sum;
        for (e, t) in expected.iter_mut().zip(c.snapshot(now)) {
            *e = e.wrapping_add(t);
        }
        c.add_to(now, &mut sum);
        assert_eq!(sum, expected, "now {now}");
    }
}

/// `times[state]` must be `want`; the message says which clock, what it read, and why.
fn expect(times: &MsaTimes, state: MicroState, want: u64, why: &str) {
    assert_eq!(times[state.index()], want, "{why}: {state:?} reads {} ticks, expected {want}", times[state.index()]);
}

#[test]
fn switch_charges_each_span_to_the_state_it_was_in() {
    let mut c = MsaClock::new(1_000, OnActiveQueue);
    c.switch(1_250, OncpuSys);
    expect(&c.settled(), OnActiveQueue, 250, "switch(1250, ONCPU_SYS) after waiting from 1000");
    assert_eq!(c.last_change(), 1_250, "switch(1250, ...) must move last_change to 1250");
    c.switch(2_750, OncpuUsr);
    expect(&c.settled(), OncpuSys, 1_500, "switch(2750, ONCPU_USR) after ONCPU_SYS from 1250");
    c.switch(2_750, OncpuUsr); // the same instant, the same state: nothing to charge
    c.switch(3_000, OncpuUsr); // the same state: only folds the span into the clock
    expect(&c.settled(), OncpuUsr, 250, "switch(3000, ONCPU_USR) while already in ONCPU_USR since 2750");
    assert_eq!(c.settled().iter().sum::<u64>(), 2_000, "settled clocks must add up to last_change - created");
}

#[test]
fn snapshot_adds_the_open_span_and_does_not_modify() {
    let mut c = MsaClock::new(0, OncpuSys);
    c.switch(400, InterruptibleSleep);
    let s = c.snapshot(1_000);
    expect(&s, OncpuSys, 400, "snapshot(1000)");
    expect(&s, InterruptibleSleep, 600, "snapshot(1000) of a task asleep since 400 (the open span)");
    assert_eq!(s.iter().sum::<u64>(), 1_000, "snapshot(now) must add up to now - created");
    assert_eq!(c.snapshot(1_000), s, "snapshot must not modify the clock");
    expect(&c.snapshot(300), InterruptibleSleep, 0, "snapshot(300), before the last change at 400");
}

#[test]
fn a_process_sum_is_exactly_the_sum_of_its_threads_snapshots() {
    let mut threads = [MsaClock::new(0, OncpuUsr), MsaClock::new(100, OnActiveQueue), MsaClock::new(200, OncpuSys)];
    threads[0].switch(500, InterruptibleSleep);
    threads[1].switch(600, OncpuUsr);
    threads[2].switch(700, Zombie);
    let now = 1_000;
    let mut sum = [0; NR_MICROSTATES];
    let mut expected = [0; NR_MICROSTATES];
    for t in &threads {
        t.add_to(now, &mut sum);
        for (e, v) in expected.iter_mut().zip(t.snapshot(now)) {
            *e += v;
        }
    }
    assert_eq!(sum, expected, "add_to over three threads must equal the sum of their snapshots at the same now");
    expect(&sum, OncpuUsr, 500 + 400, "thread 0 ran in user mode 0..500, thread 1 from 600");
    assert_eq!(sum.iter().sum::<u64>(), 1_000 + 900 + 800, "the sum of the threads' ages");
}

#[test]
fn switch_on_cpu_does_what_switch_does_between_on_cpu_states() {
    // The same transitions (one with a `now` that went backwards, one at the same TSC value)
    // through both paths leave identical clocks: settled times, last change, state, episodes.
    let (mut general, mut fast) = (MsaClock::new(0, OnActiveQueue), MsaClock::new(0, OnActiveQueue));
    for c in [&mut general, &mut fast] {
        c.switch(40, OncpuSys); // off the run queue: closes a delay episode (not on-CPU)
    }
    let steps =
        [(100, OncpuUsr), (250, OncpuSys), (240, OncpuTrap), (300, OncpuTrap), (300, OncpuUsr), (420, OncpuSys)];
    for (now, state) in steps {
        general.switch(now, state);
        fast.switch_on_cpu(now, state);
        assert_eq!(fast, general, "after the switch to {state:?} at {now}");
    }
    assert_eq!(fast.delays(500), general.delays(500));
    let t = fast.snapshot(500);
    expect(&t, OnActiveQueue, 40, "born on the run queue, picked at 40");
    expect(&t, OncpuSys, 60 + 80, "40..100 and 420..500");
    expect(&t, OncpuUsr, 150 + 120, "100..250 and 300..420");
    expect(&t, OncpuTrap, 50, "entered at 240, which went backwards: charged from 250 to 300");
    assert_eq!(t.iter().sum::<u64>(), 500);
}
