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
    }

    /// Fold in another task's episodes (a thread group's total): counts and totals add,
    /// the larger maximum wins with its timestamp (on a tie the earlier sighting), the
    /// smaller non-zero minimum wins. The operation is commutative and associative, so the
    /// order threads are added in does not matter.
    pub fn add(&mut self, other: &DelayEpisodes) {
        self.count = self.count.wrapping_add(other.count);
        self.total = self.total.wrapping_add(other.total);
        if other.max > self.max || (other.max == self.max && other.max_seen < self.max_seen) {
            self.max = other.max;
            self.max_seen = other.max_seen;
        }
        if other.min != 0 && (self.min == 0 || other.min < self.min) {
            self.min = other.min;
        }
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
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn classes_of_the_states() {
        use MicroState::*;
        assert_eq!(DelayClass::of(OnActiveQueue), Some(DelayClass::Cpu));
        assert_eq!(DelayClass::of(OnExpiredQueue), Some(DelayClass::Cpu));
        assert_eq!(DelayClass::of(UninterruptibleSleep), Some(DelayClass::Blkio));
        assert_eq!(DelayClass::of(Interrupted), Some(DelayClass::Irq));
        let delays = MicroState::ALL.iter().filter(|s| DelayClass::of(**s).is_some()).count();
        assert_eq!(delays, 4, "every other state is no delay");
    }

    #[test]
    fn zero_length_episodes_count_but_are_never_the_minimum() {
        let mut e = DelayEpisodes::ZERO;
        e.open();
        e.close(0, 10);
        assert_eq!((e.count, e.total, e.max, e.min, e.max_seen), (1, 0, 0, 0, 0));
        e.open();
        e.close(5, 20);
        e.open();
        e.close(3, 30);
        e.open();
        e.close(5, 40);
        assert_eq!((e.count, e.total, e.max, e.min, e.max_seen), (4, 13, 5, 3, 20), "first max kept");
    }

    fn episodes() -> impl Strategy<Value = DelayEpisodes> {
        let small = prop_oneof![Just(0u64), 0u64..4, any::<u64>()];
        (small.clone(), small.clone(), small.clone(), small.clone(), small).prop_map(
            // A maximum of 0 was never seen (the invariant `close` keeps).
            |(count, total, max, min, seen)| DelayEpisodes {
                count,
                total,
                max,
                min,
                max_seen: if max == 0 { 0 } else { seen },
            },
        )
    }

    fn stats() -> impl Strategy<Value = DelayStats> {
        (episodes(), episodes(), episodes()).prop_map(|(cpu, blkio, irq)| DelayStats { cpu, blkio, irq })
    }

    fn sum(a: &DelayStats, b: &DelayStats) -> DelayStats {
        let mut s = *a;
        s.add(b);
        s
    }

    proptest! {
        #[test]
        fn close_keeps_the_shortest_nonzero_episode(
            min in prop_oneof![Just(0u64), 1u64..8, any::<u64>()],
            len in prop_oneof![Just(0u64), 1u64..8, any::<u64>()],
        ) {
            let mut e = DelayEpisodes { min, ..DelayEpisodes::ZERO };
            e.close(len, 1);
            let want = if len != 0 && (min == 0 || len < min) { len } else { min };
            prop_assert_eq!(e.min, want);
        }

        #[test]
        fn add_is_commutative_and_associative(a in stats(), b in stats(), c in stats()) {
            prop_assert_eq!(sum(&a, &b), sum(&b, &a));
            prop_assert_eq!(sum(&sum(&a, &b), &c), sum(&a, &sum(&b, &c)));
            prop_assert_eq!(sum(&a, &DelayStats::ZERO), a, "zero is the identity");
        }

        #[test]
        fn add_keeps_the_extremes(a in stats(), b in stats()) {
            let s = sum(&a, &b);
            for k in [DelayClass::Cpu, DelayClass::Blkio, DelayClass::Irq] {
                let (x, y, z) = (a.get(k), b.get(k), s.get(k));
                prop_assert_eq!(z.count, x.count.wrapping_add(y.count));
                prop_assert_eq!(z.total, x.total.wrapping_add(y.total));
                prop_assert_eq!(z.max, x.max.max(y.max));
                prop_assert!(z.max_seen == x.max_seen || z.max_seen == y.max_seen);
                let nz = [x.min, y.min].into_iter().filter(|&m| m != 0).min().unwrap_or(0);
                prop_assert_eq!(z.min, nz);
            }
        }
    }
}

