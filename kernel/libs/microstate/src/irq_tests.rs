//! `IrqAccounting`'s unit tests (kept out of `irq.rs`, which lab 4 hands out for editing).

use super::*;
use MicroState::*;

fn interrupted(c: &MsaClock, now: u64) -> u64 {
    c.snapshot(now)[Interrupted.index()]
}

#[test]
fn a_single_interrupt_steals_time_from_the_task() {
    let mut irq = IrqAccounting::new();
    let mut task = MsaClock::new(0, OncpuUsr);
    irq.irq_enter(1, 100, &mut task);
    assert_eq!(task.state(), Interrupted);
    assert_eq!(irq.resume_state(), Some(OncpuUsr));
    irq.irq_exit(1, 130, &mut task);
    assert_eq!(task.state(), OncpuUsr);
    let t = task.snapshot(200);
    assert_eq!(t[OncpuUsr.index()], 170);
    assert_eq!(t[Interrupted.index()], 30);
    let line = irq.line_stats(1);
    assert_eq!(line.timer.num_events, 1);
    assert_eq!(line.timer.elapsed_time, 30);
    assert_eq!((line.timer.start_time, line.timer.stop_time), (100, 130));
    assert_eq!(line.intrs.get(IntrKind::Hard), 1);
}

#[test]
fn nested_time_is_charged_exclusively() {
    // line 1: 100..200, with line 14 nested 120..150 and line 3 nested 160..170.
    let mut irq = IrqAccounting::new();
    let mut task = MsaClock::new(0, OncpuSys);
    irq.irq_enter(1, 100, &mut task);
    irq.irq_enter(14, 120, &mut task);
    assert_eq!(irq.depth(), 2);
    assert_eq!(irq.total_handler_ticks(140), 40);
    assert_eq!(irq.handler_ticks(1, 140), 20);
    assert_eq!(irq.handler_ticks(14, 140), 20);
    irq.irq_exit(14, 150, &mut task);
    assert_eq!(task.state(), Interrupted, "inner exit must not end INTERRUPTED");
    irq.irq_enter(3, 160, &mut task);
    irq.irq_exit(3, 170, &mut task);
    irq.irq_exit(1, 200, &mut task);
    assert_eq!(task.state(), OncpuSys);
    assert_eq!(irq.line_stats(1).timer.elapsed_time, 100 - 30 - 10);
    assert_eq!(irq.line_stats(14).timer.elapsed_time, 30);
    assert_eq!(irq.line_stats(3).timer.elapsed_time, 10);
    assert_eq!(interrupted(&task, 300), 100);
    assert_eq!(irq.total_handler_ticks(300), 100);
    let outer = irq.line_stats(1).timer;
    assert_eq!((outer.min_time, outer.max_time, outer.start_time, outer.stop_time), (60, 60, 100, 200));
}

#[test]
fn min_max_count_and_kinds() {
    let mut irq = IrqAccounting::new();
    irq.set_line_kind(0, IntrKind::Watchdog);
    let mut task = MsaClock::new(0, OncpuSys);
    for (start, len) in [(10, 5), (100, 2), (200, 9)] {
        irq.irq_enter(0, start, &mut task);
        irq.irq_exit(0, start + len, &mut task);
    }
    irq.irq_enter(7, 300, &mut task);
    irq.set_outcome(IntrKind::Spurious);
    irq.irq_exit(7, 301, &mut task);
    let t0 = irq.line_stats(0);
    assert_eq!((t0.timer.num_events, t0.timer.min_time, t0.timer.max_time), (3, 2, 9));
    assert_eq!(t0.intrs.get(IntrKind::Watchdog), 3);
    assert_eq!(t0.intrs.get(IntrKind::Hard), 0);
    assert_eq!(irq.line_stats(7).intrs.get(IntrKind::Spurious), 1);
    assert_eq!(irq.line_stats(7).intrs.total(), 1);
}

#[test]
fn handover_moves_interrupted_to_the_incoming_task() {
    let mut irq = IrqAccounting::new();
    let mut prev = MsaClock::new(0, OncpuUsr);
    let mut next = MsaClock::new(0, OnActiveQueue);
    irq.irq_enter(0, 100, &mut prev);
    irq.irq_enter(5, 110, &mut prev);
    // The scheduler switches tasks inside the nested interrupt, at 120.
    irq.context_switch(120, &mut prev, OnExpiredQueue, &mut next, OncpuSys);
    assert_eq!(next.state(), Interrupted);
    assert_eq!(irq.resume_state(), Some(OncpuSys));
    irq.irq_exit(5, 125, &mut next);
    irq.irq_exit(0, 140, &mut next);
    assert_eq!(next.state(), OncpuSys);
    assert_eq!(interrupted(&prev, 200), 20);
    assert_eq!(interrupted(&next, 200), 20);
    assert_eq!(prev.snapshot(200)[OnExpiredQueue.index()], 80);
    assert_eq!(next.snapshot(200)[OnActiveQueue.index()], 120);
    assert_eq!(irq.total_handler_ticks(200), 40);
}

#[test]
fn context_switch_outside_interrupts_is_plain() {
    let mut irq = IrqAccounting::new();
    let mut prev = MsaClock::new(0, OncpuSys);
    let mut next = MsaClock::new(0, OnActiveQueue);
    irq.context_switch(50, &mut prev, InterruptibleSleep, &mut next, OncpuUsr);
    assert_eq!(prev.state(), InterruptibleSleep);
    assert_eq!(next.state(), OncpuUsr);
}

