//! The numbers of Linux 2.6: timeslices, priorities, interactivity thresholds.

use tally_runqueue::config::SchedConfig;
use tally_runqueue::interactivity::{delta, effective_prio, interactive_sleep, is_interactive, MAX_BONUS};
use tally_runqueue::prio::{nice_to_prio, prio_to_nice, rt_prio_to_prio, Policy, MAX_PRIO, MAX_RT_PRIO};
use tally_runqueue::timeslice::static_prio_timeslice;
use tally_runqueue::{SchedEntity, SchedError};

#[test]
fn timeslice_table_at_1000_hz_is_800_100_5_and_linear_between() {
    let c = SchedConfig::new(1000, 1_000_000_000);
    assert_eq!(static_prio_timeslice(&c, nice_to_prio(-20)), 800);
    assert_eq!(static_prio_timeslice(&c, nice_to_prio(0)), 100);
    assert_eq!(static_prio_timeslice(&c, nice_to_prio(19)), 5);
    for nice in -20..=19 {
        let sp = nice_to_prio(nice);
        let ms = if sp < 120 { 20 * (140 - sp) } else { 5 * (140 - sp) } as u32;
        assert_eq!(static_prio_timeslice(&c, sp), ms, "nice {nice}");
    }
    // Linear: constant steps on each side of nice 0.
    let step = |n: i32| static_prio_timeslice(&c, nice_to_prio(n)) - static_prio_timeslice(&c, nice_to_prio(n + 1));
    assert!((-20..-1).all(|n| step(n) == 20));
    assert!((0..18).all(|n| step(n) == 5));
}

#[test]
fn timeslices_are_in_ticks_at_other_rates_and_never_below_one_tick() {
    let c100 = SchedConfig::new(100, 1_000_000_000);
    assert_eq!(c100.min_timeslice(), 1, "max(5 ms, 1 tick) at 100 Hz is one tick");
    assert_eq!(static_prio_timeslice(&c100, nice_to_prio(-20)), 80);
    assert_eq!(static_prio_timeslice(&c100, nice_to_prio(0)), 10);
    assert_eq!(static_prio_timeslice(&c100, nice_to_prio(19)), 1);
    let c250 = SchedConfig::new(250, 1_000_000_000);
    assert_eq!(static_prio_timeslice(&c250, nice_to_prio(-20)), 200);
    assert_eq!(static_prio_timeslice(&c250, nice_to_prio(0)), 25);
    assert_eq!(static_prio_timeslice(&c250, nice_to_prio(19)), 1);
    let c1000 = SchedConfig::new(1000, 1_000_000_000);
    assert_eq!(c1000.min_timeslice(), 5);
    assert_eq!(c1000.starvation_limit(), 1000);
    assert_eq!(c1000.max_sleep_avg_tsc(), 1_000_000_000, "one second of TSC");
    for hz in [1, 20, 100, 250, 300, 1000, 10_000] {
        let c = SchedConfig::new(hz, 3_000_000_000);
        for sp in 100..140 {
            assert!(static_prio_timeslice(&c, sp) >= 1);
        }
    }
}

#[test]
fn priority_numbering_matches_linux() {
    assert_eq!((MAX_RT_PRIO, MAX_PRIO), (100, 140));
    assert_eq!(nice_to_prio(-20), 100);
    assert_eq!(nice_to_prio(0), 120);
    assert_eq!(nice_to_prio(19), 139);
    assert_eq!(prio_to_nice(125), 5);
    assert_eq!(rt_prio_to_prio(1), 98);
    assert_eq!(rt_prio_to_prio(99), 0);
    assert_eq!(Policy::from_raw(3), Some(Policy::Batch));
    assert_eq!(Policy::from_raw(4), None);
    assert_eq!(SchedEntity::new(-40).nice(), -20, "nice is clamped");
    assert_eq!(SchedEntity::new(40).static_prio(), 139);
}

#[test]
fn policies_validate_like_sched_setscheduler() {
    assert_eq!(SchedEntity::new(0).with_policy(Policy::Fifo, 0).unwrap_err(), SchedError::InvalidArgument);
    assert_eq!(SchedEntity::new(0).with_policy(Policy::Fifo, 100).unwrap_err().errno(), 22);
    assert!(SchedEntity::new(0).with_policy(Policy::Normal, 5).is_err());
    assert_eq!(SchedEntity::new(0).with_policy(Policy::RoundRobin, 99).unwrap().prio(), 0);
    assert_eq!(SchedEntity::new(0).with_policy(Policy::Batch, 0).unwrap().prio(), 120);
}

