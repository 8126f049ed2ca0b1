//! Scheduling behaviour of the O(1) scheduler, one rule per test.

mod common;

use common::Sys;
use tally_runqueue::prio::nice_to_prio;
use tally_runqueue::{
    BlockReason, MicroState, Policy, PrevAction, SchedConfig, SchedEntity, SleepKind, TaskSlot, TaskState,
};

const SLEEP: PrevAction = PrevAction::Block(BlockReason::Sleep(SleepKind::Interruptible));

/// The microstate `key` is in (only checked when accounting is compiled in).
fn assert_state(sys: &mut Sys, key: TaskSlot, want: MicroState) {
    if tally_runqueue::ACCOUNTING_ENABLED {
        assert_eq!(sys.state_of(key), want, "microstate of {key:?}");
    }
}

/// Let `key` (the current task) sleep, then advance `ms` of wall time with nothing else
/// happening for it, and wake it: with no ceiling for kernel threads, a long enough sleep
/// gives it the maximum sleep average.
fn sleep_then_wake(sys: &mut Sys, key: TaskSlot, ms: u64) {
    assert_eq!(sys.current(), key);
    sys.schedule(SLEEP);
    sys.run_ticks(ms);
    assert!(sys.wake(key));
}

#[test]
fn picks_by_priority_and_fifo_within_a_level() {
    let mut sys = Sys::hz1000();
    let low = sys.spawn(SchedEntity::new(5));
    let a = sys.spawn(SchedEntity::new(0));
    let high = sys.spawn(SchedEntity::new(-5));
    let b = sys.spawn(SchedEntity::new(0));
    let c = sys.spawn(SchedEntity::new(0));
    assert!(sys.rq.need_resched(), "a new task preempts idle");
    let mut ran = vec![sys.schedule(PrevAction::Preempted).next];
    for _ in 0..4 {
        sys.advance(10);
        ran.push(sys.schedule(SLEEP).next);
        sys.check();
    }
    assert_eq!(ran, vec![high, a, b, c, low]);
    sys.advance(10);
    assert_eq!(sys.schedule(SLEEP).next, sys.rq.idle(), "nothing left: idle");
    sys.check();
}

#[test]
fn a_preempted_task_keeps_its_place_at_the_head() {
    let mut sys = Sys::hz1000();
    let a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(0));
    assert_eq!(sys.schedule(PrevAction::Preempted).next, a);
    sys.run_ticks(10);
    assert_eq!(sys.current(), a);
    // Something better wakes and preempts a, then sleeps: a resumes, not b.
    let hi = sys.spawn(SchedEntity::new(-10));
    assert!(sys.rq.need_resched());
    assert_eq!(sys.schedule(PrevAction::Preempted).next, hi);
    assert_eq!(sys.schedule(SLEEP).next, a);
    let _ = b;
    sys.check();
}

#[test]
fn round_robin_rotates_at_the_end_of_each_slice() {
    let mut sys = Sys::hz1000();
    let rr = |sys: &mut Sys| sys.spawn(SchedEntity::new(0).with_policy(Policy::RoundRobin, 10).unwrap());
    let a = rr(&mut sys);
    let b = rr(&mut sys);
    let normal = sys.spawn(SchedEntity::new(-20));
    sys.schedule(PrevAction::Preempted);
    let mut runs = vec![];
    for _ in 0..600 {
        let before = sys.current();
        sys.tick();
        if runs.last().map(|(k, _)| *k) != Some(before) {
            runs.push((before, 0));
        }
        runs.last_mut().unwrap().1 += 1;
    }
    // 100-tick slices (nice 0), alternating, the normal task never runs, both stay active.
    assert_eq!(runs, vec![(a, 100), (b, 100), (a, 100), (b, 100), (a, 100), (b, 100)]);
    assert_eq!(sys.ticks_run[normal.0 as usize], 0);
    assert_eq!(sys.store.se(a).array(), Some(sys.rq.active().id()));
    assert_eq!(sys.rq.expired().nr_active(), 0, "RR tasks never expire");
    sys.check();
}

