//! # tally-kstat — Solaris-style kernel statistics
//!
//! A *kstat* is a named bundle of statistics a kernel subsystem publishes for user space:
//! `unix:0:runq` (how long the run queue was, integrated over time), `unix:0:kstat_types`,
//! a disk's I/O queues, a driver's interrupt counts. The design is Solaris' (kstat(3K)):
//! every kstat has a header (`module:instance:name`, class, type, creation and snapshot
//! times) and a data section of one of five kinds, and all kstats hang off one *chain*
//! ordered by kstat id (KID).
//!
//! The flow, and where each file sits in it:
//!
//! ```text
//!  provider (sched, a driver)           registry.rs                 reader (kstat -p)
//!  ------------------------------      -------------------------    -------------------------
//!  create(m, i, n, class, type, ..) -> KID, flagged INVALID,   <-   read KID 0: all headers
//!  named_init / timer_init           <- KCID bumped                    + the KCID
//!  install(kid)                      -> now readable                 filter m:i:n:s (uapi)
//!  hot path: named.rs  set/add          data lives here        <-   read(kid, now): a copy,
//!            intr.rs   bump             ...                           ks_snaptime = now
//!            io.rs     waitq/runq       (io.rs folds open             KCID changed? re-read
//!            timer.rs  start/stop        intervals at snapshot)       the chain
//!            raw.rs    write
//!  delete(kid)                       -> gone, KCID bumped
//! ```
//!
//! `queue.rs` holds the piece the I/O statistics are built from: an integrator of a queue's
//! length over time, usable on its own (a scheduler's run queue) or inside an io kstat.
//!
//! What this crate does not do: take locks (the kernel puts one lock around the
//! [`KstatRegistry`], playing both Solaris' `kstat_chain_lock` and the per-kstat
//! `ks_lock`), read clocks (every time is an `hrtime` passed in by the caller), or call
//! `ks_update` hooks (a provider whose values live elsewhere writes them into its kstat
//! before the reader's read, under that same lock).
//!
//! Nothing here panics on bad input: unknown KIDs, indexes out of range, names too long,
//! wrong value types, extra queue exits and clocks running backwards all come back as a
//! [`KstatError`] or are counted and ignored, as each function documents.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod intr;
pub mod io;
pub mod named;
pub mod queue;
pub mod raw;
pub mod registry;
pub mod timer;

pub use intr::{IntrKind, IntrStats};
pub use io::IoStats;
pub use named::NamedStats;
pub use queue::QueueIntegrator;
pub use raw::RawStats;
pub use registry::{Kstat, KstatData, KstatRead, KstatRegistry, KstatSnapshot, SnapshotData, KSTAT_MAX_DATA_SIZE};
pub use timer::TimerStats;

pub use tally_uapi::kstat::{Hrtime, KidT};

use tally_uapi::errno;
use tally_uapi::kstat::{kstat_set_string, KSTAT_STRLEN};

/// Why a kstat operation was refused. Every refusal leaves the statistics unchanged,
/// except for the anomaly counters the queue and timer kinds keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KstatError {
    /// No kstat has this KID (never had, or deleted).
    NoSuchKstat,
    /// No statistic of that name in this kstat.
    NoSuchStatistic,
    /// `(module, instance, name)` is already taken: a namespace collision.
    Exists,
    /// `ks_type` is not one of `KSTAT_TYPE_*`.
    InvalidType,
    /// `ndata` outside what the type allows (intr and io: exactly 1), or the data section
    /// would exceed [`KSTAT_MAX_DATA_SIZE`].
    InvalidNdata,
    /// A named statistic's data type is not CHAR, INT32, UINT32, INT64, UINT64 or STRING.
    InvalidDataType,
    /// A module, kstat or statistic name longer than `KSTAT_STRLEN - 1` = 30 bytes.
    /// (Names are refused rather than truncated so two long names cannot collide.)
    NameTooLong,
    /// An empty name where one is required, a name containing NUL, or a negative
    /// instance (libkstat uses -1 as "any instance").
    InvalidName,
    /// Record index or byte range outside the data section.
    IndexOutOfRange,
    /// The value's type differs from the statistic's `data_type`, or arithmetic was asked
    /// of a text statistic.
    TypeMismatch,
    /// The kstat is of another kind than the operation needs.
    WrongKind,
    /// Created but not installed yet: the data is not readable.
    NotInstalled,
    /// KID 0, the chain itself, cannot be deleted or written.
    Permanent,
    /// The KID space is used up (not reachable with 64-bit ids in practice).
    KidsExhausted,
    /// The caller's buffer is shorter than the data section; retry with `needed` bytes.
    BufferTooSmall { needed: usize },
    /// The data section could not be allocated.
    NoMemory,
    /// An exit from an empty queue. Counted in the queue's `underflows`.
    QueueUnderflow,
    /// An entry into a queue already `u32::MAX` long. Counted in the queue's `overflows`.
    QueueOverflow,
    /// A timer stopped that was not started. Counted in the timer kstat's `rejected`.
    TimerNotStarted,
}