/// The clock's episodes against an independent model, over random switches with time that
/// sometimes goes backwards.
#[cfg(all(test, feature = "accounting"))]
mod clock_props {
    use super::*;
    use crate::MsaClock;
    use proptest::prelude::*;
    use MicroState::*;

    /// The model: the list of episodes of each class, as (length, end) pairs, built from
    /// the rule "time only counts when it moves forward" and nothing of the clock's code.
    struct Model {
        /// The latest time seen (time that went backwards does not lower it).
        mark: u64,
        class: Option<DelayClass>,
        episodes: [std::vec::Vec<(u64, u64)>; NR_DELAY_CLASSES],
    }

    impl Model {
        fn new(now: u64, state: MicroState) -> Self {
            let mut m = Model { mark: now, class: None, episodes: Default::default() };
            m.enter(DelayClass::of(state));
            m
        }
        fn enter(&mut self, class: Option<DelayClass>) {
            if class != self.class {
                if let Some(c) = class {
                    self.episodes[c as usize].push((0, self.mark));
                }
            }
            self.class = class;
        }
        fn advance(&mut self, now: u64) {
            if now > self.mark {
                if let Some(c) = self.class {
                    let last = self.episodes[c as usize].last_mut().unwrap();
                    last.0 += now - self.mark;
                    last.1 = now;
                }
                self.mark = now;
            }
        }
        /// What `delays()` must report for the episodes so far.
        fn expect(&self, c: DelayClass) -> DelayEpisodes {
            let eps = &self.episodes[c as usize];
            let mut e = DelayEpisodes { count: eps.len() as u64, ..DelayEpisodes::ZERO };
            for &(len, end) in eps {
                e.total += len;
                if len > e.max {
                    e.max = len;
                    e.max_seen = end;
                }
            }
            e.min = eps.iter().map(|e| e.0).filter(|&l| l > 0).min().unwrap_or(0);
            e
        }
    }

    fn events() -> impl Strategy<Value = std::vec::Vec<(i64, usize)>> {
        let dt = prop_oneof![Just(0i64), 1i64..10, 10i64..5_000, -200i64..0];
        prop::collection::vec((dt, 0usize..NR_MICROSTATES), 0..200)
    }

    const CLASSES: [DelayClass; 3] = [DelayClass::Cpu, DelayClass::Blkio, DelayClass::Irq];

