//! # The queue-length integrator
//!
//! The smallest piece of the kstat machinery, and the most useful: it watches one queue
//! (requests waiting for a disk, threads waiting for a CPU, "outstanding RPC calls to
//! server X") and keeps, at every change of the queue's length,
//!
//! * `cnt` — the current length;
//! * `time` — how long the queue has been non-empty (its *busy time*);
//! * `lentime` — the integral of the length over time, in length × ns;
//! * `lastupdate` — when the length last changed.
//!
//! ```text
//!   len
//!    3 |            ____
//!    2 |      _____|    |          lentime = 1·(t2-t1) + 2·(t3-t2) + 3·(t4-t3) + 1·(t5-t4)
//!    1 |_____|          |_____     time    = t5 - t1           (the length was never 0)
//!    0 +-----+-----+----+-----+-->
//!        t1    t2    t3   t4   t5
//! ```
//!
//! The sum is exact, not sampled: nothing changes between two events, so adding
//! `len × Δt` at each event (a Riemann sum over the steps) is the whole integral. From two
//! readings a reader gets the average length `Δlentime / Δt`, the utilisation
//! `Δtime / Δt` and, with a count of completions, the mean residence time by Little's law.
//!
//! An I/O kstat (`io.rs`) is two of these, a wait queue and a run queue. A scheduler can
//! keep one per run queue directly, or publish its run queue as an I/O kstat whose wait
//! queue *is* the run queue (see `io.rs`).
//!
//! The update at each event is Solaris' `kstat_waitq_enter` / `kstat_waitq_exit`, with two
//! guards the C code leaves to `ASSERT`: an exit from an empty queue (or an entry into a
//! queue at `u32::MAX`) is refused and counted, and a time earlier than `lastupdate`
//! contributes nothing (the clock-regression count records it) instead of a negative area.
//! Accumulators wrap, like the C counters, so readers take differences modulo 2^64.

use crate::KstatError;
use tally_uapi::kstat::Hrtime;

/// One queue's length, busy time and length×time integral. See the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueIntegrator {
    cnt: u32,
    time: Hrtime,
    lentime: Hrtime,
    lastupdate: Hrtime,
    underflows: u64,
    overflows: u64,
    clock_regressions: u64,
}

impl QueueIntegrator {
    /// An empty queue that has never changed (`lastupdate` 0, i.e. boot).
    pub const fn new() -> Self {
        QueueIntegrator {
            cnt: 0,
            time: 0,
            lentime: 0,
            lastupdate: 0,
            underflows: 0,
            overflows: 0,
            clock_regressions: 0,
        }
    }

    /// Current queue length.
    pub fn cnt(&self) -> u32 {
        self.cnt
    }
    /// Accumulated time with a non-empty queue, up to `lastupdate`.
    pub fn time(&self) -> Hrtime {
        self.time
    }
    /// Accumulated length × time, up to `lastupdate`.
    pub fn lentime(&self) -> Hrtime {
        self.lentime
    }
    /// When the length last changed.
    pub fn lastupdate(&self) -> Hrtime {
        self.lastupdate
    }
    /// Exits refused because the queue was empty.
    pub fn underflows(&self) -> u64 {
        self.underflows
    }
    /// Entries refused because the length was already `u32::MAX`.
    pub fn overflows(&self) -> u64 {
        self.overflows
    }
    /// Events timed before `lastupdate`; they added no time.
    pub fn clock_regressions(&self) -> u64 {
        self.clock_regressions
    }

    /// One more element in the queue at `now` (`kstat_waitq_enter`).
    pub fn enter(&mut self, now: Hrtime) -> Result<(), KstatError> {
        self.check_enter()?;
        self.advance(now);
        self.cnt += 1;
        Ok(())
    }

    /// One element fewer at `now` (`kstat_waitq_exit`). Refused and counted if empty.
    pub fn exit(&mut self, now: Hrtime) -> Result<(), KstatError> {
        self.check_exit()?;
        self.advance(now);
        self.cnt -= 1;
        Ok(())
    }

    /// The length became `len` at `now`, for callers that know the length rather than the
    /// individual arrivals and departures.
    pub fn set_cnt(&mut self, now: Hrtime, len: u32) {
        self.advance(now);
        self.cnt = len;
    }

    /// The same queue with its times (busy time, length×time, last update) converted by
    /// `f`, for a provider that integrates in a cheaper unit (TSC ticks) than the kstat's
    /// nanoseconds. `f` must be linear for `lentime` to stay exact up to rounding.
    pub fn rescaled(&self, f: impl Fn(Hrtime) -> Hrtime) -> Self {
        let mut q = *self;
        q.time = f(self.time);
        q.lentime = f(self.lentime);
        q.lastupdate = f(self.lastupdate);
        q
    }

    /// Brings the sums up to `now` without changing the length. Readers never need this
    /// (snapshots fold the open interval in themselves); it is here for providers that
    /// want `time`/`lentime` current, e.g. before copying them elsewhere.
    pub fn update(&mut self, now: Hrtime) {
        self.advance(now);
    }

