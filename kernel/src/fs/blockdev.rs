//! The accounting disk as `embedded-sdmmc` sees it: a block device over `drivers::ata`
//! disk 2, a clock for the directory entries' times, and the FAT's geometry for the two
//! things the crate does not do — counting free clusters before a write (so a record is
//! never cut by a full disk) and freeing a deleted file's cluster chain.
//!
//! Two defects of `embedded-sdmmc` 0.10's cluster allocator are kept away here:
//!
//! * its search for a free cluster reads whole FAT sectors and may return an entry *past
//!   the last cluster* (the unused tail of the last FAT sector reads as free): at mount,
//!   [`Geometry::fence_tail`] marks those tail entries bad (0xFFF7), which no real cluster
//!   is, and which `fsck.fat` ignores;
//! * after taking the *last* free cluster it fails looking for the next free one, leaving
//!   the cluster chained to the file but the write reported as failed: so one free cluster
//!   is always kept in reserve ([`Geometry::count_free`] never counts it).
//!
//! Only fsd calls into this file (through the volume manager, or directly for the FAT).
//! Every sector it moves is counted in [`sectors`], so fsd can charge each request the
//! sectors it cost.

use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

use embedded_sdmmc::{Block, BlockCount, BlockDevice, BlockIdx, TimeSource, Timestamp};

use crate::base::time;
use crate::drivers::ata::{self, AtaError, Disk};

static SECTORS_READ: AtomicU64 = AtomicU64::new(0);
static SECTORS_WRITTEN: AtomicU64 = AtomicU64::new(0);

/// Sectors read and written on the accounting disk since boot (by fsd).
pub fn sectors() -> (u64, u64) {
    (SECTORS_READ.load(Ordering::Relaxed), SECTORS_WRITTEN.load(Ordering::Relaxed))
}

/// A driver error, as `embedded-sdmmc` wants one (`core::error::Error`).
#[derive(Debug, Clone, Copy)]
pub struct DiskError(pub AtaError);

impl fmt::Display for DiskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ata2: {}", self.0)
    }
}

impl core::error::Error for DiskError {}

/// `ata2`, whole: block 0 is the MBR (the crate finds the partition itself).
pub struct AtaBlocks {
    disk: &'static Disk,
}

impl AtaBlocks {
    pub fn new() -> Option<AtaBlocks> {
        ata::disk(ata::ACCT_DISK).map(|disk| AtaBlocks { disk })
    }

