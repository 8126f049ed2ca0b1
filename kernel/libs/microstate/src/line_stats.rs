//! Per-IRQ-line statistics: how often a line fired, and how long its handlers ran.
//!
//! Two shapes are borrowed from Solaris kstats so that existing tools' vocabulary fits:
//!
//! * [`EventTimer`] is a `kstat_timer_t`: number of events, total elapsed time, the shortest
//!   and longest single event, and when the last one started and stopped;
//! * [`IntrCounts`] is a `kstat_intr_t`: interrupts counted by kind — hard (a device raised
//!   it: the timer's tick too, as Solaris counts its clock), soft, watchdog (a driver's
//!   periodic watchdog call; none here), spurious (nobody claimed it), multiple-service (one
//!   entry served several devices).
//!
//! [`crate::IrqAccounting`] owns one [`IrqLineStats`] per line and updates it when an
//! interrupt ends; the kstat layer reads it. All times are TSC ticks.

pub use tally_uapi::kstat::IntrKind;

/// Number of interrupt kinds counted per line (`KSTAT_NUM_INTRS`).
pub const NR_INTR_KINDS: usize = tally_uapi::kstat::KSTAT_NUM_INTRS;

/// Interrupts counted by kind (Solaris `kstat_intr_t`). Each interrupt is counted once, under
/// the kind it finally turned out to be.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntrCounts {
    /// `counts[k.index()]` interrupts of kind `k`.
    pub counts: [u64; NR_INTR_KINDS],
}

impl IntrCounts {
    /// How many interrupts of `kind` were seen.
    pub fn get(&self, kind: IntrKind) -> u64 {
        self.counts[kind.index()]
    }

    /// All interrupts, whatever their kind.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// Timing of a stream of events (Solaris `kstat_timer_t`), in TSC ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventTimer {
    /// Number of events timed.
    pub num_events: u64,
    /// Sum of all events' durations.
    pub elapsed_time: u64,
    /// Shortest single event (`u64::MAX` until the first event).
    pub min_time: u64,
    /// Longest single event.
    pub max_time: u64,
    /// When the most recent event started.
    pub start_time: u64,
    /// When the most recent event stopped.
    pub stop_time: u64,
}

impl Default for EventTimer {
    fn default() -> Self {
        Self::new()
    }
}

impl EventTimer {
    /// A timer that has seen no events.
    pub const fn new() -> Self {
        EventTimer { num_events: 0, elapsed_time: 0, min_time: u64::MAX, max_time: 0, start_time: 0, stop_time: 0 }
    }

    /// Record one event that ran from `start` to `stop` and is charged `duration` ticks.
    /// (For an interrupt handler `duration` can be less than `stop - start`: time spent in
    /// nested handlers belongs to their own lines.)
    pub fn record(&mut self, start: u64, stop: u64, duration: u64) {
        // BEGIN LAB 4: one more event: count it, add its duration, keep the shortest and longest, and when the last one ran
        // STUB: let _ = (start, stop, duration);
        self.num_events += 1;
        self.elapsed_time = self.elapsed_time.wrapping_add(duration);
        self.min_time = self.min_time.min(duration);
        self.max_time = self.max_time.max(duration);
        self.start_time = start;
        self.stop_time = stop;
        // END LAB 4
    }
}

/// Everything kept for one IRQ line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IrqLineStats {
    /// Handler timing (exclusive of nested handlers, see `irq.rs`).
    pub timer: EventTimer,
    /// Interrupts by kind.
    pub intrs: IntrCounts,
    /// The kind an interrupt on this line counts as unless its handler says otherwise
    /// ([`IntrKind::Hard`] by default, the timer line's too; a spurious one is marked so).
    pub default_kind: IntrKind,
}

impl Default for IrqLineStats {
    fn default() -> Self {
        Self::new()
    }
}

impl IrqLineStats {
    /// A line that has never fired.
    pub const fn new() -> Self {
        IrqLineStats {
            timer: EventTimer::new(),
            intrs: IntrCounts { counts: [0; NR_INTR_KINDS] },
            default_kind: IntrKind::Hard,
        }
    }
}

#[cfg(test)]
#[path = "line_stats_tests.rs"]
mod tests;