    /// A copy with the interval since `lastupdate` folded in as if read at `now`, and
    /// `lastupdate` moved to `now` (never backwards). This is what Solaris'
    /// `default_kstat_snapshot` does to an I/O kstat ("deal with incomplete
    /// transactions"), so a queue that has been busy for a long time without events
    /// still reads as busy. The original is not changed.
    pub fn settled(&self, now: Hrtime) -> Self {
        let mut copy = *self;
        if now >= copy.lastupdate {
            copy.accumulate(now - copy.lastupdate);
            copy.lastupdate = now;
        }
        copy
    }

    pub(crate) fn check_enter(&mut self) -> Result<(), KstatError> {
        if self.cnt == u32::MAX {
            self.overflows = self.overflows.wrapping_add(1);
            return Err(KstatError::QueueOverflow);
        }
        Ok(())
    }

    pub(crate) fn check_exit(&mut self) -> Result<(), KstatError> {
        if self.cnt == 0 {
            self.underflows = self.underflows.wrapping_add(1);
            return Err(KstatError::QueueUnderflow);
        }
        Ok(())
    }

    /// Adds the area since `lastupdate` (at the current length) and moves `lastupdate` to
    /// `now`. Both callers of the C versions do exactly this before changing the count.
    fn advance(&mut self, now: Hrtime) {
        if now < self.lastupdate {
            self.clock_regressions = self.clock_regressions.wrapping_add(1);
            return;
        }
        // lastupdate only ever takes values >= 0 that were >= the previous one, and
        // now >= lastupdate here, so the subtraction cannot overflow.
        let delta = now - self.lastupdate;
        self.lastupdate = now;
        self.accumulate(delta);
    }

    fn accumulate(&mut self, delta: Hrtime) {
        if self.cnt != 0 {
            self.lentime = self.lentime.wrapping_add(delta.wrapping_mul(Hrtime::from(self.cnt)));
            self.time = self.time.wrapping_add(delta);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_picture_in_the_module_docs() {
        let mut q = QueueIntegrator::new();
        q.enter(10).unwrap(); // t1: 1
        q.enter(20).unwrap(); // t2: 2
        q.enter(30).unwrap(); // t3: 3
        q.exit(40).unwrap(); //  t4: 1 (two leave at once)
        q.exit(40).unwrap();
        q.exit(50).unwrap(); //  t5: 0
        assert_eq!(q.cnt(), 0);
        assert_eq!(q.lentime(), 10 + 2 * 10 + 3 * 10 + 10);
        assert_eq!(q.time(), 40);
        assert_eq!(q.lastupdate(), 50);
    }

    #[test]
    fn idle_time_is_not_busy_time() {
        let mut q = QueueIntegrator::new();
        q.enter(100).unwrap();
        q.exit(150).unwrap();
        q.enter(1000).unwrap();
        q.exit(1010).unwrap();
        assert_eq!((q.time(), q.lentime()), (60, 60));
    }

    #[test]
    fn extra_exit_is_refused_and_counted() {
        let mut q = QueueIntegrator::new();
        assert_eq!(q.exit(5), Err(KstatError::QueueUnderflow));
        assert_eq!(q.underflows(), 1);
        assert_eq!(q, QueueIntegrator { underflows: 1, ..QueueIntegrator::new() });
    }

    #[test]
    fn overflow_is_refused_and_counted() {
        let mut q = QueueIntegrator::new();
        q.set_cnt(0, u32::MAX);
        assert_eq!(q.enter(1), Err(KstatError::QueueOverflow));
        assert_eq!((q.overflows(), q.cnt()), (1, u32::MAX));
        // A huge length times a long interval wraps rather than panicking.
        q.update(i64::MAX);
        q.exit(i64::MAX).unwrap();
    }

    #[test]
    fn backwards_clock_adds_nothing() {
        let mut q = QueueIntegrator::new();
        q.enter(100).unwrap();
        q.enter(50).unwrap(); // clock went back: count changes, no area, lastupdate stays
        assert_eq!((q.cnt(), q.lentime(), q.lastupdate()), (2, 0, 100));
        assert_eq!(q.clock_regressions(), 1);
        q.exit(110).unwrap();
        assert_eq!(q.lentime(), 20);
        assert_eq!(q.enter(-5), Ok(()));
        assert_eq!(q.clock_regressions(), 2);
    }

    #[test]
    fn settled_folds_the_open_interval() {
        let mut q = QueueIntegrator::new();
        q.enter(10).unwrap();
        q.enter(10).unwrap();
        let s = q.settled(25);
        assert_eq!((s.time(), s.lentime(), s.lastupdate(), s.cnt()), (15, 30, 25, 2));
        assert_eq!(q.lentime(), 0, "the original is untouched");
        let early = q.settled(5);
        assert_eq!(early, q, "a reader behind the provider sees the stored values");
        assert_eq!(QueueIntegrator::new().settled(99).time(), 0);
    }

    #[test]
    fn set_cnt_integrates_the_old_length() {
        let mut q = QueueIntegrator::new();
        q.set_cnt(0, 4);
        q.set_cnt(10, 1);
        q.set_cnt(20, 0);
        assert_eq!((q.lentime(), q.time()), (50, 20));
    }
}
