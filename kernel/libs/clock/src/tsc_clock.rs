//! TSC ticks ↔ nanoseconds.
//!
//! Accounting keeps raw TSC ticks everywhere (adding ticks is exact) and converts only when
//! a value leaves the kernel. The conversion multiplies before it divides, in 128-bit
//! arithmetic, so it neither overflows (a 3 GHz TSC wraps u64 nanoseconds only after
//! ~194 years) nor loses precision to a rounded "ns per tick" factor.

/// The PIT's input clock in Hz (a property of the PC platform, fixed since the IBM PC).
pub const PIT_HZ: u64 = 1_193_182;

/// Nanoseconds in a second.
const NS: u64 = 1_000_000_000;

/// A TSC whose frequency has been measured, and the tick at which the kernel booted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TscClock {
    hz: u64,
    boot_tsc: u64,
}

impl TscClock {
    /// `hz` must be non-zero; a zero is replaced by 1 so that no division can fault.
    pub const fn new(hz: u64, boot_tsc: u64) -> Self {
        Self { hz: if hz == 0 { 1 } else { hz }, boot_tsc }
    }

    pub const fn hz(&self) -> u64 {
        self.hz
    }

    pub const fn boot_tsc(&self) -> u64 {
        self.boot_tsc
    }

    /// A tick count (a duration) in nanoseconds, rounded down — exactly
    /// `floor(ticks * 10^9 / hz)`, saturating at `u64::MAX`.
    ///
    /// This runs for every clock a system call reports (`msa()` converts 13), so it avoids
    /// 128-bit division, which is a slow library call on x86_64: below ~18.4 × 10^9 ticks
    /// (several seconds) the product fits in 64 bits and one `div` instruction does it;
    /// beyond, whole seconds are split off first (`ticks = q·hz + r`, so the result is
    /// `q·10^9 + floor(r·10^9 / hz)`), still exact.
    #[inline]
    pub const fn ticks_to_ns(&self, ticks: u64) -> u64 {
        if ticks <= u64::MAX / NS {
            return ticks * NS / self.hz;
        }
        self.long_ticks_to_ns(ticks)
    }

    /// [`TscClock::ticks_to_ns`] beyond ~18.4 × 10^9 ticks, out of line so that the common
    /// case stays small enough to inline (and unroll, in `msa()`'s loop over 13 clocks).
    #[cold]
    #[inline(never)]
    const fn long_ticks_to_ns(&self, ticks: u64) -> u64 {
        if self.hz <= u64::MAX / NS {
            let (q, r) = (ticks / self.hz, ticks % self.hz);
            return match q.checked_mul(NS) {
                Some(whole) => whole.saturating_add(r * NS / self.hz),
                None => u64::MAX,
            };
        }
        let ns = ticks as u128 * NS as u128 / self.hz as u128;
        if ns > u64::MAX as u128 {
            u64::MAX
        } else {
            ns as u64
        }
    }

    /// A duration in nanoseconds as TSC ticks, rounded down.
    pub const fn ns_to_ticks(&self, ns: u64) -> u64 {
        let ticks = ns as u128 * self.hz as u128 / 1_000_000_000;
        if ticks > u64::MAX as u128 {
            u64::MAX
        } else {
            ticks as u64
        }
    }

    /// Nanoseconds since boot at TSC value `tsc` (the monotonic clock). Values from before
    /// boot read as 0.
    #[inline]
    pub const fn monotonic_ns(&self, tsc: u64) -> u64 {
        self.ticks_to_ns(tsc.saturating_sub(self.boot_tsc))
    }
}

