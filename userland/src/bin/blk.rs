//! `blk [-w] SECTORS` — reads the first SECTORS sectors of the data disk and checks them;
//! with `-w`, writes them first and then reads them back.
//!
//! The data disk (IDE primary slave) is made by `cargo xtask` with a known pattern
//! (`xtask/src/build.rs`, `data_disk_sector`): sector `lba` starts with the text
//! `TALLY-SECTOR-<lba>\n`, and every other byte `i` of it is `(7 × lba + i) mod 251`. So a
//! reader can check every byte it gets. `-w` writes that same pattern (QEMU opens the disk
//! with `snapshot=on`: nothing written survives the run), so the read-back check is the
//! same check, and a write that went to the wrong sector shows up as a mismatch.
//!
//! The transfers use `blk_read`/`blk_write` in requests of up to 128 sectors (64 KiB). The
//! caller sleeps UNINTERRUPTIBLE while the drive works, so the time shows up in that
//! microstate (run it under `msa` to see), and the sectors in `ru_inblock`/`ru_oublock`.
//!
//! ```text
//! $ blk -w 256
//! blk: wrote 256 sectors (128 KiB) in 2 requests, 14.210 ms (9007 KiB/s)
//! blk: read 256 sectors (128 KiB) in 2 requests, 9.875 ms (12962 KiB/s)
//! blk: 256 sectors checked, all match the pattern
//! ```
//!
//! SECTORS is checked against the disk's size before anything is transferred: more than the
//! disk has fails at once with its size (`blk: the data disk has 15298 sectors (7649 KiB):
//! cannot read 99999999 sectors (EINVAL)`).
//!
//! Exit status: 0 if every sector matched, 1 on a mismatch or a failed call (its errno is
//! printed: `ENODEV` without a data disk, `EINVAL` past its end), 2 for a bad command line.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::vec;
use tally_rt::process::parse_u64;
use tally_rt::uapi::syscall::BLK_SECTOR_SIZE;
use tally_rt::{eprintln, println, sys, Errno};

tally_rt::entry!(main);

/// Sectors per request.
const CHUNK: u64 = 128;
/// Mismatching sectors reported one by one before the rest are only counted.
const SHOW_BAD: u64 = 5;

fn main() -> i32 {
    let (write, n) = match (tally_rt::arg(1), tally_rt::arg(2), tally_rt::arg(3)) {
        (Some("-w"), Some(n), None) => (true, parse_u64(n)),
        (Some(n), None, None) => (false, parse_u64(n)),
        _ => (false, None),
    };
    let Some(sectors) = n.filter(|&n| n > 0) else {
        eprintln!("usage: blk [-w] SECTORS   (SECTORS > 0)");
        return 2;
    };
    // The size first, so that a count past the end fails at once and says why, instead of
    // after reading (or writing) the whole disk.
    match disk_fits(sectors) {
        Ok(None) => {}
        Ok(Some(size)) => {
            eprintln!(
                "blk: the data disk has {size} sectors ({} KiB): cannot {} {sectors} sectors (EINVAL)",
                size * BLK_SECTOR_SIZE as u64 / 1024,
                if write { "write" } else { "read" }
            );
            return 1;
        }
        Err(e) => {
            eprintln!("blk: blk_read of sector 0: {e}");
            return 1;
        }
    }
    if write {
        if let Err((lba, e)) = transfer(sectors, true) {
            eprintln!("blk: blk_write at sector {lba}: {e}");
            return 1;
        }
    }
    match transfer(sectors, false) {
        Ok(0) => {
            println!("blk: {sectors} sectors checked, all match the pattern");
            0
        }
        Ok(bad) => {
            println!("blk: {sectors} sectors checked, {bad} do not match the pattern");
            1
        }
        Err((lba, e)) => {
            eprintln!("blk: blk_read at sector {lba}: {e}");
            1
        }
    }
}

