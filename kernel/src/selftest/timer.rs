//! Does the tick arrive at the configured rate? Counted against the calibrated TSC.

use crate::base::time;
use crate::irq;

const WINDOW_MS: u64 = 500;

pub fn tick_rate() -> Result<(), &'static str> {
    let clock = time::clock();
    let window = clock.ns_to_ticks(WINDOW_MS * 1_000_000);
    // Start on a tick boundary so the count is not off by a partial period.
    let k = irq::ticks();
    while irq::ticks() == k {
        hal::cpu::wait_for_interrupt();
    }
    let (t0, k0) = (hal::tsc::read(), irq::ticks());
    while hal::tsc::read() - t0 < window {
        hal::cpu::wait_for_interrupt();
    }
    let (t1, k1) = (hal::tsc::read(), irq::ticks());
    let elapsed_ns = clock.ticks_to_ns(t1 - t0);
    let got = k1 - k0;
    let expected = crate::base::config::HZ as u64 * elapsed_ns / 1_000_000_000;
    println!(
        "timer: {got} ticks in {} us of TSC time; expected {expected} at {} Hz",
        elapsed_ns / 1000,
        crate::base::config::HZ
    );
    if got * 10 < expected * 9 || got * 10 > expected * 11 {
        return Err("tick rate is more than 10% off");
    }
    Ok(())
}
