//! The accounting disk: the FAT16 file system the kernel mounts at `/var`, as the host
//! makes it, attaches it and reads it.
//!
//! Where it sits: every QEMU run xtask starts (`qemu.rs`) has a third IDE disk, the
//! secondary master (`-drive …,if=ide,index=2`, the kernel's `ata2`). Its contents start as
//! a *template* built here once and cached under `target/tally/`:
//!
//! * 8 MiB, sector 0 an MBR (the classic PC partition table) with one partition, type 0x06
//!   (FAT16), from LBA 2048 to the end: `embedded-sdmmc`, the kernel's FAT implementation,
//!   refuses a disk without a partition table;
//! * that partition formatted FAT16 with 512-byte clusters (one sector each) by the `fatfs`
//!   crate: about 14 000 clusters, well above the 4085 below which a FAT is FAT12, which
//!   `embedded-sdmmc` refuses (and which `mkfs.fat` would choose on a disk this small);
//! * three directories in its root, `ACCOUNT`, `CSA` and `TMP` (the kernel's `/var/account`,
//!   `/var/csa`, `/var/tmp`), with 8.3 entries only, as `embedded-sdmmc` writes them.
//!
//! A run gets a *fresh copy* of the template ([`Disk::fresh`]), so no run sees another's
//! files and scenarios running side by side each have their own; `cargo xtask run
//! --acct-disk FILE` instead keeps one file across runs ([`Disk::keep`]). After a run the
//! host reads the copy with `fatfs` ([`Image`]: `cargo xtask acct`, a scenario's host
//! checks) and checks it with `fsck.fat -n` ([`fsck`]).
//!
//! The template's file name carries a hash of this file's source, so changing the code that
//! makes it makes a new one; the image itself is the same bytes on every host (fixed volume
//! id and label, the FAT epoch 1980-01-01 as every time stamp).

