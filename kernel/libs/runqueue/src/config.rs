//! The two clock rates the scheduler is built around, and the tick counts derived from them.
//!
//! The O(1) scheduler thinks in *ticks* (Linux's jiffies): timeslices, the starvation limit
//! and the sleep-average ceiling are all so many ticks, and Linux derives them from `HZ` with
//! integer arithmetic such as `100 * HZ / 1000`. Here `HZ` is a constructor parameter rather
//! than a compile-time constant, so the same code can be tested at 1000 Hz, 100 Hz, or a
//! deliberately coarse 20 Hz that makes slices expire quickly.
//!
//! Timestamps, on the other hand, are raw TSC values (the accounting clock). Where Linux
//! keeps `sleep_avg` in nanoseconds and converts with `NS_TO_JIFFIES`, this crate keeps it in
//! TSC ticks and converts with [`SchedConfig::tsc_per_tick`].

/// Scheduler clock configuration (see the module documentation).
///
/// The quantities every wake-up and switch needs (`tsc_per_tick`, `MAX_SLEEP_AVG` in ticks
/// and in TSC ticks, the TSC value of one bonus point, each nice level's `INTERACTIVE_SLEEP`)
/// are derived once, here, rather than with a chain of divisions each time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedConfig {
    hz: u32,
    tsc_hz: u64,
    tsc_per_tick: u64,
    max_sleep_avg: u32,
    max_sleep_avg_tsc: u64,
    /// TSC ticks per bonus point (`MAX_SLEEP_AVG / MAX_BONUS` ticks), when `CURRENT_BONUS`
    /// can be computed with this one division exactly; 0 when it cannot (see `new`).
    bonus_tsc: u64,
    /// `INTERACTIVE_SLEEP` in TSC ticks for each static priority 100..=139.
    interactive_sleep_tsc: [u64; NICE_LEVELS],
}

/// Static priorities of normal tasks: 100..=139.
const NICE_LEVELS: usize = 40;

impl Default for SchedConfig {
    /// 1000 Hz ticks and a nominal 1 GHz TSC.
    fn default() -> Self {
        SchedConfig::new(Self::DEFAULT_HZ, 1_000_000_000)
    }
}

impl SchedConfig {
    /// Linux's usual desktop tick rate, and Tally's default.
    pub const DEFAULT_HZ: u32 = 1000;

    /// Ticks at `hz` per second, TSC counting at `tsc_hz`. Nonsense values are raised to the
    /// smallest meaningful ones (at least 1 Hz, and a TSC at least as fast as the tick).
    pub const fn new(hz: u32, tsc_hz: u64) -> Self {
        let hz = if hz == 0 { 1 } else { hz };
        let tsc_hz = if tsc_hz < hz as u64 { hz as u64 } else { tsc_hz };
        let mut c = SchedConfig {
            hz,
            tsc_hz,
            tsc_per_tick: tsc_hz / hz as u64,
            max_sleep_avg: 0,
            max_sleep_avg_tsc: 0,
            bonus_tsc: 0,
            interactive_sleep_tsc: [0; NICE_LEVELS],
        };
        let max_bonus = crate::interactivity::MAX_BONUS as u32;
        // `MAX_SLEEP_AVG`: `DEF_TIMESLICE * MAX_BONUS` ticks (one second), never 0.
        c.max_sleep_avg = match c.def_timeslice() * max_bonus {
            0 => 1,
            t => t,
        };
        c.max_sleep_avg_tsc = c.ticks_to_tsc(c.max_sleep_avg as u64);
        // `CURRENT_BONUS` is `(sleep_avg / tsc_per_tick) * MAX_BONUS / MAX_SLEEP_AVG`. When
        // MAX_SLEEP_AVG is a multiple of MAX_BONUS (always, unless it was raised from 0),
        // that is `sleep_avg / (tsc_per_tick * MAX_SLEEP_AVG / MAX_BONUS)`: nested floor
        // divisions are one division by the product.
        if c.max_sleep_avg.is_multiple_of(max_bonus) {
            if let Some(unit) = c.tsc_per_tick.checked_mul((c.max_sleep_avg / max_bonus) as u64) {
                c.bonus_tsc = unit;
            }
        }
        let mut i = 0;
        while i < NICE_LEVELS {
            let static_prio = crate::prio::MAX_RT_PRIO + i as i32;
            c.interactive_sleep_tsc[i] = crate::interactivity::interactive_sleep_uncached(&c, static_prio);
            i += 1;
        }
        c
    }

