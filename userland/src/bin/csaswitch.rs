//! `csaswitch -c check|on|off|halt|status [-n NAME[=VALUE][,...]] [-m FILE]` — switch SGI
//! CSA accounting and show its state, as CSA's `csaswitch` does.
//!
//! ```text
//! $ csaswitch -c on                       csa, mem, io and delay on, to /var/csa/pacct
//! $ csaswitch -c on -n memt=2048,time=0.01  thresholds: 2048 KB of virtual memory, 10 ms of CPU
//! $ csaswitch -c off -n io                the I/O records off
//! $ csaswitch -c check -n csa             one entry's state
//! $ csaswitch -c status                   every entry, and the system file
//! $ csaswitch -c halt                     everything off, the file closed
//! ```
//!
//! NAMEs are CSA's (`tally_csa::report::switch::METHODS`): the kinds `csa`, `wkmg`
//! (`job`, `site1`, `site2` too), the record kinds `mem`, `io`, `delay` (`rsite1`,
//! `rsite2`), and the thresholds `memt` (KB of virtual memory high-water) and `time`
//! (seconds of CPU, fractions allowed), which take `=VALUE`. `-n` may be repeated.
//!
//! * `on` without `-n` turns on `csa` and all three record kinds — what CSA's start-up
//!   script turns on with its distributed configuration. The system file is FILE (`-m`), or
//!   the kernel's current one (open, or the last one used), or `/var/csa/pacct` (its
//!   directory is made if missing); the file is created if missing, as `accton` makes its
//!   file (the kernel opens only existing files). A new FILE while another is open switches
//!   files (the kernel ends the old one with a FILE configuration record).
//! * `off` without `-n` turns off every kind, record kind and threshold; the kernel closes
//!   the file when no kind needs it.
//! * `check` and `status` print as `tally_csa::report::switch` describes (times UTC).
//!
//! `on`, `off` and `halt` need root (`EPERM`); `check` and `status` anyone. Errors print as
//! `csaswitch: REASON` with exit status 1; a bad NAME or usage, status 2.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;

use tally_csa::report::switch::{self, method_index};
use tally_rt::acct::{make_parent_dir, now_secs, CSA_PACCT};
use tally_rt::fs::File;
use tally_rt::uapi::csa::{
    self, ActCtl, ActStat, ACCT_KERN_CSA, ACCT_RCD_DELAY, ACCT_RCD_IO, ACCT_RCD_MEM, ACCT_THD_MEM, ACCT_THD_TIME,
    ACS_ON,
};
use tally_rt::uapi::errno::EEXIST;
use tally_rt::uapi::fs::{O_CREAT, O_EXCL, O_WRONLY};
use tally_rt::{eprintln, sys, Errno};

tally_rt::entry!(main);

fn usage() -> i32 {
    eprintln!("usage: csaswitch -c check -n NAME");
    eprintln!("       csaswitch -c halt");
    eprintln!("       csaswitch -c off [-n NAME[,NAME...]]");
    eprintln!("       csaswitch -c on [-m FILE] [-n NAME[=VALUE][,NAME[=VALUE]...]]");
    eprintln!("       csaswitch -c status");
    eprintln!("NAMEs: csa wkmg mem io delay memt=KB time=SECONDS (and job site1 site2 rsite1 rsite2)");
    2
}

