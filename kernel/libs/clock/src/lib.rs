//! # tally-clock — the arithmetic of time
//!
//! The kernel has three sources of time, read by the HAL (`tally-hal`: `tsc`, `pit`, `rtc`):
//!
//! * the **TSC**, a 64-bit counter that ticks at a constant rate: cheap to read (one
//!   instruction), so every accounting timestamp is a raw TSC value;
//! * the **PIT**, whose input clock is exactly 1 193 182 Hz: slow to use, but its rate is
//!   known, so the kernel measures the TSC's rate against it once at boot;
//! * the **CMOS RTC**, a battery-backed calendar clock read once at boot for wall-clock time
//!   (accounting records carry begin times in seconds since 1970).
//!
//! This crate holds everything about those clocks that is arithmetic rather than hardware,
//! so that it is unit-tested on the host: [`TscClock`] converts ticks to nanoseconds without
//! overflow or drift, [`calibrate`] turns a PIT-timed TSC delta into a frequency,
//! [`rtc`] turns the RTC's calendar registers into Unix time, and [`calendar`] turns Unix
//! time back into a UTC date and C's `ctime` layout for the tools that print times.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

pub mod calendar;
pub mod rtc;
mod tsc_clock;

pub use tsc_clock::{calibrate, TscClock, PIT_HZ};
