//! System billing units (SBUs): what a process costs, in one number.
//!
//! CSA's records leave `ac_sbu` at 0: the kernel measures, the site's tools charge. An SBU
//! is a weighted sum of what a process used, with weights the site chooses. Tally computes
//! it the way CSA's `process_sbu` does with its distributed weights — without CSA's split
//! into prime and non-prime time (no holidays file here: all time is prime time):
//!
//! ```text
//!   sbu = P_BASIC × ( P_TIME  × (P_UTIME × user s   + P_STIME × system s)
//!                   + P_MEM   × (P_XMEM  × core MB·min + P_VMEM × virtual MB·min)
//!                   + P_IO    × (P_CIO   × bytes read+written + P_LIO × read+write calls)
//!                   + P_DELAY × (P_CPUDELAY × run-queue wait s + P_BLKDELAY × block I/O wait s
//!                                + P_SWPDELAY × swap-in wait s) )
//! ```
//!
//! A term counts only if its record is there (a system file with memory accounting off has
//! no memory record, so no memory charge). The memory integrals are the `mem1` fields in
//! MB·µs turned into MB·minutes, as CSA does.
//!
//! ## The configuration
//!
//! [`SbuWeights::parse`] reads a text of `NAME value` lines with CSA's `csa.conf` names
//! (`#` starts a comment; unknown names are an error, so a typo does not go unnoticed):
//!
//! ```text
//! # /var/csa.cfg — CPU seconds, plus a cent per MB-minute of resident memory
//! P_BASIC     1.0
//! P_TIME      1.0
//! P_UTIME     1.0
//! P_STIME     1.0
//! P_MEM       1.0
//! P_XMEM      0.01
//! ```
//!
//! The defaults ([`SbuWeights::default`]) charge CPU time only — one SBU per CPU second,
//! user or system — with every group multiplier at 1 and the other per-resource weights at
//! 0, so turning on a charge needs one line.

use core::fmt;

use crate::process::ProcessRecord;

/// The weights; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SbuWeights {
    pub basic: f64,
    pub time: f64,
    pub utime: f64,
    pub stime: f64,
    pub mem: f64,
    pub core_mem: f64,
    pub virt_mem: f64,
    pub io: f64,
    pub chars: f64,
    pub calls: f64,
    pub delay: f64,
    pub cpu_delay: f64,
    pub blkio_delay: f64,
    pub swapin_delay: f64,
}

impl Default for SbuWeights {
    fn default() -> Self {
        SbuWeights {
            basic: 1.0,
            time: 1.0,
            utime: 1.0,
            stime: 1.0,
            mem: 1.0,
            core_mem: 0.0,
            virt_mem: 0.0,
            io: 1.0,
            chars: 0.0,
            calls: 0.0,
            delay: 1.0,
            cpu_delay: 0.0,
            blkio_delay: 0.0,
            swapin_delay: 0.0,
        }
    }
}

/// A line of a weights file that could not be read (1-based line number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SbuConfError {
    pub line: usize,
}

impl fmt::Display for SbuConfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: expected `NAME value` with a known P_ name and a number", self.line)
    }
}

const US_PER_SEC: f64 = 1_000_000.0;
const NS_PER_SEC: f64 = 1_000_000_000.0;
const US_PER_MIN: f64 = 60_000_000.0;

impl SbuWeights {
    /// The weight called `name` in `csa.conf`.
    fn slot(&mut self, name: &str) -> Option<&mut f64> {
        Some(match name {
            "P_BASIC" => &mut self.basic,
            "P_TIME" => &mut self.time,
            "P_UTIME" => &mut self.utime,
            "P_STIME" => &mut self.stime,
            "P_MEM" => &mut self.mem,
            "P_XMEM" => &mut self.core_mem,
            "P_VMEM" => &mut self.virt_mem,
            "P_IO" => &mut self.io,
            "P_CIO" => &mut self.chars,
            "P_LIO" => &mut self.calls,
            "P_DELAY" => &mut self.delay,
            "P_CPUDELAY" => &mut self.cpu_delay,
            "P_BLKDELAY" => &mut self.blkio_delay,
            "P_SWPDELAY" => &mut self.swapin_delay,
            _ => return None,
        })
    }