use std::io::{Cursor, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Size of the whole disk.
pub const DISK_BYTES: u64 = 8 << 20;
pub const SECTOR: u64 = 512;
/// First sector of the partition (1 MiB in, where partitioning tools put it).
pub const PART_START_LBA: u64 = 2048;
/// MBR partition type: FAT16 (0x06; `embedded-sdmmc` also takes 0x04, 0x0E, 0x0B, 0x0C).
pub const PART_TYPE: u8 = 0x06;
/// Bytes per cluster: one sector, so the partition has enough clusters to be FAT16.
pub const CLUSTER_BYTES: u32 = 512;
/// The directories of the root, which the kernel sees under `/var`.
pub const DIRS: [&str; 3] = ["ACCOUNT", "CSA", "TMP"];
/// The file system's volume label (11 bytes, space-padded) and serial number: fixed, so the
/// template is the same bytes everywhere.
const LABEL: [u8; 11] = *b"TALLY VAR  ";
const VOLUME_ID: u32 = 0x7a11_0013;

/// This file's source: the template's cache key (see the module comment).
const SOURCE: &str = include_str!("acctdisk.rs");

/// FNV-1a, 64 bits: a hash that stays the same across Rust releases, for file names.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The MBR: no boot code, one partition entry, the 0x55AA signature.
fn mbr(start_lba: u64, sectors: u64) -> [u8; 512] {
    let mut s = [0u8; 512];
    let e = &mut s[446..462];
    e[0] = 0x00; // not bootable
                 // CHS fields say "use the LBA fields" (the usual values for a partition beyond CHS).
    e[1..4].copy_from_slice(&[0xfe, 0xff, 0xff]);
    e[4] = PART_TYPE;
    e[5..8].copy_from_slice(&[0xfe, 0xff, 0xff]);
    e[8..12].copy_from_slice(&(start_lba as u32).to_le_bytes());
    e[12..16].copy_from_slice(&(sectors as u32).to_le_bytes());
    s[510] = 0x55;
    s[511] = 0xaa;
    s
}

/// Where the file system's pieces are, from its boot sector (FAT12/16 layout).
struct Layout {
    root_dir: usize,
    data: usize,
    cluster: usize,
}

impl Layout {
    fn of(boot: &[u8]) -> Layout {
        let u16_at = |o: usize| usize::from(u16::from_le_bytes([boot[o], boot[o + 1]]));
        let sector = u16_at(11);
        let root_dir = (u16_at(14) + usize::from(boot[16]) * u16_at(22)) * sector;
        let root_dir_bytes = u16_at(17) * 32;
        Layout { root_dir, data: root_dir + root_dir_bytes, cluster: usize::from(boot[13]) * sector }
    }
}

/// Removes the long-file-name entries from a directory's entries, keeping the others in
/// order. `fatfs` (with its `alloc` feature, which another crate of the workspace turns on)
/// writes a long name before every entry, even `.` and `..`; `embedded-sdmmc` knows only
/// 8.3 names, and would leave such entries behind, orphaned, when it removes a file.
fn strip_long_names(dir: &mut [u8]) {
    let kept: Vec<[u8; 32]> =
        dir.as_chunks::<32>().0.iter().take_while(|e| e[0] != 0).filter(|e| e[11] != 0x0f).copied().collect();
    dir.fill(0);
    for (slot, e) in dir.as_chunks_mut::<32>().0.iter_mut().zip(&kept) {
        slot.copy_from_slice(e);
    }
}

/// The template's bytes: MBR, then the formatted partition with [`DIRS`].
fn build_template(disk_bytes: u64) -> std::io::Result<Vec<u8>> {
    let part_bytes = disk_bytes - PART_START_LBA * SECTOR;
    let mut part = Cursor::new(vec![0u8; part_bytes as usize]);
    let options = fatfs::FormatVolumeOptions::new()
        .fat_type(fatfs::FatType::Fat16)
        .bytes_per_cluster(CLUSTER_BYTES)
        .volume_id(VOLUME_ID)
        .volume_label(LABEL);
    fatfs::format_volume(&mut part, options)?;
    part.seek(SeekFrom::Start(0))?;
    {
        let fs = fatfs::FileSystem::new(&mut part, fatfs::FsOptions::new())?;
        for dir in DIRS {
            fs.root_dir().create_dir(dir)?;
        }
        fs.unmount()?;
    }
    let mut part = part.into_inner();
    // `fatfs` leaves "hidden sectors" (the sectors before the partition) at 0; a partition
    // says where it starts.
    part[28..32].copy_from_slice(&(PART_START_LBA as u32).to_le_bytes());
    let layout = Layout::of(&part[..512]);
    strip_long_names(&mut part[layout.root_dir..layout.data]);
    let clusters: Vec<usize> = part[layout.root_dir..layout.data]
        .as_chunks::<32>()
        .0
        .iter()
        .filter(|e| e[0] != 0 && e[11] & 0x10 != 0)
        .map(|e| usize::from(u16::from_le_bytes([e[26], e[27]])))
        .collect();
    for c in clusters {
        let at = layout.data + (c - 2) * layout.cluster;
        strip_long_names(&mut part[at..at + layout.cluster]);
    }
    let mut disk = Vec::with_capacity(disk_bytes as usize);
    disk.extend_from_slice(&mbr(PART_START_LBA, part_bytes / SECTOR));
    disk.resize((PART_START_LBA * SECTOR) as usize, 0);
    disk.extend_from_slice(&part);
    Ok(disk)
}

/// The template, built if this version of the code has not built it yet; returns its path.
/// Written under a temporary name and renamed, so a concurrent xtask never copies half of it.
pub fn template() -> Result<PathBuf, String> {
    template_of(DISK_BYTES)
}

/// Smallest disk a scenario may ask for (`acct_disk_mib`): 1 MiB before the partition, and
/// FAT16 with 512-byte clusters needs at least 4085 of them (about 2.1 MiB).
pub const MIN_DISK_MIB: u64 = 4;
/// Largest disk a scenario may ask for.
pub const MAX_DISK_MIB: u64 = 64;

/// The template of a disk of `disk_bytes` (a whole number of MiB): [`template`] for the
/// default size; the disk-filling scenarios ask for a small one (`acct_disk_mib`), so that
/// filling it by PIO takes seconds, not tens of seconds.
pub fn template_of(disk_bytes: u64) -> Result<PathBuf, String> {
    // One builder at a time in this process; other processes write their own temporary file.
    static BUILDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BUILDING.lock().unwrap_or_else(|p| p.into_inner());
    let dir = crate::build::target_dir().join("tally");
    let size = if disk_bytes == DISK_BYTES { String::new() } else { format!("-{}m", disk_bytes >> 20) };
    let path = dir.join(format!("acct-template-{:016x}{size}.img", fnv1a(SOURCE.as_bytes())));
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == disk_bytes) {
        return Ok(path);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let bytes = build_template(disk_bytes).map_err(|e| format!("cannot build the accounting disk template: {e}"))?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, &bytes).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    // Templates of other versions of this code are of no further use once they are an hour
    // old (younger ones may be another checkout's, sharing this target directory, in use).
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > std::time::Duration::from_secs(3600)));
            let current = name.starts_with(&format!("acct-template-{:016x}", fnv1a(SOURCE.as_bytes())));
            if name.starts_with("acct-template-") && name.ends_with(".img") && !current && old {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    Ok(path)
}

