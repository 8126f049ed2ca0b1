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
        // BEGIN LAB 5: refuse a full queue (check_enter), bring the sums up to now, then one more
        // STUB: Ok(())
        self.check_enter()?;
        self.advance(now);
        self.cnt += 1;
        Ok(())
        // END LAB 5
    }

    /// One element fewer at `now` (`kstat_waitq_exit`). Refused and counted if empty.
    pub fn exit(&mut self, now: Hrtime) -> Result<(), KstatError> {
        // BEGIN LAB 5: refuse an empty queue (check_exit), bring the sums up to now, then one fewer
        // STUB: Ok(())
        self.check_exit()?;
        self.advance(now);
        self.cnt -= 1;
        Ok(())
        // END LAB 5
    }

    /// The length became `len` at `now`, for callers that know the length rather than the
    /// individual arrivals and departures.
    pub fn set_cnt(&mut self, now: Hrtime, len: u32) {
        // BEGIN LAB 5: the old length held until now; then the new length
        // STUB: let _ = (now, len);
        self.advance(now);
        self.cnt = len;
        // END LAB 5
    }

    /// The same queue with its times (busy time, length×time, last update) converted by
    /// `f`, for a provider that integrates in a cheaper unit (TSC ticks) than the kstat's
    /// nanoseconds. `f` must be linear for `lentime` to stay exact up to rounding.
    pub fn rescaled(&self, f: impl Fn(Hrtime) -> Hrtime) -> Self {
        // BEGIN LAB 5: convert every time (busy time, length x time, last update); counts stay
        // STUB: let _ = f;
        // STUB: *self
        let mut q = *self;
        q.time = f(self.time);
        q.lentime = f(self.lentime);
        q.lastupdate = f(self.lastupdate);
        q
        // END LAB 5
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
        // BEGIN LAB 5: a copy with the open interval since lastupdate folded in (never backwards)
        // STUB: let _ = now;
        // STUB: *self
        let mut copy = *self;
        if now >= copy.lastupdate {
            copy.accumulate(now - copy.lastupdate);
            copy.lastupdate = now;
        }
        copy
        // END LAB 5
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
        // BEGIN LAB 5: a time before lastupdate adds nothing (count it); else add the step since lastupdate
        // STUB: let _ = now;
        if now < self.lastupdate {
            self.clock_regressions = self.clock_regressions.wrapping_add(1);
            return;
        }
        // lastupdate only ever takes values >= 0 that were >= the previous one, and
        // now >= lastupdate here, so the subtraction cannot overflow.
        let delta = now - self.lastupdate;
        self.lastupdate = now;
        self.accumulate(delta);
        // END LAB 5
    }

    fn accumulate(&mut self, delta: Hrtime) {
        // BEGIN LAB 5: one Riemann step: lentime += cnt x delta, and time += delta if the queue was busy (wrapping)
        // STUB: let _ = delta;
        if self.cnt != 0 {
            self.lentime = self.lentime.wrapping_add(delta.wrapping_mul(Hrtime::from(self.cnt)));
            self.time = self.time.wrapping_add(delta);
        }
        // END LAB 5
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
