//! The per-task microstate clock.
//!
//! One [`MsaClock`] lives in every task. It remembers when the task was created, which
//! microstate it is in, when it entered that state, and how many TSC ticks it has spent in
//! each state *before* the current one. Every state change goes through [`MsaClock::switch`]
//! (or [`MsaClock::switch_on_cpu`], its special case between two on-CPU states), which folds
//! the time since the last change into the old state's clock. Nothing else in the
//! kernel writes these fields, which is what makes the accounting identity
//!
//! ```text
//!   Σ snapshot(now)  ==  now - created
//! ```
//!
//! true at every instant: time is only ever moved from "since the last change" into exactly
//! one state's clock, never created or dropped.
//!
//! The same switches also delimit *delay episodes* (runs of time waiting for the CPU, the
//! disk or an interrupt), which taskstats reports as Linux's delay accounting: see
//! [`crate::delay`]. They cost one table lookup per switch and a little more only when the
//! delay class changes.
//!
//! The clock is also readable from user space, without a system call: the fields a reader
//! needs (`seq`, `state`, `last_change`, `clocks`) come first, in the layout of
//! `tally_uapi::msa::vvar::ThreadClock` (checked at compile time below), and the kernel
//! keeps each user thread's clock in a page mapped read-only into its process. `switch`
//! increments `seq`, so that a reader interrupted by a change sees the count move and
//! reads again (see `docs/microstate-accounting.md`).
//!
//! Callers: the scheduler (`tally-runqueue`) on sleeps, wake-ups and context switches;
//! [`crate::IrqAccounting`] on interrupt entry and exit; the kernel's system-call and trap
//! entry paths for `ONCPU_USR` ↔ `ONCPU_SYS` ↔ `ONCPU_TRAP`; and the `msa()` system call,
//! which reads [`MsaClock::snapshot`].

use crate::delay::DelayStats;
#[cfg(feature = "accounting")]
use crate::delay::{DelayEpisodes, DELAY_CLASS, NR_DELAY_CLASSES};
use tally_uapi::msa::vvar::ThreadClock;
use tally_uapi::msa::{MicroState, NR_MICROSTATES};

/// One value per microstate, indexed by [`MicroState::index`]: TSC ticks inside the kernel.
pub type MsaTimes = [u64; NR_MICROSTATES];

/// A task's microstate clocks (see the module documentation).
///
/// With the `accounting` feature off this is an empty struct: every method keeps its
/// signature, switches do nothing, and every reading is zero.
///
/// `repr(C)`: the first four fields are the user-visible `ThreadClock` of the vvar page.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsaClock {
    /// Sequence count for user-space readers: one more at every `switch`. The reader is
    /// the thread itself, and on one CPU it never runs while the kernel changes its clock
    /// (the kernel runs *instead* of it: an interrupt, a system call, a switch), so every
    /// change looks atomic to it; what it can see is a change *between* two of its loads,
    /// and a moved count says so. (Linux's seqcounts are odd during a change, for readers
    /// on other CPUs; that would be two increments here, and fences.)
    #[cfg(feature = "accounting")]
    seq: u32,
    #[cfg(feature = "accounting")]
    state: MicroState,
    #[cfg(feature = "accounting")]
    last_change: u64,
    /// Time spent in each state up to `last_change` (the current state's running span is not
    /// in here yet; [`MsaClock::snapshot`] adds it).
    #[cfg(feature = "accounting")]
    clocks: MsaTimes,
    #[cfg(feature = "accounting")]
    created: u64,
    /// Closed episodes of each delay class, plus the count of the open one (indexed by
    /// `DelayClass as usize`).
    #[cfg(feature = "accounting")]
    episodes: [DelayEpisodes; NR_DELAY_CLASSES],
    /// Where the open delay episode began (a past `last_change`); meaningless while the
    /// current state is no delay.
    #[cfg(feature = "accounting")]
    episode_start: u64,
}

impl MsaClock {
    /// A clock for a task born at TSC `now`, starting out in `state`.
    #[allow(unused_variables)]
    pub const fn new(now: u64, state: MicroState) -> Self {
        // A task born into a delay state (a new task waits on the run queue) starts its
        // first episode at birth.
        #[cfg(feature = "accounting")]
        let episodes = {
            let mut e = [DelayEpisodes::ZERO; NR_DELAY_CLASSES];
            let class = DELAY_CLASS[state.index()] as usize;
            if class < NR_DELAY_CLASSES {
                e[class].count = 1;
            }
            e
        };
        MsaClock {
            #[cfg(feature = "accounting")]
            seq: 0,
            #[cfg(feature = "accounting")]
            created: now,
            #[cfg(feature = "accounting")]
            last_change: now,
            #[cfg(feature = "accounting")]
            state,
            #[cfg(feature = "accounting")]
            clocks: [0; NR_MICROSTATES],
            #[cfg(feature = "accounting")]
            episodes,
            #[cfg(feature = "accounting")]
            episode_start: now,
        }
    }