    fn check(c: &MsaClock, m: &Model, now: u64) -> Result<(), TestCaseError> {
        let s = c.snapshot(now);
        let d = c.delays(now);
        prop_assert_eq!(d.cpu.total, s[OnActiveQueue.index()] + s[OnExpiredQueue.index()]);
        prop_assert_eq!(d.blkio.total, s[UninterruptibleSleep.index()]);
        prop_assert_eq!(d.irq.total, s[Interrupted.index()]);
        // The model, read at `now` (an open episode as if it ended then).
        let mut m2 = Model { mark: m.mark, class: m.class, episodes: m.episodes.clone() };
        m2.advance(now);
        for k in CLASSES {
            let (got, want) = (d.get(k), m2.expect(k));
            prop_assert_eq!(*got, want, "{:?}", k);
            prop_assert!(got.max <= got.total);
            prop_assert!(got.min <= got.max);
            prop_assert!(got.max == 0 || got.min > 0, "a positive max implies a positive min");
            prop_assert!(got.max != 0 || got.max_seen == 0);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn episodes_match_the_clocks_and_the_model(
            start in 0usize..NR_MICROSTATES,
            evs in events(),
            peek in 0u64..1_000,
        ) {
            let first = MicroState::ALL[start];
            let mut now = 1_000u64;
            let mut c = MsaClock::new(now, first);
            let mut m = Model::new(now, first);
            check(&c, &m, now)?;
            for (dt, st) in evs {
                now = now.saturating_add_signed(dt);
                let state = MicroState::ALL[st];
                c.switch(now, state);
                m.advance(now);
                m.enter(DelayClass::of(state));
                check(&c, &m, now)?;
                check(&c, &m, now + peek)?;
                // Reading "as if switched" agrees with switching a copy.
                let at = c.last_change() + peek / 2;
                let mut copy = c.clone();
                copy.switch(at, Interrupted);
                prop_assert_eq!(c.delays_as_if_switched(at, Interrupted, at + peek), copy.delays(at + peek));
                let s = c.snapshot_as_if_switched(at, Interrupted, at + peek);
                prop_assert_eq!(copy.delays(at + peek).irq.total, s[Interrupted.index()]);
            }
            // Every tick since creation is in exactly one clock; the delay totals are the
            // delay clocks' share of it.
            let d = c.delays(now);
            let s = c.snapshot(now);
            let other: u64 =
                MicroState::ALL.iter().filter(|st| DelayClass::of(**st).is_none()).map(|st| s[st.index()]).sum();
            prop_assert_eq!(d.cpu.total + d.blkio.total + d.irq.total + other, now.max(c.last_change()) - c.created());
        }

        #[test]
        fn adding_threads_adds_counts_and_totals(a in events(), b in events()) {
            let run = |evs: &[(i64, usize)]| {
                let mut now = 500u64;
                let mut c = MsaClock::new(now, OnActiveQueue);
                for &(dt, st) in evs {
                    now = now.saturating_add_signed(dt);
                    c.switch(now, MicroState::ALL[st]);
                }
                (c.delays(now), c.snapshot(now))
            };
            let ((da, sa), (db, sb)) = (run(&a), run(&b));
            let mut sum = da;
            sum.add(&db);
            prop_assert_eq!(
                sum.cpu.total,
                sa[OnActiveQueue.index()]
                    + sa[OnExpiredQueue.index()]
                    + sb[OnActiveQueue.index()]
                    + sb[OnExpiredQueue.index()]
            );
            prop_assert_eq!(sum.blkio.count, da.blkio.count + db.blkio.count);
            prop_assert_eq!(sum.irq.max, da.irq.max.max(db.irq.max));
        }
    }

    #[test]
    fn the_lazy_flip_is_one_wait() {
        let mut c = MsaClock::new(0, OncpuSys);
        c.switch(100, OnExpiredQueue);
        c.switch(300, OnActiveQueue); // the flip, settled
        c.switch(400, OncpuSys);
        let d = c.delays(400);
        assert_eq!((d.cpu.count, d.cpu.total, d.cpu.max, d.cpu.min, d.cpu.max_seen), (1, 300, 300, 300, 400));
    }

    #[test]
    fn a_new_task_waits_from_birth_and_open_episodes_are_read_up_to_now() {
        let mut c = MsaClock::new(50, OnActiveQueue);
        assert_eq!(c.delays(80).cpu, DelayEpisodes { count: 1, total: 30, max: 30, min: 30, max_seen: 80 });
        c.switch(90, OncpuSys);
        c.switch(90, Interrupted); // an interrupt at once...
        c.switch(90, OncpuSys); // ...that took no tick: counted, not a minimum
        c.switch(120, UninterruptibleSleep);
        c.switch(100, OnActiveQueue); // time went backwards: the disk wait ends at 120
        c.switch(130, OncpuSys);
        let d = c.delays(130);
        assert_eq!(d.cpu, DelayEpisodes { count: 2, total: 50, max: 40, min: 10, max_seen: 90 });
        assert_eq!(d.irq, DelayEpisodes { count: 1, total: 0, max: 0, min: 0, max_seen: 0 });
        assert_eq!(d.blkio, DelayEpisodes { count: 1, total: 0, max: 0, min: 0, max_seen: 0 });
    }
}
