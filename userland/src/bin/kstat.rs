//! `kstat [-p | -l] [-m MODULE] [-i INSTANCE] [-n NAME] [-s STATISTIC] [module[:instance[:name[:statistic]]]]...`
//! — the kernel's statistics, as illumos `kstat(1M)` prints them.
//!
//! The kernel keeps its statistics as a *chain* of kstats (see `tally_uapi::kstat`). A
//! reader walks it the way libkstat does:
//!
//! 1. `kstat_chain` copies every kstat's header, and returns the chain id (KCID). The
//!    buffer is sized by asking first: a too-small buffer is refused with `ENOMEM` and the
//!    size needed, and the reader retries with that (kstats may appear in between).
//! 2. The headers pick the kstats to read: every `module:instance:name:statistic` argument
//!    is a [`KstatFilter`] (shell patterns, `*` and `?`; an empty or missing field matches
//!    anything), and a kstat is read if any filter matches it. The chain's own kstats
//!    (`kstat_*`) and raw ones are never listed, as on illumos.
//! 3. `kstat_read` copies one kstat's data section and a fresh header (`ks_snaptime` = the
//!    instant of the read). It also reports the KCID *now*: if it differs from the chain's,
//!    kstats were added or deleted since step 1 — and a read answering `ENXIO` means the
//!    kstat itself is gone. Either way the reader starts over from step 1, so what it prints
//!    is always one consistent chain (after a few changing passes it prints the last one and
//!    says so).
//!
//! Output, sorted by module, instance and name, statistics by name; every kstat also shows
//! its `class`, `crtime` (creation) and `snaptime` (this read). Times (`hrtime_t`) print as
//! seconds since boot with 9 decimals, `0` for zero — illumos' conventions:
//!
//! ```text
//! $ kstat -p unix:0:system_misc:nproc        # -p: parseable, one statistic per line
//! unix:0:system_misc:nproc	4
//! $ kstat unix:0:system_misc                 # default: a block per kstat
//! module: unix                            instance: 0
//! name:   system_misc                     class:    misc
//!         crtime                          0.012345678
//!         nproc                           4
//! ```
//!
//! `-l` lists the statistics' names only. `-m/-i/-n/-s` give the four fields of one more
//! filter. Exit status as illumos: 0 if a statistic was printed, 1 if none matched, 2 for a
//! bad command line, 3 if a system call failed.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use tally_rt::uapi::errno::{EAGAIN, ENOMEM, ENXIO};
use tally_rt::uapi::kstat::{
    records, Hrtime, KidT, KstatFilter, KstatHeader, KstatIntr, KstatIo, KstatNamed, KstatReadInfo, KstatRecord,
    KstatTimer, KstatValue, KSTAT_INTR_NAMES, KSTAT_TYPE_INTR, KSTAT_TYPE_IO, KSTAT_TYPE_NAMED, KSTAT_TYPE_TIMER,
};
use tally_rt::{eprintln, print, sys, Errno};

tally_rt::entry!(main);

/// Passes over the chain before printing one that changed under the reader.
const PASSES: usize = 5;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Human,
    Parseable,
    List,
}

fn main() -> i32 {
    let Some((mode, filters)) = parse_args() else {
        eprintln!(
            "usage: kstat [-p | -l] [-m MODULE] [-i INSTANCE] [-n NAME] [-s STATISTIC] \
             [module[:instance[:name[:statistic]]]]..."
        );
        return 2;
    };
    let mut out = String::new();
    let mut matched = 0usize;
    for pass in 1..=PASSES {
        out.clear();
        matched = 0;
        match one_pass(&filters, mode, &mut out, &mut matched) {
            Ok(Pass::Consistent) => break,
            Ok(Pass::Changed(from, to)) if pass == PASSES => {
                eprintln!("kstat: the chain kept changing (KCID {from} -> {to}); printing the last pass");
            }
            Ok(Pass::Changed(..)) => {}
            Err((what, e)) => {
                eprintln!("kstat: {what}: {e}");
                return 3;
            }
        }
    }
    print!("{out}");
    if matched > 0 {
        0
    } else {
        1
    }
}