    /// The task changes to `new` at TSC `now`: the time since the last change is charged to
    /// the state it is leaving.
    ///
    /// Switching to the state the task is already in is allowed and only moves the time
    /// already spent into the clock. `now` should never go backwards; if it does (a TSC that
    /// is not synchronised between CPUs, say), nothing is charged and the last-change time is
    /// kept, so no tick is ever counted twice.
    ///
    /// When the delay class changes (see [`crate::delay`]) the open episode closes and/or a
    /// new one opens, at `last_change` as just updated — the instant from which the clocks
    /// themselves charge the new state, so episodes and clocks agree to the tick.
    #[inline]
    #[allow(unused_variables)]
    pub fn switch(&mut self, now: u64, new: MicroState) {
        #[cfg(feature = "accounting")]
        {
            self.charge(now);
            let from = DELAY_CLASS[self.state.index()];
            let to = DELAY_CLASS[new.index()];
            if from != to {
                self.delay_boundary(from, to);
            }
            self.state = new;
        }
    }

    /// [`MsaClock::switch`] between two on-CPU states (ONCPU_USR, ONCPU_SYS, ONCPU_TRAP):
    /// the transitions of every system call and exception. No on-CPU state is a delay, so
    /// no episode opens or closes, and the work is the clock's alone: a comparison, a
    /// subtraction, an add and two stores. The caller guarantees both states are on-CPU
    /// (a running task outside an interrupt is in its running state); [`MsaClock::switch`]
    /// is the general case.
    #[inline]
    #[allow(unused_variables)]
    pub fn switch_on_cpu(&mut self, now: u64, new: MicroState) {
        #[cfg(feature = "accounting")]
        {
            debug_assert!(self.state.is_on_cpu() && new.is_on_cpu(), "switch_on_cpu from {:?} to {new:?}", self.state);
            self.charge(now);
            self.state = new;
        }
    }

    /// Charge the time since the last change to the current state, and make `now` the last
    /// change: the arithmetic of both switches.
    #[cfg(feature = "accounting")]
    #[inline(always)]
    fn charge(&mut self, now: u64) {
        // A user-space reader of this clock (its vvar page) retries if `seq` moved while it
        // read: see the comment on `seq`.
        self.seq = self.seq.wrapping_add(1);
        // BEGIN LAB 1: charge the time since the last change to the state being left (never when `now` went backwards)
        // STUB: let _ = now;
        if now > self.last_change {
            self.clocks[self.state.index()] += now - self.last_change;
            self.last_change = now;
        }
        // END LAB 1
    }

    /// The delay class changes from `from` to `to` at `last_change` (either may be
    /// `NO_DELAY`, which `get_mut` does not find).
    #[cfg(feature = "accounting")]
    #[inline]
    fn delay_boundary(&mut self, from: u8, to: u8) {
        let at = self.last_change;
        if let Some(e) = self.episodes.get_mut(from as usize) {
            e.close(at - self.episode_start, at);
        }
        if let Some(e) = self.episodes.get_mut(to as usize) {
            e.open();
            self.episode_start = at;
        }
    }

    /// The state the task is in. Without the `accounting` feature this is always `ONCPU_SYS`
    /// (nothing is tracked).
    #[inline]
    pub fn state(&self) -> MicroState {
        #[cfg(feature = "accounting")]
        {
            self.state
        }
        #[cfg(not(feature = "accounting"))]
        {
            MicroState::OncpuSys
        }
    }

    /// TSC value at which the task was created (0 without accounting).
    #[inline]
    pub fn created(&self) -> u64 {
        #[cfg(feature = "accounting")]
        {
            self.created
        }
        #[cfg(not(feature = "accounting"))]
        {
            0
        }
    }

    /// TSC value of the last state change (0 without accounting).
    #[inline]
    pub fn last_change(&self) -> u64 {
        #[cfg(feature = "accounting")]
        {
            self.last_change
        }
        #[cfg(not(feature = "accounting"))]
        {
            0
        }
    }

    /// The user-visible part of the clock, as a reader of its vvar page sees it (all zero
    /// without the `accounting` feature). For tests: the page itself is this memory.
    pub fn user_view(&self) -> ThreadClock {
        #[cfg(feature = "accounting")]
        {
            ThreadClock { seq: self.seq, state: self.state as u32, last_change: self.last_change, clocks: self.clocks }
        }
        #[cfg(not(feature = "accounting"))]
        {
            ThreadClock { seq: 0, state: 0, last_change: 0, clocks: [0; NR_MICROSTATES] }
        }
    }

    /// The clocks as of the last state change, *without* the current state's running span.
    #[inline]
    pub fn settled(&self) -> MsaTimes {
        #[cfg(feature = "accounting")]
        {
            self.clocks
        }
        #[cfg(not(feature = "accounting"))]
        {
            [0; NR_MICROSTATES]
        }
    }

