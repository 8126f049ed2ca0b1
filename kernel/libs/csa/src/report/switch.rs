//! `csaswitch`: the names of what can be switched, and its `status` and `check` output.
//!
//! `csaswitch -c status` asks the kernel for the kernel/daemon kinds (`AC_KDSTAT`) and the
//! record kinds and thresholds (`AC_RCDSTAT`) and prints them as CSA's `csaswitch` does —
//! the kinds CSA lists, a blank line between the two groups, a value where there is one:
//!
//! ```text
//! #	Accounting status for Tue Nov 14 22:13:20 2023
//! #	      Name	State	Value
//! 	       csa	On
//! 	      wkmg	Off
//!
//! 	       mem	On
//! 	        io	Off
//! 	     delay	On
//! 	      memt	On	2048
//! 	      time	Error	1.5
//!
//! #	File	/var/csa/pacct
//! ```
//!
//! States print as `Off`, `Error` (ERROFF: the kernel turned it off after a write error) and
//! `On`. The memory threshold is in KB; the time threshold is kept in µs and printed in
//! seconds — as an integer when it is whole (as CSA's `%.0f`), with its fraction otherwise
//! (CSA would print a threshold of 0.5 s as "0"). The last line, the system file's path, is
//! Tally's addition (empty path: no line). `csaswitch -c check -n NAME` prints the same
//! header and the one line ([`check`]).
//!
//! CSA lists only the kinds Linux CSA uses: `job`, `site1`, `site2`, `rsite1`, `rsite2` have
//! states but are not shown ([`METHODS`] says which).

use core::fmt::{self, Write};

use tally_uapi::csa::{
    ActCtl, ActStat, ACCT_DMD_SITE1, ACCT_DMD_SITE2, ACCT_DMD_WKMG, ACCT_KERN_CSA, ACCT_KERN_JOB_PROC, ACCT_RCDS,
    ACCT_RCD_DELAY, ACCT_RCD_IO, ACCT_RCD_MEM, ACCT_RCD_SITE1, ACCT_RCD_SITE2, ACCT_THD_MEM, ACCT_THD_TIME, ACS_ERROFF,
    ACS_OFF, ACS_ON,
};

use super::time::Ctime;
use super::Comm;

/// Every index with its `csaswitch -n` name, and whether `status` shows it.
pub const METHODS: [(u32, &str, bool); 12] = [
    (ACCT_KERN_CSA, "csa", true),
    (ACCT_KERN_JOB_PROC, "job", false),
    (ACCT_DMD_WKMG, "wkmg", true),
    (ACCT_DMD_SITE1, "site1", false),
    (ACCT_DMD_SITE2, "site2", false),
    (ACCT_RCD_MEM, "mem", true),
    (ACCT_RCD_IO, "io", true),
    (ACCT_RCD_DELAY, "delay", true),
    (ACCT_THD_MEM, "memt", true),
    (ACCT_THD_TIME, "time", true),
    (ACCT_RCD_SITE1, "rsite1", false),
    (ACCT_RCD_SITE2, "rsite2", false),
];

/// The name of index `ind`.
pub fn method_name(ind: u32) -> Option<&'static str> {
    METHODS.iter().find(|m| m.0 == ind).map(|m| m.1)
}

/// The index called `name` (any case).
pub fn method_index(name: &str) -> Option<u32> {
    METHODS.iter().find(|m| m.1.eq_ignore_ascii_case(name)).map(|m| m.0)
}

/// `Off`, `Error`, `On` (`?` for a state that is none of them).
pub fn state_name(state: u32) -> &'static str {
    match state {
        ACS_OFF => "Off",
        ACS_ERROFF => "Error",
        ACS_ON => "On",
        _ => "?",
    }
}

fn header(out: &mut impl Write, now_unix_s: u64) -> fmt::Result {
    writeln!(out, "#\tAccounting status for {}", Ctime(now_unix_s))?;
    writeln!(out, "#\t      Name\tState\tValue")
}