#[test]
fn fifo_runs_until_it_blocks_and_normal_tasks_cannot_preempt_it() {
    let mut sys = Sys::hz1000();
    let fifo = sys.spawn(SchedEntity::new(19).with_policy(Policy::Fifo, 1).unwrap());
    let other_fifo = sys.spawn(SchedEntity::new(0).with_policy(Policy::Fifo, 1).unwrap());
    sys.schedule(PrevAction::Preempted);
    assert_eq!(sys.current(), fifo);
    // The best a normal task can be: nice -20 with the full sleep bonus.
    let normal = sys.spawn(SchedEntity::new(-20));
    assert!(!sys.rq.need_resched(), "no normal task preempts FIFO");
    for _ in 0..5_000 {
        sys.tick();
        if sys.ticks_run.iter().sum::<u64>() % 700 == 0 {
            // A normal task waking repeatedly changes nothing.
            sys.rq.remove(&mut sys.store, normal, BlockReason::Sleep(SleepKind::Interruptible), sys.now);
            sys.advance(1);
            assert!(sys.wake(normal));
            assert!(!sys.rq.need_resched());
        }
    }
    assert_eq!(sys.ticks_run[fifo.0 as usize], 5_000, "FIFO never expires, not even an equal FIFO gets in");
    assert_eq!(sys.ticks_run[other_fifo.0 as usize], 0);
    // A higher RT priority does preempt it.
    let urgent = sys.spawn(SchedEntity::new(0).with_policy(Policy::Fifo, 50).unwrap());
    assert!(sys.rq.need_resched());
    assert_eq!(sys.schedule(PrevAction::Preempted).next, urgent);
    // When it blocks, the preempted FIFO task resumes (it kept the head of its level).
    assert_eq!(sys.schedule(SLEEP).next, fifo);
    // Yielding sends a FIFO task to the back of its level: the equal one gets a turn.
    assert_eq!(sys.schedule(PrevAction::Yield).next, other_fifo);
    sys.check();
}

#[test]
fn expiry_moves_a_cpu_hog_to_the_expired_array_and_the_arrays_swap() {
    let mut sys = Sys::hz1000();
    let a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    let active_before = sys.rq.active().id();
    sys.run_ticks(99);
    assert_eq!(sys.current(), a);
    assert_eq!(sys.store.se(a).time_slice(), 1);
    sys.tick();
    // a used its 100 ticks: fresh slice, expired array, b runs.
    assert_eq!(sys.current(), b);
    assert_eq!(sys.store.se(a).array(), Some(sys.rq.expired().id()));
    assert_eq!(sys.store.se(a).time_slice(), 100);
    assert_eq!(sys.rq.expired_timestamp(), Some(100));
    assert_eq!(sys.rq.best_expired_prio(), nice_to_prio(0));
    assert_state(&mut sys, a, MicroState::OnExpiredQueue);
    assert_eq!(sys.rq.flip_generation(), 0);
    sys.check();
    sys.run_ticks(100);
    // b expired too; active was empty, so the arrays swapped and a runs again.
    assert_eq!(sys.current(), a);
    assert_eq!(sys.rq.flip_generation(), 1);
    assert_ne!(sys.rq.active().id(), active_before);
    assert_eq!(sys.rq.expired().nr_active(), 0);
    assert_eq!(sys.rq.active().nr_active(), 2);
    assert_eq!(sys.rq.expired_timestamp(), None);
    assert_eq!(sys.rq.best_expired_prio(), tally_runqueue::MAX_PRIO);
    sys.check();
}

