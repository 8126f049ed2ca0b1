//! # Process accounting: Linux's `acct(2)`, one 64-byte record per process in a file
//!
//! BSD process accounting as Linux does it (`kernel/acct.c`): while it is on, the kernel
//! appends one `struct acct_v3` to the accounting file when a process's **last** thread
//! exits. This file is the kernel's glue between three pieces that know nothing of each
//! other:
//!
//! ```text
//!   acct(path)  (syscall/acct_calls.rs) ──► set_file: RecordFile::open (may sleep) ──► STATE.file
//!                                     the old file, if any: close_and_wait (its records flushed)
//!   a process's last thread exits (proc, interrupts off)
//!     └─► PROCESS_ACCOUNTING.exited ──► its taskstats record (task_records.rs)
//!            └─► tally_pacct::summary_from_taskstats ──► tally_pacct::build (Linux's fill_ac)
//!                   └─► RecordFile::post(64 bytes)  never sleeps: queued for the disk owner
//!   the disk owner fails a write (ENOSPC, EIO) ──► on_error: accounting off, a warning,
//!                                                   the records lost are counted
//! ```
//!
//! **Why `post` and nothing else on the exit path.** Exit observers run with interrupts off
//! and must not sleep; a disk write sleeps. The file layer's owner thread appends the
//! queued records later, whole and in the order they were posted — and records are posted
//! under [`STATE`]'s lock, so that order is the exit order.
//!
//! **Turning itself off.** Linux suspends accounting when the disk is nearly full ("Process
//! accounting paused") and resumes it later; Tally's file layer reports a failed write
//! instead, and accounting then turns **off** (as if `acct(NULL)` had been called) with a
//! kernel warning: the file keeps the whole records written before the failure and stays
//! readable. Records that could not be queued (`ENOBUFS`: the queue was full) or that were
//! queued but never written because the write failed are counted as dropped: the
//! `acct:0:pacct` kstat shows them (`counters`).
//!
//! Field by field, where each number of the record comes from: `docs/process-accounting.md`.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::Mutex;
use tally_pacct::{build, summary_from_taskstats};
use tally_uapi::acct::TTY_S0;

use crate::fs::record_file::RecordFile;
use crate::proc::{ExitEvent, ExitObserver};

/// The accounting file (none: accounting is off) and how many records were posted to it.
struct Pacct {
    file: Option<RecordFile>,
    posted_to_file: u64,
}

static STATE: Mutex<Pacct> = Mutex::new(Pacct { file: None, posted_to_file: 0 });

/// Is accounting on? (Mirrors `STATE.file.is_some()`, for `listening()`: an atomic load.)
static ON: AtomicBool = AtomicBool::new(false);
static POSTED: AtomicU64 = AtomicU64::new(0);
static DROPPED: AtomicU64 = AtomicU64::new(0);
static ERRORS: AtomicU64 = AtomicU64::new(0);

/// Run `f` on the state with interrupts off: the exit path takes this lock with interrupts
/// off, so nobody may hold it where a timer interrupt could switch away.
fn with<R>(f: impl FnOnce(&mut Pacct) -> R) -> R {
    hal::cpu::without_interrupts(|| f(&mut STATE.lock()))
}

/// `acct(path)` / `acct(NULL)` once the caller is known to be root: open `path` (an
/// existing regular file on `/var`) **before** touching the current state, so that a
/// failure (`ENOENT`, `EACCES`, …) leaves accounting as it was; then switch, and close the
/// previous file, waiting until its records are on the disk. May sleep.
pub fn set_file(path: Option<&[u8]>) -> Result<(), i32> {
    let new = match path {
        Some(p) => Some(RecordFile::open(p, on_error)?),
        None => None,
    };
    let old = with(|s| {
        ON.store(new.is_some(), Ordering::Release);
        s.posted_to_file = 0;
        core::mem::replace(&mut s.file, new)
    });
    if let Some(old) = old {
        old.close_and_wait();
    }
    Ok(())
}

/// The disk owner could not write file `id` (`errno`), and has closed it. If it is the
/// accounting file, accounting turns off. Called in the owner's task context.
///
/// All of it happens in one critical section, in this order: the losses and the error are
/// counted, the warning is printed, and only then does [`ON`] say off. So whoever sees
/// accounting off (`counters`, a self-test waiting for it) finds the counts final and the
/// warning already on the console.
fn on_error(id: u64, errno: i32) {
    with(|s| {
        if s.file.as_ref().map(RecordFile::id) != Some(id) {
            return; // an old file, already replaced
        }
        let Some(f) = s.file.take() else { return };
        let (written, _, _) = f.counters();
        let lost = s.posted_to_file.saturating_sub(written);
        DROPPED.fetch_add(lost, Ordering::Relaxed);
        ERRORS.fetch_add(1, Ordering::Relaxed);
        log::warn!("acct: the accounting file cannot be written (errno {errno}): process accounting off, {lost} record(s) lost");
        ON.store(false, Ordering::Release);
    });
}

/// Process accounting's numbers, for the `acct:0:pacct` kstat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacctCounters {
    /// Is accounting on now?
    pub on: bool,
    /// Records handed to an accounting file since boot.
    pub records: u64,
    /// Records lost: not accepted by the file's queue, or queued and never written because
    /// a write failed.
    pub dropped: u64,
    /// Write errors that turned accounting off.
    pub errors: u64,
}

/// The counters now.
pub fn counters() -> PacctCounters {
    PacctCounters {
        on: ON.load(Ordering::Acquire),
        records: POSTED.load(Ordering::Relaxed),
        dropped: DROPPED.load(Ordering::Relaxed),
        errors: ERRORS.load(Ordering::Relaxed),
    }
}

/// The exit observer of process accounting, registered in `main.rs`.
pub struct ProcessAccounting;

/// The one [`ProcessAccounting`] observer.
pub static PROCESS_ACCOUNTING: ProcessAccounting = ProcessAccounting;

impl ExitObserver for ProcessAccounting {
    fn listening(&self) -> bool {
        ON.load(Ordering::Acquire)
    }

    fn exited(&self, e: &ExitEvent) {
        let Some((ts, now_ns)) = super::task_records::process_record_at_exit(e) else { return };
        let Some((id, total)) = e.process.as_ref() else { return };
        // Every user process starts with the console as its terminal; kernel threads have none.
        let tty = if id.user { TTY_S0 } else { 0 };
        // Linux's ac_mem: the address space's size (KB) when the last thread exited.
        let vm_kb = total.mem.vm_pages.saturating_mul(4);
        let record = build(&summary_from_taskstats(&ts, now_ns / 1_000_000_000, tty, vm_kb)).to_bytes();
        with(|s| {
            let Some(f) = &s.file else { return };
            match f.post(&record) {
                Ok(()) => {
                    s.posted_to_file += 1;
                    POSTED.fetch_add(1, Ordering::Relaxed);
                }
                Err(_) => {
                    DROPPED.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
}
