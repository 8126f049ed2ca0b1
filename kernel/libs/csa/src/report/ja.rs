//! The `ja` report: what a job's processes used, from its ja file.
//!
//! `ja` (job accounting) is CSA's tool for users: `ja FILE` starts user job accounting for
//! the caller's job (`AC_JASTART`), the commands of the job then run, and `ja -c -s FILE`
//! reports on them; `ja -t` ends it. This module is the report; its layout is CSA's `ja`
//! (SGI's `ja.c`), column for column, with the options that select its parts:
//!
//! | option | [`JaOptions`] | part |
//! |---|---|---|
//! | `-c` | `command` | the command report: a line per process, in file order |
//! | `-l` | `long` | with `-c`: mean memory, characters, logical I/O, exit status, nice, flags |
//! | `-h` | `hiwater` | with `-l`: core and virtual high-water marks (KB) |
//! | `-s` | `summary` | the job summary |
//! | `-e` | `extended` | with `-s`: faults, delay counts, run times |
//! | `-J` | `counts` | with `-s`: how many records of each kind the file holds |
//!
//! ## The command report (`ja -c`)
//!
//! ```text
//! Job Accounting - Command Report
//! ===============================
//!
//!     Command       Started    Elapsed    User CPU    Sys CPU       CPU      Block I/O    Swap In
//!      Name           At       Seconds    Seconds     Seconds    Delay Secs  Delay Secs  Delay Secs   SBU's
//! ===============  ========  ==========  ==========  ==========  ==========  ==========  ==========  =======
//! sh               22:13:20        2.50        1.00        0.25        0.00        0.00        0.00     1.25
//! ```
//!
//! Seconds are the record's µs (delays: ns) / 10⁶ (10⁹). With `-l`: `CPU MEM Avg Mbytes`
//! is (core + virtual memory integral, MB·s) / CPU seconds; characters are in MB (2²⁰
//! bytes); `Ex St` is `ac_stat`, `Ni` `ac_nice` as stored, `Fl` F (fork without exec) and
//! S (privilege). The SBU column uses the weights given ([`super::sbu`]). (CSA prints the
//! start time one column to the left of its heading; Tally aligns it.)
//!
//! ## The summary (`ja -s`)
//!
//! Totals over the selected process records: elapsed time from the first start to the last
//! end; user and system CPU; the memory integrals in MB·s; the largest high-water marks of
//! any process in MB; characters in MB and read/write calls; the delays; the number of
//! commands; the SBUs. The operating system line comes from the file's last configuration
//! record (a ja file starts with one). Tally has no user or group names, so it prints ids
//! (CSA prints "User Name (ID)" where it knows the name). When the records have more than
//! one uid, gid or jid, the line says "multiple … selected", as CSA's does.
//!
//! A report of zero commands prints nothing (CSA's `ja` says "No commands were selected for
//! the report." and fails; the tool does that with [`JaTotals::commands`] = 0).

use core::fmt::Write;

use super::csacom::Flags;
use super::sbu::SbuWeights;
use super::time::{Hms, MdyHms};
use super::{end_secs, Comm, ReportError, Selection};
use crate::config_record::{field_str, CfgRecord};
use crate::parse::{records, Record};
use tally_uapi::csa::{AC_CONFCHG_BOOT, AC_CONFCHG_FILE, AC_CONFCHG_OFF, AC_CONFCHG_ON, AFORK, ASU};

/// Which parts of the report, for which records.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JaOptions<'a> {
    pub command: bool,
    pub long: bool,
    pub hiwater: bool,
    pub summary: bool,
    pub extended: bool,
    pub counts: bool,
    /// The file's name, for the summary's first line.
    pub file_name: &'a str,
    pub select: Selection<'a>,
    pub weights: SbuWeights,
}

/// One value that may differ between records: none seen, one value, several.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Seen<T> {
    #[default]
    None,
    One(T),
    Many,
}

impl<T: PartialEq + Copy> Seen<T> {
    fn see(&mut self, v: T) {
        *self = match *self {
            Seen::None => Seen::One(v),
            Seen::One(w) if w == v => Seen::One(w),
            _ => Seen::Many,
        };
    }
}