#[test]
fn an_interactive_task_goes_back_on_the_active_array_when_its_slice_ends() {
    let mut sys = Sys::hz1000();
    let inter = sys.spawn(SchedEntity::new(0));
    let hog = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    sleep_then_wake(&mut sys, inter, 2_000);
    assert_eq!(sys.store.se(inter).prio(), 115, "maximum bonus: 5 levels better");
    assert!(sys.rq.need_resched());
    sys.schedule(PrevAction::Preempted);
    assert_eq!(sys.current(), inter);
    let slice = sys.store.se(inter).time_slice();
    sys.run_ticks(slice as u64);
    assert_eq!(
        sys.rq.expired_timestamp(),
        Some(sys.rq.ticks()),
        "its slice ended at this tick: expired_timestamp records the round's first expiry, even one that goes back on active"
    );
    assert_eq!(sys.store.se(inter).array(), Some(sys.rq.active().id()), "reinserted on active");
    assert_eq!(sys.current(), inter, "and still the best task");
    assert_eq!(sys.store.se(hog).array(), Some(sys.rq.active().id()));
    assert_eq!(sys.rq.expired().nr_active(), 0);
    sys.check();
}

#[test]
fn equal_interactive_tasks_round_robin_every_granularity() {
    let mut sys = Sys::hz1000();
    let a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(0));
    assert_eq!(sys.schedule(PrevAction::Preempted).next, a);
    assert_eq!(sys.schedule(SLEEP).next, b);
    assert_eq!(sys.schedule(SLEEP).next, sys.rq.idle());
    sys.run_ticks(2_000);
    assert!(sys.wake(a) && sys.wake(b));
    assert_eq!(sys.schedule(PrevAction::Preempted).next, a);
    assert_eq!(sys.store.se(b).prio(), 115);
    // Both at prio 115 with full bonus: TIMESLICE_GRANULARITY is 10 ticks.
    sys.run_ticks(9);
    assert_eq!(sys.current(), a);
    sys.tick();
    assert_eq!(sys.current(), b, "requeued behind its equal after 10 ms");
    sys.run_ticks(10);
    assert_eq!(sys.current(), a);
    sys.check();
}

/// Hogs: nice -20 kernel threads that slept long enough for the maximum bonus, so each
/// expiry puts them straight back on the active array. The victim expired while they were
/// active. EXPIRED_STARVING must stop reinserting them after STARVATION_LIMIT * nr_running
/// ticks, the arrays then flip, and the victim runs.
#[test]
fn starvation_limit_bounds_how_long_an_expired_task_waits() {
    let mut sys = Sys::hz1000();
    let h1 = sys.spawn(SchedEntity::new(-20));
    let h2 = sys.spawn(SchedEntity::new(-20));
    let victim = sys.spawn(SchedEntity::new(0));
    // Both hogs go to sleep at once; the victim runs alone for two seconds.
    assert_eq!(sys.schedule(PrevAction::Preempted).next, h1);
    assert_eq!(sys.schedule(SLEEP).next, h2);
    assert_eq!(sys.schedule(SLEEP).next, victim);
    sys.run_ticks(2_000 - sys.store.se(victim).time_slice() as u64 + 100 - 1);
    assert_eq!(sys.store.se(victim).time_slice(), 1);
    // The hogs wake in the very interrupt in which the victim's slice runs out.
    sys.advance(sys.tsc_per_tick());
    sys.ticks_run[victim.0 as usize] += 1;
    sys.rq.irq_enter(&mut sys.store, 0, sys.now);
    assert!(sys.wake(h1) && sys.wake(h2));
    sys.rq.scheduler_tick(&mut sys.store, sys.now);
    sys.rq.irq_exit(&mut sys.store, 0, sys.now);
    sys.schedule(PrevAction::Preempted);
    assert_eq!(sys.store.se(victim).array(), Some(sys.rq.expired().id()));
    assert_eq!(sys.rq.expired_timestamp(), Some(sys.rq.ticks()));
    sys.check();

    let expired_at = sys.rq.ticks();
    let nr_running = sys.rq.nr_running() as u64;
    let limit = sys.rq.config().starvation_limit() as u64 * nr_running;
    let max_slice = 800;
    let mut reinsertions = 0;
    let mut flipped_at = None;
    let gen = sys.rq.flip_generation();
    while sys.current() != victim {
        let curr = sys.current();
        let slice_before = sys.store.se(curr).time_slice();
        sys.tick();
        if slice_before == 1 && sys.store.se(curr).array() == Some(sys.rq.active().id()) && flipped_at.is_none() {
            reinsertions += 1;
        }
        if flipped_at.is_none() && sys.rq.flip_generation() != gen {
            flipped_at = Some(sys.rq.ticks());
        }
        assert!(sys.rq.ticks() - expired_at <= 2 * (limit + 2 * max_slice), "victim starved");
    }
    let waited = sys.rq.ticks() - expired_at;
    let flipped_after = flipped_at.expect("the arrays flipped") - expired_at;
    assert!(reinsertions >= 2, "the hogs really were interactive (reinserted {reinsertions} times)");
    // The expired array is let in within the limit plus what the hogs had left of a slice.
    assert!(flipped_after > limit, "not before the limit: flipped after {flipped_after}");
    assert!(flipped_after <= limit + 2 * max_slice, "flipped after {flipped_after}, limit {limit}");
    // After the flip the hogs are still better than the victim, so it may have to wait one
    // more starvation period before they are pushed to the expired array again.
    assert!(waited <= 2 * (limit + 2 * max_slice), "waited {waited}");
    sys.check();
}

