//! `clock_gettime`: the kernel's two clocks (`base::time`).
//!
//! CLOCK_MONOTONIC is TSC ticks since kernel entry in nanoseconds; CLOCK_REALTIME is the
//! RTC's reading at boot plus that. Any other clock id is `EINVAL`.

use tally_uapi::errno::EINVAL;
use tally_uapi::syscall::{Timespec, CLOCK_MONOTONIC, CLOCK_REALTIME};

use super::{usercopy, Args, SysResult};

/// `clock_gettime(clock_id, tp)`.
pub fn clock_gettime(a: &Args) -> SysResult {
    let mono = crate::base::time::monotonic_ns().unwrap_or(0);
    let ns = match a[0] as usize {
        CLOCK_MONOTONIC => mono,
        CLOCK_REALTIME => crate::base::time::boot_unix_seconds().saturating_mul(1_000_000_000).saturating_add(mono),
        _ => return Err(EINVAL),
    };
    let ts = Timespec { tv_sec: (ns / 1_000_000_000) as i64, tv_nsec: (ns % 1_000_000_000) as i64 };
    usercopy::write_timespec(a[1], &ts)?;
    Ok(0)
}
