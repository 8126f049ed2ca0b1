//! Dynamic priority: telling interactive tasks from CPU hogs (Linux 2.6.20's heuristics).
//!
//! Every normal task has a `sleep_avg`: it grows by the time the task spends asleep (when it
//! wakes, [`recalc_task_prio`]) and shrinks by the time it spends running (when it is
//! switched out, in `schedule()`), and is capped at `MAX_SLEEP_AVG` (one second). From it:
//!
//! ```text
//!   bonus          = sleep_avg * MAX_BONUS / MAX_SLEEP_AVG          0..=10
//!   effective_prio = static_prio - (bonus - MAX_BONUS / 2)          static ± 5, within 100..=139
//!   interactive    ⇔ prio <= static_prio - DELTA(nice)              DELTA: -3 (nice -20) .. 6 (nice 19)
//! ```
//!
//! A task that mostly sleeps (an editor, a shell) ends up with bonus 10, prio 5 better than
//! its static priority, and counts as interactive: when its slice runs out it goes back on
//! the *active* array rather than the expired one (`tick.rs`). A CPU hog drifts to bonus 0
//! and prio 5 worse. It is harder to look interactive at nice 19 than at nice -20.
//!
//! Two refinements keep the heuristic honest. A single long sleep of a user task only
//! raises `sleep_avg` to `INTERACTIVE_SLEEP` — the bare interactive threshold, 1 ms short of
//! the next bonus point, far from the best priority — and uninterruptible sleeps (disk
//! waits) can never push it past that point. A task woken by
//! an interrupt, or by another task, is also credited part of the time it then waits on the
//! runqueue (`schedule.rs`).
//!
//! `sleep_avg` and timestamps are TSC ticks here (Linux: nanoseconds); see `config.rs`.

use crate::config::SchedConfig;
use crate::prio::{MAX_PRIO, MAX_RT_PRIO, MAX_USER_PRIO};
use crate::task::{SchedEntity, SleepType};

/// `PRIO_BONUS_RATIO`: the bonus range is 25% of the 40 nice levels.
pub const PRIO_BONUS_RATIO: i32 = 25;
/// `MAX_BONUS`: bonus runs 0..=10, i.e. ±5 priority levels.
pub const MAX_BONUS: i32 = MAX_USER_PRIO * PRIO_BONUS_RATIO / 100;
/// `INTERACTIVE_DELTA`: how far below its static priority a nice-0 task must be (+ the
/// nice-dependent part of `DELTA`) to count as interactive.
pub const INTERACTIVE_DELTA: i32 = 2;
/// `ON_RUNQUEUE_WEIGHT`: percentage of runqueue waiting credited as sleep to a task woken
/// by another task (interrupt wake-ups are credited 100%).
pub const ON_RUNQUEUE_WEIGHT: u64 = 30;

/// `CURRENT_BONUS(p)`: 0..=`MAX_BONUS` from the task's sleep average.
///
/// `sleep_avg` (TSC) → whole ticks → bonus points is two floor divisions; `SchedConfig`
/// folds them into one, by the TSC value of a point, whenever that gives the same result.
#[inline]
pub fn current_bonus(config: &SchedConfig, sleep_avg: u64) -> i32 {
    let bonus = match config.bonus_tsc() {
        0 => config.tsc_to_ticks(sleep_avg) * MAX_BONUS as u64 / config.max_sleep_avg() as u64,
        unit => sleep_avg / unit,
    };
    bonus.min(MAX_BONUS as u64) as i32
}

/// `DELTA(p)`: the interactivity margin for static priority `static_prio`.
pub const fn delta(static_prio: i32) -> i32 {
    let nice = static_prio - MAX_RT_PRIO - 20;
    (nice + 20) * MAX_BONUS / 40 - 20 * MAX_BONUS / 40 + INTERACTIVE_DELTA
}

/// `TASK_INTERACTIVE(p)`: is dynamic priority `prio` good enough, for a task of
/// `static_prio`, to count as interactive?
pub fn is_interactive(prio: i32, static_prio: i32) -> bool {
    prio <= static_prio - delta(static_prio)
}

/// `INTERACTIVE_SLEEP(p)` in TSC ticks: the highest sleep average with which a task of
/// `static_prio` is only *barely* interactive (its bonus is exactly `MAX_BONUS / 2 +
/// DELTA`; one more millisecond would earn the next point).
/// (Derived once per static priority by `SchedConfig::new`; a wake-up looks it up.)
pub fn interactive_sleep(config: &SchedConfig, static_prio: i32) -> u64 {
    match config.interactive_sleep_tsc(static_prio) {
        Some(tsc) => tsc,
        None => interactive_sleep_uncached(config, static_prio),
    }
}

/// [`interactive_sleep`] computed from its definition.
pub(crate) const fn interactive_sleep_uncached(config: &SchedConfig, static_prio: i32) -> u64 {
    let max = config.max_sleep_avg() as i64;
    let ticks = max * (MAX_BONUS / 2 + delta(static_prio) + 1) as i64 / MAX_BONUS as i64 - 1;
    config.ticks_to_tsc(if ticks < 0 { 0 } else { ticks as u64 })
}

/// `effective_prio(p)`: the dynamic priority. RT tasks keep theirs; normal tasks get their
/// static priority adjusted by the sleep bonus, clamped to the normal range.
pub fn effective_prio(config: &SchedConfig, se: &SchedEntity) -> i32 {
    if se.policy.is_realtime() {
        return se.prio;
    }
    let bonus = current_bonus(config, se.sleep_avg) - MAX_BONUS / 2;
    (se.static_prio - bonus).clamp(MAX_RT_PRIO, MAX_PRIO - 1)
}

/// `recalc_task_prio(p, now)`: credit the time since `se.timestamp` as sleep, then return the
/// new dynamic priority (the caller stores it).
pub fn recalc_task_prio(config: &SchedConfig, se: &mut SchedEntity, now: u64) -> i32 {
    let mut sleep_time = now.saturating_sub(se.timestamp);
    if se.policy == crate::prio::Policy::Batch {
        sleep_time = 0;
    }
    if sleep_time > 0 {
        let ceiling = interactive_sleep(config, se.static_prio);
        let user = !se.kernel_thread;
        if user && sleep_time > ceiling && se.sleep_avg < ceiling {
            // One long sleep lifts a user task only to the edge of interactivity, and the
            // sleep does not count as interactive for the runqueue credit either.
            se.sleep_avg = ceiling;
            se.sleep_type = SleepType::NonInteractive;
        } else {
            // Uninterruptible (disk) sleepers may rise only as far as the edge.
            if se.sleep_type == SleepType::NonInteractive && user {
                if se.sleep_avg >= ceiling {
                    sleep_time = 0;
                } else if se.sleep_avg + sleep_time >= ceiling {
                    se.sleep_avg = ceiling;
                    sleep_time = 0;
                }
            }
            se.sleep_avg = se.sleep_avg.saturating_add(sleep_time);
        }
        se.sleep_avg = se.sleep_avg.min(config.max_sleep_avg_tsc());
    }
    effective_prio(config, se)
}

/// `TIMESLICE_GRANULARITY(p)` (uniprocessor): how often, in ticks, an interactive task is
/// sent to the back of its priority level so that equals round-robin. Tasks with less bonus
/// get a longer quantum (doubling per missing bonus point).
pub fn timeslice_granularity(config: &SchedConfig, sleep_avg: u64) -> u32 {
    let missing = MAX_BONUS - current_bonus(config, sleep_avg);
    let shift = if missing == 0 { 0 } else { missing - 1 };
    config.granularity().saturating_mul(1u32 << shift)
}
