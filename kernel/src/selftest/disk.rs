//! Self-test `disk`: the ATA driver (`drivers/ata.rs`) against the data disk.
//!
//! `cargo xtask` builds `target/tally/data.img` — 4 MiB, 8192 sectors, sector `n` starting
//! with `TALLY-SECTOR-n\n` and continuing with bytes `(7n + i) % 251` (`data_disk_sector`
//! in `xtask/src/build.rs`; [`expected`] here must stay in step with it) — and attaches it
//! as the primary slave, `ata1`, with `snapshot=on`, so this test may write to it: nothing
//! it writes outlives the run.
//!
//! Checked, in order: IDENTIFY found the 8192-sector data disk (and says the same when
//! asked again, interrupt-driven); sectors 0, 1, 100 and a 4-sector run hold the pattern;
//! a 1-sector and a 2-sector write read back, neighbours untouched; requests past the end
//! or of a bad length are refused with `EINVAL`; the drive's own refusal (the driver's
//! range check skipped) comes back as `EIO`; and the disk's io kstat adds up.
//!
//! Throughout, IRQ 14's counter must rise by exactly the interrupts each request raises:
//! one per IDENTIFY or FLUSH CACHE, one per *sector* of a READ/WRITE SECTORS request (PIO
//! interrupts once per 512-byte data block, so a 4-sector read is one request and four
//! interrupts), none for a request the driver refuses.

use alloc::format;
use alloc::vec;

use crate::drivers::ata::{self, AtaError, Disk};
use crate::irq;
use tally_uapi::errno;

const LINE: u8 = 14;
const SECTOR: usize = 512;
/// The size xtask gives the data disk: 4 MiB.
const DATA_DISK_SECTORS: u64 = 8192;

/// Sector `lba` of the image xtask builds.
fn expected(lba: u64) -> [u8; SECTOR] {
    let mut s = [0u8; SECTOR];
    for (i, b) in s.iter_mut().enumerate() {
        *b = ((lba * 7 + i as u64) % 251) as u8;
    }
    let header = format!("TALLY-SECTOR-{lba}\n");
    s[..header.len()].copy_from_slice(header.as_bytes());
    s
}

/// What the test writes over sector `lba`: different from [`expected`] in every byte
/// position that matters.
fn rewritten(lba: u64) -> [u8; SECTOR] {
    let mut s = [0u8; SECTOR];
    for (i, b) in s.iter_mut().enumerate() {
        *b = ((lba * 13 + i as u64 * 3) % 253) as u8 ^ 0x5a;
    }
    let header = format!("TALLY-REWRITTEN-{lba}\n");
    s[..header.len()].copy_from_slice(header.as_bytes());
    s
}

/// Run `f`; return its result and the IRQ 14s it took.
fn irqs<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = irq::count(LINE);
    let r = f();
    (r, irq::count(LINE) - before)
}

fn ok<T>(what: &str, r: Result<T, AtaError>) -> Result<T, &'static str> {
    r.map_err(|e| {
        println!("disk: {what} failed: {e}");
        "a request to the data disk failed"
    })
}

fn interrupts(what: &str, got: u64, want: u64) -> Result<(), &'static str> {
    if got != want {
        println!("disk: {what}: irq{LINE} rose by {got}, expected {want}");
        return Err("IRQ 14 did not rise by exactly one per interrupt the request raises");
    }
    Ok(())
}

/// Read `n` sectors at `lba` (expecting `n` interrupts) and compare them with `want(lba+k)`.
fn read_and_compare(disk: &Disk, lba: u64, want: &[[u8; SECTOR]]) -> Result<(), &'static str> {
    let mut buf = vec![0u8; want.len() * SECTOR];
    let (r, n) = irqs(|| disk.read(lba, &mut buf));
    ok("read", r)?;
    interrupts("read", n, want.len() as u64)?;
    for (k, (got, want)) in buf.as_chunks::<SECTOR>().0.iter().zip(want).enumerate() {
        if got != want {
            let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
            println!(
                "disk: sector {} differs at byte {at}: {:#04x}, expected {:#04x}",
                lba + k as u64,
                got[at],
                want[at]
            );
            return Err("a sector read back differs from what should be there");
        }
    }
    Ok(())
}

fn refused(what: &str, r: Result<(), AtaError>, n: u64, want: AtaError) -> Result<(), &'static str> {
    if r != Err(want) {
        println!("disk: {what}: got {r:?}, expected Err({want:?})");
        return Err("a bad request was not refused as it should be");
    }
    interrupts(what, n, 0)
}

