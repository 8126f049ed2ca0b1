//! # Disk kstats: `ata:N:ataN`, one I/O kstat per ATA disk, class `disk`
//!
//! The ATA driver (`drivers/ata.rs`) keeps each disk's `tally_kstat::IoStats` itself,
//! under the disk's own lock, and updates it around every request: `waitq_enter` when the
//! request is queued for the channel, `waitq_to_runq` when it is issued to the drive,
//! `runq_exit` and the byte and operation counters when it completes. This file publishes
//! it: at boot, one io kstat per disk the driver's IDENTIFY found (module `ata`, instance
//! the disk's index, name the disk's name, as Solaris' `sd:0:sd0`), and at each read of
//! one, a copy of the driver's `IoStats` into the registry (`ks_update`), which the
//! registry's snapshot then brings up to the time of the read.
//!
//! ```text
//!   task: disk.read(..) ─> Disk::request ─> IoStats (driver's lock) ─┐
//!   reader: stats::read(kid) ─> refresh(): registry IoStats = copy ─┘ ─> kstat_io_t bytes
//! ```

use alloc::vec::Vec;
use tally_kstat::{KstatError, KstatRegistry};
use tally_uapi::kstat::{Hrtime, KidT, KSTAT_TYPE_IO};

use crate::drivers::ata;

/// Create and install the io kstat of every disk present; returns (KID, disk index) pairs.
pub(super) fn create_all(reg: &mut KstatRegistry, now: Hrtime) -> Vec<(KidT, usize)> {
    let mut out = Vec::new();
    for index in 0..ata::NR_DISKS {
        let Some(disk) = ata::disk(index) else { continue };
        let made = reg
            .create("ata", index as i32, disk.name(), "disk", KSTAT_TYPE_IO, 1, now)
            .and_then(|kid| reg.install(kid).map(|()| kid));
        match made {
            Ok(kid) => out.push((kid, index)),
            Err(e) => log::warn!("kstat: cannot create the kstat of {}: {e:?}", disk.name()),
        }
    }
    out
}

/// `ks_update`: copy disk `index`'s statistics from the driver.
pub(super) fn refresh(reg: &mut KstatRegistry, kid: KidT, index: usize) -> Result<(), KstatError> {
    let disk = ata::disk(index).ok_or(KstatError::NoSuchKstat)?;
    *reg.io_mut(kid)? = disk.io_stats();
    Ok(())
}
