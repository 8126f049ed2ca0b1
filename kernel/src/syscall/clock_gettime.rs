//! `clock_gettime`: the kernel's two clocks (`base::time`) and the CPU-time clocks.
//!
//! CLOCK_MONOTONIC is TSC ticks since kernel entry in nanoseconds; CLOCK_REALTIME is the
//! RTC's reading at boot plus that. Linux's variants of those two answer the same here:
//! CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_COARSE and CLOCK_BOOTTIME (nothing suspends, and
//! the TSC is never slewed) as CLOCK_MONOTONIC, CLOCK_REALTIME_COARSE as CLOCK_REALTIME.
//! CLOCK_PROCESS_CPUTIME_ID (C's `clock()`) and CLOCK_THREAD_CPUTIME_ID are the caller's
//! process's (every thread, past and present) or thread's on-CPU microstates, ONCPU_USR +
//! ONCPU_SYS + ONCPU_TRAP, read as `msa` reads them (`acct::msa_of`): exact to the TSC tick.
//! Any other clock id (another process's CPU clock included) is `EINVAL`.

use tally_microstate::NR_MICROSTATES;
use tally_uapi::errno::EINVAL;
use tally_uapi::msa::MicroState;
use tally_uapi::syscall::{Timespec, CLOCK_MONOTONIC, CLOCK_REALTIME};

use super::{usercopy, Args, SysResult};
use crate::acct::{self, MsaWhich};

/// Linux's other clock ids (`include/uapi/linux/time.h`).
const CLOCK_PROCESS_CPUTIME_ID: usize = 2;
const CLOCK_THREAD_CPUTIME_ID: usize = 3;
const CLOCK_MONOTONIC_RAW: usize = 4;
const CLOCK_REALTIME_COARSE: usize = 5;
const CLOCK_MONOTONIC_COARSE: usize = 6;
const CLOCK_BOOTTIME: usize = 7;

/// On-CPU time of the caller's thread or process, in nanoseconds.
fn cpu_time_ns(which: MsaWhich) -> u64 {
    let mut clocks = [0; NR_MICROSTATES];
    acct::msa_of(which, &mut clocks);
    let ticks: u64 =
        [MicroState::OncpuUsr, MicroState::OncpuSys, MicroState::OncpuTrap].iter().map(|s| clocks[s.index()]).sum();
    crate::base::time::clock().ticks_to_ns(ticks)
}

/// `clock_gettime(clock_id, tp)`.
pub fn clock_gettime(a: &Args) -> SysResult {
    let mono = || crate::base::time::monotonic_ns().unwrap_or(0);
    let ns = match a[0] as u32 as usize {
        CLOCK_MONOTONIC | CLOCK_MONOTONIC_RAW | CLOCK_MONOTONIC_COARSE | CLOCK_BOOTTIME => mono(),
        CLOCK_REALTIME | CLOCK_REALTIME_COARSE => {
            crate::base::time::boot_unix_seconds().saturating_mul(1_000_000_000).saturating_add(mono())
        }
        CLOCK_PROCESS_CPUTIME_ID => cpu_time_ns(MsaWhich::SelfProcess),
        CLOCK_THREAD_CPUTIME_ID => cpu_time_ns(MsaWhich::Thread),
        _ => return Err(EINVAL),
    };
    let ts = Timespec { tv_sec: (ns / 1_000_000_000) as i64, tv_nsec: (ns % 1_000_000_000) as i64 };
    usercopy::write_timespec(a[1], &ts)?;
    Ok(0)
}