/// The totals of a report (what the summary prints, in its units).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JaTotals {
    /// Process records selected.
    pub commands: u64,
    pub uid: Seen<u32>,
    pub gid: Seen<u32>,
    pub jid: Seen<u64>,
    /// First start and last end, s since 1970.
    pub begin: u64,
    pub end: u64,
    /// Seconds.
    pub utime: f64,
    pub stime: f64,
    /// MB·s.
    pub core_mem: f64,
    pub virt_mem: f64,
    /// KB.
    pub max_core_kb: u64,
    pub max_virt_kb: u64,
    /// Bytes and calls.
    pub chars_read: u64,
    pub chars_written: u64,
    pub read_calls: u64,
    pub write_calls: u64,
    /// Seconds, and counts.
    pub cpu_delay: f64,
    pub blkio_delay: f64,
    pub swapin_delay: f64,
    pub cpu_count: u64,
    pub blkio_count: u64,
    pub swapin_count: u64,
    pub run_real: f64,
    pub run_virtual: f64,
    pub minflt: u64,
    pub majflt: u64,
    pub pgswap: u64,
    pub sbu: f64,
    /// Records in the file (all of them, selected or not).
    pub mem_records: u64,
    pub io_records: u64,
    pub delay_records: u64,
    pub soj: u64,
    pub eoj: u64,
    pub cfg: [u64; 4],
    pub other: u64,
}

const MB: f64 = 1024.0 * 1024.0;

/// Which columns of the command report a cell belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Always,
    Long,
    Hiwater,
}

