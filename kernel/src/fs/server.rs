//! What fsd does with each request: the volume manager, the table of open files, and the
//! record files' queues.
//!
//! `embedded-sdmmc` refuses to open a file twice (`FileAlreadyOpen`) and holds a fixed number
//! of open files and directories. So fsd keeps **one** underlying `RawFile` per on-disk file,
//! found by the file's canonical path and reference-counted: every descriptor (and every
//! [`RecordFile`](super::RecordFile)) open on that file shares it, each with its own position,
//! which travels in the request. A directory holds nothing open: it is walked again from
//! the root when it is listed. Writes seek first (to the descriptor's position, or to the
//! end for `O_APPEND` — so two appending processes interleave whole writes), check that the
//! disk has room, write, and flush at once, so the directory entry's size is always right.

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

use embedded_sdmmc::{DirEntry, Error, Mode, RawDirectory, RawFile, RawVolume, VolumeIdx, VolumeManager};
use tally_uapi::errno::*;
use tally_uapi::fs::path::{Component, VarPath};
use tally_uapi::fs::*;

use super::blockdev::{self, AtaBlocks, DiskError, Geometry, WallClock};
use super::record_file::RecInner;
use super::{Done, Op};

/// Files `embedded-sdmmc` may hold open at once. Only files count (a directory holds
/// nothing open), and only once however many descriptors share them.
pub const MAX_OPEN_FILES: usize = 32;
/// Of those, kept for record files: `open(2)` of a file is `ENFILE` when
/// `MAX_OPEN_FILES - RECORD_RESERVE` are open, so no user can fill the table and make root's
/// `acct(2)` or CSA's files fail to open.
pub const RECORD_RESERVE: usize = 4;
/// At most this many bytes of queued records go to the disk in one write.
const RECORD_BATCH: usize = 4096;
/// Directories open at once (a walk holds two at most; `embedded-sdmmc` needs one more to
/// make one).
const MAX_OPEN_DIRS: usize = 6;

type Volumes = VolumeManager<AtaBlocks, WallClock, MAX_OPEN_DIRS, MAX_OPEN_FILES, 1>;

/// Every `embedded-sdmmc` error as the errno Linux would give for the same situation.
pub fn errno_of(e: &Error<DiskError>) -> i32 {
    match e {
        Error::DeviceError(_) | Error::FormatError(_) | Error::BadCluster | Error::UnterminatedFatChain => EIO,
        Error::BadBlockSize(_) | Error::LockError | Error::TooManyOpenVolumes => EIO,
        Error::NoSuchVolume => ENODEV,
        Error::FilenameError(_) => ENAMETOOLONG,
        Error::TooManyOpenDirs | Error::TooManyOpenFiles => ENFILE,
        Error::BadHandle => EBADF,
        Error::NotFound => ENOENT,
        Error::FileAlreadyOpen | Error::DirAlreadyOpen | Error::VolumeStillInUse | Error::VolumeAlreadyOpen => EBUSY,
        Error::OpenedDirAsFile => EISDIR,
        Error::OpenedFileAsDir => ENOTDIR,
        Error::DeleteNonEmptyDir => ENOTEMPTY,
        Error::Unsupported | Error::ConversionError | Error::InvalidOffset | Error::EndOfFile => EINVAL,
        Error::NotEnoughSpace | Error::AllocationError | Error::DiskFull => ENOSPC,
        Error::ReadOnly => EACCES,
        Error::FileAlreadyExists | Error::DirAlreadyExists => EEXIST,
        #[allow(unreachable_patterns)]
        _ => EIO,
    }
}

fn ok<T>(r: Result<T, Error<DiskError>>) -> Result<T, i32> {
    r.map_err(|e| errno_of(&e))
}

/// One file or directory open in fsd, shared by all who opened it.
struct Node {
    key: Vec<u8>,
    dir: bool,
    /// The underlying open file: `None` for a directory, and for a file whose reopening
    /// after an `O_TRUNC` failed (broken: every request on it is `EIO` until its last close).
    raw: Option<RawFile>,
    refs: u32,
    /// Descriptors open on it with write access.
    writers: u32,
    /// Record files appending to it, and whose they are (their owner's uid): while any is,
    /// the file is the kernel's — no descriptor may write or truncate it.
    records: u32,
    owner: u32,
    ino: u64,
    mtime: i64,
}