#[test]
fn interactivity_thresholds() {
    assert_eq!(MAX_BONUS, 10);
    assert_eq!(delta(nice_to_prio(-20)), -3);
    assert_eq!(delta(nice_to_prio(0)), 2);
    assert_eq!(delta(nice_to_prio(19)), 6);
    // nice 0 is interactive at prio 118 or better, nice -20 at 103, nice 19 never (133 < 134).
    assert!(is_interactive(118, 120) && !is_interactive(119, 120));
    assert!(is_interactive(103, 100) && !is_interactive(104, 100));
    assert!(!is_interactive(134, 139));
    let c = SchedConfig::new(1000, 1_000_000);
    // INTERACTIVE_SLEEP(nice 0) = (1000 * 8 / 10 - 1) ticks = 799 ms.
    assert_eq!(interactive_sleep(&c, 120), 799 * 1000);
}

#[test]
fn effective_prio_spans_plus_minus_five_and_clamps() {
    use tally_runqueue::interactivity::recalc_task_prio;
    let c = SchedConfig::new(1000, 1_000_000);
    let ms = 1_000u64; // TSC ticks per millisecond here
                       // A kernel thread sleeping `sleep_ms` from a zero sleep average (timestamp 0).
    let after_sleep = |nice: i32, sleep_ms: u64| {
        let mut se = SchedEntity::new(nice);
        let prio = recalc_task_prio(&c, &mut se, sleep_ms * ms);
        (prio, se.sleep_avg())
    };
    assert_eq!(effective_prio(&c, &SchedEntity::new(0)), 125, "no sleep: 5 worse than static");
    assert_eq!(after_sleep(0, 499).0, 121, "bonus 4");
    assert_eq!(after_sleep(0, 99).0, 125, "bonus 0");
    assert_eq!(after_sleep(0, 500).0, 120, "bonus 5: the static priority");
    assert_eq!(after_sleep(0, 700).0, 118, "bonus 7: interactive");
    assert_eq!(after_sleep(0, 5_000), (115, 1_000 * ms), "capped at MAX_SLEEP_AVG: 5 better");
    assert_eq!(after_sleep(-20, 5_000).0, 100, "clamped to the best normal priority");
    assert_eq!(effective_prio(&c, &SchedEntity::new(19)), 139, "clamped to the worst");
    // RT tasks keep their priority whatever they slept.
    let mut rt = SchedEntity::new(0).with_policy(Policy::Fifo, 10).unwrap();
    assert_eq!(recalc_task_prio(&c, &mut rt, 5_000 * ms), 89);
}

#[test]
fn bonus_and_interactive_sleep_derived_once_equal_their_definitions() {
    use tally_runqueue::interactivity::current_bonus;
    // Linux's forms: CURRENT_BONUS = NS_TO_JIFFIES(sleep_avg) * MAX_BONUS / MAX_SLEEP_AVG,
    // INTERACTIVE_SLEEP = JIFFIES_TO_NS(MAX_SLEEP_AVG * (MAX_BONUS/2 + DELTA + 1) / MAX_BONUS - 1).
    // Odd rates too: a TSC not a multiple of HZ, a tick so slow MAX_SLEEP_AVG is raised to 1.
    for (hz, tsc) in [(1000, 1_000_000_000), (1000, 2_345_678_901), (250, 1_000_003), (20, 1_000_000), (7, 999), (1, 1)]
    {
        let c = SchedConfig::new(hz, tsc);
        let (t, max) = (c.tsc_per_tick(), c.max_sleep_avg() as u64);
        let mut s = 0u64;
        while s <= c.max_sleep_avg_tsc().saturating_mul(2) {
            let want = ((s / t) * MAX_BONUS as u64 / max).min(MAX_BONUS as u64) as i32;
            assert_eq!(current_bonus(&c, s), want, "{hz} Hz, TSC {tsc}, sleep_avg {s}");
            s += 1 + c.max_sleep_avg_tsc() / 997;
        }
        // Each side of every tick and bonus-point boundary.
        for k in 0..=2 * max * MAX_BONUS as u64 {
            for s in [(k * t * max / MAX_BONUS as u64).saturating_sub(1), k * t * max / MAX_BONUS as u64, k * t] {
                let want = ((s / t) * MAX_BONUS as u64 / max).min(MAX_BONUS as u64) as i32;
                assert_eq!(current_bonus(&c, s), want, "{hz} Hz, TSC {tsc}, sleep_avg {s}");
            }
        }
        for sp in MAX_RT_PRIO..MAX_PRIO {
            let ticks = max as i64 * (MAX_BONUS / 2 + delta(sp) + 1) as i64 / MAX_BONUS as i64 - 1;
            assert_eq!(interactive_sleep(&c, sp), ticks.max(0) as u64 * t, "{hz} Hz, static prio {sp}");
        }
    }
}
