//! Delay episodes: Linux's delay accounting, derived from the microstates.
//!
//! Linux's taskstats reports, for each kind of *delay* (a stretch of time in which the task
//! wanted to run but could not), how many delays there were, their total, and since v16/v17
//! the longest and shortest single delay and when the longest was seen. Linux measures each
//! kind with its own pair of timestamps in the code that waits. Tally needs none of that: a
//! delay is a maximal stretch of time in a set of microstates, and the clock already sees
//! every change of state.
//!
//! | delay kind | microstates | produced in Tally by |
//! |---|---|---|
//! | CPU (`cpu_*`) | `ONACTIVEQUEUE`, `ONEXPIREDQUEUE` | a run-queue wait, from wake-up (or preemption) until picked |
//! | block I/O (`blkio_*`) | `UNINTERRUPTIBLE_SLEEP` | a wait for the disk (see below) |
//! | IRQ (`irq_*`) | `INTERRUPTED` | an interrupt handled while the task was on the CPU |
//!
//! The only uninterruptible sleeps in the kernel are the disk's: `IrqCompletion::wait` (a
//! request waiting for IRQ 14) and `SleepLock` (waiting for the ATA channel, held across a
//! request).
//!
//! **Why a set of states, not one state.** The lazy array flip moves a waiting task from
//! `ONEXPIREDQUEUE` to `ONACTIVEQUEUE` without it ever leaving the run queue: that is one wait
//! for the CPU, not two. So each microstate maps to a *delay class*, and an episode opens when
//! the class changes into a delay class and closes when it changes out of it; switches inside
//! a class only move time between clocks. (A pending flip does not change any delay number,
//! which is why readers need no "as if flipped" variant to be correct.)
//!
//! **Exact by construction.** Episode boundaries are taken from the clock's own
//! `last_change`, which [`MsaClock::switch`](crate::MsaClock::switch) only ever moves forward
//! (a `now` that went backwards charges nothing and moves nothing). Every tick charged to a
//! state of a class is charged between an episode's start and its end, so
//!
//! ```text
//!   delays(now).cpu.total   == snapshot(now)[ONACTIVEQUEUE] + snapshot(now)[ONEXPIREDQUEUE]
//!   delays(now).blkio.total == snapshot(now)[UNINTERRUPTIBLE_SLEEP]
//!   delays(now).irq.total   == snapshot(now)[INTERRUPTED]
//! ```
//!
//! at every instant, in TSC ticks (property-tested below).
//!
//! **Counting.** An episode is counted when it *opens* (a task born on the run queue has
//! one CPU delay from birth), so `count` includes a still-open episode and an episode of
//! zero ticks (two switches at one TSC value). Linux's `delayacct_end` skips zero-length
//! delays; here a zero-tick episode is counted but can never be the minimum: `min` is the
//! shortest episode *longer than zero*, and 0 means "none yet" — Linux's convention for
//! `*_delay_min`, so the value means the same thing in both kernels. `max_seen` is the TSC at
//! which the longest episode ended (for a still-open one: the reading time); the first of
//! equal maxima is kept, as Linux keeps it.

use tally_uapi::msa::{MicroState, NR_MICROSTATES};

/// How many delay classes there are.
pub const NR_DELAY_CLASSES: usize = 3;

/// A kind of delay (see the module documentation for the states of each).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DelayClass {
    /// Waiting on the run queue.
    Cpu = 0,
    /// Waiting for the disk.
    Blkio = 1,
    /// The CPU is handling an interrupt.
    Irq = 2,
}

/// Class number of a state that is no delay; out of range of the per-class array, so a
/// lookup with `get_mut` finds nothing and needs no separate test.
pub(crate) const NO_DELAY: u8 = NR_DELAY_CLASSES as u8;

/// Delay class of each microstate, by [`MicroState::index`]: one load on the hot path.
pub(crate) const DELAY_CLASS: [u8; NR_MICROSTATES] = {
    let mut t = [NO_DELAY; NR_MICROSTATES];
    t[MicroState::OnActiveQueue.index()] = DelayClass::Cpu as u8;
    t[MicroState::OnExpiredQueue.index()] = DelayClass::Cpu as u8;
    t[MicroState::UninterruptibleSleep.index()] = DelayClass::Blkio as u8;
    t[MicroState::Interrupted.index()] = DelayClass::Irq as u8;
    t
};

impl DelayClass {
    /// The class `state` belongs to, if it is a delay at all.
    pub const fn of(state: MicroState) -> Option<DelayClass> {
        match DELAY_CLASS[state.index()] {
            0 => Some(DelayClass::Cpu),
            1 => Some(DelayClass::Blkio),
            2 => Some(DelayClass::Irq),
            _ => None,
        }
    }
}

