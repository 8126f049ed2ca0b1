//! Microstate accounting through the scheduler, with exact numbers: the lazy array flip,
//! the interrupt handover, the idle task, dequeue-without-pick.
#![cfg(feature = "accounting")]

mod common;

use common::Sys;
use tally_runqueue::{BlockReason, MicroState, MsaTimes, Policy, PrevAction, SchedConfig, SchedEntity, SleepKind};
use MicroState::*;

/// 1000 Hz ticks, 1000 TSC ticks per timer tick.
fn sys() -> Sys {
    Sys::new(SchedConfig::new(1000, 1_000_000))
}

/// `n` timer ticks with no interrupt accounting: exact TSC arithmetic.
fn plain_ticks(sys: &mut Sys, n: u64) {
    for _ in 0..n {
        sys.advance(1000);
        sys.rq.scheduler_tick(&mut sys.store, sys.now);
        if sys.rq.need_resched() {
            sys.schedule(PrevAction::Preempted);
        }
        sys.check();
    }
}

fn t(times: MsaTimes, s: MicroState) -> u64 {
    times[s.index()]
}

#[test]
fn lazy_flip_charges_expired_until_the_flip_and_active_after() {
    let mut sys = sys();
    let a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(0));
    let c = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    plain_ticks(&mut sys, 300); // a, b, c each run 100 ticks and expire; flip at 300_000
    assert_eq!(sys.rq.flip_generation(), 1);
    assert_eq!(sys.rq.last_flip_time(), 300_000);
    assert_eq!(sys.current(), a);
    plain_ticks(&mut sys, 50);

    // b has waited on the (old) expired array since 200_000 and, after the flip at
    // 300_000, on the active one. Its clock has not been touched...
    let raw = sys.store.tasks[b.0 as usize].clock;
    assert_eq!(raw.state(), OnExpiredQueue);
    assert_eq!(t(raw.snapshot(sys.now), OnExpiredQueue), 150_000);
    // ...but readers see the truth.
    assert_eq!(sys.state_of(b), OnActiveQueue);
    let bt = sys.msa(b);
    assert_eq!(t(bt, OnExpiredQueue), 100_000);
    assert_eq!(t(bt, OnActiveQueue), 100_000 + 50_000);
    assert_eq!(t(bt, OncpuSys), 100_000);
    // a was settled when picked: expired 100_000..300_000.
    let at = sys.msa(a);
    assert_eq!((t(at, OnExpiredQueue), t(at, OnActiveQueue), t(at, OncpuSys)), (200_000, 0, 150_000));
    // c expired in the very schedule() that flipped: it went straight to ONACTIVEQUEUE.
    let ct = sys.msa(c);
    assert_eq!((t(ct, OnExpiredQueue), t(ct, OnActiveQueue)), (0, 200_000 + 50_000));

    plain_ticks(&mut sys, 50); // a expires at 400_000; b is picked and settled
    assert_eq!(sys.current(), b);
    let raw = sys.store.tasks[b.0 as usize].clock.snapshot(sys.now);
    assert_eq!((t(raw, OnExpiredQueue), t(raw, OnActiveQueue)), (100_000, 200_000));
}

