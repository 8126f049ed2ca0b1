//! # Event-timer kstats (`KSTAT_TYPE_TIMER`): how often, and how long
//!
//! Some statistics are about events with a duration — a page-table walk, a lock hold, a
//! context switch. An event-timer kstat holds any number of named [`KstatTimer`]s; the
//! provider brackets each event with [`TimerStats::start`] and [`TimerStats::stop`]
//! (Solaris' `kstat_timer_start` / `kstat_timer_stop`), and every stop folds one event in:
//!
//! ```text
//!   etime        = now - start_time
//!   stop_time    = now
//!   min_time     = etime   if it is the first event or etime < min_time
//!   max_time     = etime   if etime > max_time
//!   elapsed_time += etime
//!   num_events   += 1
//! ```
//!
//! so a reader gets the count, the mean (`elapsed_time / num_events`), the extremes and
//! when the last event began and ended.
//!
//! Differences from the C code, which trusts its callers: a stop without a matching start
//! is refused and counted (`rejected`) rather than timing an event from 0 or from the
//! previous start; a stop timed before its start counts as a zero-length event (and in
//! `clock_regressions`). A start while the timer is already running restarts it, as in
//! Solaris. Sums wrap.

use alloc::vec::Vec;

use crate::{name_field, try_vec, KstatError};
use tally_uapi::kstat::{Hrtime, KstatTimer};

/// The data of an event-timer kstat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerStats {
    timers: Vec<KstatTimer>,
    running: Vec<bool>,
    rejected: u64,
    clock_regressions: u64,
}

impl TimerStats {
    /// `ndata` unnamed, zeroed timers, as `kstat_create` leaves them.
    pub fn new(ndata: usize) -> Result<Self, KstatError> {
        Ok(TimerStats {
            timers: try_vec(ndata, KstatTimer::init(""))?,
            running: try_vec(ndata, false)?,
            rejected: 0,
            clock_regressions: 0,
        })
    }

    pub fn len(&self) -> usize {
        self.timers.len()
    }
    pub fn is_empty(&self) -> bool {
        self.timers.is_empty()
    }
    /// All timers, in index order.
    pub fn records(&self) -> &[KstatTimer] {
        &self.timers
    }
    pub fn get(&self, index: usize) -> Option<&KstatTimer> {
        self.timers.get(index)
    }
    /// Is timer `index` between a start and a stop?
    pub fn is_running(&self, index: usize) -> bool {
        self.running.get(index).copied().unwrap_or(false)
    }
    /// Stops refused because the timer was not running.
    pub fn rejected(&self) -> u64 {
        self.rejected
    }
    /// Stops timed before their start (counted as zero-length events).
    pub fn clock_regressions(&self) -> u64 {
        self.clock_regressions
    }

    /// `kstat_timer_init`: names timer `index` (1..=30 bytes, no NUL) and zeroes it.
    pub fn timer_init(&mut self, index: usize, name: &str) -> Result<(), KstatError> {
        let field = name_field(name, false)?;
        let t = self.timers.get_mut(index).ok_or(KstatError::IndexOutOfRange)?;
        *t = KstatTimer::init("");
        t.name = field;
        self.running[index] = false;
        Ok(())
    }

    /// Index of the first timer called `name`.
    pub fn lookup(&self, name: &str) -> Option<usize> {
        if name.is_empty() {
            return None;
        }
        self.timers.iter().position(|t| t.name() == name)
    }

    /// `kstat_timer_start`: an event began at `now`.
    pub fn start(&mut self, index: usize, now: Hrtime) -> Result<(), KstatError> {
        let t = self.timers.get_mut(index).ok_or(KstatError::IndexOutOfRange)?;
        t.start_time = now;
        self.running[index] = true;
        Ok(())
    }

