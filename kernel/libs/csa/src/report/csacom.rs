//! `csacom`: search a CSA file and print the process records that match, one line each;
//! and [`dump`], every record of a file, field by field.
//!
//! Modelled on CSA's `csacom` (itself SysV's `acctcom` for CSA files): a command per line
//! with its user, start and end times, real and CPU seconds and mean memory size, a `#`
//! before commands that used superuser privilege, and options that add columns. Tally has
//! no user or group names, so users are uid numbers; times are UTC.
//!
//! ## Selection ([`Selection`], all conditions must hold)
//!
//! | csacom option | field | selects |
//! |---|---|---|
//! | `-j jid` | `jid` | records of that job (jid in hex, as csacom reads it) |
//! | `-u uid` | `uid` | records of that user |
//! | `-n name` | `command` | records whose command is `name`; `name*` matches every command that starts with `name` |
//! | `-s time` | `since` | processes that still existed at or after `since` (their end ≥ it), s since 1970 |
//! | `-e time` | `until` | processes that existed at or before `until` (their start ≤ it) |
//!
//! ## Columns ([`CsacomColumns`])
//!
//! Always: `COMMAND NAME` (`#` if the process used privilege), `USER` (uid), `START TIME`,
//! `END TIME` (start + elapsed), `REAL (SECS)` (elapsed), `CPU (SECS)` (user + system),
//! `MEAN SIZE(K)` (core memory integral / CPU time: the average resident size while it ran,
//! 0 without a memory record). Options add, in this order:
//!
//! | option | columns |
//! |---|---|
//! | `-J` (`job`) | `JOB ID` in hex |
//! | `-p` (`pids`) | `PID`, `PPID` |
//! | `-t` (`separate`) | `SYS (SECS)` and `USER (SECS)` instead of `CPU (SECS)` |
//! | `-i` (`io`) | `CHARS READ`, `CHARS WRITTEN` (bytes), `READ CALLS`, `WRITE CALLS` |
//! | `-h` (`hiwater`) | `CORE HIWAT(K)`, `VIRT HIWAT(K)` |
//! | `-d` (`delay`) | `CPU WAIT (SECS)` (run queue), `BLK WAIT (SECS)` (block I/O) |
//! | `-x` (`status`) | `ST` (exit status), `NI` (nice, as stored), `FL` (F fork without exec, S privilege, C core, X signal) |
//! | `-b` (`sbu`) | `SBU`, from the weights given |
//!
//! Memory, I/O and delay columns print 0 for a record without that continuation record (its
//! record kind was off), as csacom does.

use core::fmt::{self, Write};

use tally_uapi::csa::{ACORE, AFORK, ASU, AXSIG};

use super::sbu::SbuWeights;
use super::time::{Ctime, Hms};
use super::{end_secs, Comm, ReportError, Selection};
use crate::config_record::field_str;
use crate::parse::{records, Record};
use crate::process::ProcessRecord;

/// Which optional columns to print.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CsacomColumns {
    pub job: bool,
    pub pids: bool,
    pub separate: bool,
    pub io: bool,
    pub hiwater: bool,
    pub delay: bool,
    pub status: bool,
    pub sbu: Option<SbuWeights>,
}

/// What a run of [`csacom`] saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CsacomSummary {
    /// Process records in the file, and how many of them were printed.
    pub processes: usize,
    pub printed: usize,
}