/// The episodes of one kind of delay. Times are TSC ticks (and `max_seen` a TSC value);
/// `tally-taskstats` converts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DelayEpisodes {
    /// Episodes entered (wraps, like Linux's counts — it will not in practice).
    pub count: u64,
    /// Their total length (wraps on overflow, as Linux's `*_delay_total` does).
    pub total: u64,
    /// The longest single episode.
    pub max: u64,
    /// The shortest single episode longer than zero; 0 when there is none.
    pub min: u64,
    /// TSC at which the longest episode ended (0 when `max` is 0).
    pub max_seen: u64,
}

#[cfg_attr(not(feature = "accounting"), allow(dead_code))]
impl DelayEpisodes {
    pub const ZERO: DelayEpisodes = DelayEpisodes { count: 0, total: 0, max: 0, min: 0, max_seen: 0 };

    /// An episode begins (counted now, so an open episode is already in `count`).
    #[inline]
    pub(crate) fn open(&mut self) {
        self.count = self.count.wrapping_add(1);
    }

    /// An episode of `len` ticks ended at TSC `end`.
    #[inline]
    pub(crate) fn close(&mut self, len: u64, end: u64) {
        // BEGIN LAB 7: add len to the total; keep the longest episode (and when it ended, the first of equals) and the shortest non-zero one
        // STUB: // your code here
        self.total = self.total.wrapping_add(len);
        if len > self.max {
            self.max = len;
            self.max_seen = end;
        }
        // `len != 0 && (min == 0 || len < min)` in one unsigned comparison: minus one, a
        // zero length becomes the largest value (never a minimum) and so does "no minimum yet".
        if len.wrapping_sub(1) < self.min.wrapping_sub(1) {
            self.min = len;
        }
        // END LAB 7
    }

    /// Fold in another task's episodes (a thread group's total): counts and totals add,
    /// the larger maximum wins with its timestamp (on a tie the earlier sighting), the
    /// smaller non-zero minimum wins. The operation is commutative and associative, so the
    /// order threads are added in does not matter.
    pub fn add(&mut self, other: &DelayEpisodes) {
        // BEGIN LAB 7: counts and totals add (wrapping); the larger max wins with its max_seen (a tie: the earlier); the smaller non-zero min wins
        // STUB: // your code here
        self.count = self.count.wrapping_add(other.count);
        self.total = self.total.wrapping_add(other.total);
        if other.max > self.max || (other.max == self.max && other.max_seen < self.max_seen) {
            self.max = other.max;
            self.max_seen = other.max_seen;
        }
        if other.min != 0 && (self.min == 0 || other.min < self.min) {
            self.min = other.min;
        }
        // END LAB 7
    }
}

/// A task's (or a group's) delays of every kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DelayStats {
    /// Run-queue waits (`ONACTIVEQUEUE` + `ONEXPIREDQUEUE`).
    pub cpu: DelayEpisodes,
    /// Disk waits (`UNINTERRUPTIBLE_SLEEP`).
    pub blkio: DelayEpisodes,
    /// Interrupts (`INTERRUPTED`).
    pub irq: DelayEpisodes,
}

impl DelayStats {
    pub const ZERO: DelayStats =
        DelayStats { cpu: DelayEpisodes::ZERO, blkio: DelayEpisodes::ZERO, irq: DelayEpisodes::ZERO };

    /// The episodes of one class.
    pub fn get(&self, class: DelayClass) -> &DelayEpisodes {
        match class {
            DelayClass::Cpu => &self.cpu,
            DelayClass::Blkio => &self.blkio,
            DelayClass::Irq => &self.irq,
        }
    }

    /// Fold in another task's delays, class by class ([`DelayEpisodes::add`]).
    pub fn add(&mut self, other: &DelayStats) {
        self.cpu.add(&other.cpu);
        self.blkio.add(&other.blkio);
        self.irq.add(&other.irq);
    }

    /// From the clock's per-class array (indexed by `DelayClass as usize`).
    #[cfg_attr(not(feature = "accounting"), allow(dead_code))]
    pub(crate) const fn from_classes(c: [DelayEpisodes; NR_DELAY_CLASSES]) -> DelayStats {
        DelayStats { cpu: c[0], blkio: c[1], irq: c[2] }
    }
}

#[cfg(test)]
#[path = "delay_tests.rs"]
mod tests;

/// The clock's episodes against an independent model, over random switches with time that
/// sometimes goes backwards.
#[cfg(all(test, feature = "accounting"))]
#[path = "delay_clock_tests.rs"]
mod clock_props;