    /// `kstat_timer_stop`: the event begun by the last `start` ended at `now`.
    pub fn stop(&mut self, index: usize, now: Hrtime) -> Result<(), KstatError> {
        let t = self.timers.get_mut(index).ok_or(KstatError::IndexOutOfRange)?;
        if !self.running[index] {
            self.rejected = self.rejected.wrapping_add(1);
            return Err(KstatError::TimerNotStarted);
        }
        self.running[index] = false;
        let etime = match now.checked_sub(t.start_time) {
            Some(e) if e >= 0 => e,
            _ => {
                self.clock_regressions = self.clock_regressions.wrapping_add(1);
                0
            }
        };
        t.stop_time = now;
        if etime < t.min_time || t.num_events == 0 {
            t.min_time = etime;
        }
        if etime > t.max_time {
            t.max_time = etime;
        }
        t.elapsed_time = t.elapsed_time.wrapping_add(etime);
        t.num_events = t.num_events.wrapping_add(1);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_stop_accumulates() {
        let mut ts = TimerStats::new(2).unwrap();
        ts.timer_init(0, "swtch").unwrap();
        ts.timer_init(1, "fault").unwrap();
        assert_eq!(ts.lookup("fault"), Some(1));
        for (start, stop) in [(100, 130), (200, 210), (300, 350)] {
            ts.start(0, start).unwrap();
            assert!(ts.is_running(0));
            ts.stop(0, stop).unwrap();
        }
        let t = ts.get(0).unwrap();
        assert_eq!(t.num_events, 3);
        assert_eq!(t.elapsed_time, 90);
        assert_eq!((t.min_time, t.max_time), (10, 50));
        assert_eq!((t.start_time, t.stop_time), (300, 350));
        assert_eq!(ts.get(1).unwrap().num_events, 0);
    }

    #[test]
    fn first_event_sets_min_even_if_longer_than_zero() {
        let mut ts = TimerStats::new(1).unwrap();
        ts.start(0, 0).unwrap();
        ts.stop(0, 40).unwrap();
        assert_eq!(ts.get(0).unwrap().min_time, 40);
    }

    #[test]
    fn bad_stops_are_refused_or_clamped() {
        let mut ts = TimerStats::new(1).unwrap();
        assert_eq!(ts.stop(0, 10), Err(KstatError::TimerNotStarted));
        ts.start(0, 10).unwrap();
        ts.stop(0, 20).unwrap();
        assert_eq!(ts.stop(0, 30), Err(KstatError::TimerNotStarted));
        assert_eq!(ts.rejected(), 2);
        assert_eq!(ts.get(0).unwrap().num_events, 1);
        ts.start(0, 100).unwrap();
        ts.stop(0, 90).unwrap();
        let t = ts.get(0).unwrap();
        assert_eq!((t.num_events, t.min_time, t.elapsed_time), (2, 0, 10));
        assert_eq!(ts.clock_regressions(), 1);
        ts.start(0, i64::MAX).unwrap();
        ts.stop(0, i64::MIN).unwrap();
        assert_eq!(ts.clock_regressions(), 2);
    }

    #[test]
    fn restart_overwrites_start() {
        let mut ts = TimerStats::new(1).unwrap();
        ts.start(0, 10).unwrap();
        ts.start(0, 50).unwrap();
        ts.stop(0, 60).unwrap();
        assert_eq!(ts.get(0).unwrap().elapsed_time, 10);
    }

    #[test]
    fn indexes_and_names_are_checked() {
        let mut ts = TimerStats::new(1).unwrap();
        assert_eq!(ts.start(1, 0), Err(KstatError::IndexOutOfRange));
        assert_eq!(ts.stop(1, 0), Err(KstatError::IndexOutOfRange));
        assert_eq!(ts.timer_init(1, "x"), Err(KstatError::IndexOutOfRange));
        assert_eq!(ts.timer_init(0, &"n".repeat(31)), Err(KstatError::NameTooLong));
        assert!(!ts.is_running(7));
        assert_eq!(ts.lookup(""), None);
    }
}
