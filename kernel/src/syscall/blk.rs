//! `blk_read(lba, buf, sectors)` and `blk_write(lba, buf, sectors)`: raw sectors of the
//! data disk.
//!
//! The data disk is the IDE primary slave (`drivers::ata::DATA_DISK`), 512-byte sectors
//! addressed by LBA. A call moves `sectors` whole sectors between the disk and `buf` and
//! returns `sectors`; 0 sectors is a no-op returning 0. Checked first, before the disk is
//! touched: at most `BLK_MAX_SECTORS` per call and a range inside the disk (`EINVAL`),
//! a data disk present (`ENODEV`), `buf` accessible for the whole length (`EFAULT`).
//!
//! The transfer goes through a small kernel buffer, a few sectors at a time: each piece is
//! one driver request, during which the caller sleeps UNINTERRUPTIBLE until the drive's
//! interrupt (its time shows as UNINTERRUPTIBLE_SLEEP, the disk's in the `ata:1:ata1` io
//! kstat). A drive error is `EIO` (pieces already written stay written). The sectors moved
//! are counted for the task (`ru_inblock`/`ru_oublock`, CSA's blocks read and written).
//! If the caller's process is killed meanwhile, the call stops between two pieces
//! (`EINTR`); a piece in progress always completes.

use alloc::vec;
use tally_uapi::errno::{EINTR, EINVAL, ENODEV};
use tally_uapi::syscall::{BLK_MAX_SECTORS, BLK_SECTOR_SIZE};

use super::{usercopy, Args, SysResult};
use crate::drivers::ata;
use crate::sched;

/// Sectors per driver request (an 8 KiB kernel buffer).
const PIECE: u64 = 16;

pub fn blk_read(a: &Args) -> SysResult {
    transfer(a, false)
}

pub fn blk_write(a: &Args) -> SysResult {
    transfer(a, true)
}

fn transfer(a: &Args, write: bool) -> SysResult {
    let (lba, addr, sectors) = (a[0], a[1], a[2]);
    if sectors == 0 {
        return Ok(0);
    }
    if sectors > BLK_MAX_SECTORS as u64 {
        return Err(EINVAL);
    }
    let disk = ata::disk(ata::DATA_DISK).ok_or(ENODEV)?;
    if lba.checked_add(sectors).is_none_or(|end| end > disk.sectors()) {
        return Err(EINVAL);
    }
    let bytes = sectors * BLK_SECTOR_SIZE as u64;
    // Reading the disk writes user memory, and the other way round.
    usercopy::check(addr, bytes, !write)?;
    let mut buf = vec![0u8; (PIECE as usize) * BLK_SECTOR_SIZE];
    let mut done = 0;
    while done < sectors {
        if sched::kill_pending() {
            return Err(EINTR);
        }
        let n = PIECE.min(sectors - done);
        let piece = &mut buf[..n as usize * BLK_SECTOR_SIZE];
        let at = addr + done * BLK_SECTOR_SIZE as u64;
        if write {
            usercopy::copy_from_user(at, piece)?;
            disk.write(lba + done, piece).map_err(|e| e.errno())?;
        } else {
            disk.read(lba + done, piece).map_err(|e| e.errno())?;
            usercopy::copy_to_user(at, piece)?;
        }
        sched::account_blocks(n, write);
        done += n;
    }
    Ok(sectors)
}