    /// TSC ticks per bonus point, or 0 if `CURRENT_BONUS` must take the two-division way.
    pub(crate) const fn bonus_tsc(&self) -> u64 {
        self.bonus_tsc
    }

    /// `INTERACTIVE_SLEEP` (TSC ticks) of a normal task's static priority, as derived in
    /// `new`; `None` outside 100..=139.
    #[inline]
    pub(crate) fn interactive_sleep_tsc(&self, static_prio: i32) -> Option<u64> {
        self.interactive_sleep_tsc.get(static_prio.wrapping_sub(crate::prio::MAX_RT_PRIO) as usize).copied()
    }

    /// Timer ticks per second (`HZ`).
    pub const fn hz(&self) -> u32 {
        self.hz
    }

    /// TSC ticks per second.
    pub const fn tsc_hz(&self) -> u64 {
        self.tsc_hz
    }

    /// TSC ticks per timer tick (at least 1).
    pub const fn tsc_per_tick(&self) -> u64 {
        self.tsc_per_tick
    }

    /// `ms` milliseconds in ticks, rounded down as Linux's `ms * HZ / 1000` does.
    pub const fn ms_to_ticks(&self, ms: u32) -> u32 {
        (ms as u64 * self.hz as u64 / 1000) as u32
    }

    /// `MIN_TIMESLICE`: 5 ms, but never less than one tick.
    pub const fn min_timeslice(&self) -> u32 {
        let t = self.ms_to_ticks(5);
        if t == 0 {
            1
        } else {
            t
        }
    }

    /// `DEF_TIMESLICE`: 100 ms, the slice of a nice-0 task.
    pub const fn def_timeslice(&self) -> u32 {
        self.ms_to_ticks(100)
    }

    /// `MAX_SLEEP_AVG` in ticks: `DEF_TIMESLICE * MAX_BONUS` (one second). A task's sleep
    /// average is capped here, and it is also `STARVATION_LIMIT`. Never 0.
    pub const fn max_sleep_avg(&self) -> u32 {
        self.max_sleep_avg
    }

    /// `STARVATION_LIMIT` in ticks (equal to `MAX_SLEEP_AVG`).
    pub const fn starvation_limit(&self) -> u32 {
        self.max_sleep_avg()
    }

    /// `NS_MAX_SLEEP_AVG`, but in TSC ticks: the cap on `sleep_avg`.
    pub const fn max_sleep_avg_tsc(&self) -> u64 {
        self.max_sleep_avg_tsc
    }

    /// `GRANULARITY`: 10 ms, at least one tick — the round-robin quantum among interactive
    /// tasks of equal priority.
    pub const fn granularity(&self) -> u32 {
        let t = self.ms_to_ticks(10);
        if t == 0 {
            1
        } else {
            t
        }
    }

    /// Timer ticks as TSC ticks (`JIFFIES_TO_NS` for this crate's units).
    pub const fn ticks_to_tsc(&self, ticks: u64) -> u64 {
        ticks.saturating_mul(self.tsc_per_tick())
    }

    /// TSC ticks as whole timer ticks (`NS_TO_JIFFIES`).
    pub const fn tsc_to_ticks(&self, tsc: u64) -> u64 {
        tsc / self.tsc_per_tick()
    }
}