    /// The clocks as they stand at `now`, including the time spent so far in the current
    /// state. This is what `msa()` reports; it does not modify the clock.
    #[allow(unused_variables)]
    pub fn snapshot(&self, now: u64) -> MsaTimes {
        #[allow(unused_mut)]
        let mut times = self.settled();
        #[cfg(feature = "accounting")]
        {
            // BEGIN LAB 1: add the open span of the current state (zero if `now` is before the last change)
            // STUB: let _ = now;
            times[self.state.index()] += now.saturating_sub(self.last_change);
            // END LAB 1
        }
        times
    }

    /// The clocks at `now` as they *would* stand had the task switched to `state` at `at`
    /// (`last_change <= at <= now`). The scheduler uses this to read a task whose change of
    /// queue it has not yet written down (the lazy array flip); the clock is not modified.
    #[allow(unused_variables)]
    pub fn snapshot_as_if_switched(&self, at: u64, state: MicroState, now: u64) -> MsaTimes {
        #[cfg(feature = "accounting")]
        {
            let mut shadow = *self;
            shadow.switch(at, state);
            shadow.snapshot(now)
        }
        #[cfg(not(feature = "accounting"))]
        {
            [0; NR_MICROSTATES]
        }
    }

    /// The task's delays at `now`: the closed episodes, and the open one (if the task is in
    /// a delay state) as if it ended at `now`, so that the totals agree with
    /// [`MsaClock::snapshot`] at the same `now`. Does not modify the clock. All zero without
    /// the `accounting` feature.
    #[allow(unused_variables)]
    pub fn delays(&self, now: u64) -> DelayStats {
        #[cfg(feature = "accounting")]
        {
            let mut e = self.episodes;
            if let Some(open) = e.get_mut(DELAY_CLASS[self.state.index()] as usize) {
                let end = now.max(self.last_change);
                open.close(end - self.episode_start, end);
            }
            DelayStats::from_classes(e)
        }
        #[cfg(not(feature = "accounting"))]
        {
            DelayStats::ZERO
        }
    }

    /// [`MsaClock::delays`] as it *would* read had the task switched to `state` at `at`: the
    /// companion of [`MsaClock::snapshot_as_if_switched`]. (For the lazy array flip it gives
    /// the same numbers as `delays(now)`: both queues are one delay class.)
    #[allow(unused_variables)]
    pub fn delays_as_if_switched(&self, at: u64, state: MicroState, now: u64) -> DelayStats {
        #[cfg(feature = "accounting")]
        {
            let mut shadow = *self;
            shadow.switch(at, state);
            shadow.delays(now)
        }
        #[cfg(not(feature = "accounting"))]
        {
            DelayStats::ZERO
        }
    }

    /// Add this task's clocks at `now` into `sum` — how `MSA_SELF` adds up a process's
    /// threads and `MSA_CHILDREN` keeps the totals of reaped children. The same numbers as
    /// adding [`MsaClock::snapshot`], without building the snapshot first (`msa()` is a hot
    /// path).
    #[inline]
    #[allow(unused_variables)]
    pub fn add_to(&self, now: u64, sum: &mut MsaTimes) {
        #[cfg(feature = "accounting")]
        {
            // BEGIN LAB 1: add the settled clocks and the open span into `sum`, wrapping, without building a snapshot
            // STUB: let _ = (now, sum);
            for (total, t) in sum.iter_mut().zip(&self.clocks) {
                *total = total.wrapping_add(*t);
            }
            let running = &mut sum[self.state.index()];
            *running = running.wrapping_add(now.saturating_sub(self.last_change));
            // END LAB 1
        }
    }
}

// The vvar page's layout is this struct's: a user-space reader reads `ThreadClock` where
// the kernel keeps its `MsaClock` (the layout is defined once, in the ABI crate).
#[cfg(feature = "accounting")]
const _: () = {
    use core::mem::offset_of;
    assert!(offset_of!(MsaClock, seq) == offset_of!(ThreadClock, seq));
    assert!(offset_of!(MsaClock, state) == offset_of!(ThreadClock, state));
    assert!(offset_of!(MsaClock, last_change) == offset_of!(ThreadClock, last_change));
    assert!(offset_of!(MsaClock, clocks) == offset_of!(ThreadClock, clocks));
    assert!(core::mem::size_of::<MicroState>() == core::mem::size_of::<u32>());
};

#[cfg(all(test, feature = "accounting"))]
#[path = "clock_tests.rs"]
mod tests;

#[cfg(all(test, feature = "accounting"))]
#[path = "vvar_tests.rs"]
mod vvar_tests;

#[cfg(all(test, not(feature = "accounting")))]
#[path = "clock_off_tests.rs"]
mod tests_compiled_out;