#[test]
fn a_better_static_priority_on_expired_forces_expiry_of_interactive_tasks() {
    let mut sys = Sys::hz1000();
    let inter = sys.spawn(SchedEntity::new(0));
    let better = sys.spawn(SchedEntity::new(-5));
    let filler = sys.spawn(SchedEntity::new(-5));
    assert_eq!(sys.schedule(PrevAction::Preempted).next, better);
    // `inter` sleeps while the two nice -5 tasks (static 115, prio 120, 500-tick slices) run.
    sys.rq.remove(&mut sys.store, inter, BlockReason::Sleep(SleepKind::Interruptible), sys.now);
    sys.run_ticks(500);
    assert_eq!(sys.store.se(better).array(), Some(sys.rq.expired().id()));
    assert_eq!(sys.rq.best_expired_prio(), 115);
    assert_eq!(sys.current(), filler);
    sys.run_ticks(250);
    // 750 ms of sleep: bonus 7, prio 118 — interactive, and better than filler's 120.
    assert!(sys.wake(inter));
    assert_eq!(sys.store.se(inter).prio(), 118);
    sys.schedule(PrevAction::Preempted);
    assert_eq!(sys.current(), inter);
    sys.run_ticks(sys.store.se(inter).time_slice() as u64);
    assert!(tally_runqueue::interactivity::is_interactive(sys.store.se(inter).prio(), 120), "still interactive");
    // ...but its static prio 120 is worse than the best expired (115): it must expire.
    assert_eq!(sys.store.se(inter).array(), Some(sys.rq.expired().id()));
    assert_eq!(sys.current(), filler);
    sys.check();
}

#[test]
fn cpu_share_of_two_hogs_is_the_ratio_of_their_timeslices() {
    for accounting_check in [false, true] {
        let mut sys = Sys::hz1000();
        let n0 = sys.spawn(SchedEntity::new(0));
        let n10 = sys.spawn(SchedEntity::new(10));
        sys.schedule(PrevAction::Preempted);
        if accounting_check {
            for _ in 0..30_000 {
                sys.tick_resched_in_irq();
            }
        } else {
            sys.run_ticks(30_000);
        }
        let (t0, t10) = (sys.ticks_run[n0.0 as usize] as f64, sys.ticks_run[n10.0 as usize] as f64);
        let want = 100.0 / 50.0;
        assert!((t0 / t10 - want).abs() / want < 0.05, "tick ratio {} want {want}", t0 / t10);
        if tally_runqueue::ACCOUNTING_ENABLED {
            let cpu = |sys: &mut Sys, k| sys.msa(k)[MicroState::OncpuSys.index()] as f64;
            let (c0, c10) = (cpu(&mut sys, n0), cpu(&mut sys, n10));
            assert!((c0 / c10 - want).abs() / want < 0.05, "ONCPU ratio {} want {want}", c0 / c10);
        }
        sys.check();
    }
}