fn parse_args() -> Option<(Mode, Vec<KstatFilter<'static>>)> {
    let mut mode = Mode::Human;
    let mut filters = Vec::new();
    let mut fields = KstatFilter::ALL;
    let mut by_option = false;
    let mut args = tally_rt::args().skip(1);
    while let Some(a) = args.next() {
        match a {
            "-p" => mode = Mode::Parseable,
            "-l" => mode = Mode::List,
            "-m" | "-i" | "-n" | "-s" => {
                let v = args.next()?;
                by_option = true;
                match a {
                    "-m" => fields.module = v,
                    "-i" => fields.instance = v,
                    "-n" => fields.name = v,
                    _ => fields.statistic = v,
                }
            }
            _ if a.starts_with('-') && a.len() > 1 => return None,
            spec => match KstatFilter::parse(spec) {
                Ok(f) => filters.push(f),
                Err(_) => {
                    eprintln!("kstat: {spec}: more than four fields (module:instance:name:statistic)");
                    return None;
                }
            },
        }
    }
    if by_option || filters.is_empty() {
        filters.push(fields);
    }
    Some((mode, filters))
}

enum Pass {
    Consistent,
    /// The chain changed while it was read: (KCID of the chain, KCID seen later).
    Changed(KidT, KidT),
}

