//! `csacom [-b] [-d] [-h] [-i] [-J] [-p] [-t] [-x] [-j JID] [-u UID] [-n NAME] [-s TIME]
//! [-e TIME] [FILE...]` — search SGI CSA accounting files and print the process records
//! that match, one line each, as CSA's `csacom` does (layout and columns:
//! `tally_csa::report::csacom`).
//!
//! ```text
//! COMMAND             USER    START      END       REAL        CPU       MEAN
//! NAME                         TIME     TIME     (SECS)     (SECS)    SIZE(K)
//! hello               1000 04:05:01 04:05:01       0.01       0.00     396.00
//! ```
//!
//! Selection (all given must hold): `-j JID` (hex, `0x` optional) the job, `-u UID` the
//! user, `-n NAME` the command (`NAME*` a prefix), `-s TIME` processes that existed at or
//! after TIME, `-e TIME` at or before it; a TIME is `HH[:MM[:SS]]` of today (UTC) as in
//! CSA, or `@SECONDS` since 1970. Columns added: `-J` job id, `-p` pid and ppid, `-t`
//! system and user time apart, `-i` I/O, `-h` memory high-water marks, `-d` delays, `-x`
//! exit status, nice and flags, `-b` system billing units (weights from `/var/csa.cfg` if
//! it exists). FILE defaults to `/var/csa/pacct` (a ja file works too). A damaged record
//! ends the search with a message and exit status 1, after the lines before it.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;

use tally_csa::report::csacom::{csacom, CsacomColumns};
use tally_csa::report::Selection;
use tally_rt::acct::{now_secs, parse_time, read_acct_file, sbu_weights, CSA_PACCT};
use tally_rt::eprintln;
use tally_rt::process::parse_u64;

tally_rt::entry!(main);

fn usage() -> i32 {
    eprintln!("usage: csacom [-b] [-d] [-h] [-i] [-J] [-p] [-t] [-x] [-j JID] [-u UID] [-n NAME] [-s TIME] [-e TIME] [FILE...]");
    eprintln!("TIME: HH[:MM[:SS]] of today (UTC), or @SECONDS since 1970");
    2
}

fn main() -> i32 {
    let mut c = CsacomColumns::default();
    let mut q = Selection::default();
    let mut files: Vec<&str> = Vec::new();
    let now = now_secs();
    let mut args = tally_rt::args().skip(1);
    while let Some(a) = args.next() {
        let takes_value = matches!(a, "-j" | "-u" | "-n" | "-s" | "-e");
        if takes_value {
            let Some(v) = args.next() else { return usage() };
            let ok = match a {
                "-j" => {
                    let hex = v.strip_prefix("0x").unwrap_or(v);
                    u64::from_str_radix(hex, 16).map(|j| q.jid = Some(j)).is_ok()
                }
                "-u" => parse_u64(v).and_then(|u| u32::try_from(u).ok()).map(|u| q.uid = Some(u)).is_some(),
                "-n" => {
                    q.command = Some(v.as_bytes());
                    true
                }
                "-s" => parse_time(v, now).map(|t| q.since = Some(t)).is_some(),
                _ => parse_time(v, now).map(|t| q.until = Some(t)).is_some(),
            };
            if !ok {
                eprintln!("csacom: bad value '{v}' for {a}");
                return usage();
            }
            continue;
        }
        match a.strip_prefix('-') {
            Some(flags) if !flags.is_empty() => {
                for f in flags.chars() {
                    match f {
                        'b' => c.sbu = Some(sbu_weights("csacom")),
                        'd' => c.delay = true,
                        'h' => c.hiwater = true,
                        'i' => c.io = true,
                        'J' => c.job = true,
                        'p' => c.pids = true,
                        't' => c.separate = true,
                        'x' => c.status = true,
                        _ => return usage(),
                    }
                }
            }
            _ => files.push(a),
        }
    }
    if files.is_empty() {
        files.push(CSA_PACCT);
    }
    let mut status = 0;
    for f in files {
        let Some(bytes) = read_acct_file(f) else {
            status = 1;
            continue;
        };
        let mut out = String::new();
        let r = csacom(&mut out, &bytes, &q, &c);
        tally_rt::io::write_out(&out);
        if let Err(e) = r {
            eprintln!("csacom: {f}: {e}");
            status = 1;
        }
    }
    status
}
