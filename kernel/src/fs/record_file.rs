//! Record files: how accounting (Linux `acct(2)`, the SGI CSA files) appends fixed records
//! to a file on `/var` from places that cannot wait for a disk.
//!
//! A process's accounting record is made at its last thread's exit, inside the exit path,
//! with interrupts off ([`crate::proc`]'s exit observers). So [`RecordFile::post`] never
//! touches the disk: it copies the record into the file's own bounded queue (a byte ring and
//! a ring of lengths, allocated once at open, so a post allocates nothing) and wakes fsd.
//! fsd, between requests, takes up to `RECORD_BATCH` bytes of whole records, checks the
//! disk has room for all of them, appends them at the end of the file and flushes the
//! directory entry (`server.rs`, `drain_one`).
//!
//! **What can be lost.** `embedded-sdmmc` changes a file's size on disk only when it writes
//! the directory entry, one sector, after the data; so if QEMU is killed at any instant the
//! file's size on disk is the size after some earlier batch — a whole number of records. What
//! is lost is at most what was still queued ([`QUEUE_BYTES`] bytes, [`QUEUE_RECORDS`] records)
//! plus the batch being written (at most 4 KiB). A full disk: the records that fit are
//! written whole, then `on_error(id, ENOSPC)` and the file is closed.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use spin::Mutex;
use tally_uapi::errno::{EINVAL, EIO, ENOBUFS};

use super::{call, Done, Op};

/// Bytes of records one file may have queued (posts beyond it: `ENOBUFS`).
pub const QUEUE_BYTES: usize = 32 * 1024;
/// Records one file may have queued.
pub const QUEUE_RECORDS: usize = 1024;
/// Largest record.
pub const MAX_RECORD: usize = 512;

const OPEN: u8 = 0;
const FAILED: u8 = 1;
const CLOSED: u8 = 2;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The queue: whole records, oldest first.
struct Queue {
    bytes: VecDeque<u8>,
    lens: VecDeque<u16>,
}

/// The state shared by a [`RecordFile`]'s clones and fsd.
pub struct RecInner {
    pub id: u64,
    state: AtomicU8,
    queue: Mutex<Queue>,
    records: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
    on_error: fn(u64, i32),
}

impl RecInner {
    /// fsd: take whole records, oldest first, up to `max` bytes (at least one record).
    pub fn take_batch(&self, max: usize) -> (Vec<u8>, Vec<usize>) {
        let mut batch = Vec::with_capacity(max);
        let mut lens = Vec::with_capacity(max / 16 + 1);
        hal::cpu::without_interrupts(|| {
            let mut q = self.queue.lock();
            while let Some(&l) = q.lens.front() {
                let l = usize::from(l);
                if !lens.is_empty() && batch.len() + l > max {
                    break;
                }
                q.lens.pop_front();
                batch.extend(q.bytes.drain(..l));
                lens.push(l);
            }
        });
        (batch, lens)
    }