    /// The defaults, changed by the lines of `text`.
    pub fn parse(text: &str) -> Result<SbuWeights, SbuConfError> {
        let mut w = SbuWeights::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let err = SbuConfError { line: i + 1 };
            let mut words = line.split_whitespace();
            let (Some(name), Some(value), None) = (words.next(), words.next(), words.next()) else { return Err(err) };
            let v: f64 = value.parse().map_err(|_| err)?;
            if !v.is_finite() {
                return Err(err);
            }
            *w.slot(name).ok_or(err)? = v;
        }
        Ok(w)
    }

    /// The SBUs of one process record.
    pub fn process_sbu(&self, r: &ProcessRecord) -> f64 {
        let b = &r.base;
        let mut bu = self.time * (self.utime * b.utime as f64 / US_PER_SEC + self.stime * b.stime as f64 / US_PER_SEC);
        if let Some(m) = &r.mem {
            bu += self.mem
                * (self.core_mem * m.core.mem1 as f64 / US_PER_MIN + self.virt_mem * m.virt.mem1 as f64 / US_PER_MIN);
        }
        if let Some(io) = &r.io {
            let cio = io.chr as f64 + io.chw as f64;
            let lio = io.scr as f64 + io.scw as f64;
            bu += self.io * (self.chars * cio + self.calls * lio);
        }
        if let Some(d) = &r.delay {
            bu += self.delay
                * (self.cpu_delay * d.cpu_delay_total as f64 / NS_PER_SEC
                    + self.blkio_delay * d.blkio_delay_total as f64 / NS_PER_SEC
                    + self.swapin_delay * d.swapin_delay_total as f64 / NS_PER_SEC);
        }
        self.basic * bu
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::{DelayUsage, IoUsage, MemoryUsage, ProcessExit};

    fn rec() -> ProcessRecord {
        ProcessExit {
            utime_ns: 3_000_000_000,
            stime_ns: 1_000_000_000,
            mem: MemoryUsage {
                core_kb_ns: 1_024_000 * 120_000_000,
                virt_kb_ns: 1_024_000 * 60_000_000,
                ..Default::default()
            },
            io: IoUsage { read_bytes: 1000, write_bytes: 500, read_calls: 3, write_calls: 2 },
            delay: DelayUsage { cpu_delay_ns: 2_000_000_000, blkio_delay_ns: 500_000_000, ..Default::default() },
            ..Default::default()
        }
        .records(1)
    }

    #[test]
    fn the_default_charges_cpu_seconds() {
        assert_eq!(SbuWeights::default().process_sbu(&rec()), 4.0);
    }

    #[test]
    fn every_weight_counts_in_its_unit() {
        let w = SbuWeights::parse(
            "# all of it\nP_BASIC 2\nP_UTIME 0.5\nP_XMEM 1  # per MB-minute\nP_VMEM 10\nP_CIO 0.001\nP_LIO 1\n\
             P_CPUDELAY 1\nP_BLKDELAY 4\n",
        )
        .unwrap();
        // time: 0.5×3 + 1×1 = 2.5; mem: 2 MB·min × 1 + 1 MB·min × 10 = 12; io: 1.5 + 5 = 6.5;
        // delay: 2 + 4×0.5 = 4 → 25 × basic 2.
        assert_eq!(w.process_sbu(&rec()), 50.0);
        let no_mem = rec().only(crate::process::Continuations::NONE);
        assert_eq!(w.process_sbu(&no_mem), 5.0, "no continuation records, no charge for them");
    }

    #[test]
    fn bad_lines_are_refused_with_their_number() {
        assert_eq!(SbuWeights::parse("P_TIME 1\nP_TIEM 2\n"), Err(SbuConfError { line: 2 }));
        assert_eq!(SbuWeights::parse("P_TIME\n"), Err(SbuConfError { line: 1 }));
        assert_eq!(SbuWeights::parse("P_TIME 1 2\n"), Err(SbuConfError { line: 1 }));
        assert_eq!(SbuWeights::parse("\n\nP_TIME nan\n"), Err(SbuConfError { line: 3 }));
        assert_eq!(SbuWeights::parse("  # nothing\n"), Ok(SbuWeights::default()));
    }
}