fn entry(out: &mut impl Write, s: &ActStat) -> fmt::Result {
    let name = method_name(s.ac_ind).unwrap_or("?");
    write!(out, "\t{name:>10}\t{}", state_name(s.ac_state))?;
    if s.ac_param != 0 {
        if s.ac_ind == ACCT_THD_TIME {
            write!(out, "\t{}", s.ac_param as f64 / 1e6)?;
        } else {
            write!(out, "\t{}", s.ac_param)?;
        }
    }
    writeln!(out)
}

/// `csaswitch -c status`: `kd` as `AC_KDSTAT` filled it, `rcd` as `AC_RCDSTAT` did.
pub fn status(out: &mut impl Write, kd: &ActCtl, rcd: &ActCtl, now_unix_s: u64) -> fmt::Result {
    header(out, now_unix_s)?;
    let shown = |s: &&ActStat| METHODS.iter().any(|m| m.0 == s.ac_ind && m.2);
    let n = |c: &ActCtl| (c.ac_sttnum.max(0) as usize).min(c.ac_stat.len());
    for s in kd.ac_stat[..n(kd)].iter().filter(shown) {
        entry(out, s)?;
    }
    let mut first = true;
    for s in rcd.ac_stat[..n(rcd)].iter().filter(|s| s.ac_ind >= ACCT_RCDS).filter(shown) {
        if first {
            writeln!(out)?;
            first = false;
        }
        entry(out, s)?;
    }
    let path = kd.path().unwrap_or_default();
    if !path.is_empty() {
        writeln!(out, "\n#\tFile\t{}", Comm(path))?;
    }
    Ok(())
}

/// `csaswitch -c check -n NAME`: `stat` as `AC_CHECK` filled it.
pub fn check(out: &mut impl Write, stat: &ActStat, now_unix_s: u64) -> fmt::Result {
    header(out, now_unix_s)?;
    entry(out, stat)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctl(path: &[u8], entries: &[(u32, u32, i64)]) -> ActCtl {
        let mut c = ActCtl { ac_sttnum: entries.len() as i32, ..Default::default() };
        c.set_path(path);
        for (i, &(ac_ind, ac_state, ac_param)) in entries.iter().enumerate() {
            c.ac_stat[i] = ActStat { ac_ind, ac_state, ac_param };
        }
        c
    }

    #[test]
    fn status_lists_what_csa_lists() {
        let kd = ctl(
            b"/var/csa/pacct",
            &[(0, ACS_ON, 0), (1, ACS_ON, 0), (2, ACS_OFF, 0), (3, ACS_OFF, 0), (4, ACS_OFF, 0)],
        );
        let rcd = ctl(
            b"/var/csa/pacct",
            &[
                (6, ACS_ON, 0),
                (7, ACS_OFF, 0),
                (8, ACS_ON, 0),
                (9, ACS_ON, 2048),
                (10, ACS_ERROFF, 1_500_000),
                (11, ACS_ON, 0),
                (12, ACS_OFF, 0),
            ],
        );
        let mut s = String::new();
        status(&mut s, &kd, &rcd, 1_700_000_000).unwrap();
        assert_eq!(
            s,
            "#\tAccounting status for Tue Nov 14 22:13:20 2023\n#\t      Name\tState\tValue\n\
             \t       csa\tOn\n\t      wkmg\tOff\n\n\t       mem\tOn\n\t        io\tOff\n\t     delay\tOn\n\
             \t      memt\tOn\t2048\n\t      time\tError\t1.5\n\n#\tFile\t/var/csa/pacct\n"
        );
    }

    #[test]
    fn check_prints_one_entry_and_whole_seconds_as_integers() {
        let mut s = String::new();
        check(&mut s, &ActStat { ac_ind: ACCT_THD_TIME, ac_state: ACS_ON, ac_param: 2_000_000 }, 0).unwrap();
        assert!(s.ends_with("\t      time\tOn\t2\n"), "{s}");
    }

    #[test]
    fn names_and_indices() {
        assert_eq!(method_index("MEMT"), Some(ACCT_THD_MEM));
        assert_eq!(method_index(""), None, "the gap has no name");
        assert_eq!(method_name(5), None);
        for (ind, name, _) in METHODS {
            assert_eq!(method_index(name), Some(ind));
        }
        assert_eq!(state_name(7), "?");
    }
}