/// One header cell: text, width, left-aligned, part.
type Head = (&'static str, usize, bool, Part);

/// The three header lines of the command report, cell for cell CSA's.
const HEADER: [&[Head]; 3] = {
    use Part::*;
    [
        &[
            ("    Command   ", 15, true, Always),
            (" Started", 8, false, Always),
            ("  Elapsed ", 10, false, Always),
            (" User CPU ", 10, false, Always),
            (" Sys CPU  ", 10, false, Always),
            ("   CPU   ", 10, true, Always),
            ("Block I/O", 10, true, Always),
            (" Swap In ", 10, true, Always),
            ("  CPU MEM ", 10, false, Long),
            ("     Characters     ", 20, false, Long),
            ("    Logical I/O   ", 18, false, Long),
            (" CoreMem", 8, false, Hiwater),
            (" VirtMem", 8, false, Hiwater),
            (" Ex", 3, false, Long),
        ],
        &[
            ("     Name    ", 15, true, Always),
            ("   At   ", 8, false, Always),
            ("  Seconds ", 10, false, Always),
            (" Seconds  ", 10, false, Always),
            (" Seconds  ", 10, false, Always),
            ("Delay Secs", 10, false, Always),
            ("Delay Secs", 10, false, Always),
            ("Delay Secs", 10, false, Always),
            ("Avg Mbytes", 10, false, Long),
            ("   Read  ", 9, false, Long),
            (" Written ", 9, false, Long),
            ("  Read  ", 8, false, Long),
            ("  Write ", 8, false, Long),
            (" HiValue", 8, false, Hiwater),
            (" HiValue", 8, false, Hiwater),
            (" St", 3, false, Long),
            (" Ni", 3, false, Long),
            ("Fl", 2, false, Long),
            (" SBU's ", 7, false, Always),
        ],
        &[
            ("===============", 15, true, Always),
            ("========", 8, false, Always),
            ("==========", 10, false, Always),
            ("==========", 10, false, Always),
            ("==========", 10, false, Always),
            ("==========", 10, false, Always),
            ("==========", 10, false, Always),
            ("==========", 10, false, Always),
            ("==========", 10, false, Long),
            ("=========", 9, false, Long),
            ("=========", 9, false, Long),
            ("========", 8, false, Long),
            ("========", 8, false, Long),
            ("========", 8, false, Hiwater),
            ("========", 8, false, Hiwater),
            ("===", 3, false, Long),
            ("===", 3, false, Long),
            ("==", 2, false, Long),
            ("=======", 7, false, Always),
        ],
    ]
};

fn command_header(out: &mut impl Write, o: &JaOptions<'_>) -> core::fmt::Result {
    write!(out, "\n\nJob Accounting - Command Report\n===============================\n\n")?;
    for line in HEADER {
        let mut text = heapless_line();
        for (i, &(cell, w, left, part)) in line.iter().enumerate() {
            let shown = match part {
                Part::Always => true,
                Part::Long => o.long,
                Part::Hiwater => o.long && o.hiwater,
            };
            if !shown {
                continue;
            }
            let sep = if i == 0 { "" } else { "  " };
            if left {
                write!(text, "{sep}{cell:<w$}")?;
            } else {
                write!(text, "{sep}{cell:>w$}")?;
            }
        }
        writeln!(out, "{}", text.as_str().trim_end())?;
    }
    Ok(())
}

/// A line under construction.
struct Line {
    buf: [u8; 512],
    len: usize,
}

fn heapless_line() -> Line {
    Line { buf: [0; 512], len: 0 }
}

impl Line {
    fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

fn summary(out: &mut impl Write, o: &JaOptions<'_>, t: &JaTotals, cfg: Option<&CfgRecord>) -> core::fmt::Result {
    let ext = if o.extended { "Extended " } else { "" };
    let ext_rule = if o.extended { "=========" } else { "" };
    write!(out, "\n\nJob CSA Accounting - {ext}Summary Report\n======================{ext_rule}==============\n\n")?;
    writeln!(out, "Job Accounting File Name         : {}", o.file_name)?;
    if let Some(c) = cfg {
        let u = &c.uname;
        writeln!(
            out,
            "Operating System                 : {} {} {} {} {}",
            Comm(field_str(&u.sysname)),
            Comm(field_str(&u.nodename)),
            Comm(field_str(&u.release)),
            Comm(field_str(&u.version)),
            Comm(field_str(&u.machine))
        )?;
    }
    match t.uid {
        Seen::One(u) => writeln!(out, "User ID                          : {u}")?,
        Seen::Many => writeln!(out, "User ID                          : multiple user IDs selected")?,
        Seen::None => {}
    }
    match t.gid {
        Seen::One(g) => writeln!(out, "Group ID                         : {g}")?,
        Seen::Many => writeln!(out, "Group ID                         : multiple group IDs selected")?,
        Seen::None => {}
    }
    match t.jid {
        Seen::One(j) => writeln!(out, "Job ID                           : {j:#x}")?,
        Seen::Many => writeln!(out, "Job ID                           : multiple Job IDs selected")?,
        Seen::None => {}
    }
    writeln!(out, "Report Starts                    : {}", MdyHms(t.begin))?;
    writeln!(out, "Report Ends                      : {}", MdyHms(t.end))?;
    writeln!(out, "Elapsed Time                     : {:12}      Seconds", t.end.saturating_sub(t.begin))?;
    writeln!(out, "User CPU Time                    :    {:14.4} Seconds", t.utime)?;
    writeln!(out, "System CPU Time                  :    {:14.4} Seconds", t.stime)?;
    writeln!(out, "CPU Time Core Memory Integral    :    {:14.4} Mbyte-seconds", t.core_mem)?;
    writeln!(out, "CPU Time Virtual Memory Integral :    {:14.4} Mbyte-seconds", t.virt_mem)?;
    writeln!(out, "Maximum Core Memory Used         :    {:14.4} Mbytes", t.max_core_kb as f64 / 1024.0)?;
    writeln!(out, "Maximum Virtual Memory Used      :    {:14.4} Mbytes", t.max_virt_kb as f64 / 1024.0)?;
    writeln!(out, "Characters Read                  :    {:14.4} Mbytes", t.chars_read as f64 / MB)?;
    writeln!(out, "Characters Written               :    {:14.4} Mbytes", t.chars_written as f64 / MB)?;
    writeln!(out, "Logical I/O Read Requests        : {:12}", t.read_calls)?;
    writeln!(out, "Logical I/O Write Requests       : {:12}", t.write_calls)?;
    writeln!(out, "CPU Delay                        :    {:14.4} Seconds", t.cpu_delay)?;
    writeln!(out, "Block I/O Delay                  :    {:14.4} Seconds", t.blkio_delay)?;
    writeln!(out, "Swap In Delay                    :    {:14.4} Seconds", t.swapin_delay)?;
    writeln!(out, "Number of Commands               : {:12}", t.commands)?;
    if o.counts {
        writeln!(out, "-------------------------------- : -----------------")?;
        writeln!(
            out,
            "Number of Detail Records         : mem({:3}),  io({:3}), delay({:3})",
            t.mem_records, t.io_records, t.delay_records
        )?;
        writeln!(out, "Number of Job Records            : soj({:3}), eoj({:3})", t.soj, t.eoj)?;
        writeln!(
            out,
            "Number of Config Records         : cfg({:3}), boot({:2}), file({:2}), on({:2}), off({:2})",
            t.cfg.iter().sum::<u64>(),
            t.cfg[0],
            t.cfg[1],
            t.cfg[2],
            t.cfg[3]
        )?;
        if t.other > 0 {
            writeln!(out, "Number of Reserved Records       : site({:3})", t.other)?;
        }
    }
    if o.extended {
        writeln!(out, "Number of Page Swaps             : {:12}", t.pgswap)?;
        writeln!(out, "Number of Minor Page Faults      : {:12}", t.minflt)?;
        writeln!(out, "Number of Major Page Faults      : {:12}", t.majflt)?;
        writeln!(out, "Number of CPU Delays             :    {:9}", t.cpu_count)?;
        writeln!(out, "Number of Block I/O Delays       :    {:9}", t.blkio_count)?;
        writeln!(out, "Number of Swap In Delays         :    {:9}", t.swapin_count)?;
        writeln!(out, "CPU Real Run Time                :    {:14.4} Seconds", t.run_real)?;
        writeln!(out, "CPU Virtual Run Time             :    {:14.4} Seconds", t.run_virtual)?;
    }
    writeln!(out, "System Billing Units             :    {:14.4}", t.sbu)
}

/// Report on `file` (a ja file, or any CSA file) as `o` asks; returns the totals. Records
/// after a malformed one cannot be found: the command lines before it are printed, no
/// summary, and the error returned.
pub fn ja_report(out: &mut impl Write, file: &[u8], o: &JaOptions<'_>) -> Result<JaTotals, ReportError> {
    let mut t = JaTotals::default();
    let mut cfg: Option<CfgRecord> = None;
    let mut header_done = false;
    for item in records(file) {
        let (_, rec) = item.map_err(ReportError::Parse)?;
        let r = match rec {
            Record::Process(r) => r,
            Record::Soj(_) => {
                t.soj += 1;
                continue;
            }
            Record::Eoj(_) => {
                t.eoj += 1;
                continue;
            }
            Record::Cfg(c) => {
                if let Some(n) = t.cfg.get_mut(c.event as usize) {
                    *n += 1;
                }
                cfg = Some(c);
                continue;
            }
            Record::Other { .. } => {
                t.other += 1;
                continue;
            }
        };
        t.mem_records += u64::from(r.mem.is_some());
        t.io_records += u64::from(r.io.is_some());
        t.delay_records += u64::from(r.delay.is_some());
        let b = &r.base;
        if !o.select.matches(b) {
            continue;
        }
        t.commands += 1;
        t.uid.see(b.uid);
        t.gid.see(b.gid);
        t.jid.see(b.jid);
        t.begin = if t.commands == 1 { b.btime } else { t.begin.min(b.btime) };
        t.end = t.end.max(end_secs(b));
        let (etime, utime, stime) = (b.etime as f64 / 1e6, b.utime as f64 / 1e6, b.stime as f64 / 1e6);
        t.utime += utime;
        t.stime += stime;
        let m = r.mem.unwrap_or_default();
        let (core, virt) = (m.core.mem1 as f64 / 1e6, m.virt.mem1 as f64 / 1e6);
        t.core_mem += core;
        t.virt_mem += virt;
        t.max_core_kb = t.max_core_kb.max(m.core.himem);
        t.max_virt_kb = t.max_virt_kb.max(m.virt.himem);
        t.minflt += m.minflt;
        t.majflt += m.majflt;
        t.pgswap += m.pgswap;
        let io = r.io.unwrap_or_default();
        t.chars_read += io.chr;
        t.chars_written += io.chw;
        t.read_calls += io.scr;
        t.write_calls += io.scw;
        let d = r.delay.unwrap_or_default();
        let (cpu_d, blk_d, swp_d) =
            (d.cpu_delay_total as f64 / 1e9, d.blkio_delay_total as f64 / 1e9, d.swapin_delay_total as f64 / 1e9);
        t.cpu_delay += cpu_d;
        t.blkio_delay += blk_d;
        t.swapin_delay += swp_d;
        t.cpu_count += d.cpu_count;
        t.blkio_count += d.blkio_count;
        t.swapin_count += d.swapin_count;
        t.run_real += d.cpu_run_real_total as f64 / 1e9;
        t.run_virtual += d.cpu_run_virtual_total as f64 / 1e9;
        let sbu = o.weights.process_sbu(&r);
        t.sbu += sbu;
        if o.command {
            if !header_done {
                command_header(out, o)?;
                header_done = true;
            }
            write!(out, "{:<15.15}  {}", Comm(&b.comm), Hms(b.btime))?;
            write!(out, "  {etime:10.2}  {utime:10.2}  {stime:10.2}  {cpu_d:10.2}  {blk_d:10.2}  {swp_d:10.2}")?;
            if o.long {
                let cpu = utime + stime;
                let avg = if cpu > 0.0 { (core + virt) / cpu } else { 0.0 };
                write!(out, "  {avg:10.2}  {:9.3}  {:9.3}", io.chr as f64 / MB, io.chw as f64 / MB)?;
                write!(out, "  {:8}  {:8}", io.scr, io.scw)?;
                if o.hiwater {
                    write!(out, "  {:8}  {:8}", m.core.himem, m.virt.himem)?;
                }
                write!(out, "  {:3}  {:3}  {:<2}", b.stat, b.nice, Flags(b.flag & (AFORK | ASU)))?;
            }
            writeln!(out, "  {sbu:7.2}")?;
        }
    }
    if o.summary && t.commands > 0 {
        summary(out, o, &t, cfg.as_ref())?;
    }
    Ok(t)
}

const _: () = assert!(AC_CONFCHG_BOOT == 0 && AC_CONFCHG_FILE == 1 && AC_CONFCHG_ON == 2 && AC_CONFCHG_OFF == 3);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_record::Uname;
    use crate::job_record::EojRecord;
    use crate::process::{DelayUsage, IoUsage, MemoryUsage, ProcessExit, CHAIN_MAX};

    fn proc(pid: u32, comm: &[u8], uid: u32, start: u64, cpu_ms: u64) -> Vec<u8> {
        let mut c = [0u8; 16];
        c[..comm.len()].copy_from_slice(comm);
        let p = ProcessExit {
            pid,
            uid,
            gid: 100,
            comm: c,
            acct_flags: if pid == 5 { ASU } else { AFORK },
            wait_status: 0x0100,
            begin_unix_ns: start * 1_000_000_000,
            elapsed_ns: 3_000_000_000,
            utime_ns: cpu_ms * 1_000_000,
            stime_ns: cpu_ms * 250_000,
            mem: MemoryUsage {
                core_kb_ns: 1_024_000 * 2_000_000,
                virt_kb_ns: 1_024_000 * 6_000_000,
                core_hiwater_kb: 2048,
                virt_hiwater_kb: 8192,
                minflt: 12,
                majflt: 0,
            },
            io: IoUsage { read_bytes: 1 << 20, write_bytes: 1 << 19, read_calls: 4, write_calls: 3 },
            delay: DelayUsage {
                cpu_count: 2,
                cpu_delay_ns: 10_000_000,
                blkio_count: 1,
                blkio_delay_ns: 5_000_000,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut out = [0u8; CHAIN_MAX];
        let n = p.records(0x7A11_0000_0005).encode(&mut out);
        out[..n].to_vec()
    }

    fn file() -> Vec<u8> {
        let cfg = CfgRecord {
            event: AC_CONFCHG_ON,
            kdmask: 1,
            uname: Uname::new(b"Tally", b"tally", b"0.1.0", b"#1", b"x86_64"),
            ..Default::default()
        };
        let mut f = cfg.encode().to_vec();
        f.extend(proc(5, b"sh", 1000, 1_700_000_000, 1000));
        f.extend(proc(6, b"cruncher", 1000, 1_700_000_001, 3000));
        f.extend(EojRecord { jid: 0x7A11_0000_0005, ..Default::default() }.encode());
        f
    }

    #[test]
    fn the_command_report() {
        let mut s = String::new();
        let o = JaOptions { command: true, ..Default::default() };
        let t = ja_report(&mut s, &file(), &o).unwrap();
        assert_eq!(t.commands, 2);
        let expected = "

Job Accounting - Command Report
===============================

    Command       Started    Elapsed    User CPU    Sys CPU       CPU      Block I/O    Swap In
     Name           At       Seconds    Seconds     Seconds    Delay Secs  Delay Secs  Delay Secs   SBU's
===============  ========  ==========  ==========  ==========  ==========  ==========  ==========  =======
sh               22:13:20        3.00        1.00        0.25        0.01        0.01        0.00     1.25
cruncher         22:13:21        3.00        3.00        0.75        0.01        0.01        0.00     3.75
";
        assert_eq!(s, expected);
    }

    #[test]
    fn the_long_command_report() {
        let mut s = String::new();
        let o = JaOptions { command: true, long: true, hiwater: true, ..Default::default() };
        ja_report(&mut s, &file(), &o).unwrap();
        let rows: Vec<Vec<&str>> = s.lines().skip(8).map(|l| l.split_whitespace().collect()).collect();
        // avg MB = (2 + 6 MB·s) / 1.25 s; 1 MB read, 0.5 MB written, 4 and 3 calls; 2048/8192 KB; status 1.
        assert_eq!(
            rows[0],
            [
                "sh", "22:13:20", "3.00", "1.00", "0.25", "0.01", "0.01", "0.00", "6.40", "1.000", "0.500", "4", "3",
                "2048", "8192", "1", "0", "S", "1.25"
            ]
        );
        assert_eq!(rows[1][8], "2.13", "8 MB·s over 3.75 s");
        assert_eq!(rows[1][17], "F");
    }

    #[test]
    fn the_summary() {
        let mut s = String::new();
        let o = JaOptions { summary: true, extended: true, counts: true, file_name: "/var/ja5", ..Default::default() };
        let t = ja_report(&mut s, &file(), &o).unwrap();
        assert_eq!((t.utime, t.stime, t.core_mem, t.virt_mem), (4.0, 1.0, 4.0, 12.0));
        assert_eq!(t.sbu, 5.0);
        let expected = "

Job CSA Accounting - Extended Summary Report
=============================================

Job Accounting File Name         : /var/ja5
Operating System                 : Tally tally 0.1.0 #1 x86_64
User ID                          : 1000
Group ID                         : 100
Job ID                           : 0x7a1100000005
Report Starts                    : 11/14/23 22:13:20
Report Ends                      : 11/14/23 22:13:24
Elapsed Time                     :            4      Seconds
User CPU Time                    :            4.0000 Seconds
System CPU Time                  :            1.0000 Seconds
CPU Time Core Memory Integral    :            4.0000 Mbyte-seconds
CPU Time Virtual Memory Integral :           12.0000 Mbyte-seconds
Maximum Core Memory Used         :            2.0000 Mbytes
Maximum Virtual Memory Used      :            8.0000 Mbytes
Characters Read                  :            2.0000 Mbytes
Characters Written               :            1.0000 Mbytes
Logical I/O Read Requests        :            8
Logical I/O Write Requests       :            6
CPU Delay                        :            0.0200 Seconds
Block I/O Delay                  :            0.0100 Seconds
Swap In Delay                    :            0.0000 Seconds
Number of Commands               :            2
-------------------------------- : -----------------
Number of Detail Records         : mem(  2),  io(  2), delay(  2)
Number of Job Records            : soj(  0), eoj(  1)
Number of Config Records         : cfg(  1), boot( 0), file( 0), on( 1), off( 0)
Number of Page Swaps             :            0
Number of Minor Page Faults      :           24
Number of Major Page Faults      :            0
Number of CPU Delays             :            4
Number of Block I/O Delays       :            2
Number of Swap In Delays         :            0
CPU Real Run Time                :            0.0000 Seconds
CPU Virtual Run Time             :            0.0000 Seconds
System Billing Units             :            5.0000
";
        assert_eq!(s, expected);
    }

    #[test]
    fn selection_and_several_users() {
        let mut f = file();
        f.extend(proc(7, b"other", 0, 1_700_000_100, 10));
        let mut s = String::new();
        let o = JaOptions { summary: true, ..Default::default() };
        let t = ja_report(&mut s, &f, &o).unwrap();
        assert_eq!((t.uid, t.jid), (Seen::Many, Seen::One(0x7A11_0000_0005)));
        assert!(s.contains("User ID                          : multiple user IDs selected"));
        let o = JaOptions { summary: true, select: Selection { command: Some(b"cr*"), ..Default::default() }, ..o };
        let t = ja_report(&mut String::new(), &f, &o).unwrap();
        assert_eq!((t.commands, t.utime), (1, 3.0));
        let none = JaOptions { select: Selection { uid: Some(42), ..Default::default() }, ..o };
        let mut s = String::new();
        assert_eq!(ja_report(&mut s, &f, &none).unwrap().commands, 0);
        assert_eq!(s, "", "nothing selected, nothing printed");
    }
}