/// A column: its width, two header lines, and whether it is left-aligned.
struct Col {
    width: usize,
    head: [&'static str; 2],
    left: bool,
}

const fn col(width: usize, a: &'static str, b: &'static str) -> Col {
    Col { width, head: [a, b], left: false }
}

fn columns(c: &CsacomColumns, out: &mut [Col; 24]) -> usize {
    let mut n = 0;
    let mut add = |x: Col| {
        out[n] = x;
        n += 1;
    };
    add(Col { width: 17, head: ["COMMAND", "NAME"], left: true });
    add(col(6, "USER", ""));
    if c.job {
        add(col(18, "JOB ID", ""));
    }
    if c.pids {
        add(col(7, "PID", ""));
        add(col(7, "PPID", ""));
    }
    add(col(8, "START", "TIME"));
    add(col(8, "END", "TIME"));
    add(col(10, "REAL", "(SECS)"));
    if c.separate {
        add(col(10, "SYS", "(SECS)"));
        add(col(10, "USER", "(SECS)"));
    } else {
        add(col(10, "CPU", "(SECS)"));
    }
    add(col(10, "MEAN", "SIZE(K)"));
    if c.io {
        add(col(12, "CHARS", "READ"));
        add(col(12, "CHARS", "WRITTEN"));
        add(col(8, "READ", "CALLS"));
        add(col(8, "WRITE", "CALLS"));
    }
    if c.hiwater {
        add(col(10, "CORE", "HIWAT(K)"));
        add(col(10, "VIRT", "HIWAT(K)"));
    }
    if c.delay {
        add(col(10, "CPU WAIT", "(SECS)"));
        add(col(10, "BLK WAIT", "(SECS)"));
    }
    if c.status {
        add(col(4, "ST", ""));
        add(col(4, "NI", ""));
        add(Col { width: 4, head: ["FL", ""], left: true });
    }
    if c.sbu.is_some() {
        add(col(9, "SBU", ""));
    }
    n
}

/// One line of cells, each padded to its column, single spaces between, no trailing blanks.
fn line(out: &mut impl Write, cols: &[Col], cell: impl Fn(usize, &mut Cell) -> fmt::Result) -> fmt::Result {
    let mut text = Cell::default();
    for (i, c) in cols.iter().enumerate() {
        if i > 0 {
            text.push(b" ");
        }
        let start = text.len;
        cell(i, &mut text)?;
        let w = text.len - start;
        if w < c.width {
            let pad = c.width - w;
            if c.left {
                text.pad_end(pad);
            } else {
                text.pad_front(start, pad);
            }
        }
    }
    let s = text.as_str();
    writeln!(out, "{}", s.trim_end())
}

/// A line being built (no allocation: lines are short).
struct Cell {
    buf: [u8; 512],
    len: usize,
}

impl Default for Cell {
    fn default() -> Self {
        Cell { buf: [0; 512], len: 0 }
    }
}

impl Cell {
    fn push(&mut self, b: &[u8]) {
        let n = b.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
    }
    fn pad_end(&mut self, n: usize) {
        for _ in 0..n {
            self.push(b" ");
        }
    }
    fn pad_front(&mut self, at: usize, n: usize) {
        let n = n.min(self.buf.len() - self.len);
        self.buf.copy_within(at..self.len, at + n);
        self.buf[at..at + n].fill(b' ');
        self.len += n;
    }
    fn as_str(&self) -> &str {
        // Only formatted ASCII is pushed (command names are sanitised by `Comm`).
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl Write for Cell {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push(s.as_bytes());
        Ok(())
    }
}

fn secs(us: u64) -> f64 {
    us as f64 / 1e6
}

/// Process flags as letters: F (fork, no exec), S (privilege), C (core), X (killed by a
/// signal).
pub struct Flags(pub u8);

impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (bit, c) in [(AFORK, 'F'), (ASU, 'S'), (ACORE, 'C'), (AXSIG, 'X')] {
            if self.0 & bit != 0 {
                f.write_char(c)?;
            }
        }
        Ok(())
    }
}