#[test]
fn yield_sends_a_normal_task_to_the_expired_array() {
    let mut sys = Sys::hz1000();
    let a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(10));
    sys.schedule(PrevAction::Preempted);
    assert_eq!(sys.schedule(PrevAction::Yield).next, b, "even a worse task runs before a yielder");
    assert_eq!(sys.store.se(a).array(), Some(sys.rq.expired().id()));
    assert_state(&mut sys, a, MicroState::OnExpiredQueue);
    // Alone, a yielder gets the CPU straight back (through an array flip).
    sys.schedule(SLEEP);
    assert_eq!(sys.current(), a);
    assert_eq!(sys.schedule(PrevAction::Yield).next, a);
    sys.check();
}

#[test]
fn wake_up_preempts_only_when_the_woken_task_is_better() {
    let mut sys = Sys::hz1000();
    let runner = sys.spawn(SchedEntity::new(-5));
    let sleeper = sys.spawn(SchedEntity::new(-5));
    let worse = sys.spawn(SchedEntity::new(15));
    assert_eq!(sys.schedule(PrevAction::Preempted).next, runner);
    sys.rq.remove(&mut sys.store, sleeper, BlockReason::Sleep(SleepKind::Interruptible), sys.now);
    sys.rq.remove(&mut sys.store, worse, BlockReason::Sleep(SleepKind::Interruptible), sys.now);
    sys.run_ticks(200);
    assert!(sys.wake(worse));
    assert!(!sys.rq.need_resched(), "a worse task does not preempt");
    assert!(!sys.wake(worse), "already runnable");
    assert!(sys.wake(sleeper));
    assert_eq!(sys.store.se(sleeper).prio(), 118, "200 ms of sleep: bonus 2");
    assert_eq!(sys.store.se(runner).prio(), 120);
    assert!(sys.rq.need_resched());
    assert_eq!(sys.schedule(PrevAction::Preempted).next, sleeper);
    sys.check();
}

#[test]
fn sleep_and_exit_leave_the_runqueue_and_zombies_stay_dead() {
    let mut sys = Sys::hz1000();
    let a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    let sw = sys.schedule(PrevAction::Block(BlockReason::Sleep(SleepKind::Uninterruptible)));
    assert_eq!((sw.prev, sw.next), (a, b));
    assert_eq!(sys.rq.nr_uninterruptible(), 1);
    assert_eq!(sys.store.se(a).state(), TaskState::Blocked(BlockReason::Sleep(SleepKind::Uninterruptible)));
    sys.advance(1_000);
    let sw = sys.schedule(PrevAction::Block(BlockReason::Exit));
    assert_eq!((sw.prev, sw.next), (b, sys.rq.idle()));
    assert!(!sys.wake(b), "a zombie cannot be woken");
    assert_state(&mut sys, b, MicroState::Zombie);
    assert!(sys.wake(a));
    assert_eq!(sys.rq.nr_uninterruptible(), 0);
    assert_eq!(sys.schedule(PrevAction::Preempted).next, a);
    sys.check();
}

#[test]
fn set_nice_requeues_at_the_new_level() {
    let mut sys = Sys::hz1000();
    let a = sys.spawn(SchedEntity::new(0));
    let b = sys.spawn(SchedEntity::new(5));
    sys.schedule(PrevAction::Preempted);
    assert_eq!(sys.current(), a);
    sys.rq.set_nice(&mut sys.store, b, -10, sys.now);
    assert_eq!(sys.store.se(b).queue_level(), Some(115), "static 110, no bonus");
    assert!(sys.rq.need_resched());
    assert_eq!(sys.schedule(PrevAction::Preempted).next, b);
    sys.rq.set_nice(&mut sys.store, b, 19, sys.now);
    assert!(sys.rq.need_resched(), "the running task got worse");
    assert_eq!(sys.schedule(PrevAction::Preempted).next, a);
    assert_eq!(sys.store.se(b).nice(), 19);
    sys.check();
}

