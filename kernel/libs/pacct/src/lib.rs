//! # tally-pacct — Linux process accounting records (`acct(2)`, v3) and GNU acct's tools
//!
//! BSD process accounting is a file of fixed-size records, one per process, appended by the
//! kernel when a process ends and read later by `lastcomm`, `sa` and `dump-acct`. Tally
//! writes Linux's version-3 record (`tally_uapi::acct::AcctV3`, 64 bytes) so that GNU acct,
//! the tools every Linux distribution ships, reads Tally's files unchanged. This crate holds
//! everything about those records that is not the kernel's plumbing:
//!
//! ```text
//!   kernel, at a process's last exit            user space / host, later
//!   ─────────────────────────────────           ──────────────────────────────────────────
//!   Tally's accounting                          the file's bytes
//!     │  (clocks, faults, memory, identity)       │
//!     ▼                                           ▼
//!   ProcessSummary ──build()──► AcctV3 ──►  file::records() ──► dump::write_dump_line
//!     (record.rs)     │       64 bytes          (file.rs)   ──► lastcomm::write_lastcomm_line
//!                     │                                     ──► sa::Summary
//!           encoding.rs: comp_t, float
//! ```
//!
//! * [`encoding`] — the `comp_t` 16-bit float and the integral `f32` of `ac_etime`, bit for
//!   bit as Linux encodes them;
//! * [`record`] — [`record::build`]: Linux's `fill_ac`, from a plain [`record::ProcessSummary`];
//! * [`file`] — a file's bytes as records, refusing partial records and other versions;
//! * [`dump`], [`lastcomm`], [`sa`] — the three tools' output formats, byte for byte GNU acct
//!   6.6.4's (checked against the real tools: `tests/gnu_golden.rs`), writing to any
//!   [`core::fmt::Write`];
//! * [`names`] — user and terminal names for those formats.
//!
//! Nothing here allocates or touches hardware: the kernel builds records with it, user
//! programs and the host tools print them with it, and all of it is tested on the host.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

pub mod dump;
pub mod encoding;
pub mod file;
pub mod lastcomm;
pub mod names;
pub mod record;
pub mod sa;
mod text;

pub use encoding::{decode_comp_t, decode_float, encode_comp_t, encode_float};
pub use file::{records, BadRecord, FileError, Records};
pub use record::{build, summary_from_taskstats, ProcessSummary};
pub use tally_uapi::acct::AcctV3;