/// Write the cell of column `name` for record `r`.
fn cell(c: &CsacomColumns, which: usize, r: &ProcessRecord, out: &mut Cell) -> fmt::Result {
    let b = &r.base;
    let cpu = b.utime.saturating_add(b.stime);
    let mean_k = match &r.mem {
        Some(m) if cpu > 0 => m.core.mem1 as f64 * 1024.0 / cpu as f64,
        _ => 0.0,
    };
    // The columns in the order `columns` adds them; `which` counts through the enabled ones.
    let mut k = 0;
    let mut is = |on: bool| {
        if on {
            k += 1;
        }
        on && k - 1 == which
    };
    if is(true) {
        let hash = if b.flag & ASU != 0 { "#" } else { "" };
        return write!(out, "{hash}{}", Comm(&b.comm));
    }
    if is(true) {
        return write!(out, "{}", b.uid);
    }
    if is(c.job) {
        return write!(out, "{:#018x}", b.jid);
    }
    if is(c.pids) {
        return write!(out, "{}", b.pid);
    }
    if is(c.pids) {
        return write!(out, "{}", b.ppid);
    }
    if is(true) {
        return write!(out, "{}", Hms(b.btime));
    }
    if is(true) {
        return write!(out, "{}", Hms(end_secs(b)));
    }
    if is(true) {
        return write!(out, "{:.2}", secs(b.etime));
    }
    if is(c.separate) {
        return write!(out, "{:.2}", secs(b.stime));
    }
    if is(c.separate) {
        return write!(out, "{:.2}", secs(b.utime));
    }
    if is(!c.separate) {
        return write!(out, "{:.2}", secs(cpu));
    }
    if is(true) {
        return write!(out, "{mean_k:.2}");
    }
    let io = r.io.unwrap_or_default();
    for v in [io.chr, io.chw, io.scr, io.scw] {
        if is(c.io) {
            return write!(out, "{v}");
        }
    }
    let m = r.mem.unwrap_or_default();
    for v in [m.core.himem, m.virt.himem] {
        if is(c.hiwater) {
            return write!(out, "{v}");
        }
    }
    let d = r.delay.unwrap_or_default();
    for v in [d.cpu_delay_total, d.blkio_delay_total] {
        if is(c.delay) {
            return write!(out, "{:.2}", v as f64 / 1e9);
        }
    }
    if is(c.status) {
        return write!(out, "{}", b.stat);
    }
    if is(c.status) {
        return write!(out, "{}", b.nice);
    }
    if is(c.status) {
        return write!(out, "{}", Flags(b.flag));
    }
    if let Some(w) = &c.sbu {
        if is(true) {
            return write!(out, "{:.2}", w.process_sbu(r));
        }
    }
    Ok(())
}

/// Print the header and one line per matching process record of `file`, in file order.
/// Records after a malformed one cannot be found: the lines before it are printed and the
/// error returned.
pub fn csacom(
    out: &mut impl Write,
    file: &[u8],
    q: &Selection<'_>,
    c: &CsacomColumns,
) -> Result<CsacomSummary, ReportError> {
    let mut cols: [Col; 24] = core::array::from_fn(|_| col(0, "", ""));
    let n = columns(c, &mut cols);
    let cols = &cols[..n];
    for h in 0..2 {
        line(out, cols, |i, t| t.write_str(cols[i].head[h]))?;
    }
    let mut sum = CsacomSummary::default();
    for item in records(file) {
        let (_, rec) = item.map_err(ReportError::Parse)?;
        if let Record::Process(r) = rec {
            sum.processes += 1;
            if q.matches(&r.base) {
                sum.printed += 1;
                line(out, cols, |i, t| cell(c, i, &r, t))?;
            }
        }
    }
    Ok(sum)
}