/// The accounting disk of one QEMU run.
#[derive(Debug)]
pub struct Disk {
    path: PathBuf,
    /// Removed when dropped (a fresh copy nobody asked to keep).
    temporary: bool,
}

impl Disk {
    /// A fresh copy of the template at `path`, replacing whatever is there; kept after the
    /// run (e.g. `target/tally/acct.img` for `cargo xtask run`).
    pub fn fresh_at(path: &Path) -> Result<Disk, String> {
        Disk::fresh_sized_at(path, DISK_BYTES)
    }

    /// Like [`Disk::fresh_at`], a disk of `disk_bytes` ([`template_of`]).
    fn fresh_sized_at(path: &Path, disk_bytes: u64) -> Result<Disk, String> {
        let template = template_of(disk_bytes)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        // Copied to a new file and renamed: a QEMU still running on the old copy keeps it.
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::copy(&template, &tmp)
            .map_err(|e| format!("cannot copy {} to {}: {e}", template.display(), tmp.display()))?;
        std::fs::rename(&tmp, path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(Disk { path: path.to_path_buf(), temporary: false })
    }

    /// A fresh copy of the template in the temporary directory, named after `what` (a
    /// scenario's name) and this process, removed when dropped unless [`Disk::keep_file`].
    pub fn fresh(what: &str) -> Result<Disk, String> {
        Disk::fresh_sized(what, DISK_BYTES)
    }

    /// Like [`Disk::fresh`], a disk of `disk_bytes` ([`template_of`]).
    pub fn fresh_sized(what: &str, disk_bytes: u64) -> Result<Disk, String> {
        // A number of its own for each disk of this process, should one name come twice.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("tally-{what}-{}-{n}.acct.img", std::process::id()));
        let mut disk = Disk::fresh_sized_at(&path, disk_bytes)?;
        disk.temporary = true;
        Ok(disk)
    }

    /// The file `path`, kept across runs: created from the template if it does not exist.
    pub fn keep(path: &Path) -> Result<Disk, String> {
        if path.exists() {
            Image::open(path).map_err(|e| format!("{} is not an accounting disk: {e}", path.display()))?;
            Ok(Disk { path: path.to_path_buf(), temporary: false })
        } else {
            Disk::fresh_at(path)
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Do not remove the file when this is dropped (a failed scenario's disk, to look at).
    pub fn keep_file(&mut self) -> &Path {
        self.temporary = false;
        &self.path
    }
}

impl Drop for Disk {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

// --- Reading an image ------------------------------------------------------------------

/// The bytes of one partition of an image file, as a stream `fatfs` can read and write.
pub struct Slice {
    file: std::fs::File,
    start: u64,
    len: u64,
    pos: u64,
}

impl Read for Slice {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (buf.len() as u64).min(self.len.saturating_sub(self.pos)) as usize;
        self.file.seek(SeekFrom::Start(self.start + self.pos))?;
        let n = self.file.read(&mut buf[..n])?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Write for Slice {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = (buf.len() as u64).min(self.len.saturating_sub(self.pos)) as usize;
        if n == 0 && !buf.is_empty() {
            return Err(std::io::Error::new(std::io::ErrorKind::WriteZero, "past the end of the partition"));
        }
        self.file.seek(SeekFrom::Start(self.start + self.pos))?;
        let n = self.file.write(&buf[..n])?;
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Seek for Slice {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
        };
        match pos {
            Some(p) if p <= self.len => {
                self.pos = p;
                Ok(p)
            }
            _ => Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek outside the partition")),
        }
    }
}

/// Where the FAT partition of an image is: its first byte and length, from the MBR.
pub fn partition(image: &Path) -> Result<(u64, u64), String> {
    let mut sector = [0u8; 512];
    let mut f = std::fs::File::open(image).map_err(|e| format!("cannot open {}: {e}", image.display()))?;
    f.read_exact(&mut sector).map_err(|e| format!("{}: cannot read sector 0: {e}", image.display()))?;
    let size = f.metadata().map_err(|e| e.to_string())?.len();
    if sector[510..] != [0x55, 0xaa] {
        return Err(format!("{}: no partition table (sector 0 does not end in 55 AA)", image.display()));
    }
    for e in sector[446..510].as_chunks::<16>().0 {
        if matches!(e[4], 0x04 | 0x06 | 0x0e | 0x0b | 0x0c) {
            let start = u64::from(u32::from_le_bytes(e[8..12].try_into().expect("4 bytes"))) * SECTOR;
            let len = u64::from(u32::from_le_bytes(e[12..16].try_into().expect("4 bytes"))) * SECTOR;
            if start == 0 || start.checked_add(len).is_none_or(|end| end > size) {
                return Err(format!(
                    "{}: the FAT partition ({start}+{len} bytes) is outside the image",
                    image.display()
                ));
            }
            return Ok((start, len));
        }
    }
    Err(format!("{}: no FAT partition in the partition table", image.display()))
}

/// An accounting disk image opened with `fatfs`, its paths written as the kernel sees them
/// (`/var/account/pacct`; the `/var` is optional).
pub struct Image {
    fs: fatfs::FileSystem<Slice>,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub is_dir: bool,
    pub size: u64,
}

/// The components of `path` below `/var` (`"/var/account/pacct"` → `["account", "pacct"]`).
fn components(path: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = path.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    if parts.first() == Some(&"var") {
        parts.remove(0);
    }
    parts
}

impl Image {
    /// Opens the image file read-only.
    pub fn open(image: &Path) -> Result<Image, String> {
        Image::open_with(image, false)
    }

    /// Opens the image file for reading and writing (tests fill an image this way).
    #[cfg(test)]
    pub fn open_rw(image: &Path) -> Result<Image, String> {
        Image::open_with(image, true)
    }

    fn open_with(image: &Path, write: bool) -> Result<Image, String> {
        let (start, len) = partition(image)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(write)
            .open(image)
            .map_err(|e| format!("cannot open {}: {e}", image.display()))?;
        let fs = fatfs::FileSystem::new(Slice { file, start, len, pos: 0 }, fatfs::FsOptions::new())
            .map_err(|e| format!("{}: not a FAT file system: {e}", image.display()))?;
        Ok(Image { fs })
    }

    /// `path`'s directory, `fatfs` style (it finds names without regard to case).
    fn dir(&self, parts: &[&str]) -> std::io::Result<fatfs::Dir<'_, Slice>> {
        let mut dir = self.fs.root_dir();
        for p in parts {
            dir = dir.open_dir(p)?;
        }
        Ok(dir)
    }

    /// The entries of the directory `path`, without `.` and `..`, in directory order.
    pub fn list(&self, path: &str) -> Result<Vec<Entry>, String> {
        let dir = self.dir(&components(path)).map_err(|e| format!("{path}: {e}"))?;
        let mut out = Vec::new();
        for e in dir.iter() {
            let e = e.map_err(|e| format!("{path}: {e}"))?;
            let name = e.short_file_name();
            if name == "." || name == ".." {
                continue;
            }
            out.push(Entry { name, is_dir: e.is_dir(), size: e.len() });
        }
        Ok(out)
    }

    /// The bytes of the file `path` (as far as its directory entry's size says).
    pub fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        let parts = components(path);
        let (name, dirs) = parts.split_last().ok_or_else(|| format!("{path}: not a file"))?;
        let mut f = self.dir(dirs).and_then(|d| d.open_file(name)).map_err(|e| format!("{path}: {e}"))?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).map_err(|e| format!("{path}: {e}"))?;
        Ok(bytes)
    }

    /// Creates (or replaces) the file `path` with `bytes`; its directories must exist.
    #[cfg(test)]
    pub fn write(&self, path: &str, bytes: &[u8]) -> Result<(), String> {
        let parts = components(path);
        let (name, dirs) = parts.split_last().ok_or_else(|| format!("{path}: not a file"))?;
        let mut f = self.dir(dirs).and_then(|d| d.create_file(name)).map_err(|e| format!("{path}: {e}"))?;
        f.truncate().and_then(|()| f.write_all(bytes)).and_then(|()| f.flush()).map_err(|e| format!("{path}: {e}"))
    }

    /// The FAT type and the number of clusters, as `fatfs` reads them from the boot sector.
    #[cfg(test)]
    pub fn stats(&self) -> Result<(fatfs::FatType, u32), String> {
        let stats = self.fs.stats().map_err(|e| e.to_string())?;
        Ok((self.fs.fat_type(), stats.total_clusters()))
    }
}

// --- fsck.fat ----------------------------------------------------------------------------

/// `fsck.fat -n` (dosfstools) on the image's partition: `Ok` when it finds the file system
/// clean, `Err` with its report otherwise. fsck.fat reads a bare file system, so the
/// partition is cut out to a temporary file first. An image whose bytes are still the
/// template's (most runs write nothing to `/var`) is clean without asking fsck.fat.
pub fn fsck(image: &Path) -> Result<(), String> {
    match run_fsck(image)? {
        None => Ok(()),
        Some(report) => Err(report.not_clean(image, "")),
    }
}

/// [`fsck`] for the disk of a run that was killed (`expect = "killed"`): clean, or only the
/// one trace a kill may leave (`docs/files.md` §3) — `embedded-sdmmc` links a new cluster
/// into the FAT before fsd writes the directory entry's new size, so a kill in between
/// leaves a cluster chain longer than the size of a file being appended to. fsck.fat
/// reports it as `File size is N bytes, cluster chain length is > M bytes.` with M the size
/// rounded up to whole clusters. That finding, for one of `files` (the guest's names, e.g.
/// `/var/account/pacct`: the accounting files the scenario checks), is accepted and
/// returned as a note; anything else fails as in [`fsck`].
pub fn fsck_after_kill(image: &Path, files: &[&str]) -> Result<Vec<String>, String> {
    let Some(report) = run_fsck(image)? else { return Ok(Vec::new()) };
    if report.status == Some(1) && report.stderr.trim().is_empty() {
        if let Ok(notes) = killed_run_findings(&report.stdout, files, u64::from(CLUSTER_BYTES)) {
            return Ok(notes);
        }
    }
    Err(report
        .not_clean(image, "(after a kill, only an accounting file's cluster chain longer than its size is accepted)\n"))
}

/// What fsck.fat printed about a file system that is not clean.
struct FsckReport {
    status: Option<i32>,
    stdout: String,
    stderr: String,
}

impl FsckReport {
    fn not_clean(&self, image: &Path, why: &str) -> String {
        format!(
            "fsck.fat -n finds the accounting disk {} not clean ({}):\n{}{}{why}",
            image.display(),
            self.status.map_or_else(|| "killed by a signal".to_string(), |c| format!("status {c}")),
            self.stdout,
            self.stderr
        )
    }
}

/// Run fsck.fat on the partition: `None` when it is clean.
fn run_fsck(image: &Path) -> Result<Option<FsckReport>, String> {
    let (start, len) = partition(image)?;
    let bytes = std::fs::read(image).map_err(|e| format!("cannot read {}: {e}", image.display()))?;
    // The template's bytes, read once per process (a test run checks hundreds of disks).
    static TEMPLATE: std::sync::OnceLock<Option<Vec<u8>>> = std::sync::OnceLock::new();
    let unchanged = TEMPLATE.get_or_init(|| template().ok().and_then(|p| std::fs::read(p).ok()));
    if unchanged.as_deref() == Some(&bytes[..]) {
        return Ok(None);
    }
    let part = &bytes[start as usize..(start + len) as usize];
    let program = ensure_dosfstools()?;
    let tmp = image.with_extension(format!("fsck{}", std::process::id()));
    std::fs::write(&tmp, part).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    let out = Command::new(&program).arg("-n").arg(&tmp).stdin(Stdio::null()).output();
    let _ = std::fs::remove_file(&tmp);
    let out = out.map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    if out.status.success() {
        return Ok(None);
    }
    Ok(Some(FsckReport {
        status: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }))
}

/// Judge the standard output of `fsck.fat -n` after a kill: `Ok` with one note per finding
/// if every finding is an over-long cluster chain of one of `files` (guest names, matched
/// without `/var` and without regard to case, as FAT's short names are upper case), `Err`
/// naming the first line that is anything else. fsck.fat 4.2 prints its banner, then per
/// file the path and indented messages, then `Leaving filesystem unchanged.` and a summary.
fn killed_run_findings(stdout: &str, files: &[&str], cluster: u64) -> Result<Vec<String>, String> {
    let wanted: Vec<String> = files.iter().map(|f| f.strip_prefix("/var").unwrap_or(f).to_ascii_uppercase()).collect();
    let summary = |l: &str| {
        l.rsplit_once(": ").is_some_and(|(_, rest)| {
            let mut w = rest.split(' ');
            matches!(
                (w.next(), w.next(), w.next(), w.next(), w.next()),
                (Some(n), Some("files,"), Some(c), Some("clusters"), None)
                    if n.parse::<u64>().is_ok()
                        && c.split_once('/').is_some_and(|(a, b)| a.parse::<u64>().is_ok() && b.parse::<u64>().is_ok())
            )
        })
    };
    let mut notes = Vec::new();
    let mut lines = stdout.lines().peekable();
    while let Some(line) = lines.next() {
        if line.is_empty() || line.starts_with("fsck.fat ") || line == "Leaving filesystem unchanged." || summary(line)
        {
            continue;
        }
        if !line.starts_with('/') || !wanted.iter().any(|w| *w == line.to_ascii_uppercase()) {
            return Err(line.to_string());
        }
        let (Some(chain), Some(truncating)) = (lines.next(), lines.next()) else { return Err(line.to_string()) };
        let size = chain
            .trim_start()
            .strip_prefix("File size is ")
            .and_then(|r| r.split_once(" bytes, cluster chain length is > "))
            .and_then(|(n, r)| Some((n.parse::<u64>().ok()?, r.strip_suffix(" bytes.")?.parse::<u64>().ok()?)))
            .filter(|&(n, m)| chain.starts_with("  ") && m == n.div_ceil(cluster) * cluster)
            .map(|(n, _)| n);
        let Some(n) = size else { return Err(chain.to_string()) };
        if truncating != format!("  Truncating file to {n} bytes.") {
            return Err(truncating.to_string());
        }
        if lines.peek().is_some_and(|l| l.starts_with("  ")) {
            return Err(lines.next().unwrap_or_default().to_string());
        }
        notes.push(format!(
            "{line}: {} (the kill came between a cluster's linking and the entry's new size)",
            chain.trim()
        ));
    }
    if notes.is_empty() {
        return Err("fsck.fat found the disk not clean but named no finding".into());
    }
    Ok(notes)
}

/// `fsck.fat`, installed from Debian's `dosfstools` with apt-get when it is missing and
/// xtask runs as root (as QEMU is, `qemu::ensure_installed`).
fn ensure_dosfstools() -> Result<PathBuf, String> {
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let found = || {
        ["/usr/sbin/fsck.fat", "/sbin/fsck.fat", "/usr/bin/fsck.fat"].iter().map(PathBuf::from).find(|p| p.is_file())
    };
    if let Some(p) = found() {
        return Ok(p);
    }
    crate::qemu::apt_install("fsck.fat", "dosfstools")?;
    found().ok_or_else(|| "apt-get installed dosfstools, but fsck.fat is not in /usr/sbin or /sbin".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template_image() -> PathBuf {
        template().unwrap()
    }

    #[test]
    fn the_template_is_an_mbr_and_a_fat16_partition_with_the_var_directories() {
        let path = template_image();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() as u64, DISK_BYTES);
        assert_eq!(bytes[510..512], [0x55, 0xaa]);
        assert_eq!(bytes[446 + 4], PART_TYPE);
        assert_eq!(partition(&path).unwrap(), (PART_START_LBA * SECTOR, DISK_BYTES - PART_START_LBA * SECTOR));
        let img = Image::open(&path).unwrap();
        let (fat, clusters) = img.stats().unwrap();
        assert_eq!(fat, fatfs::FatType::Fat16);
        assert!(clusters >= 4085, "{clusters} clusters would be FAT12 to embedded-sdmmc");
        let root = img.list("/var").unwrap();
        let names: Vec<&str> = root.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, DIRS);
        assert!(root.iter().all(|e| e.is_dir));
        assert_eq!(img.list("/var/account").unwrap(), vec![]);
        let boot = &bytes[(PART_START_LBA * SECTOR) as usize..];
        assert_eq!(u32::from_le_bytes(boot[28..32].try_into().unwrap()), PART_START_LBA as u32, "hidden sectors");
        assert_eq!(u16::from_le_bytes([boot[11], boot[12]]), 512);
        assert_eq!(boot[13], 1, "one sector per cluster");
    }

    #[test]
    fn the_smallest_disk_a_scenario_may_ask_for_is_still_fat16_and_clean() {
        let path = template_of(MIN_DISK_MIB << 20).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), MIN_DISK_MIB << 20);
        let (fat, clusters) = Image::open(&path).unwrap().stats().unwrap();
        assert_eq!(fat, fatfs::FatType::Fat16);
        assert!(clusters >= 4085, "{clusters} clusters would be FAT12 to embedded-sdmmc");
        assert_ne!(path, template_image(), "each size has its own template");
        let d = Disk::fresh_sized("unit-small", MIN_DISK_MIB << 20).unwrap();
        fsck(d.path()).unwrap();
    }

    #[test]
    fn the_template_has_no_long_names_and_is_the_same_bytes_each_time() {
        let a = build_template(DISK_BYTES).unwrap();
        assert_eq!(a, build_template(DISK_BYTES).unwrap());
        let part = &a[(PART_START_LBA * SECTOR) as usize..];
        let layout = Layout::of(&part[..512]);
        let root = &part[layout.root_dir..layout.data];
        let entries: Vec<&[u8; 32]> = root.as_chunks::<32>().0.iter().take_while(|e| e[0] != 0).collect();
        assert_eq!(entries.len(), 4, "the volume label and three directories");
        assert!(entries.iter().all(|e| e[11] != 0x0f), "no long-name entries");
        for e in &entries[1..] {
            let c = usize::from(u16::from_le_bytes([e[26], e[27]]));
            let at = layout.data + (c - 2) * layout.cluster;
            let d: Vec<&[u8; 32]> =
                part[at..at + layout.cluster].as_chunks::<32>().0.iter().take_while(|e| e[0] != 0).collect();
            assert_eq!(d.len(), 2, "only . and ..");
            assert_eq!(&d[0][..11], b".          ");
            assert_eq!(&d[1][..11], b"..         ");
        }
    }

    #[test]
    fn fresh_copies_are_separate_and_removed_when_dropped() {
        let a = Disk::fresh("unit-a").unwrap();
        let b = Disk::fresh("unit-b").unwrap();
        assert_ne!(a.path(), b.path());
        Image::open_rw(a.path()).unwrap().write("/var/tmp/x", b"hello").unwrap();
        assert_eq!(Image::open(a.path()).unwrap().read("/var/tmp/X").unwrap(), b"hello");
        assert_eq!(Image::open(b.path()).unwrap().list("/var/tmp").unwrap(), vec![]);
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
    }

    #[test]
    fn a_kept_disk_is_created_once_and_then_reused() {
        let path = std::env::temp_dir().join(format!("tally-keep-{}.img", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let d = Disk::keep(&path).unwrap();
        Image::open_rw(d.path()).unwrap().write("/var/account/pacct", &[0u8; 64]).unwrap();
        drop(d);
        let d = Disk::keep(&path).unwrap();
        assert_eq!(Image::open(d.path()).unwrap().read("/var/account/pacct").unwrap().len(), 64);
        std::fs::write(&path, b"not a disk").unwrap();
        assert!(Disk::keep(&path).is_err());
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn fsck_passes_a_written_disk_and_fails_a_broken_one() {
        if ensure_dosfstools().is_err() {
            println!("note: fsck.fat is not available on this host, check skipped");
            return;
        }
        let d = Disk::fresh("unit-fsck").unwrap();
        assert_eq!(fsck(d.path()), Ok(()), "the template itself");
        Image::open_rw(d.path()).unwrap().write("/var/account/pacct", &[7u8; 64 * 20]).unwrap();
        assert_eq!(fsck(d.path()), Ok(()));
        // Break the second FAT's copy of the first data clusters: the two FATs now differ.
        let mut bytes = std::fs::read(d.path()).unwrap();
        let part = (PART_START_LBA * SECTOR) as usize;
        let boot = &bytes[part..part + 512];
        let fat2 = part
            + (usize::from(u16::from_le_bytes([boot[14], boot[15]]))
                + usize::from(u16::from_le_bytes([boot[22], boot[23]])))
                * 512;
        bytes[fat2 + 4..fat2 + 16].fill(0xab);
        std::fs::write(d.path(), &bytes).unwrap();
        let e = fsck(d.path()).unwrap_err();
        assert!(e.contains("not clean"), "{e}");
    }
    /// fsck.fat 4.2's words for a file killed between a new cluster's linking and the
    /// entry's new size (measured on such a disk, only the summary's file name differs).
    const KILLED: &str = "fsck.fat 4.2 (2021-01-31)\n/ACCOUNT/PACCT\n  File size is 1536 bytes, cluster chain length \
                          is > 1536 bytes.\n  Truncating file to 1536 bytes.\n\nLeaving filesystem unchanged.\n\
                          /tmp/x.fsck12: 5 files, 6/14191 clusters\n";

    #[test]
    fn after_a_kill_only_an_accounting_files_over_long_chain_is_accepted() {
        let pacct = ["/var/account/pacct"];
        let notes = killed_run_findings(KILLED, &pacct, 512).unwrap();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("/ACCOUNT/PACCT: File size is 1536 bytes"), "{}", notes[0]);
        // Another file than the scenario's accounting file.
        assert_eq!(killed_run_findings(KILLED, &["/var/csa/pacct"], 512), Err("/ACCOUNT/PACCT".into()));
        // A size that is not the chain's length rounded down to a cluster: not that trace.
        let odd = KILLED.replace("> 1536", "> 2048");
        assert!(killed_run_findings(&odd, &pacct, 512).unwrap_err().contains("> 2048"));
        // Anything more: a lost cluster, another message for the file, a mismatched truncation.
        let lost = KILLED.replace("\n\nLeaving", "\nReclaimed 1 unused cluster (512 bytes).\n\nLeaving");
        assert_eq!(killed_run_findings(&lost, &pacct, 512), Err("Reclaimed 1 unused cluster (512 bytes).".into()));
        let more = KILLED.replace("1536 bytes.\n\n", "1536 bytes.\n  Contains a free cluster (9). Assuming EOF.\n\n");
        assert!(killed_run_findings(&more, &pacct, 512).unwrap_err().contains("free cluster"));
        let trunc = KILLED.replace("Truncating file to 1536", "Truncating file to 1024");
        assert!(killed_run_findings(&trunc, &pacct, 512).is_err());
        // Not clean but nothing named: not accepted either.
        let nothing = "fsck.fat 4.2 (2021-01-31)\n\nLeaving filesystem unchanged.\nx: 5 files, 4/14191 clusters\n";
        assert!(killed_run_findings(nothing, &pacct, 512).is_err());
    }

    #[test]
    fn fsck_after_a_kill_accepts_a_real_over_long_chain_and_nothing_else() {
        if ensure_dosfstools().is_err() {
            println!("note: fsck.fat is not available on this host, check skipped");
            return;
        }
        let d = Disk::fresh("unit-fsck-kill").unwrap();
        Image::open_rw(d.path()).unwrap().write("/var/account/pacct", &[9u8; 512]).unwrap();
        assert_eq!(fsck_after_kill(d.path(), &["/var/account/pacct"]), Ok(Vec::new()), "clean");
        // What a kill leaves: the file's one cluster chained to one more, its size unchanged.
        let mut bytes = std::fs::read(d.path()).unwrap();
        let part = (PART_START_LBA * SECTOR) as usize;
        let word = |b: &[u8], at: usize| usize::from(u16::from_le_bytes([b[part + at], b[part + at + 1]]));
        let (reserved, fats, roots, fat_sectors) =
            (word(&bytes, 14), usize::from(bytes[part + 16]), word(&bytes, 17), word(&bytes, 22));
        let data = part + (reserved + fats * fat_sectors) * 512 + roots * 32;
        let fat = |c: usize, k: usize| part + (reserved + k * fat_sectors) * 512 + 2 * c;
        let clusters = (2..4000).filter(|&c| data + (c - 2) * 512 + 512 <= bytes.len());
        let file = clusters.clone().find(|&c| bytes[data + (c - 2) * 512..][..512].iter().all(|&b| b == 9)).unwrap();
        let free = clusters.filter(|&c| c > file).find(|&c| bytes[fat(c, 0)..][..2] == [0, 0]).unwrap();
        for k in 0..fats {
            let (a, b) = (fat(file, k), fat(free, k));
            bytes[a..a + 2].copy_from_slice(&(free as u16).to_le_bytes());
            bytes[b..b + 2].copy_from_slice(&0xffffu16.to_le_bytes());
        }
        std::fs::write(d.path(), &bytes).unwrap();
        let notes = fsck_after_kill(d.path(), &["/var/account/pacct"]).unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("File size is 512 bytes, cluster chain length is > 512 bytes"), "{notes:?}");
        assert!(fsck(d.path()).is_err(), "a run that was not killed still fails");
        assert!(fsck_after_kill(d.path(), &["/var/csa/pacct"]).is_err(), "not the scenario's file");
    }
}