    /// Read one sector (for the FAT scans of this file).
    pub fn read_sector(&self, lba: u32, out: &mut [u8; 512]) -> Result<(), DiskError> {
        self.disk.read(u64::from(lba), out).map_err(DiskError)?;
        SECTORS_READ.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Write one sector.
    pub fn write_sector(&self, lba: u32, data: &[u8; 512]) -> Result<(), DiskError> {
        self.disk.write(u64::from(lba), data).map_err(DiskError)?;
        SECTORS_WRITTEN.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// FLUSH CACHE on the drive (`fsync`).
    pub fn flush(&self) -> Result<(), DiskError> {
        self.disk.flush().map_err(DiskError)
    }
}

impl BlockDevice for AtaBlocks {
    type Error = DiskError;

    fn read(&self, blocks: &mut [Block], start: BlockIdx) -> Result<(), DiskError> {
        for (i, b) in blocks.iter_mut().enumerate() {
            self.disk.read(u64::from(start.0) + i as u64, &mut b.contents).map_err(DiskError)?;
            SECTORS_READ.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn write(&self, blocks: &[Block], start: BlockIdx) -> Result<(), DiskError> {
        for (i, b) in blocks.iter().enumerate() {
            self.disk.write(u64::from(start.0) + i as u64, &b.contents).map_err(DiskError)?;
            SECTORS_WRITTEN.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn num_blocks(&self) -> Result<BlockCount, DiskError> {
        Ok(BlockCount(self.disk.sectors() as u32))
    }
}

/// The wall clock (the RTC read at boot plus the TSC since) for entries' times.
pub struct WallClock;

/// Seconds since 1970 now.
pub fn unix_now() -> u64 {
    time::boot_unix_seconds() + time::monotonic_ns().unwrap_or(0) / 1_000_000_000
}

impl TimeSource for WallClock {
    fn get_timestamp(&self) -> Timestamp {
        let t = tally_clock::calendar::UtcTime::from_unix(unix_now() as i64);
        Timestamp {
            // FAT dates start in 1980; the crate stores years since 1970.
            year_since_1970: (t.year - 1970).clamp(10, 10 + 127) as u8,
            zero_indexed_month: (t.month - 1) as u8,
            zero_indexed_day: (t.day - 1) as u8,
            hours: t.hour as u8,
            minutes: t.minute as u8,
            seconds: t.second as u8,
        }
    }
}

/// Seconds since 1970 of a FAT timestamp.
pub fn unix_of(ts: &Timestamp) -> i64 {
    let days = tally_clock::rtc::days_from_civil(
        1970 + i64::from(ts.year_since_1970),
        u32::from(ts.zero_indexed_month) + 1,
        u32::from(ts.zero_indexed_day) + 1,
    );
    days * 86_400 + i64::from(ts.hours) * 3600 + i64::from(ts.minutes) * 60 + i64::from(ts.seconds)
}

/// Where the FAT16 volume's structures are, read from the MBR and the boot sector.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    /// First sector of each FAT copy.
    fat_start: u32,
    fat_sectors: u32,
    fats: u32,
    /// Clusters 2 .. 2 + clusters exist.
    clusters: u32,
    pub bytes_per_cluster: u32,
    /// Where the last free-cluster scan found room (the next one starts there).
    hint: u32,
}

impl Geometry {
    /// Read the MBR's first partition and its BPB. Refuses anything but FAT16.
    pub fn read(dev: &AtaBlocks) -> Result<Geometry, &'static str> {
        let mut s = [0u8; 512];
        dev.read_sector(0, &mut s).map_err(|_| "cannot read the MBR")?;
        if s[510..512] != [0x55, 0xAA] {
            return Err("no MBR signature");
        }
        let start = u32::from_le_bytes([s[454], s[455], s[456], s[457]]);
        dev.read_sector(start, &mut s).map_err(|_| "cannot read the boot sector")?;
        let u16_at = |o: usize| u32::from(u16::from_le_bytes([s[o], s[o + 1]]));
        let bytes_per_sector = u16_at(11);
        let per_cluster = u32::from(s[13]);
        let reserved = u16_at(14);
        let fats = u32::from(s[16]);
        let root_entries = u16_at(17);
        let total = match u16_at(19) {
            0 => u32::from_le_bytes([s[32], s[33], s[34], s[35]]),
            n => n,
        };
        let fat_sectors = u16_at(22);
        if bytes_per_sector != 512 || per_cluster == 0 || fats == 0 || fat_sectors == 0 {
            return Err("not a FAT16 boot sector with 512-byte sectors");
        }
        let root_sectors = (root_entries * 32).div_ceil(512);
        let data = reserved + fats * fat_sectors + root_sectors;
        let clusters = total.saturating_sub(data) / per_cluster;
        if !(4085..65525).contains(&clusters) {
            return Err("not FAT16 (cluster count)");
        }
        Ok(Geometry {
            fat_start: start + reserved,
            fat_sectors,
            fats,
            clusters,
            bytes_per_cluster: per_cluster * 512,
            hint: 0,
        })
    }

    /// FAT sectors that hold entries of existing clusters.
    fn used_fat_sectors(&self) -> u32 {
        ((self.clusters + 2) * 2).div_ceil(512).min(self.fat_sectors)
    }

    /// Free entries in FAT sector `i` (of the first copy), counting only real clusters.
    fn free_in(&self, i: u32, s: &[u8; 512]) -> u32 {
        let first = i * 256;
        (0..256u32)
            .filter(|&k| {
                let c = first + k;
                (2..self.clusters + 2).contains(&c) && s[(2 * k) as usize] == 0 && s[(2 * k + 1) as usize] == 0
            })
            .count() as u32
    }

    /// Mark the FAT entries past the last cluster (the tail of the last FAT sector) bad, in
    /// every copy, so the crate's search never hands one out. Entries already non-zero are
    /// left as they are.
    pub fn fence_tail(&self, dev: &AtaBlocks) -> Result<(), DiskError> {
        let end = self.clusters + 2;
        let sector = end / 256;
        if sector >= self.fat_sectors || end.is_multiple_of(256) {
            return Ok(());
        }
        for copy in 0..self.fats {
            let lba = self.fat_start + copy * self.fat_sectors + sector;
            let mut s = [0u8; 512];
            dev.read_sector(lba, &mut s)?;
            let mut changed = false;
            for k in (end % 256)..256 {
                let at = (2 * k) as usize;
                if s[at] == 0 && s[at + 1] == 0 {
                    s[at..at + 2].copy_from_slice(&0xFFF7u16.to_le_bytes());
                    changed = true;
                }
            }
            if changed {
                dev.write_sector(lba, &s)?;
            }
        }
        Ok(())
    }

    /// Are at least `want` clusters free? Scans the FAT from where the last scan found room,
    /// so in the common case (free space right after the data) it reads one sector; on a full
    /// disk it reads the whole first FAT.
    pub fn has_free(&mut self, dev: &AtaBlocks, want: u32) -> Result<bool, DiskError> {
        self.count_free(dev, want).map(|n| n >= want)
    }

    /// Free clusters that may be used, counting up to `limit` (stops early): one free
    /// cluster is always held back (see the module documentation).
    pub fn count_free(&mut self, dev: &AtaBlocks, limit: u32) -> Result<u32, DiskError> {
        if limit == 0 {
            return Ok(0);
        }
        let limit = limit + 1;
        let n = self.used_fat_sectors();
        let mut s = [0u8; 512];
        let mut found = 0;
        for k in 0..n {
            let i = (self.hint + k) % n;
            dev.read_sector(self.fat_start + i, &mut s)?;
            let free = self.free_in(i, &s);
            if free > 0 && found == 0 {
                self.hint = i;
            }
            found += free;
            if found >= limit {
                break;
            }
        }
        Ok(found.saturating_sub(1))
    }

    /// Mark every cluster of the chain starting at `first` free, in every FAT copy. For a
    /// deleted file: `embedded-sdmmc` only marks the directory entry deleted. Each FAT sector
    /// is read once and written once per copy while the chain stays in it (a contiguous
    /// file of N clusters costs about 3·N/256 sector transfers, not 3·N).
    pub fn free_chain(&mut self, dev: &AtaBlocks, first: u32) -> Result<(), DiskError> {
        let mut cluster = first;
        let mut s = [0u8; 512];
        let mut loaded: Option<u32> = None;
        let mut steps = 0;
        while (2..self.clusters + 2).contains(&cluster) && steps <= self.clusters {
            let sector = cluster / 256;
            if loaded != Some(sector) {
                if let Some(old) = loaded {
                    self.write_fat_sector(dev, old, &s)?;
                }
                dev.read_sector(self.fat_start + sector, &mut s)?;
                loaded = Some(sector);
            }
            let at = (2 * (cluster % 256)) as usize;
            let next = u32::from(u16::from_le_bytes([s[at], s[at + 1]]));
            s[at] = 0;
            s[at + 1] = 0;
            cluster = next;
            steps += 1;
        }
        if let Some(old) = loaded {
            self.write_fat_sector(dev, old, &s)?;
        }
        self.hint = self.hint.min(first / 256);
        Ok(())
    }

    /// FAT sector `i` into every copy.
    fn write_fat_sector(&self, dev: &AtaBlocks, i: u32, s: &[u8; 512]) -> Result<(), DiskError> {
        for copy in 0..self.fats {
            dev.write_sector(self.fat_start + copy * self.fat_sectors + i, s)?;
        }
        Ok(())
    }
}