/// Every record of `file`, one line each with its byte offset and all its fields (times in
/// the file's units: s since 1970, µs, ns for delays; memory in KB and MB·µs). For `cargo
/// xtask acct … dump` and for checking a file by eye.
pub fn dump(out: &mut impl Write, file: &[u8]) -> Result<usize, ReportError> {
    let mut n = 0;
    for item in records(file) {
        let (at, rec) = item.map_err(ReportError::Parse)?;
        n += 1;
        write!(out, "{at:8} ")?;
        match rec {
            Record::Process(r) => {
                let b = &r.base;
                write!(
                    out,
                    "CSA jid={:#x} pid={} ppid={} uid={} gid={} comm={} flags={} stat={} nice={} sched={} \
                     btime={} etime={}us utime={}us stime={}us",
                    b.jid,
                    b.pid,
                    b.ppid,
                    b.uid,
                    b.gid,
                    Comm(&b.comm),
                    Flags(b.flag),
                    b.stat,
                    b.nice,
                    b.sched,
                    b.btime,
                    b.etime,
                    b.utime,
                    b.stime
                )?;
                if let Some(m) = r.mem {
                    write!(
                        out,
                        " | MEM core={}KB/{}MBus virt={}KB/{}MBus minflt={} majflt={}",
                        m.core.himem, m.core.mem1, m.virt.himem, m.virt.mem1, m.minflt, m.majflt
                    )?;
                }
                if let Some(io) = r.io {
                    write!(out, " | IO chr={} chw={} scr={} scw={}", io.chr, io.chw, io.scr, io.scw)?;
                }
                if let Some(d) = r.delay {
                    write!(
                        out,
                        " | DELAY cpu={}/{}ns blkio={}/{}ns swapin={}/{}ns run={}/{}ns",
                        d.cpu_count,
                        d.cpu_delay_total,
                        d.blkio_count,
                        d.blkio_delay_total,
                        d.swapin_count,
                        d.swapin_delay_total,
                        d.cpu_run_real_total,
                        d.cpu_run_virtual_total
                    )?;
                }
                writeln!(out)?;
            }
            Record::Soj(s) => {
                writeln!(out, "SOJ jid={:#x} uid={} btime={} type={}", s.jid, s.uid, s.btime, s.soj_type)?;
            }
            Record::Eoj(e) => writeln!(
                out,
                "EOJ jid={:#x} uid={} gid={} nice={} btime={} etime={} utime={}us stime={}us corehimem={}KB virthimem={}KB",
                e.jid, e.uid, e.gid, e.nice, e.btime, e.etime, e.utime, e.stime, e.corehimem, e.virthimem
            )?,
            Record::Cfg(c) => {
                let event = ["BOOT", "FILE", "ON", "OFF", "INC_DELTA", "INC_EVENT"].get(c.event as usize).unwrap_or(&"?");
                let u = &c.uname;
                writeln!(
                    out,
                    "CFG {event} kdmask={:#x} rmask={:#x} boottime={} curtime={} ({}) uname={} {} {} {} {}",
                    c.kdmask,
                    c.rmask,
                    c.boottime,
                    c.curtime,
                    Ctime(c.curtime),
                    Comm(field_str(&u.sysname)),
                    Comm(field_str(&u.nodename)),
                    Comm(field_str(&u.release)),
                    Comm(field_str(&u.version)),
                    Comm(field_str(&u.machine))
                )?;
            }
            Record::Other { header, bytes } => {
                writeln!(out, "type {:#o} revision {:#o} size {}", header.ah_type, header.revision, bytes.len())?;
            }
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job_record::{EojRecord, SojRecord};
    use crate::process::{Continuations, IoUsage, MemoryUsage, ProcessExit, CHAIN_MAX};

    fn proc(pid: u32, comm: &[u8], uid: u32, flags: u8, start: u64, kinds: Continuations) -> Vec<u8> {
        let mut c = [0u8; 16];
        c[..comm.len()].copy_from_slice(comm);
        let p = ProcessExit {
            pid,
            ppid: 1,
            uid,
            comm: c,
            acct_flags: flags,
            begin_unix_ns: start * 1_000_000_000,
            elapsed_ns: 2_500_000_000,
            utime_ns: 1_000_000_000,
            stime_ns: 250_000_000,
            mem: MemoryUsage {
                core_kb_ns: 1_024_000 * 1_250_000 * 2,
                core_hiwater_kb: 96,
                virt_hiwater_kb: 4096,
                ..Default::default()
            },
            io: IoUsage { read_bytes: 10, write_bytes: 20, read_calls: 1, write_calls: 2 },
            ..Default::default()
        };
        let mut out = [0u8; CHAIN_MAX];
        let n = p.records(0x7A11_0000_0000 | pid as u64).only(kinds).encode(&mut out);
        out[..n].to_vec()
    }

    fn file() -> Vec<u8> {
        let mut f = SojRecord::new(0x7A11_0000_0005, 0, 1_700_000_000).encode().to_vec();
        f.extend(proc(5, b"sh", 0, ASU, 1_700_000_000, Continuations::ALL));
        f.extend(proc(6, b"ls", 1000, AFORK, 1_700_000_010, Continuations::NONE));
        f.extend(EojRecord { jid: 0x7A11_0000_0005, ..Default::default() }.encode());
        f
    }

    #[test]
    fn the_default_columns() {
        let mut s = String::new();
        let sum = csacom(&mut s, &file(), &Selection::default(), &CsacomColumns::default()).unwrap();
        assert_eq!(sum, CsacomSummary { processes: 2, printed: 2 });
        let expected = "\
COMMAND             USER    START      END       REAL        CPU       MEAN
NAME                         TIME     TIME     (SECS)     (SECS)    SIZE(K)
#sh                    0 22:13:20 22:13:22       2.50       1.25    2048.00
ls                  1000 22:13:30 22:13:32       2.50       1.25       0.00
";
        assert_eq!(s, expected);
    }

    #[test]
    fn selection_by_job_user_command_and_time() {
        let f = file();
        let count = |q: Selection<'_>| csacom(&mut String::new(), &f, &q, &CsacomColumns::default()).unwrap().printed;
        assert_eq!(count(Selection { jid: Some(0x7A11_0000_0006), ..Default::default() }), 1);
        assert_eq!(count(Selection { uid: Some(1000), ..Default::default() }), 1);
        assert_eq!(count(Selection { command: Some(b"s"), ..Default::default() }), 0, "exact unless *");
        assert_eq!(count(Selection { command: Some(b"s*"), ..Default::default() }), 1);
        assert_eq!(count(Selection { command: Some(b"*"), ..Default::default() }), 2);
        assert_eq!(count(Selection { since: Some(1_700_000_003), ..Default::default() }), 1, "sh ended at :22");
        assert_eq!(count(Selection { since: Some(1_700_000_002), ..Default::default() }), 2);
        assert_eq!(count(Selection { until: Some(1_700_000_009), ..Default::default() }), 1, "ls began at :30");
    }

    #[test]
    fn every_optional_column() {
        let mut s = String::new();
        let cols = CsacomColumns {
            job: true,
            pids: true,
            separate: true,
            io: true,
            hiwater: true,
            delay: true,
            status: true,
            sbu: Some(SbuWeights::default()),
        };
        csacom(&mut s, &file(), &Selection { uid: Some(0), ..Default::default() }, &cols).unwrap();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines.len(), 3);
        let words: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(
            words,
            [
                "#sh",
                "0",
                "0x00007a1100000005",
                "5",
                "1",
                "22:13:20",
                "22:13:22",
                "2.50",
                "0.25",
                "1.00",
                "2048.00",
                "10",
                "20",
                "1",
                "2",
                "96",
                "4096",
                "0.00",
                "0.00",
                "0",
                "0",
                "S",
                "1.25"
            ]
        );
        assert!(lines[0].starts_with("COMMAND") && lines[0].contains("JOB ID") && lines[1].contains("HIWAT(K)"));
        assert_eq!(lines[0].len(), lines[0].trim_end().len());
    }

    #[test]
    fn a_bad_record_stops_the_listing_after_what_came_before() {
        let mut f = file();
        f.extend([0xFF; 8]);
        let mut s = String::new();
        let e = csacom(&mut s, &f, &Selection::default(), &CsacomColumns::default()).unwrap_err();
        assert!(matches!(e, ReportError::Parse(p) if p.offset == f.len() - 8));
        assert_eq!(s.lines().count(), 4);
    }

    #[test]
    fn dump_shows_every_record() {
        let mut s = String::new();
        assert_eq!(dump(&mut s, &file()).unwrap(), 4);
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[0].trim_start().starts_with("0 SOJ jid=0x7a1100000005"));
        assert!(lines[1].contains("CSA jid=0x7a1100000005 pid=5") && lines[1].contains("comm=sh flags=S"));
        assert!(lines[1].contains("| MEM core=96KB/2500000MBus") && lines[1].contains("| IO chr=10"));
        assert!(lines[2].contains("comm=ls flags=F") && !lines[2].contains("MEM"));
        assert!(lines[3].contains("EOJ jid=0x7a1100000005"));
    }
}
