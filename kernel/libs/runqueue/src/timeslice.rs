//! How long a task may run before it expires: its timeslice, from its static priority.
//!
//! Linux 2.6 scales the slice linearly with the distance from the worst priority, with a
//! steeper scale for nice values below 0 (`SCALE_PRIO`):
//!
//! ```text
//!   static_prio < 120:  max(4 * DEF_TIMESLICE * (140 - static_prio) / 20, MIN_TIMESLICE)
//!   otherwise:          max(    DEF_TIMESLICE * (140 - static_prio) / 20, MIN_TIMESLICE)
//!
//!   nice -20 → 800 ms,  nice 0 → 100 ms,  nice 19 → 5 ms
//! ```
//!
//! The arithmetic is done in ticks, as Linux does, so at a coarse `HZ` the values round down
//! (and never below one tick). Real-time round-robin tasks use the same table; FIFO tasks
//! have a slice that is never consumed.

use crate::config::SchedConfig;
use crate::prio::{nice_to_prio, MAX_PRIO, MAX_USER_PRIO};

/// `SCALE_PRIO(x, prio)`: `x` scaled by the distance of `static_prio` from `MAX_PRIO`,
/// never below the minimum slice.
fn scale_prio(config: &SchedConfig, x: u32, static_prio: i32) -> u32 {
    let steps = (MAX_PRIO - static_prio).clamp(0, MAX_USER_PRIO) as u64;
    let scaled = x as u64 * steps / (MAX_USER_PRIO / 2) as u64;
    (scaled as u32).max(config.min_timeslice())
}

/// `static_prio_timeslice`: the slice, in ticks, of a task with static priority
/// `static_prio` (100..=139).
pub fn static_prio_timeslice(config: &SchedConfig, static_prio: i32) -> u32 {
    if static_prio < nice_to_prio(0) {
        scale_prio(config, config.def_timeslice() * 4, static_prio)
    } else {
        scale_prio(config, config.def_timeslice(), static_prio)
    }
}
