//! The kernel's clocks: the calibrated TSC (monotonic time) and the wall clock at boot.
//!
//! The TSC's frequency is measured once against PIT channel 2 (three 10 ms windows, the
//! median kept, so one window stretched by the host does not skew it). Monotonic time is
//! TSC ticks since kernel entry converted to ns; wall-clock time is the RTC's reading at boot
//! plus monotonic time.

use spin::Once;
use tally_clock::{calibrate, TscClock};

static CLOCK: Once<TscClock> = Once::new();
static BOOT_UNIX_SECONDS: Once<u64> = Once::new();

/// PIT periods in one calibration window: 10 ms.
const CALIBRATION_PIT_TICKS: u16 = 11_932;

pub fn init(boot_tsc: u64) {
    let mut samples = [0u64; 3];
    for s in &mut samples {
        let delta = hal::cpu::without_interrupts(|| hal::pit::measure_tsc(CALIBRATION_PIT_TICKS));
        *s = calibrate(delta, CALIBRATION_PIT_TICKS as u64).unwrap_or(1);
    }
    samples.sort_unstable();
    let clock = *CLOCK.call_once(|| TscClock::new(samples[1], boot_tsc));
    log::info!(
        "TSC: {}.{:03} MHz (calibrated against the PIT; samples {} {} {} Hz)",
        clock.hz() / 1_000_000,
        clock.hz() / 1000 % 1000,
        samples[0],
        samples[1],
        samples[2]
    );
    let raw = hal::rtc::read();
    let unix = raw.decode().map_or(0, |dt| {
        log::info!(
            "RTC: {:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
            dt.year,
            dt.month,
            dt.day,
            dt.hour,
            dt.minute,
            dt.second
        );
        dt.unix_seconds()
    });
    BOOT_UNIX_SECONDS.call_once(|| unix);
}

/// The calibrated TSC. Before calibration, a 1 GHz placeholder (only early log stamps use it).
pub fn clock() -> TscClock {
    CLOCK.get().copied().unwrap_or(TscClock::new(1_000_000_000, 0))
}

/// Nanoseconds since kernel entry; `None` before the TSC is calibrated.
pub fn monotonic_ns() -> Option<u64> {
    CLOCK.get().map(|c| c.monotonic_ns(hal::tsc::read()))
}

/// Seconds since 1970 when the kernel booted (0 if the RTC was unreadable).
pub fn boot_unix_seconds() -> u64 {
    BOOT_UNIX_SECONDS.get().copied().unwrap_or(0)
}