#[test]
fn unbalanced_and_too_deep_nesting_never_panic() {
    let mut irq = IrqAccounting::new();
    let mut task = MsaClock::new(0, OncpuSys);
    irq.irq_exit(3, 10, &mut task);
    assert_eq!(irq.mismatched_exits(), 1);
    assert_eq!(irq.depth(), 0);
    let deep = MAX_IRQ_NESTING + 3;
    for i in 0..deep {
        irq.irq_enter(i, 100 + i as u64, &mut task);
    }
    assert_eq!(irq.depth(), deep);
    for i in (0..deep).rev() {
        irq.irq_exit(i, 200 + i as u64, &mut task);
    }
    assert_eq!(irq.depth(), 0);
    assert_eq!(task.state(), OncpuSys);
    assert_eq!(interrupted(&task, 1_000), irq.total_handler_ticks(1_000));
    irq.irq_enter(99, 2_000, &mut task);
    irq.irq_exit(98, 2_010, &mut task);
    assert_eq!(irq.mismatched_exits(), 2);
    assert_eq!(irq.stray_stats().timer.elapsed_time, 10);
    assert_eq!(interrupted(&task, 3_000), irq.total_handler_ticks(3_000));
}

#[test]
fn backwards_time_inside_interrupts_keeps_the_identity() {
    let mut irq = IrqAccounting::new();
    let mut task = MsaClock::new(0, OncpuSys);
    irq.irq_enter(1, 100, &mut task);
    irq.irq_enter(2, 90, &mut task); // backwards
    irq.irq_exit(2, 95, &mut task);
    irq.irq_exit(1, 120, &mut task);
    assert_eq!(interrupted(&task, 130), irq.total_handler_ticks(130));
}

/// `clock`'s `state` must read `want` ticks at `now`; `why` says what should have charged it.
fn expect(clock: &MsaClock, now: u64, state: MicroState, want: u64, why: &str) {
    let got = clock.snapshot(now)[state.index()];
    assert_eq!(got, want, "{why}: {state:?} reads {got} ticks at {now}, expected {want}");
}

#[test]
fn entry_makes_the_task_interrupted_and_exit_gives_its_state_back() {
    let mut irq = IrqAccounting::new();
    let mut task = MsaClock::new(0, OncpuUsr);
    irq.irq_enter(3, 1_000, &mut task);
    assert_eq!(task.state(), Interrupted, "after irq_enter the interrupted task must be INTERRUPTED");
    assert_eq!(irq.resume_state(), Some(OncpuUsr), "irq_enter must remember the state to resume (ONCPU_USR)");
    expect(&task, 1_400, Interrupted, 400, "an interrupt in progress since 1000");
    assert_eq!(irq.handler_ticks(3, 1_400), 400, "handler_ticks(3) must include the handler still running");
    irq.irq_exit(3, 1_600, &mut task);
    assert_eq!(task.state(), OncpuUsr, "the outermost irq_exit must give the task its state back");
    expect(&task, 2_000, Interrupted, 600, "irq_enter at 1000, irq_exit at 1600");
    expect(&task, 2_000, OncpuUsr, 1_400, "user mode 0..1000 and 1600..2000");
    assert_eq!(irq.total_handler_ticks(2_000), 600, "total handler time must equal the task's INTERRUPTED time");
}

#[test]
fn a_line_counts_its_own_interrupts_and_times() {
    let mut irq = IrqAccounting::new();
    let mut task = MsaClock::new(0, OncpuSys);
    for (start, len) in [(100, 40), (300, 10), (500, 25)] {
        irq.irq_enter(6, start, &mut task);
        irq.irq_exit(6, start + len, &mut task);
    }
    let t = irq.line_stats(6).timer;
    assert_eq!(t.num_events, 3, "line 6 fired 3 times");
    assert_eq!(t.elapsed_time, 75, "line 6's handlers ran 40 + 10 + 25 ticks");
    assert_eq!((t.min_time, t.max_time), (10, 40), "shortest and longest single handler of line 6");
    assert_eq!((t.start_time, t.stop_time), (500, 525), "the last interrupt of line 6 ran 500..525");
    assert_eq!(irq.line_stats(6).intrs.get(IntrKind::Hard), 3, "3 hard interrupts on line 6");
    assert_eq!(irq.line_stats(7).timer.num_events, 0, "line 7 never fired");
}

#[test]
fn the_handover_ends_interrupted_for_the_outgoing_task_and_starts_it_for_the_incoming() {
    let mut irq = IrqAccounting::new();
    let mut prev = MsaClock::new(0, OncpuUsr);
    let mut next = MsaClock::new(0, OnActiveQueue);
    irq.irq_enter(0, 1_000, &mut prev);
    let at = irq.task_off_cpu(1_300, &mut prev, OnExpiredQueue);
    irq.task_on_cpu(at, &mut next, OncpuUsr);
    assert_eq!(next.state(), Interrupted, "a task switched in inside an interrupt inherits INTERRUPTED");
    assert_eq!(irq.resume_state(), Some(OncpuUsr), "the outermost exit must resume the incoming task's state");
    irq.irq_exit(0, 1_500, &mut next);
    assert_eq!(next.state(), OncpuUsr, "irq_exit on the incoming task must give it its running state");
    expect(&prev, 2_000, Interrupted, 300, "prev was INTERRUPTED from the entry (1000) to the switch (1300)");
    expect(&prev, 2_000, OnExpiredQueue, 700, "prev waits from the switch (1300)");
    expect(&next, 2_000, Interrupted, 200, "next was INTERRUPTED from the switch (1300) to the exit (1500)");
    expect(&next, 2_000, OncpuUsr, 500, "next runs from the exit (1500)");
    assert_eq!(irq.line_stats(0).timer.elapsed_time, 500, "the line's handler ran 1000..1500 across the switch");
}
