//! # `unix:0:system_misc`: a few kernel-wide numbers, class `misc`
//!
//! Solaris' `unix:0:system_misc` is a named kstat of machine-wide counters (`ncpus`,
//! `nproc`, `boot_time`, `clk_intr`, ...). Tally's has the same idea with what Tally
//! keeps, each sampled from its owner at the read (`ks_update`):
//!
//! | statistic        | type   | from                                               |
//! |------------------|--------|----------------------------------------------------|
//! | `boot_time`      | uint64 | `time::boot_unix_seconds()`: the RTC at boot       |
//! | `clk_intr`       | uint64 | `irq::ticks()`: timer interrupts since boot        |
//! | `hz`             | uint32 | `base::config::HZ`: the tick rate                           |
//! | `ncpus`          | uint32 | 1                                                  |
//! | `nproc`          | uint32 | tasks in the task table (idle and zombies included)|
//! | `pswitch`        | uint64 | `sched::nr_switches()`: context switches            |
//! | `frames_in_use`  | uint64 | `mm::stats()`: 4 KiB frames allocated              |
//! | `frames_total`   | uint64 | `mm::stats()`: 4 KiB frames managed                |
//! | `heap_bytes`     | uint64 | `mm::stats()`: kernel heap bytes allocated         |

use tally_kstat::{KstatError, KstatRegistry};
use tally_uapi::kstat::{Hrtime, KidT, KstatValue, KSTAT_DATA_UINT32, KSTAT_DATA_UINT64};

use super::Sources;

const STATS: [(&str, u8); 9] = [
    ("boot_time", KSTAT_DATA_UINT64),
    ("clk_intr", KSTAT_DATA_UINT64),
    ("hz", KSTAT_DATA_UINT32),
    ("ncpus", KSTAT_DATA_UINT32),
    ("nproc", KSTAT_DATA_UINT32),
    ("pswitch", KSTAT_DATA_UINT64),
    ("frames_in_use", KSTAT_DATA_UINT64),
    ("frames_total", KSTAT_DATA_UINT64),
    ("heap_bytes", KSTAT_DATA_UINT64),
];

pub(super) fn create(reg: &mut KstatRegistry, now: Hrtime) -> Result<KidT, KstatError> {
    let kid = reg.create_named("unix", 0, "system_misc", "misc", &STATS, now)?;
    reg.install(kid)?;
    Ok(kid)
}

/// `ks_update`: every value sampled afresh (in [`STATS`] order).
pub(super) fn refresh(reg: &mut KstatRegistry, kid: KidT, src: &Sources) -> Result<(), KstatError> {
    let values = [
        KstatValue::Uint64(crate::base::time::boot_unix_seconds()),
        KstatValue::Uint64(src.ticks),
        KstatValue::Uint32(crate::base::config::HZ),
        KstatValue::Uint32(1),
        KstatValue::Uint32(src.nproc),
        KstatValue::Uint64(src.nr_switches),
        KstatValue::Uint64(src.mem.frames_in_use),
        KstatValue::Uint64(src.mem.frames_total),
        KstatValue::Uint64(src.mem.heap_bytes as u64),
    ];
    super::set_in_order(reg, kid, values)
}