pub struct Server {
    vm: Volumes,
    /// A second handle on `ata2` for the FAT scans `embedded-sdmmc` does not offer.
    dev: AtaBlocks,
    volume: RawVolume,
    geo: Geometry,
    nodes: BTreeMap<u64, Node>,
    /// What `Op::Open` hands out: one handle per open, naming its node and whether it
    /// counts as a writer (so its close can say so).
    handles: BTreeMap<u64, (u64, bool)>,
    by_key: BTreeMap<Vec<u8>, u64>,
    next_node: u64,
    /// The record files fsd writes, by id.
    records: BTreeMap<u64, (Arc<RecInner>, u64)>,
}

/// The inode number `stat` reports: where the entry sits (block and slot), unique on the
/// volume; 1 for `/var` itself.
fn ino_of(e: &DirEntry) -> u64 {
    u64::from(e.entry_block.0) * 16 + u64::from(e.entry_offset) / 32 + 2
}

fn key_of(path: &VarPath) -> Vec<u8> {
    let mut buf = [0u8; 4 + 13 * MAX_DEPTH];
    let n = path.canonical(&mut buf);
    buf[..n].to_vec()
}

fn stat_of(ino: u64, dir: bool, size: u64, mtime: i64) -> Stat {
    Stat {
        st_dev: 0x0302,
        st_ino: ino,
        st_nlink: 1,
        st_mode: if dir { S_IFDIR | 0o755 } else { S_IFREG | 0o644 },
        st_size: size as i64,
        st_blksize: 512,
        st_blocks: size.div_ceil(512) as i64,
        st_atime: mtime,
        st_mtime: mtime,
        st_ctime: mtime,
        ..Stat::default()
    }
}