/// The TSC frequency implied by `tsc_delta` ticks elapsing while the PIT counted
/// `pit_ticks` periods of its 1.193182 MHz clock. Returns `None` for a zero interval.
pub const fn calibrate(tsc_delta: u64, pit_ticks: u64) -> Option<u64> {
    if pit_ticks == 0 {
        return None;
    }
    let hz = tsc_delta as u128 * PIT_HZ as u128 / pit_ticks as u128;
    if hz == 0 || hz > u64::MAX as u128 {
        None
    } else {
        Some(hz as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_second_of_ticks_is_one_second() {
        let c = TscClock::new(2_500_000_000, 0);
        assert_eq!(c.ticks_to_ns(2_500_000_000), 1_000_000_000);
        assert_eq!(c.ns_to_ticks(1_000_000_000), 2_500_000_000);
        assert_eq!(c.ticks_to_ns(1), 0, "rounds down");
    }

    #[test]
    fn huge_durations_saturate_instead_of_wrapping() {
        let c = TscClock::new(1, 0);
        assert_eq!(c.ticks_to_ns(u64::MAX), u64::MAX);
        assert_eq!(TscClock::new(u64::MAX, 0).ns_to_ticks(u64::MAX), u64::MAX);
    }

    #[test]
    fn zero_frequency_cannot_divide_by_zero() {
        assert_eq!(TscClock::new(0, 0).hz(), 1);
        assert_eq!(calibrate(100, 0), None);
        assert_eq!(calibrate(0, 100), None);
    }

    #[test]
    fn monotonic_clock_counts_from_boot() {
        let c = TscClock::new(1_000_000_000, 500);
        assert_eq!(c.monotonic_ns(400), 0);
        assert_eq!(c.monotonic_ns(1_500), 1_000);
    }

    #[test]
    fn calibration_against_the_pit() {
        // 10 ms of PIT time (11 932 PIT periods) during which 25 000 000 TSC ticks passed.
        let hz = calibrate(25_000_000, 11_932).unwrap();
        assert!((hz as i64 - 2_500_000_000i64).abs() < 2_500_000_000 / 10_000, "{hz}");
    }

    /// The 128-bit formula the fast paths must agree with.
    fn reference_ns(hz: u64, ticks: u64) -> u64 {
        let hz = hz.max(1);
        (ticks as u128 * 1_000_000_000 / hz as u128).min(u64::MAX as u128) as u64
    }

    #[test]
    fn fast_paths_meet_at_their_borders() {
        for hz in [1, 999, 1_000_000_000, 2_999_999_999, 18_446_744_073, 18_446_744_074, u64::MAX] {
            let c = TscClock::new(hz, 0);
            let edge = u64::MAX / 1_000_000_000;
            for t in
                [0, 1, edge - 1, edge, edge + 1, hz, hz.saturating_mul(7).saturating_add(3), u64::MAX - 1, u64::MAX]
            {
                assert_eq!(c.ticks_to_ns(t), reference_ns(hz, t), "hz {hz} ticks {t}");
            }
        }
    }

    proptest! {
        #[test]
        fn ticks_to_ns_is_exactly_the_128_bit_floor(hz in 1u64..u64::MAX, ticks in any::<u64>()) {
            prop_assert_eq!(TscClock::new(hz, 0).ticks_to_ns(ticks), reference_ns(hz, ticks));
        }

        #[test]
        fn ticks_to_ns_exact_for_real_tsc_rates(hz in 100_000_000u64..10_000_000_000, ticks in any::<u64>()) {
            prop_assert_eq!(TscClock::new(hz, 0).ticks_to_ns(ticks), reference_ns(hz, ticks));
        }

        #[test]
        fn conversions_round_trip_within_one_unit(hz in 1_000_000u64..10_000_000_000, ticks in 0u64..(1u64 << 44)) {
            let c = TscClock::new(hz, 0);
            let back = c.ns_to_ticks(c.ticks_to_ns(ticks));
            // (2^44 ticks at 1 MHz is still far from saturating u64 nanoseconds.)
            // Each conversion rounds down, so the round trip loses less than one ns worth of ticks.
            prop_assert!(back <= ticks);
            prop_assert!(ticks - back <= hz / 1_000_000_000 + 1);
        }

        #[test]
        fn conversion_is_additive_to_within_rounding(
            hz in 1_000_000u64..10_000_000_000,
            a in 0u64..(1u64 << 50),
            b in 0u64..(1u64 << 50),
        ) {
            let c = TscClock::new(hz, 0);
            let whole = c.ticks_to_ns(a + b);
            let parts = c.ticks_to_ns(a) + c.ticks_to_ns(b);
            prop_assert!(whole >= parts && whole - parts <= 1);
        }
    }
}