impl KstatError {
    /// The errno a system call returns for this error. `BufferTooSmall` is `ENOMEM`, as
    /// Solaris' `/dev/kstat` answers so that libkstat grows its buffer and retries.
    pub fn errno(&self) -> i32 {
        match self {
            KstatError::NoSuchKstat | KstatError::NoSuchStatistic => errno::ENOENT,
            KstatError::Exists => errno::EEXIST,
            KstatError::NotInstalled | KstatError::KidsExhausted => errno::EAGAIN,
            KstatError::Permanent => errno::EPERM,
            KstatError::BufferTooSmall { .. } | KstatError::NoMemory => errno::ENOMEM,
            KstatError::InvalidType
            | KstatError::InvalidNdata
            | KstatError::InvalidDataType
            | KstatError::NameTooLong
            | KstatError::InvalidName
            | KstatError::IndexOutOfRange
            | KstatError::TypeMismatch
            | KstatError::WrongKind
            | KstatError::QueueUnderflow
            | KstatError::QueueOverflow
            | KstatError::TimerNotStarted => errno::EINVAL,
        }
    }
}

/// Checks a name and packs it into a header field. At most 30 bytes, no NUL; empty only
/// if `allow_empty`.
pub(crate) fn name_field(s: &str, allow_empty: bool) -> Result<[u8; KSTAT_STRLEN], KstatError> {
    if s.len() > KSTAT_STRLEN - 1 {
        return Err(KstatError::NameTooLong);
    }
    if (s.is_empty() && !allow_empty) || s.as_bytes().contains(&0) {
        return Err(KstatError::InvalidName);
    }
    let mut f = [0u8; KSTAT_STRLEN];
    kstat_set_string(&mut f, s);
    Ok(f)
}

/// A zero-filled `Vec` of `n` items, or `NoMemory` instead of an allocation failure abort.
pub(crate) fn try_vec<T: Clone>(n: usize, fill: T) -> Result<alloc::vec::Vec<T>, KstatError> {
    let mut v = alloc::vec::Vec::new();
    v.try_reserve_exact(n).map_err(|_| KstatError::NoMemory)?;
    v.resize(n, fill);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_not_truncated() {
        assert!(name_field("sched", false).is_ok());
        assert_eq!(name_field(&"x".repeat(30), false).map(|f| f[29]), Ok(b'x'));
        assert_eq!(name_field(&"x".repeat(31), false), Err(KstatError::NameTooLong));
        assert_eq!(name_field("", false), Err(KstatError::InvalidName));
        assert_eq!(name_field("", true), Ok([0; KSTAT_STRLEN]));
        assert_eq!(name_field("a\0b", false), Err(KstatError::InvalidName));
    }

    #[test]
    fn errnos() {
        assert_eq!(KstatError::NoSuchKstat.errno(), errno::ENOENT);
        assert_eq!(KstatError::BufferTooSmall { needed: 1 }.errno(), errno::ENOMEM);
        assert_eq!(KstatError::Exists.errno(), errno::EEXIST);
        assert_eq!(KstatError::NotInstalled.errno(), errno::EAGAIN);
    }
}