type Failure = (&'static str, Errno);

/// One walk of the chain: read the headers, then every selected kstat, appending the
/// output to `out`.
fn one_pass(filters: &[KstatFilter<'_>], mode: Mode, out: &mut String, matched: &mut usize) -> Result<Pass, Failure> {
    let (kcid, mut chain) = read_chain().map_err(|e| ("kstat_chain", e))?;
    chain.retain(|h| listed(h) && filters.iter().any(|f| f.matches_header(h)));
    chain.sort_by_cached_key(|h| (h.module().to_ascii_lowercase(), h.ks_instance, h.name().to_ascii_lowercase()));
    for h in &chain {
        let (header, data) = match read_kstat(h) {
            Ok(Read::Data(info, data)) if info.kcid == kcid => (info.header, data),
            Ok(Read::Data(info, _)) => return Ok(Pass::Changed(kcid, info.kcid)),
            Ok(Read::Gone) => return Ok(Pass::Changed(kcid, -1)),
            Ok(Read::NotInstalled) => continue,
            Err(e) => return Err(("kstat_read", e)),
        };
        let stats: Vec<(String, String)> = statistics(&header, &data)
            .into_iter()
            .filter(|(name, _)| filters.iter().any(|f| f.matches_header(&header) && f.matches_statistic(name)))
            .collect();
        if stats.is_empty() {
            continue;
        }
        *matched += stats.len();
        print_kstat(out, mode, &header, &stats);
    }
    Ok(Pass::Consistent)
}

/// The chain's headers and its KCID (`kstat_chain`, growing the buffer while `ENOMEM`).
fn read_chain() -> Result<(KidT, Vec<KstatHeader>), Errno> {
    let mut needed = 0u64;
    let mut buf: Vec<u8> = Vec::new();
    loop {
        match sys::kstat_chain(&mut buf, Some(&mut needed)) {
            Ok(kcid) => {
                let used = (needed as usize).min(buf.len());
                return Ok((kcid as KidT, records::<KstatHeader>(&buf[..used]).collect()));
            }
            // Room for a few more headers than asked for: kstats may appear meanwhile.
            Err(Errno(ENOMEM)) if (needed as usize) >= buf.len() => {
                buf = vec![0; needed as usize + 8 * KstatHeader::SIZE]
            }
            Err(e) => return Err(e),
        }
    }
}

enum Read {
    /// The header and KCID as of the read, and the data section.
    Data(KstatReadInfo, Vec<u8>),
    /// `ENXIO`: deleted since the chain was read.
    Gone,
    /// `EAGAIN`: created but not yet installed; nothing to show yet.
    NotInstalled,
}

/// One kstat's data (`kstat_read`, growing the buffer while `ENOMEM`).
fn read_kstat(h: &KstatHeader) -> Result<Read, Errno> {
    let mut size = h.ks_data_size as usize;
    loop {
        let mut buf = vec![0u8; size];
        let mut info = KstatReadInfo { kcid: 0, header: KstatHeader::ZERO };
        match sys::kstat_read(h.ks_kid, &mut buf, Some(&mut info)) {
            Ok(n) => {
                buf.truncate(n);
                return Ok(Read::Data(info, buf));
            }
            // It grew since the chain was read: the header says how much room it needs.
            Err(Errno(ENOMEM)) => size = (info.header.ks_data_size as usize).max(size.saturating_mul(2)).max(64),
            Err(Errno(ENXIO)) => return Ok(Read::Gone),
            Err(Errno(EAGAIN)) => return Ok(Read::NotInstalled),
            Err(e) => return Err(e),
        }
    }
}

/// Whether `kstat` lists this kstat at all: not the chain's own, not raw, installed.
fn listed(h: &KstatHeader) -> bool {
    !h.name().starts_with("kstat_")
        && h.is_valid()
        && matches!(h.ks_type, KSTAT_TYPE_NAMED | KSTAT_TYPE_INTR | KSTAT_TYPE_IO | KSTAT_TYPE_TIMER)
}

/// An `hrtime_t` as kstat prints it: `0`, or seconds with 9 decimals.
fn hrtime(t: Hrtime) -> String {
    if t == 0 {
        return "0".to_string();
    }
    let sign = if t < 0 { "-" } else { "" };
    let a = t.unsigned_abs();
    format!("{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
}

/// In an io or timer record every signed 64-bit field is an `hrtime_t` (or a length × time
/// sum, printed the same way).
fn time_value(v: KstatValue) -> String {
    match v {
        KstatValue::Int64(t) => hrtime(t),
        other => format!("{other}"),
    }
}

/// Every `(statistic, value)` of a kstat, sorted by name as kstat sorts them.
fn statistics(h: &KstatHeader, data: &[u8]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![
        ("class".into(), h.class().into()),
        ("crtime".into(), hrtime(h.ks_crtime)),
        ("snaptime".into(), hrtime(h.ks_snaptime)),
    ];
    match h.ks_type {
        KSTAT_TYPE_NAMED => {
            for n in records::<KstatNamed>(data) {
                if let Some(v) = n.value() {
                    out.push((n.name().into(), format!("{v}")));
                }
            }
        }
        KSTAT_TYPE_INTR => {
            if let Some(i) = KstatIntr::decode(data) {
                for (name, count) in KSTAT_INTR_NAMES.iter().zip(i.intrs) {
                    out.push(((*name).into(), format!("{count}")));
                }
            }
        }
        KSTAT_TYPE_IO => {
            if let Some(io) = KstatIo::decode(data) {
                out.extend(io.statistics().into_iter().map(|(n, v)| (n.to_string(), time_value(v))));
            }
        }
        KSTAT_TYPE_TIMER => {
            // Like illumos, the first timer of the section.
            if let Some(t) = KstatTimer::decode(data) {
                out.push(("name".into(), t.name().into()));
                out.extend(t.statistics().into_iter().map(|(n, v)| (n.to_string(), time_value(v))));
            }
        }
        _ => {}
    }
    out.sort_by_cached_key(|(name, _)| name.to_ascii_lowercase());
    out
}

fn print_kstat(out: &mut String, mode: Mode, h: &KstatHeader, stats: &[(String, String)]) {
    let prefix = format!("{}:{}:{}", h.module(), h.ks_instance, h.name());
    match mode {
        Mode::Parseable => {
            for (name, value) in stats {
                out.push_str(&format!("{prefix}:{name}\t{value}\n"));
            }
        }
        Mode::List => {
            for (name, _) in stats {
                out.push_str(&format!("{prefix}:{name}\n"));
            }
        }
        Mode::Human => {
            out.push_str(&format!("module: {:<30}  instance: {}\n", h.module(), h.ks_instance));
            out.push_str(&format!("name:   {:<30}  class:    {}\n", h.name(), h.class()));
            for (name, value) in stats.iter().filter(|(n, _)| n != "class") {
                out.push_str(&format!("\t{name:<30}  {value}\n"));
            }
            out.push('\n');
        }
    }
}
