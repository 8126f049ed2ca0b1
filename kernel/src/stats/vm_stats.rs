//! # `unix:0:vm`: user memory and running out of it, class `vm`
//!
//! A named kstat of the numbers behind the out-of-memory policy (`proc/oom.rs`), each
//! sampled at the read (`ks_update`). The names are the ones real systems use for the same
//! thing: Solaris' `freemem` (`unix:0:system_pages`), `zfod` (`cpu:N:vm`: zero-fill-on-
//! demand faults) and `maj_fault` (`cpu:N:vm`: faults that read the page from a disk),
//! Linux's `oom_kill` (`/proc/vmstat`).
//!
//! | statistic      | type   | meaning                                                   |
//! |----------------|--------|-----------------------------------------------------------|
//! | `freemem`      | uint64 | 4 KiB frames free now                                     |
//! | `commit_limit` | uint64 | most pages one `brk`/`mmap` growth may ask for            |
//! | `zfod`         | uint64 | demand-zero page faults served since boot                 |
//! | `maj_fault`    | uint64 | major faults since boot: pages of `/var` programs read in |
//! | `brk_enomem`   | uint64 | heap growths refused: larger than the machine             |
//! | `mmap_enomem`  | uint64 | `mmap`s refused (`ENOMEM`): larger than the machine       |
//! | `oom_kill`     | uint64 | processes killed (SIGKILL) at a fault that found no frame |
//! | `cow_fault`    | uint64 | copy-on-write faults served since boot (Solaris' name): a page `fork` shared copied, or taken over by its last user |
//! | `frames_shared`| uint64 | frames mapped by more than one process now (`fork`'s sharing) |

use tally_kstat::{KstatError, KstatRegistry};
use tally_uapi::kstat::{Hrtime, KidT, KstatValue, KSTAT_DATA_UINT64};

use super::Sources;

const STATS: [(&str, u8); 9] = [
    ("freemem", KSTAT_DATA_UINT64),
    ("commit_limit", KSTAT_DATA_UINT64),
    ("zfod", KSTAT_DATA_UINT64),
    ("maj_fault", KSTAT_DATA_UINT64),
    ("brk_enomem", KSTAT_DATA_UINT64),
    ("mmap_enomem", KSTAT_DATA_UINT64),
    ("oom_kill", KSTAT_DATA_UINT64),
    ("cow_fault", KSTAT_DATA_UINT64),
    ("frames_shared", KSTAT_DATA_UINT64),
];

pub(super) fn create(reg: &mut KstatRegistry, now: Hrtime) -> Result<KidT, KstatError> {
    let kid = reg.create_named("unix", 0, "vm", "vm", &STATS, now)?;
    reg.install(kid)?;
    Ok(kid)
}

/// `ks_update`: every value sampled afresh (in [`STATS`] order).
pub(super) fn refresh(reg: &mut KstatRegistry, kid: KidT, src: &Sources) -> Result<(), KstatError> {
    let oom = src.oom;
    let values = [
        KstatValue::Uint64(src.mem.frames_total.saturating_sub(src.mem.frames_in_use)),
        KstatValue::Uint64(src.commit_limit),
        KstatValue::Uint64(src.zfod),
        KstatValue::Uint64(src.maj_fault),
        KstatValue::Uint64(oom.brk_enomem),
        KstatValue::Uint64(oom.mmap_enomem),
        KstatValue::Uint64(oom.oom_kill),
        KstatValue::Uint64(src.cow_fault),
        KstatValue::Uint64(src.frames_shared),
    ];
    super::set_in_order(reg, kid, values)
}
