//! `dump-acct`: every field of every record, one line each, in GNU acct 6.6.4's columns.
//!
//! ```text
//! sh              |v3|     7.00|     3.00|   250.00|     0|     0|  1234.00|     0.00|       5|       1|     |       0|ttyS0   |Tue Nov 25 07:02:00 2025
//! comm            |ver|   utime|    stime|    etime|   uid|   gid|      mem|       io|     pid|    ppid|SFCDX|    exit|tty     |begin time (ctime, UTC)
//! ```
//!
//! The numbers are the record's, decoded but not converted: times in AHZ ticks (hundredths
//! of a second), `mem` in KB, `io` as stored (0 from Linux and Tally); `exit` is the wait
//! status shifted right by 8 — the exit code of a process that called `exit`, and 0 for one
//! killed by a signal (the `X` flag says which). This is the tool to check a kernel's
//! records against: nothing is rounded except by `comp_t` itself.

use core::fmt::{self, Write};

use tally_clock::calendar::Ctime;
use tally_uapi::acct::AcctV3;

use crate::encoding::decode_comp_t;
use crate::names::{Names, Tty};
use crate::text::{comm, CFloat, CommStyle, Flags};

/// One `dump-acct` line for `r`, newline included, with terminal names from `names`.
pub fn write_dump_line<W: Write + ?Sized, N: Names + ?Sized>(out: &mut W, r: &AcctV3, names: &N) -> fmt::Result {
    let ticks = |c| CFloat(decode_comp_t(c) as f64, 9, 2);
    writeln!(
        out,
        "{:<16.16}|v{}|{}|{}|{}|{:6}|{:6}|{}|{}|{:8}|{:8}|{}|{:8}|{:<8.8}|{}",
        comm(r, CommStyle::Raw).as_str(),
        r.ac_version & 0x7f,
        ticks(r.ac_utime),
        ticks(r.ac_stime),
        CFloat(f64::from(r.ac_etime), 9, 2),
        r.ac_uid,
        r.ac_gid,
        ticks(r.ac_mem),
        ticks(r.ac_io),
        r.ac_pid as i32,
        r.ac_ppid as i32,
        Flags(r.ac_flag),
        (r.ac_exitcode >> 8) as i32,
        Tty(names, r.ac_tty),
        Ctime(i64::from(r.ac_btime)),
    )
}

/// `dump-acct` over a file's records: every v3 record in file order. Records of another
/// version are skipped, as GNU acct skips a format it does not know; the count of them is
/// returned so the caller can say so (GNU prints "unknown acct file format" on stderr).
pub fn write_dump<W: Write + ?Sized, N: Names + ?Sized>(
    out: &mut W,
    bytes: &[u8],
    names: &N,
) -> Result<usize, fmt::Error> {
    let mut skipped = 0;
    for r in crate::file::records(bytes) {
        match r {
            Ok(r) => write_dump_line(out, &r, names)?,
            Err(_) => skipped += 1,
        }
    }
    Ok(skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::{NumericNames, TallyNames};
    use tally_uapi::acct::{ACCT_VERSION, ASU, AXSIG, TTY_S0};

    fn rec() -> AcctV3 {
        let mut r = AcctV3 {
            ac_flag: ASU | AXSIG,
            ac_version: ACCT_VERSION,
            ac_tty: TTY_S0,
            ac_exitcode: 0x0109,
            ac_uid: 4242,
            ac_gid: 100,
            ac_pid: 6,
            ac_ppid: 5,
            ac_btime: 1_764_054_121,
            ac_etime: 12345.0,
            ac_utime: 0x2607,
            ac_stime: 0x2401,
            ac_mem: 0x461b,
            ..AcctV3::zeroed()
        };
        r.ac_comm[..4].copy_from_slice(b"spin");
        r
    }

    #[test]
    fn one_line() {
        let mut s = String::new();
        write_dump_line(&mut s, &rec(), &TallyNames).unwrap();
        assert_eq!(
            s,
            concat!(
                "spin            |v3| 12344.00|  8200.00| 12345.00|  4242|   100|100032.00|     0.00|",
                "       6|       5|S   X|       1|ttyS0   |Tue Nov 25 07:02:01 2025\n"
            )
        );
        s.clear();
        write_dump_line(&mut s, &rec(), &NumericNames).unwrap();
        assert!(s.contains("|[4,64]  |"));
    }

    #[test]
    fn other_versions_are_skipped_and_counted() {
        let mut bytes = rec().to_bytes().to_vec();
        bytes.extend(AcctV3 { ac_version: 2, ..rec() }.to_bytes());
        bytes.extend(rec().to_bytes());
        let mut s = String::new();
        assert_eq!(write_dump(&mut s, &bytes, &TallyNames), Ok(1));
        assert_eq!(s.lines().count(), 2);
    }
}
