//! What the user tools print: `csacom`, `ja`, `csaswitch -c status`, and the system
//! billing units they charge.
//!
//! Every function reads records that [`crate::parse`] decoded and writes text to a
//! `core::fmt::Write`, so the same code prints in Tally's userland, in `cargo xtask acct`
//! on the host, and in the tests. Times are printed in UTC (Tally has no time zones).

pub mod csacom;
pub mod ja;
pub mod sbu;
pub mod switch;
pub mod time;

use core::fmt;

use crate::parse::ParseError;
use crate::process::BaseRecord;

pub use sbu::SbuWeights;

/// Why a report stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportError {
    /// The writer failed.
    Fmt,
    /// The file has a bad record here; everything before it was reported.
    Parse(ParseError),
}

impl From<fmt::Error> for ReportError {
    fn from(_: fmt::Error) -> Self {
        ReportError::Fmt
    }
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Fmt => write!(f, "output error"),
            ReportError::Parse(e) => e.fmt(f),
        }
    }
}

/// A command name for printing: the bytes before the first NUL, non-printable bytes as `?`.
pub struct Comm<'a>(pub &'a [u8]);

impl fmt::Display for Comm<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.iter().position(|&c| c == 0).unwrap_or(self.0.len());
        let mut s = [0u8; 64];
        let n = n.min(s.len());
        for (d, &c) in s.iter_mut().zip(&self.0[..n]) {
            *d = if c.is_ascii_graphic() || c == b' ' { c } else { b'?' };
        }
        // Only ASCII was copied, so this cannot fail.
        f.pad(core::str::from_utf8(&s[..n]).unwrap_or("?"))
    }
}

/// Which process records a report takes (`csacom` and `ja` share it). Every condition given
/// must hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Selection<'a> {
    /// Records of this job.
    pub jid: Option<u64>,
    /// Records of this user.
    pub uid: Option<u32>,
    /// Records whose command is this name; `name*` matches every command starting with
    /// `name` (and `*` every command).
    pub command: Option<&'a [u8]>,
    /// Processes that still existed at or after this time (their end ≥ it), s since 1970.
    pub since: Option<u64>,
    /// Processes that existed at or before this time (their start ≤ it).
    pub until: Option<u64>,
}

/// When a process ended, s since 1970 (its start plus its elapsed time).
pub fn end_secs(b: &BaseRecord) -> u64 {
    b.btime.saturating_add(b.etime / 1_000_000)
}

impl Selection<'_> {
    /// Does process record `b` match?
    pub fn matches(&self, b: &BaseRecord) -> bool {
        let name = b.comm_bytes();
        let command_ok = match self.command {
            None => true,
            Some(p) => match p.strip_suffix(b"*") {
                Some(prefix) => name.starts_with(prefix),
                None => name == p,
            },
        };
        command_ok
            && self.jid.is_none_or(|j| b.jid == j)
            && self.uid.is_none_or(|u| b.uid == u)
            && self.since.is_none_or(|s| end_secs(b) >= s)
            && self.until.is_none_or(|u| b.btime <= u)
    }
}