#[test]
fn set_scheduler_moves_a_task_between_policies() {
    let mut sys = Sys::hz1000();
    let a = sys.spawn(SchedEntity::new(0));
    let _b = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    sys.run_ticks(100); // a expires; b runs
    assert_eq!(sys.store.se(a).array(), Some(sys.rq.expired().id()));
    sys.rq.set_scheduler(&mut sys.store, a, Policy::RoundRobin, 5, sys.now).unwrap();
    assert_eq!(sys.store.se(a).array(), Some(sys.rq.active().id()), "moved to active");
    assert_eq!(sys.store.se(a).prio(), 94);
    assert_state(&mut sys, a, MicroState::OnActiveQueue);
    assert!(sys.rq.need_resched());
    assert_eq!(sys.schedule(PrevAction::Preempted).next, a);
    assert!(sys.rq.set_scheduler(&mut sys.store, a, Policy::Fifo, 0, sys.now).is_err());
    sys.rq.set_scheduler(&mut sys.store, a, Policy::Batch, 0, sys.now).unwrap();
    assert_eq!(sys.store.se(a).sleep_avg(), 0);
    assert!(sys.rq.need_resched(), "the running task got worse");
    assert!(sys.rq.set_scheduler(&mut sys.store, sys.rq.idle(), Policy::Normal, 0, sys.now).is_err());
    sys.check();
}

#[test]
fn idle_runs_when_nothing_else_can() {
    let mut sys = Sys::new(SchedConfig::new(100, 100_000));
    assert_eq!(sys.current(), sys.rq.idle());
    sys.run_ticks(10);
    assert_eq!(sys.rq.nr_switches(), 0);
    let a = sys.spawn(SchedEntity::new(0));
    assert!(sys.rq.need_resched(), "anything beats idle");
    assert_eq!(sys.schedule(PrevAction::Preempted).next, a);
    sys.run_ticks(5);
    assert_eq!(sys.schedule(SLEEP).next, sys.rq.idle());
    assert_eq!(sys.rq.nr_running(), 0);
    assert_eq!(sys.rq.expired_timestamp(), None);
    sys.check();
}

#[test]
fn batch_tasks_earn_no_sleep_bonus() {
    let mut sys = Sys::hz1000();
    let batch = sys.spawn(SchedEntity::new(0).with_policy(Policy::Batch, 0).unwrap());
    sys.schedule(PrevAction::Preempted);
    sleep_then_wake(&mut sys, batch, 2_000);
    assert_eq!(sys.store.se(batch).sleep_avg(), 0);
    assert_eq!(sys.store.se(batch).prio(), 125);
}

#[test]
fn one_long_sleep_lifts_a_user_task_only_to_the_edge_of_interactivity() {
    let mut sys = Sys::hz1000();
    let user = sys.spawn(SchedEntity::new(0).with_user_space());
    sys.schedule(PrevAction::Preempted);
    sleep_then_wake(&mut sys, user, 5_000);
    let c = *sys.rq.config();
    assert_eq!(sys.store.se(user).sleep_avg(), tally_runqueue::interactivity::interactive_sleep(&c, 120));
    assert_eq!(sys.store.se(user).prio(), 118, "799 ms: bonus 7, just interactive, not the best (115)");
    // A kernel thread has no such ceiling.
    let kthread = sys.spawn(SchedEntity::new(0));
    sys.schedule(PrevAction::Preempted);
    sys.rq.remove(&mut sys.store, kthread, BlockReason::Sleep(SleepKind::Interruptible), sys.now);
    sys.run_ticks(5_000);
    assert!(sys.wake(kthread));
    assert_eq!(sys.store.se(kthread).prio(), 115);
}