/// Does the data disk have `sectors` sectors? `Ok(None)` if so (one read of the last one);
/// otherwise `Ok(Some(size))`, its size in sectors, found by bisection with one-sector reads
/// (`blk_read` is `EINVAL` past the end; Tally has no call that tells a disk's size). `Err`:
/// the disk cannot be read at all (`ENODEV` without one).
fn disk_fits(sectors: u64) -> Result<Option<u64>, Errno> {
    let mut one = [0u8; BLK_SECTOR_SIZE];
    let readable = |lba: u64, buf: &mut [u8]| match sys::blk_read(lba, buf) {
        Ok(_) => Ok(true),
        Err(e) if e.0 == tally_rt::uapi::errno::EINVAL => Ok(false),
        Err(e) => Err(e),
    };
    if readable(sectors - 1, &mut one)? {
        return Ok(None);
    }
    if !readable(0, &mut one)? {
        return Ok(Some(0));
    }
    // Sector `lo` is readable, `hi` is not: the size is lo + 1 when they meet.
    let (mut lo, mut hi) = (0u64, sectors - 1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if readable(mid, &mut one)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(lo + 1))
}

/// Writes (`write`) or reads and checks sectors `0..sectors`, timing it. Returns the number
/// of sectors that did not match (always 0 when writing), or the failing LBA and errno.
fn transfer(sectors: u64, write: bool) -> Result<u64, (u64, Errno)> {
    let mut buf = vec![0u8; CHUNK as usize * BLK_SECTOR_SIZE];
    let t0 = sys::monotonic_ns().ok();
    let (mut lba, mut requests, mut bad) = (0u64, 0u64, 0u64);
    while lba < sectors {
        let n = (sectors - lba).min(CHUNK);
        let bytes = &mut buf[..n as usize * BLK_SECTOR_SIZE];
        if write {
            for (i, s) in bytes.as_chunks_mut::<BLK_SECTOR_SIZE>().0.iter_mut().enumerate() {
                fill_pattern(lba + i as u64, s);
            }
            sys::blk_write(lba, bytes).map_err(|e| (lba, e))?;
        } else {
            sys::blk_read(lba, bytes).map_err(|e| (lba, e))?;
            let mut want = [0u8; BLK_SECTOR_SIZE];
            for (i, s) in bytes.as_chunks::<BLK_SECTOR_SIZE>().0.iter().enumerate() {
                let at = lba + i as u64;
                fill_pattern(at, &mut want);
                if *s != want {
                    bad += 1;
                    if bad <= SHOW_BAD {
                        let off = s.iter().zip(want.iter()).position(|(a, b)| a != b).unwrap_or(0);
                        println!(
                            "blk: sector {at}: byte {off} is {:#04x}, the pattern says {:#04x}",
                            s[off], want[off]
                        );
                    }
                }
            }
        }
        requests += 1;
        lba += n;
    }
    let took = match (t0, sys::monotonic_ns().ok()) {
        (Some(a), Some(b)) => {
            let ns = b.saturating_sub(a).max(1);
            let kib_s = u128::from(sectors) * 512 * 1_000_000_000 / 1024 / u128::from(ns);
            format!("{}.{:03} ms ({kib_s} KiB/s)", ns / 1_000_000, ns / 1000 % 1000)
        }
        _ => "time unknown (no clock_gettime)".into(),
    };
    println!(
        "blk: {} {sectors} sectors ({} KiB) in {requests} requests, {took}",
        if write { "wrote" } else { "read" },
        sectors * BLK_SECTOR_SIZE as u64 / 1024
    );
    Ok(bad)
}

/// Sector `lba` of the data disk as `cargo xtask` made it (`data_disk_sector`).
fn fill_pattern(lba: u64, s: &mut [u8]) {
    for (i, b) in s.iter_mut().enumerate() {
        *b = ((lba * 7 + i as u64) % 251) as u8;
    }
    let header = format!("TALLY-SECTOR-{lba}\n");
    let n = header.len().min(s.len());
    s[..n].copy_from_slice(&header.as_bytes()[..n]);
}