impl Server {
    /// Open the first partition of `ata2` and check it is FAT16.
    pub fn mount() -> Result<Server, &'static str> {
        let dev = AtaBlocks::new().ok_or("no accounting disk")?;
        let geo = Geometry::read(&dev)?;
        geo.fence_tail(&dev).map_err(|_| "cannot write the FAT")?;
        let vm: Volumes = VolumeManager::new_with_limits(dev, WallClock, 1);
        let dev = AtaBlocks::new().ok_or("no accounting disk")?;
        let volume = vm.open_raw_volume(VolumeIdx(0)).map_err(|_| "embedded-sdmmc cannot open partition 1")?;
        log::info!("fs: /var is ata2 partition 1, FAT16, {} bytes per cluster", geo.bytes_per_cluster);
        Ok(Server {
            vm,
            dev,
            volume,
            geo,
            nodes: BTreeMap::new(),
            handles: BTreeMap::new(),
            by_key: BTreeMap::new(),
            next_node: 1,
            records: BTreeMap::new(),
        })
    }

    pub fn serve(&mut self, op: Op) -> Result<Done, i32> {
        match op {
            Op::Open { path, flags } => self.open_handle(&path, flags),
            Op::Close { node } => {
                if let Some((node, writer)) = self.handles.remove(&node) {
                    if let Some(n) = self.nodes.get_mut(&node).filter(|_| writer) {
                        n.writers -= 1;
                    }
                    self.release(node);
                }
                Ok(Done::Unit)
            }
            Op::Read { node, pos, len } => self.read(self.node_of(node)?, pos, len).map(Done::Data),
            Op::Write { node, pos, data } => self.write(self.node_of(node)?, pos, &data, false),
            Op::Stat { path } => self.stat(&path).map(Done::Stat),
            Op::Fstat { node } => self.fstat(self.node_of(node)?).map(Done::Stat),
            Op::Mkdir { path } => self.mkdir(&path).map(|()| Done::Unit),
            Op::Unlink { path } => self.unlink(&path).map(|()| Done::Unit),
            Op::Dents { node, cookie, max } => self.dents(self.node_of(node)?, cookie, max),
            Op::Fsync { node } => self.fsync(self.node_of(node)?).map(|()| Done::Unit),
            Op::OpenRecord { path, rec, owner } => self.open_record(&path, rec, owner),
            Op::CloseRecord { id } => {
                self.close_record(id);
                Ok(Done::Unit)
            }
        }
    }

    // --- walking -----------------------------------------------------------------------

    /// Open the directory `comps` names (each component in turn from the root).
    fn walk(&self, comps: &[Component]) -> Result<RawDirectory, i32> {
        let mut dir = ok(self.vm.open_root_dir(self.volume))?;
        for c in comps {
            let next = self.vm.open_dir(dir, c.as_str());
            let _ = self.vm.close_dir(dir);
            dir = ok(next)?;
        }
        Ok(dir)
    }

    /// The entry `path` names: `Ok(None)` for `/var` itself.
    fn lookup(&self, path: &VarPath) -> Result<Option<DirEntry>, i32> {
        let Some(last) = path.last() else { return Ok(None) };
        let dir = self.walk(path.parent())?;
        let found = self.vm.find_directory_entry(dir, last.as_str());
        let _ = self.vm.close_dir(dir);
        let e = ok(found)?;
        if e.attributes.is_volume() {
            return Err(ENOENT);
        }
        Ok(Some(e))
    }

    /// After writing the FAT behind the crate's back: make its one-block cache load
    /// something else (the root directory's first block), so it holds no stale FAT sector.
    fn evict_cache(&self) {
        if let Ok(root) = self.vm.open_root_dir(self.volume) {
            let _ = self.vm.iterate_dir(root, |_| core::ops::ControlFlow::Break(()));
            let _ = self.vm.close_dir(root);
        }
    }

    // --- nodes -------------------------------------------------------------------------

    fn new_node(&mut self, key: Vec<u8>, raw: Option<RawFile>, ino: u64, mtime: i64) -> u64 {
        let id = self.next_node;
        self.next_node += 1;
        self.by_key.insert(key.clone(), id);
        let dir = raw.is_none();
        self.nodes.insert(id, Node { key, dir, raw, refs: 1, writers: 0, records: 0, owner: 0, ino, mtime });
        id
    }

    /// One reference less; the last one flushes and closes the underlying file.
    fn release(&mut self, node: u64) {
        let Some(n) = self.nodes.get_mut(&node) else { return };
        n.refs -= 1;
        if n.refs > 0 {
            return;
        }
        if let Some(n) = self.nodes.remove(&node) {
            self.by_key.remove(&n.key);
            if let Some(raw) = n.raw {
                if let Err(e) = self.vm.close_file(raw) {
                    log::warn!("fs: closing {}: {e:?}", core::str::from_utf8(&n.key).unwrap_or("?"));
                }
            }
        }
    }

    fn file(&self, node: u64) -> Result<RawFile, i32> {
        match self.nodes.get(&node) {
            Some(Node { raw: Some(raw), .. }) => Ok(*raw),
            Some(Node { dir: true, .. }) => Err(EISDIR),
            Some(_) => Err(EIO),
            None => Err(EBADF),
        }
    }

    /// The node behind the handle `Op::Open` returned.
    fn node_of(&self, handle: u64) -> Result<u64, i32> {
        self.handles.get(&handle).map(|&(node, _)| node).ok_or(EBADF)
    }

    // --- the operations ----------------------------------------------------------------

    /// `Op::Open`: open the node and hand out a handle on it.
    fn open_handle(&mut self, path: &VarPath, flags: u32) -> Result<Done, i32> {
        let Done::Opened { node, dir } = self.open(path, flags, false)? else { return Err(EIO) };
        let writer = !dir && flags & O_ACCMODE != O_RDONLY;
        if writer {
            self.nodes.get_mut(&node).ok_or(EIO)?.writers += 1;
        }
        let handle = self.next_node;
        self.next_node += 1;
        self.handles.insert(handle, (node, writer));
        Ok(Done::Opened { node: handle, dir })
    }

    /// `open(2)` (`record`: for a record file, which may use the reserved slots).
    fn open(&mut self, path: &VarPath, flags: u32, record: bool) -> Result<Done, i32> {
        let limit = if record { MAX_OPEN_FILES } else { MAX_OPEN_FILES - RECORD_RESERVE };
        let write = flags & O_ACCMODE != O_RDONLY;
        let (creat, excl, trunc) = (flags & O_CREAT != 0, flags & O_EXCL != 0, flags & O_TRUNC != 0);
        // Linux ≥ 6.4: O_CREAT with O_DIRECTORY is EINVAL, whether the path exists or not.
        if creat && flags & O_DIRECTORY != 0 {
            return Err(EINVAL);
        }
        let key = key_of(path);
        let entry = match self.lookup(path) {
            Ok(e) => Some(e),
            Err(ENOENT) if creat && path.last().is_some() => None,
            Err(e) => return Err(e),
        };
        match entry {
            // `/var` itself, or a directory.
            Some(e) if e.as_ref().is_none_or(|e| e.attributes.is_directory()) => {
                if creat && excl {
                    return Err(EEXIST);
                }
                // Linux: a directory cannot be opened for writing, nor with O_CREAT.
                if write || creat {
                    return Err(EISDIR);
                }
                let (ino, mtime) = e.as_ref().map_or((1, 0), |e| (ino_of(e), blockdev::unix_of(&e.mtime)));
                if let Some(&id) = self.by_key.get(&key) {
                    self.nodes.get_mut(&id).ok_or(EIO)?.refs += 1;
                    return Ok(Done::Opened { node: id, dir: true });
                }
                Ok(Done::Opened { node: self.new_node(key, None, ino, mtime), dir: true })
            }
            Some(Some(e)) => {
                if creat && excl {
                    return Err(EEXIST);
                }
                if flags & O_DIRECTORY != 0 {
                    return Err(ENOTDIR);
                }
                // O_TRUNC truncates a regular file whatever the access mode (Linux does so for
                // O_RDONLY too), and so needs write access.
                let truncate = trunc;
                if (write || truncate) && e.attributes.is_read_only() {
                    return Err(EACCES);
                }
                if let Some(&id) = self.by_key.get(&key) {
                    // A file a record file appends to is the kernel's: nobody writes or
                    // truncates it behind the records (it would break the whole-record rule).
                    if !record && (write || truncate) && self.nodes.get(&id).is_some_and(|n| n.records > 0) {
                        return Err(EACCES);
                    }
                    if truncate {
                        self.truncate_open(path, id, &e, limit)?;
                    }
                    self.nodes.get_mut(&id).ok_or(EIO)?.refs += 1;
                    return Ok(Done::Opened { node: id, dir: false });
                }
                if truncate {
                    let (raw, ino, mtime) = self.recreate(path, &e, limit)?;
                    return Ok(Done::Opened { node: self.new_node(key, Some(raw), ino, mtime), dir: false });
                }
                let mode = if e.attributes.is_read_only() { Mode::ReadOnly } else { Mode::ReadWriteAppend };
                let raw = self.open_raw(path, mode, limit)?;
                let id = self.new_node(key, Some(raw), ino_of(&e), blockdev::unix_of(&e.mtime));
                Ok(Done::Opened { node: id, dir: false })
            }
            Some(None) => Err(EIO),
            None => {
                if flags & O_DIRECTORY != 0 {
                    return Err(ENOENT);
                }
                // A new entry may need a cluster for its directory to grow.
                if !self.geo.has_free(&self.dev, 1).map_err(|_| EIO)? {
                    return Err(ENOSPC);
                }
                let raw = self.open_raw(path, Mode::ReadWriteCreate, limit)?;
                let (ino, mtime) = match self.lookup(path) {
                    Ok(Some(e)) => (ino_of(&e), blockdev::unix_of(&e.mtime)),
                    _ => (0, blockdev::unix_now() as i64),
                };
                let id = self.new_node(key, Some(raw), ino, mtime);
                Ok(Done::Opened { node: id, dir: false })
            }
        }
    }

    /// Files the crate holds open now (directories hold none; a node being reopened has
    /// none while it is).
    fn open_files(&self) -> usize {
        self.nodes.values().filter(|n| n.raw.is_some()).count()
    }

    /// Open `path` in the crate, if fewer than `limit` files are open.
    fn open_raw(&self, path: &VarPath, mode: Mode, limit: usize) -> Result<RawFile, i32> {
        let last = path.last().ok_or(EISDIR)?;
        if self.open_files() >= limit {
            return Err(ENFILE);
        }
        let dir = self.walk(path.parent())?;
        let raw = self.vm.open_file_in_dir(dir, last.as_str(), mode);
        let _ = self.vm.close_dir(dir);
        ok(raw)
    }

    /// `O_TRUNC` on a file others have open: close the shared file, truncate it, reopen it.
    /// The node's own slot is free while it is reopened (it does not count against `limit`).
    /// Should the reopening fail after all, the node is left broken (no file: `EIO` for every
    /// descriptor on it) rather than holding a closed handle.
    fn truncate_open(&mut self, path: &VarPath, id: u64, e: &DirEntry, limit: usize) -> Result<(), i32> {
        let old = self.file(id)?;
        ok(self.vm.close_file(old))?;
        self.nodes.get_mut(&id).ok_or(EIO)?.raw = None;
        let (raw, ino, mtime) = match self.recreate(path, e, limit) {
            Ok(r) => r,
            Err(err) => {
                // Reopen as it is, so the node stays usable: its own slot, just freed.
                match self.open_raw(path, Mode::ReadWriteAppend, MAX_OPEN_FILES) {
                    Ok(back) => self.nodes.get_mut(&id).ok_or(EIO)?.raw = Some(back),
                    Err(again) => log::warn!(
                        "fs: {}: cannot reopen after a failed O_TRUNC (errno {again}): broken until closed",
                        core::str::from_utf8(&self.nodes.get(&id).ok_or(EIO)?.key).unwrap_or("?")
                    ),
                }
                return Err(err);
            }
        };
        let n = self.nodes.get_mut(&id).ok_or(EIO)?;
        (n.raw, n.ino, n.mtime) = (Some(raw), ino, mtime);
        Ok(())
    }

    /// The first cluster of the file whose entry is `e`, from the entry on disk (the crate
    /// keeps `ClusterId`'s number to itself): FAT16 keeps it at byte 26 of the 32-byte entry.
    fn first_cluster(&self, e: &DirEntry) -> Result<u32, i32> {
        let mut sector = [0u8; 512];
        self.dev.read_sector(e.entry_block.0, &mut sector).map_err(|_| EIO)?;
        let at = (e.entry_offset % 512) as usize;
        Ok(u32::from(u16::from_le_bytes([sector[at + 26], sector[at + 27]])))
    }

    /// Truncate the (closed) file `path` whose entry is `e` to nothing, and open it. Not the
    /// crate's `ReadWriteTruncate`: that keeps the first cluster in a file of size 0, which
    /// `fsck.fat` reports ("File size is 0 bytes, cluster chain length is > 0 bytes"). Instead
    /// the entry is deleted, its whole chain freed (as `unlink` does) and an empty entry —
    /// cluster 0, size 0 — created in its place; every write to a directory sector goes
    /// through the crate, so its block cache stays right. The entry may land in an earlier
    /// free slot: the inode number and modification time are returned anew.
    fn recreate(&mut self, path: &VarPath, e: &DirEntry, limit: usize) -> Result<(RawFile, u64, i64), i32> {
        let last = path.last().ok_or(EISDIR)?;
        let first = self.first_cluster(e)?;
        if first == 0 {
            // Nothing to free: already empty.
            let raw = self.open_raw(path, Mode::ReadWriteAppend, limit)?;
            return Ok((raw, ino_of(e), blockdev::unix_of(&e.mtime)));
        }
        // Check the table has room before the name goes away.
        if self.open_files() >= limit {
            return Err(ENFILE);
        }
        self.remove_entry(path, last.as_str(), first)?;
        // The slot was checked above and the crate's own table has room for MAX_OPEN_FILES.
        let raw = self.open_raw(path, Mode::ReadWriteCreate, MAX_OPEN_FILES)?;
        let (ino, mtime) = match self.lookup(path) {
            Ok(Some(e)) => (ino_of(&e), blockdev::unix_of(&e.mtime)),
            _ => (0, blockdev::unix_now() as i64),
        };
        Ok((raw, ino, mtime))
    }

    fn read(&mut self, node: u64, pos: u64, len: usize) -> Result<Vec<u8>, i32> {
        let raw = self.file(node)?;
        let size = u64::from(ok(self.vm.file_length(raw))?);
        if pos >= size || len == 0 {
            return Ok(Vec::new());
        }
        let n = (size - pos).min(len as u64) as usize;
        let mut buf = vec![0u8; n];
        ok(self.vm.file_seek_from_start(raw, pos as u32))?;
        let got = ok(self.vm.read(raw, &mut buf))?;
        buf.truncate(got);
        Ok(buf)
    }

    /// Bytes that fit between `size` (the file's length) and the end of the clusters it has
    /// plus `free` more.
    fn room(&self, size: u64, free: u32) -> u64 {
        let c = u64::from(self.geo.bytes_per_cluster);
        size.div_ceil(c) * c + u64::from(free) * c - size
    }

    /// Write `data` at `pos` (or the end). `whole`: all or nothing (`ENOSPC`), as a record
    /// needs; otherwise a short write of what fits, as Linux does on a full disk.
    pub fn write(&mut self, node: u64, pos: Option<u64>, data: &[u8], whole: bool) -> Result<Done, i32> {
        let raw = self.file(node)?;
        let size = u64::from(ok(self.vm.file_length(raw))?);
        let start = pos.unwrap_or(size);
        if data.is_empty() {
            return Ok(Done::Wrote { n: 0, end: start });
        }
        let end = start.checked_add(data.len() as u64).ok_or(EFBIG)?;
        if end > u64::from(embedded_sdmmc::MAX_FILE_SIZE) {
            return Err(EFBIG);
        }
        // Clusters the write needs beyond those the file has.
        let c = u64::from(self.geo.bytes_per_cluster);
        let need = (end.div_ceil(c).saturating_sub(size.div_ceil(c))) as u32;
        let mut take = data.len();
        if need > 0 {
            let free = self.geo.count_free(&self.dev, need).map_err(|_| EIO)?;
            if free < need {
                let fits = self.room(size, free).saturating_sub(start.saturating_sub(size));
                if whole || fits == 0 || start > size + self.room(size, free) {
                    return Err(ENOSPC);
                }
                take = (fits as usize).min(take);
            }
        }
        if start > size {
            // A hole: FAT has none, so the gap is written as zeros.
            ok(self.vm.file_seek_from_start(raw, size as u32))?;
            let zeros = [0u8; 512];
            let mut left = start - size;
            while left > 0 {
                let n = left.min(512) as usize;
                ok(self.vm.write(raw, &zeros[..n]))?;
                left -= n as u64;
            }
        } else {
            ok(self.vm.file_seek_from_start(raw, start as u32))?;
        }
        let written = self.vm.write(raw, &data[..take]);
        // The entry's size on disk changes only here: flush even after a failure, so the
        // entry describes what did reach the disk.
        let flushed = self.vm.flush_file(raw);
        ok(written)?;
        ok(flushed)?;
        Ok(Done::Wrote { n: take as u64, end: start + take as u64 })
    }

    fn stat(&self, path: &VarPath) -> Result<Stat, i32> {
        // An open file's length may be ahead of its entry only until its flush, which every
        // write does; still, ask the open file when there is one.
        if let Some(&id) = self.by_key.get(&key_of(path)) {
            return self.fstat(id);
        }
        Ok(match self.lookup(path)? {
            None => stat_of(1, true, 0, 0),
            Some(e) => stat_of(ino_of(&e), e.attributes.is_directory(), u64::from(e.size), blockdev::unix_of(&e.mtime)),
        })
    }

    fn fstat(&self, node: u64) -> Result<Stat, i32> {
        let n = self.nodes.get(&node).ok_or(EBADF)?;
        Ok(match n.raw {
            None if n.dir => stat_of(n.ino, true, 0, n.mtime),
            None => return Err(EIO),
            Some(raw) => stat_of(n.ino, false, u64::from(ok(self.vm.file_length(raw))?), n.mtime),
        })
    }

    fn mkdir(&mut self, path: &VarPath) -> Result<(), i32> {
        let last = path.last().ok_or(EEXIST)?;
        let dir = self.walk(path.parent())?;
        let result = match self.geo.has_free(&self.dev, 2) {
            Ok(true) => ok(self.vm.make_dir_in_dir(dir, last.as_str())),
            Ok(false) => Err(ENOSPC),
            Err(_) => Err(EIO),
        };
        let _ = self.vm.close_dir(dir);
        result
    }

    /// Files open anywhere (a descriptor, a record file) cannot be unlinked: `EBUSY` (Linux
    /// would remove the name and keep the file until its last close; FAT has no inodes to
    /// keep it by).
    fn unlink(&mut self, path: &VarPath) -> Result<(), i32> {
        let e = self.lookup(path)?.ok_or(EISDIR)?;
        if e.attributes.is_directory() {
            return Err(EISDIR);
        }
        if self.by_key.contains_key(&key_of(path)) {
            return Err(EBUSY);
        }
        let first = self.first_cluster(&e)?;
        let last = path.last().ok_or(EISDIR)?;
        self.remove_entry(path, last.as_str(), first)
    }

    /// Delete the entry `name` of `path`'s directory and free its cluster chain from `first`
    /// (`unlink`, and `O_TRUNC`'s first half): embedded-sdmmc marks the entry deleted but
    /// leaves its clusters allocated.
    fn remove_entry(&mut self, path: &VarPath, name: &str, first: u32) -> Result<(), i32> {
        let dir = self.walk(path.parent())?;
        let deleted = ok(self.vm.delete_entry_in_dir(dir, name));
        let _ = self.vm.close_dir(dir);
        deleted?;
        let freed = self.geo.free_chain(&self.dev, first);
        self.evict_cache();
        freed.map_err(|_| EIO)
    }

    fn dents(&mut self, node: u64, cookie: u64, max: usize) -> Result<Done, i32> {
        let n = self.nodes.get(&node).ok_or(EBADF)?;
        if !n.dir {
            return Err(ENOTDIR);
        }
        let path = core::str::from_utf8(&n.key).map_err(|_| EIO)?;
        let parsed = tally_uapi::fs::path::parse(path.as_bytes()).map_err(|_| EIO)?;
        let dir = self.walk(parsed.components())?;
        let mut out = vec![0u8; max];
        let (mut used, mut index, mut next) = (0usize, 0u64, cookie);
        let mut too_small = false;
        let walked = self.vm.iterate_dir(dir, |e| {
            let name = e.name.base_name();
            if e.attributes.is_volume() || name == b"." || name == b".." {
                return core::ops::ControlFlow::Continue(());
            }
            index += 1;
            if index <= cookie {
                return core::ops::ControlFlow::Continue(());
            }
            let mut full = [0u8; 12];
            let mut len = name.len();
            full[..len].copy_from_slice(name);
            let ext = e.name.extension();
            if !ext.is_empty() {
                full[len] = b'.';
                full[len + 1..len + 1 + ext.len()].copy_from_slice(ext);
                len += 1 + ext.len();
            }
            let kind = if e.attributes.is_directory() { DT_DIR } else { DT_REG };
            match dirent64::encode(&mut out[used..], ino_of(e), index as i64, kind, &full[..len]) {
                Some(k) => {
                    used += k;
                    next = index;
                    core::ops::ControlFlow::Continue(())
                }
                None => {
                    too_small = used == 0;
                    core::ops::ControlFlow::Break(())
                }
            }
        });
        let _ = self.vm.close_dir(dir);
        ok(walked)?;
        if too_small {
            return Err(EINVAL);
        }
        out.truncate(used);
        Ok(Done::Dents(out, next))
    }

    fn fsync(&mut self, node: u64) -> Result<(), i32> {
        if let Ok(raw) = self.file(node) {
            ok(self.vm.flush_file(raw))?;
        } else if !self.nodes.contains_key(&node) {
            return Err(EBADF);
        }
        self.dev.flush().map_err(|_| EIO)
    }

    // --- record files --------------------------------------------------------------------

    /// A record file for `owner` (a uid): refused (`EBUSY`) while a descriptor has the file
    /// open for writing, or while a record file of another owner appends to it. Another of
    /// the same owner may (`acct(2)` opens the new file before it closes the old one, which
    /// may be the same).
    fn open_record(&mut self, path: &VarPath, rec: Arc<RecInner>, owner: u32) -> Result<Done, i32> {
        let e = self.lookup(path)?.ok_or(EACCES)?;
        // Linux's order: the VFS refuses to open a directory for writing (EISDIR) before
        // acct's own check that the file is regular (EACCES).
        if e.attributes.is_directory() {
            return Err(EISDIR);
        }
        if e.attributes.is_read_only() {
            return Err(EACCES);
        }
        if let Some(n) = self.by_key.get(&key_of(path)).and_then(|id| self.nodes.get(id)) {
            if n.writers > 0 || (n.records > 0 && n.owner != owner) {
                return Err(EBUSY);
            }
        }
        match self.open(path, O_WRONLY, true)? {
            Done::Opened { node, dir: false } => {
                let n = self.nodes.get_mut(&node).ok_or(EIO)?;
                n.records += 1;
                n.owner = owner;
                self.records.insert(rec.id, (rec, node));
                Ok(Done::Opened { node, dir: false })
            }
            Done::Opened { node, dir: true } => {
                self.release(node);
                Err(EISDIR)
            }
            _ => Err(EIO),
        }
    }

    /// Write every record file's queue: each batch checked for room as a whole number of
    /// records, written at the end of the file and flushed.
    pub fn drain_records(&mut self) {
        let ids: Vec<u64> = self.records.keys().copied().collect();
        for id in ids {
            self.drain_one(id);
        }
    }

    fn drain_one(&mut self, id: u64) {
        let Some((rec, node)) = self.records.get(&id).map(|(r, n)| (Arc::clone(r), *n)) else { return };
        loop {
            let (batch, lens) = rec.take_batch(RECORD_BATCH);
            if lens.is_empty() {
                return;
            }
            let (records, bytes, error) = self.write_records(node, &batch, &lens);
            rec.wrote(records, bytes);
            if let Some(e) = error {
                self.records.remove(&id);
                self.release_record(node);
                rec.failed(e);
                return;
            }
        }
    }

    /// Append the records of `batch` (their lengths in `lens`): all of them, or (disk full)
    /// as many whole ones as fit, then `ENOSPC`. Returns the records and bytes written and
    /// the error that stopped it.
    fn write_records(&mut self, node: u64, batch: &[u8], lens: &[usize]) -> (u64, u64, Option<i32>) {
        match self.write(node, None, batch, true) {
            Ok(_) => (lens.len() as u64, batch.len() as u64, None),
            Err(ENOSPC) => {
                let (mut at, mut n) = (0, 0);
                for &l in lens {
                    if self.write(node, None, &batch[at..at + l], true).is_err() {
                        break;
                    }
                    at += l;
                    n += 1;
                }
                (n, at as u64, Some(ENOSPC))
            }
            Err(e) => (0, 0, Some(e)),
        }
    }

    /// `close_and_wait`: write what is queued, flush, close.
    fn close_record(&mut self, id: u64) {
        self.drain_one(id);
        if let Some((rec, node)) = self.records.remove(&id) {
            rec.closed();
            self.release_record(node);
        }
    }

    /// A record file's reference less.
    fn release_record(&mut self, node: u64) {
        if let Some(n) = self.nodes.get_mut(&node) {
            n.records -= 1;
        }
        self.release(node);
    }
}