fn main() -> i32 {
    let mut cmd: Option<&str> = None;
    let mut file: Option<&str> = None;
    let mut names: Vec<&str> = Vec::new();
    let mut args = tally_rt::args().skip(1);
    while let Some(a) = args.next() {
        let Some(v) = args.next() else { return usage() };
        match a {
            "-c" => cmd = Some(v),
            "-m" => file = Some(v),
            "-n" => names.extend(v.split(',').filter(|n| !n.is_empty())),
            _ => return usage(),
        }
    }
    let mut entries: Vec<ActStat> = Vec::new();
    for n in &names {
        let (name, value) = match n.split_once('=') {
            Some((a, b)) => (a, Some(b)),
            None => (*n, None),
        };
        let Some(ind) = method_index(name) else {
            eprintln!("csaswitch: unknown name '{name}'");
            return usage();
        };
        let param = match (ind, value) {
            (_, None) => 0,
            (ACCT_THD_MEM, Some(v)) => match v.parse::<i64>() {
                Ok(kb) if kb >= 0 => kb,
                _ => {
                    eprintln!("csaswitch: memt wants KB, not '{v}'");
                    return 2;
                }
            },
            (ACCT_THD_TIME, Some(v)) => match v.parse::<f64>() {
                Ok(s) if (0.0..1e12).contains(&s) => (s * 1e6 + 0.5) as i64,
                _ => {
                    eprintln!("csaswitch: time wants seconds, not '{v}'");
                    return 2;
                }
            },
            (_, Some(_)) => {
                eprintln!("csaswitch: '{name}' takes no value");
                return 2;
            }
        };
        entries.push(ActStat { ac_ind: ind, ac_state: ACS_ON, ac_param: param });
    }
    let r = match cmd {
        Some("on") => on(entries, file),
        Some("off") => off(entries),
        Some("halt") => sys::csa_ctl_noarg(csa::AC_HALT).map(|_| ()),
        Some("check") => match entries.as_slice() {
            [e] => sys::csa_check(e.ac_ind).map(|s| {
                let mut out = String::new();
                let _ = switch::check(&mut out, &s, now_secs());
                tally_rt::io::write_out(&out);
            }),
            _ => return usage(),
        },
        Some("status") => status(),
        _ => return usage(),
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("csaswitch: {}", e.strerror());
            1
        }
    }
}

/// An `actctl` naming `entries` (at most 12: more is a usage error of ours, cut here).
fn actctl(entries: &[ActStat]) -> ActCtl {
    let mut c = ActCtl::default();
    let n = entries.len().min(c.ac_stat.len());
    c.ac_stat[..n].copy_from_slice(&entries[..n]);
    c.ac_sttnum = n as i32;
    c
}

fn on(mut entries: Vec<ActStat>, file: Option<&str>) -> Result<(), Errno> {
    if entries.is_empty() {
        entries = [ACCT_KERN_CSA, ACCT_RCD_MEM, ACCT_RCD_IO, ACCT_RCD_DELAY]
            .iter()
            .map(|&ac_ind| ActStat { ac_ind, ac_state: ACS_ON, ac_param: 0 })
            .collect();
    }
    let mut c = actctl(&entries);
    // The file: the one asked for; else the kernel's current one (open, or the last one
    // used: the kernel keeps its path, and the same path does not switch files); else the
    // default, whose directory is made if missing.
    let kd = sys::csa_status(csa::AC_KDSTAT)?;
    let current = kd.path().and_then(|p| core::str::from_utf8(p).ok()).filter(|p| !p.is_empty());
    let path = match (file, current) {
        (Some(f), _) => f,
        (None, Some(p)) => p,
        (None, None) => {
            sys::csa_ctl_noarg(csa::AC_AUTH)?;
            make_parent_dir(CSA_PACCT)?;
            CSA_PACCT
        }
    };
    // Only root may start accounting: ask before creating anything.
    sys::csa_ctl_noarg(csa::AC_AUTH)?;
    // Create it if missing (O_EXCL: a file accounting appends to may not be opened for
    // writing, so `on` at the current file must not try).
    match File::open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644).and_then(File::close) {
        Ok(()) | Err(Errno(EEXIST)) => {}
        Err(e) => return Err(e),
    }
    c.set_path(path.as_bytes());
    sys::csa_ctl_actctl(csa::AC_START, &mut c).map(|_| ())
}

fn off(mut entries: Vec<ActStat>) -> Result<(), Errno> {
    if entries.is_empty() {
        entries = switch::METHODS.iter().map(|m| ActStat { ac_ind: m.0, ..ActStat::default() }).collect();
    }
    for e in &mut entries {
        e.ac_state = csa::ACS_OFF;
    }
    let mut c = actctl(&entries);
    sys::csa_ctl_actctl(csa::AC_STOP, &mut c).map(|_| ())
}

fn status() -> Result<(), Errno> {
    let kd = sys::csa_status(csa::AC_KDSTAT)?;
    let rcd = sys::csa_status(csa::AC_RCDSTAT)?;
    let mut out = String::new();
    let _ = switch::status(&mut out, &kd, &rcd, now_secs());
    tally_rt::io::write_out(&out);
    Ok(())
}