#[test]
fn handover_in_the_timer_interrupt_moves_interrupted_to_the_incoming_task() {
    let mut sys = sys();
    let a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    plain_ticks(&mut sys, 99);
    assert_eq!(sys.now, 99_000);
    // The 100th tick: the interrupt arrives at 99_500, a's slice ends, and the handler
    // reschedules at 99_800, before the interrupt returns at 100_000.
    sys.now = 99_500;
    sys.rq.irq_enter(&mut sys.store, 0, sys.now);
    sys.check();
    sys.now = 99_700;
    sys.rq.scheduler_tick(&mut sys.store, sys.now);
    assert!(sys.rq.need_resched());
    sys.now = 99_800;
    let sw = sys.schedule(PrevAction::Preempted);
    assert_eq!((sw.prev, sw.next), (a, b));
    sys.check();
    assert_eq!(sys.state_of(b), Interrupted);
    assert_eq!(sys.state_of(a), OnExpiredQueue);
    sys.now = 100_000;
    sys.rq.irq_exit(&mut sys.store, 0, sys.now);
    sys.check();
    assert_eq!(sys.state_of(b), OncpuSys);

    let (at, bt) = (sys.msa(a), sys.msa(b));
    assert_eq!((t(at, OncpuSys), t(at, Interrupted), t(at, OnExpiredQueue)), (99_500, 300, 200));
    assert_eq!((t(bt, OnActiveQueue), t(bt, Interrupted), t(bt, OncpuSys)), (99_800, 200, 0));
    let line = sys.rq.irq().line_stats(0);
    assert_eq!((line.timer.num_events, line.timer.elapsed_time), (1, 500));
}

#[test]
fn a_wake_up_in_an_interrupt_hands_over_to_the_woken_task() {
    let mut sys = sys();
    let runner = sys.spawn(SchedEntity::new(0));
    let waiter = sys.spawn(SchedEntity::new(-10));
    assert_eq!(sys.schedule(PrevAction::Preempted).next, waiter);
    sys.now = 1_000;
    assert_eq!(sys.schedule(PrevAction::Block(BlockReason::Sleep(SleepKind::Poll))).next, runner);
    sys.now = 50_000;
    sys.rq.irq_enter(&mut sys.store, 9, sys.now); // the device the waiter polls
    sys.rq.irq_enter(&mut sys.store, 0, 50_100); // a nested timer interrupt
    sys.rq.irq_exit(&mut sys.store, 0, 50_300);
    sys.now = 50_400;
    assert!(sys.wake(waiter));
    assert!(sys.rq.need_resched());
    sys.now = 50_500;
    sys.schedule(PrevAction::Preempted);
    sys.check();
    sys.now = 51_000;
    sys.rq.irq_exit(&mut sys.store, 9, sys.now);
    sys.check();
    let (rt, wt) = (sys.msa(runner), sys.msa(waiter));
    assert_eq!(t(rt, Interrupted), 500);
    assert_eq!(t(wt, Interrupted), 500);
    assert_eq!(t(wt, PollSleep), 49_400);
    assert_eq!(t(wt, OnActiveQueue), 100);
    assert_eq!(sys.rq.irq().line_stats(9).timer.elapsed_time, 1_000 - 200);
    assert_eq!(sys.rq.irq().line_stats(0).timer.elapsed_time, 200);
    assert_eq!(sys.state_of(waiter), OncpuSys);
}

#[test]
fn the_idle_task_accounts_cpu_idle_time_as_oncpu_and_waits_as_active() {
    let mut sys = sys();
    let idle = sys.rq.idle();
    sys.now = 1_000;
    let a = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    sys.now = 5_000;
    assert_eq!(sys.schedule(PrevAction::Block(BlockReason::Sleep(SleepKind::Interruptible))).next, idle);
    sys.rq.irq_enter(&mut sys.store, 1, 6_000);
    sys.now = 6_500;
    sys.rq.irq_exit(&mut sys.store, 1, sys.now);
    sys.now = 10_000;
    sys.check();
    let it = sys.msa(idle);
    assert_eq!((t(it, OncpuSys), t(it, OnActiveQueue), t(it, Interrupted)), (5_500, 4_000, 500));
    let at = sys.msa(a);
    assert_eq!((t(at, OncpuSys), t(at, InterruptibleSleep)), (4_000, 5_000));
}

#[test]
fn removing_a_task_owing_a_flip_settles_it_first() {
    let mut sys = sys();
    let _a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(0));
    let _c = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    plain_ticks(&mut sys, 350);
    assert!(sys.rq.remove(&mut sys.store, b, BlockReason::Stop, sys.now));
    sys.check();
    plain_ticks(&mut sys, 50);
    let raw = sys.store.tasks[b.0 as usize].clock.snapshot(sys.now);
    assert_eq!((t(raw, OnExpiredQueue), t(raw, OnActiveQueue), t(raw, Stopped)), (100_000, 150_000, 50_000));
    assert!(sys.wake(b), "a stopped task is continued by a wake-up");
    sys.check();
}