    /// fsd: `records` records of `bytes` bytes reached the file.
    pub fn wrote(&self, records: u64, bytes: u64) {
        self.records.fetch_add(records, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// fsd: a write failed; the file is closed, what is queued is dropped, posts fail.
    pub fn failed(&self, errno: i32) {
        self.state.store(FAILED, Ordering::Release);
        self.errors.fetch_add(1, Ordering::Relaxed);
        hal::cpu::without_interrupts(|| {
            let mut q = self.queue.lock();
            q.bytes.clear();
            q.lens.clear();
        });
        log::warn!("fs: record file {} failed with errno {errno}; closed", self.id);
        (self.on_error)(self.id, errno);
    }

    /// fsd: closed by `close_and_wait`.
    pub fn closed(&self) {
        self.state.store(CLOSED, Ordering::Release);
    }
}

/// An accounting file: records posted from any context are appended whole, in order, by fsd.
#[derive(Clone)]
pub struct RecordFile {
    inner: Arc<RecInner>,
}

impl RecordFile {
    /// Open an EXISTING regular file on /var for appending records. Blocking: task context,
    /// interrupts on, no lock held. Errors: ENOENT, ENOTDIR, EISDIR (a directory, as Linux's
    /// open for writing says), EACCES (read-only), ENAMETOOLONG, EINVAL (not under /var), ENODEV (no accounting disk), EIO.
    /// `on_error(id, errno)` is called from fsd (task context, interrupts on, may take spin
    /// locks, must not wait for the disk) when a write fails; the file is then closed by fsd
    /// and later posts fail with EIO.
    ///
    /// The file is the kernel's while it is open: a descriptor's `open` of it for writing or
    /// with `O_TRUNC` is `EACCES`, by anyone. It opens only if no descriptor has it open for
    /// writing and no record file of another owner appends to it (`EBUSY`). This one is
    /// root's (owner uid 0): `acct(2)` and CSA's system file.
    pub fn open(path: &[u8], on_error: fn(u64, i32)) -> Result<RecordFile, i32> {
        Self::open_as(path, on_error, 0)
    }

    /// [`open`](Self::open) on behalf of user `uid` (CSA's `AC_JASTART`: a ja file for a
    /// user's job). FAT records no owners, so a file on `/var` is nobody's: a user other than
    /// root may name only a file under `/var/TMP` (the world-writable directory, `EACCES`
    /// elsewhere), and not one a record file of another owner appends to (`EBUSY`).
    pub fn open_as(path: &[u8], on_error: fn(u64, i32), uid: u32) -> Result<RecordFile, i32> {
        let parsed = tally_uapi::fs::path::parse(path).map_err(|e| e.errno())?;
        if parsed.last().is_none() {
            // `/var` itself: a directory.
            return Err(tally_uapi::errno::EISDIR);
        }
        if uid != 0 && !matches!(parsed.components(), [tmp, _, ..] if tmp.as_str() == "TMP") {
            return Err(tally_uapi::errno::EACCES);
        }
        let inner = Arc::new(RecInner {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            state: AtomicU8::new(OPEN),
            queue: Mutex::new(Queue {
                bytes: VecDeque::with_capacity(QUEUE_BYTES),
                lens: VecDeque::with_capacity(QUEUE_RECORDS),
            }),
            records: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            on_error,
        });
        match call(Op::OpenRecord { path: parsed, rec: Arc::clone(&inner), owner: uid })? {
            Done::Opened { .. } => Ok(RecordFile { inner }),
            _ => Err(EIO),
        }
    }

    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// Queue one whole record (1..=512 bytes). Never blocks: callable with interrupts off and
    /// spin locks held (exit observers). Err(ENOBUFS) if the queue is full (record not
    /// queued), Err(EIO) after an error closed the file (or after `close_and_wait`),
    /// Err(EINVAL) for an empty or too long record. Records of one file reach it in post
    /// order, each whole: the file's size is always a whole number of records, even if QEMU
    /// is killed; what such a kill can lose is bounded by the records still queued (see the
    /// module documentation).
    pub fn post(&self, record: &[u8]) -> Result<(), i32> {
        if record.is_empty() || record.len() > MAX_RECORD {
            return Err(EINVAL);
        }
        if self.inner.state.load(Ordering::Acquire) != OPEN {
            return Err(EIO);
        }
        let queued = hal::cpu::without_interrupts(|| {
            let mut q = self.inner.queue.lock();
            if q.bytes.len() + record.len() > QUEUE_BYTES || q.lens.len() >= QUEUE_RECORDS {
                return false;
            }
            q.bytes.extend(record.iter().copied());
            q.lens.push_back(record.len() as u16);
            true
        });
        if !queued {
            return Err(ENOBUFS);
        }
        super::kick();
        Ok(())
    }

    /// Write what is queued, flush, close; blocking (acct(NULL), switching files).
    pub fn close_and_wait(&self) {
        if self.inner.state.load(Ordering::Acquire) == OPEN {
            let _ = call(Op::CloseRecord { id: self.inner.id });
        }
        self.inner.state.store(CLOSED, Ordering::Release);
    }

    /// (records written, bytes written, write errors) so far.
    pub fn counters(&self) -> (u64, u64, u64) {
        let i = &self.inner;
        (i.records.load(Ordering::Relaxed), i.bytes.load(Ordering::Relaxed), i.errors.load(Ordering::Relaxed))
    }
}