pub fn ata() -> Result<(), &'static str> {
    let disk = ata::disk(ata::DATA_DISK).ok_or("no data disk: IDENTIFY found nothing at ata1 (primary slave)")?;
    let id = *disk.identity().ok_or("no IDENTIFY data")?;
    let unexpected = ata::unexpected_interrupts();
    println!("disk: {} is {}, {} sectors ({} KiB)", disk.name(), id.model(), id.sectors(), id.sectors() / 2);
    if id.sectors() != DATA_DISK_SECTORS {
        return Err("the data disk is not the 8192-sector image xtask builds");
    }
    let (again, n) = irqs(|| disk.identify());
    if ok("IDENTIFY", again)? != id {
        return Err("IDENTIFY answered differently the second time");
    }
    interrupts("IDENTIFY", n, 1)?;
    println!("disk: IDENTIFY again, interrupt-driven: same answer, 1 interrupt");

    for lba in [0, 1, 100] {
        read_and_compare(disk, lba, &[expected(lba)])?;
    }
    println!("disk: sectors 0, 1 and 100 hold the xtask pattern, 1 interrupt each");
    read_and_compare(disk, 98, &[expected(98), expected(99), expected(100), expected(101)])?;
    println!("disk: one 4-sector read (98-101) matches, 4 interrupts (one per sector)");

    let (r, n) = irqs(|| disk.write(200, &rewritten(200)));
    ok("write", r)?;
    interrupts("1-sector write", n, 1)?;
    read_and_compare(disk, 199, &[expected(199), rewritten(200), expected(201)])?;
    let two = [rewritten(300), rewritten(301)];
    let (r, n) = irqs(|| disk.write(300, two.as_flattened()));
    ok("write", r)?;
    interrupts("2-sector write", n, 2)?;
    read_and_compare(disk, 300, &two)?;
    let (r, n) = irqs(|| disk.flush());
    ok("flush", r)?;
    interrupts("FLUSH CACHE", n, 1)?;
    println!("disk: wrote sector 200 and sectors 300-301, read them back, neighbours untouched; flush: 1 interrupt");

    let mut buf = [0u8; SECTOR];
    let mut two_buf = [0u8; 2 * SECTOR];
    let (r, n) = irqs(|| disk.read(DATA_DISK_SECTORS, &mut buf));
    let errno_past_end = r.map_err(|e| e.errno()).err();
    refused("read past the end", r, n, AtaError::OutOfRange)?;
    let (r, n) = irqs(|| disk.read(DATA_DISK_SECTORS - 1, &mut two_buf));
    refused("read across the end", r, n, AtaError::OutOfRange)?;
    let (r, n) = irqs(|| disk.write(DATA_DISK_SECTORS, &buf));
    refused("write past the end", r, n, AtaError::OutOfRange)?;
    let (r, n) = irqs(|| disk.read(0, &mut buf[..100]));
    refused("100-byte read", r, n, AtaError::BadLength)?;
    if errno_past_end != Some(errno::EINVAL) {
        return Err("an out-of-range request is not EINVAL");
    }
    println!(
        "disk: lba 8192 (past the end) -> errno {} (EINVAL), no interrupt; so are a read across the end and a \
        100-byte read",
        errno::EINVAL
    );

    let (r, n) = irqs(|| disk.read_unchecked(DATA_DISK_SECTORS, &mut buf));
    match r {
        Err(e @ AtaError::Device { .. }) if e.errno() == errno::EIO => {
            println!("disk: the drive itself refuses lba 8192: {e} -> errno {} (EIO)", errno::EIO)
        }
        other => {
            println!("disk: read past the end, range check skipped: {other:?}");
            return Err("the drive's error was not reported as EIO");
        }
    }
    interrupts("refused by the drive", n, 1)?;
    println!(
        "disk: irq{LINE} rose by exactly the interrupts each request raises: 1 per IDENTIFY or FLUSH, 1 per \
        sector read or written, 0 for a refused request"
    );

    if ata::unexpected_interrupts() != unexpected {
        return Err("an IRQ 14 arrived that no request was waiting for");
    }

    let s = disk.stats();
    println!(
        "disk: io {}: reads {} nread {} writes {} nwritten {} wcnt {} rcnt {} errors {}",
        disk.name(),
        s.reads,
        s.nread,
        s.writes,
        s.nwritten,
        s.wcnt,
        s.rcnt,
        disk.errors()
    );
    let requests = (s.reads + s.writes) as i64 + disk.errors() as i64;
    println!(
        "disk: io {}: wtime {} ns wlentime {} rtime {} ns rlentime {}; mean service {} us over {requests} requests",
        disk.name(),
        s.wtime,
        s.wlentime,
        s.rtime,
        s.rlentime,
        s.rtime / requests.max(1) / 1000
    );
    // 6 successful reads (0, 1, 100, 98-101, 199-201, 300-301), 2 writes, 1 failed read.
    if (s.reads, s.nread, s.writes, s.nwritten, disk.errors()) != (6, 6144, 2, 1536, 1) {
        return Err("the io kstat's counters do not match the requests made");
    }
    if s.wcnt != 0 || s.rcnt != 0 {
        return Err("requests are still counted as queued or running");
    }
    // One request at a time: each queue's length was 0 or 1, so length x time = time.
    if s.rtime <= 0 || s.rlentime != s.rtime || s.wlentime != s.wtime {
        return Err("the io kstat's queue sums are inconsistent");
    }
    Ok(())
}