#[test]
fn set_scheduler_on_a_task_owing_a_flip_settles_it_first() {
    let mut sys = sys();
    let _a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(0));
    let _c = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    plain_ticks(&mut sys, 350);
    sys.rq.set_scheduler(&mut sys.store, b, Policy::RoundRobin, 1, sys.now).unwrap();
    let raw = sys.store.tasks[b.0 as usize].clock;
    assert_eq!(raw.state(), OnActiveQueue);
    assert_eq!(t(raw.snapshot(sys.now), OnExpiredQueue), 100_000);
    assert!(sys.rq.need_resched());
    sys.check();
    // A set_nice on a task owing a flip does not need to touch its clock at all.
    let c = _c;
    sys.rq.set_nice(&mut sys.store, c, 5, sys.now);
    sys.check();
}

#[test]
fn running_state_changes_apply_now_or_at_the_end_of_the_interrupt() {
    let mut sys = sys();
    let a = sys.spawn(SchedEntity::new(0).with_running_state(OncpuUsr));
    sys.schedule(PrevAction::Preempted);
    assert_eq!(sys.state_of(a), OncpuUsr);
    sys.now = 1_000;
    sys.rq.set_running_state(&mut sys.store, a, OncpuSys, sys.now); // a system call
    sys.now = 1_500;
    sys.rq.irq_enter(&mut sys.store, 4, sys.now);
    sys.rq.set_running_state(&mut sys.store, a, OncpuUsr, 1_600); // back to user, after the irq
    assert_eq!(sys.state_of(a), Interrupted);
    sys.now = 2_000;
    sys.rq.irq_exit(&mut sys.store, 4, sys.now);
    assert_eq!(sys.state_of(a), OncpuUsr);
    sys.now = 3_000;
    sys.check();
    let at = sys.msa(a);
    assert_eq!((t(at, OncpuUsr), t(at, OncpuSys), t(at, Interrupted)), (2_000, 500, 500));
}

#[test]
fn a_kernel_thread_that_execs_in_place_keeps_its_clocks() {
    // Init's life: a kernel thread (ONCPU_SYS) sleeps and runs, then execs /bin/init and
    // runs in user mode, all as one task: its clocks go on, and sum to its age throughout.
    let mut sys = sys();
    let init = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    sys.now = 2_000;
    sys.schedule(PrevAction::Block(BlockReason::Sleep(SleepKind::Interruptible)));
    sys.now = 5_000;
    assert!(sys.wake(init));
    sys.schedule(PrevAction::Preempted);
    sys.now = 6_000;
    sys.check();
    assert!(sys.store.se(init).is_kernel_thread());
    // The exec: the entity becomes a user task's, and the first return to ring 3 switches
    // the running state.
    sys.store.tasks[init.0 as usize].se.set_user_space();
    sys.rq.set_running_state(&mut sys.store, init, OncpuUsr, sys.now);
    assert!(!sys.store.se(init).is_kernel_thread());
    sys.now = 9_000;
    sys.check();
    let times = sys.msa(init);
    assert_eq!((t(times, OncpuSys), t(times, InterruptibleSleep), t(times, OncpuUsr)), (3_000, 3_000, 3_000));
    assert_eq!(times.iter().sum::<u64>(), 9_000);
}

#[test]
fn zombies_keep_accumulating_zombie_time() {
    let mut sys = sys();
    let a = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    sys.now = 7_000;
    sys.schedule(PrevAction::Block(BlockReason::Exit));
    sys.now = 10_000;
    sys.check();
    assert_eq!(t(sys.msa(a), Zombie), 3_000);
}
