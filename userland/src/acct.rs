//! # What the accounting tools share
//!
//! The process accounting tools (`accton`, `lastcomm`, `sa`, `dump-acct`: GNU acct's) and
//! the CSA tools (`csaswitch`, `ja`, `csacom`, `newjob`: SGI CSA's) read files that the
//! kernel writes on `/var`; their formats are printed by `tally-pacct` and `tally-csa`, the
//! same code the host's `cargo xtask acct` uses. This module holds the few things around
//! them: the default file names, GNU's message for a file that cannot be read, the billing
//! unit weights, and the time arguments of `csacom`.
#![forbid(unsafe_code)]

use alloc::vec::Vec;

use tally_csa::report::SbuWeights;
use tally_uapi::errno::EEXIST;

use crate::{eprintln, fs, sys};

/// GNU acct's default process accounting file, as its upstream build sets it (Debian moves
/// it to `/var/log/account/pacct`): what `accton on`, `lastcomm` and `sa` use without a
/// file name.
pub const ACCT_FILE: &str = "/var/account/pacct";
/// CSA's system accounting file (`csaswitch`, `csacom`).
pub const CSA_PACCT: &str = "/var/csa/pacct";
/// The billing-unit weights the CSA tools read if the file exists: lines `P_NAME value`
/// with CSA's `csa.conf` names (`tally_csa::report::sbu`). Without it, the compiled-in
/// defaults: one SBU per CPU second.
pub const CSA_CONFIG: &str = "/var/csa.cfg";
/// Where `ja` keeps a job's file when none is named: `/var/tmp/ja<N>`, N the job's
/// process-id half in decimal (CSA's `ja` uses `$TMPDIR/jacct<jid>`; FAT's 8.3 names
/// leave room for "ja" and six digits).
pub const JA_DIR: &str = "/var/tmp";

/// The whole accounting file at `path`, or `None` after printing GNU acct's message for
/// a file it cannot open (`couldn't open file 'X': No such file or directory`).
pub fn read_acct_file(path: &str) -> Option<Vec<u8>> {
    match fs::read_file(path) {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("couldn't open file '{path}': {}", e.strerror());
            None
        }
    }
}

/// Makes the directory that holds `path` if it is missing (one level: `/var/csa` for
/// `/var/csa/pacct`), for the tools' default files; an existing directory is fine.
pub fn make_parent_dir(path: &str) -> Result<(), crate::Errno> {
    let Some((dir, _)) = path.rsplit_once('/') else { return Ok(()) };
    if dir.is_empty() || dir == tally_uapi::fs::VAR_MOUNT {
        return Ok(());
    }
    match sys::mkdir(dir, 0o755) {
        Ok(_) => Ok(()),
        Err(e) if e.0 == EEXIST => Ok(()),
        Err(e) => Err(e),
    }
}

/// The billing-unit weights: [`CSA_CONFIG`] if it exists, else the defaults. A file that
/// exists but cannot be read or parsed is reported (`prog: /var/csa.cfg: line 3: ...`) and
/// the defaults are used.
pub fn sbu_weights(prog: &str) -> SbuWeights {
    let Ok(bytes) = fs::read_file(CSA_CONFIG) else { return SbuWeights::default() };
    let text = core::str::from_utf8(&bytes).unwrap_or("");
    match SbuWeights::parse(text) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{prog}: {CSA_CONFIG}: {e}; using the default weights");
            SbuWeights::default()
        }
    }
}

/// Seconds since 1970 now (`CLOCK_REALTIME`), 0 if the clock cannot be read.
pub fn now_secs() -> u64 {
    sys::clock_gettime(tally_uapi::syscall::CLOCK_REALTIME).map_or(0, |t| t.tv_sec.max(0) as u64)
}

/// A time argument: `HH[:MM[:SS]]` of today (UTC), as CSA's `csacom -s/-e` take it, or
/// `@SECONDS` since 1970.
pub fn parse_time(s: &str, now: u64) -> Option<u64> {
    if let Some(secs) = s.strip_prefix('@') {
        return secs.parse().ok();
    }
    let mut parts = s.split(':');
    let mut field = |max: u64| -> Option<u64> {
        match parts.next() {
            None => Some(0),
            Some(p) => p.parse::<u64>().ok().filter(|&v| v < max),
        }
    };
    let (h, m, sec) = (field(24)?, field(60)?, field(60)?);
    if parts.next().is_some() {
        return None;
    }
    Some(now - now % 86_400 + h * 3600 + m * 60 + sec)
}
