//! `lastcomm`: the commands that ran, newest first, one line each, as GNU acct 6.6.4
//! prints them.
//!
//! ```text
//! spin             S   X 4242     ttyS0    205.44 secs Tue Nov 25 07:02
//! sh                F    root     pts/3      0.01 secs Tue Nov 25 07:02
//! └ command (16)   SFCDX user (8) tty (8)   CPU time    begin (ctime's first 16 characters)
//! ```
//!
//! The CPU time is user + system, in seconds (`ac_utime + ac_stime` over AHZ). A command
//! name's unprintable bytes show as `?`. Words after the options select records: a record
//! is shown if any word equals its user name, its terminal's name or its command name;
//! `--user`, `--tty` and `--command` match only that field. With no words, everything is
//! shown. (GNU's `--strict-match`, which wants every word to match, is not provided.)

use core::fmt::{self, Write};

use tally_clock::calendar::Ctime;
use tally_uapi::acct::{AcctV3, AHZ};

use crate::encoding::decode_comp_t;
use crate::names::{Names, Tty, User};
use crate::text::{comm, CFloat, CommStyle, Flags, ShortStr};

/// Optional columns and behaviours of `lastcomm`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LastcommOptions {
    /// `-p` / `--show-paging`: minor faults, major faults and swaps instead of user and
    /// terminal.
    pub show_paging: bool,
    /// `--pid`: the process id and the parent's at the end of the line.
    pub show_pid: bool,
    /// `--print-controls`: show a command name's bytes as they are.
    pub print_controls: bool,
}

/// Which records to show (GNU's non-strict matching).
#[derive(Clone, Copy, Debug, Default)]
pub struct Filter<'a> {
    /// Words given without an option: each may be a user, a terminal or a command name.
    pub any: &'a [&'a str],
    /// `--user NAME`, `--tty NAME`, `--command NAME`.
    pub users: &'a [&'a str],
    pub ttys: &'a [&'a str],
    pub commands: &'a [&'a str],
}

impl Filter<'_> {
    /// Whether `r` is to be shown: always with an empty filter, else if any word matches.
    /// User and terminal are matched by the names printed for them (so `1000` matches a
    /// uid with no name, and `[4,64]` a terminal with none).
    pub fn matches<N: Names + ?Sized>(&self, r: &AcctV3, names: &N) -> bool {
        if self.any.is_empty() && self.users.is_empty() && self.ttys.is_empty() && self.commands.is_empty() {
            return true;
        }
        let mut user = ShortStr::new();
        let mut tty = ShortStr::new();
        // Both fit: a name longer than the buffer simply matches no word.
        let _ = write!(user, "{}", User(names, r.ac_uid));
        let _ = write!(tty, "{}", Tty(names, r.ac_tty));
        let cmd = r.comm_bytes();
        let is = |words: &[&str], s: &[u8]| words.iter().any(|w| w.as_bytes() == s);
        let (user, tty) = (user.as_str().as_bytes(), tty.as_str().as_bytes());
        is(self.any, user)
            || is(self.any, tty)
            || is(self.any, cmd)
            || is(self.users, user)
            || is(self.ttys, tty)
            || is(self.commands, cmd)
    }
}

/// One `lastcomm` line for `r`, newline included.
pub fn write_lastcomm_line<W: Write + ?Sized, N: Names + ?Sized>(
    out: &mut W,
    r: &AcctV3,
    names: &N,
    opts: &LastcommOptions,
) -> fmt::Result {
    let style = if opts.print_controls { CommStyle::Raw } else { CommStyle::Printable };
    write!(out, "{:<16.16} {}", comm(r, style).as_str(), Flags(r.ac_flag))?;
    let cpu = (decode_comp_t(r.ac_utime) as f64 + decode_comp_t(r.ac_stime) as f64) / f64::from(AHZ);
    let mut begin = ShortStr::new();
    write!(begin, "{}", Ctime(i64::from(r.ac_btime)))?;
    if opts.show_paging {
        write!(
            out,
            " {}min {}maj {}swp {} secs {:<16.16}",
            CFloat(decode_comp_t(r.ac_minflt) as f64, 6, 0),
            CFloat(decode_comp_t(r.ac_majflt) as f64, 6, 0),
            CFloat(decode_comp_t(r.ac_swaps) as f64, 4, 0),
            CFloat(cpu, 6, 2),
            begin.as_str()
        )?;
    } else {
        write!(
            out,
            " {:<8.8} {:<8.8} {} secs {:<16.16}",
            User(names, r.ac_uid),
            Tty(names, r.ac_tty),
            CFloat(cpu, 6, 2),
            begin.as_str()
        )?;
    }
    if opts.show_pid {
        write!(out, " {} {}", r.ac_pid as i32, r.ac_ppid as i32)?;
    }
    out.write_char('\n')
}

/// `lastcomm` over a file's records: newest (last in the file) first, those `filter`
/// selects. Records of another version are skipped; their count is returned.
pub fn write_lastcomm<W: Write + ?Sized, N: Names + ?Sized>(
    out: &mut W,
    bytes: &[u8],
    filter: &Filter<'_>,
    names: &N,
    opts: &LastcommOptions,
) -> Result<usize, fmt::Error> {
    let mut skipped = 0;
    for r in crate::file::records(bytes).rev() {
        match r {
            Ok(r) if filter.matches(&r, names) => write_lastcomm_line(out, &r, names, opts)?,
            Ok(_) => {}
            Err(_) => skipped += 1,
        }
    }
    Ok(skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::TallyNames;
    use tally_uapi::acct::{old_encode_dev, ACCT_VERSION, AFORK, ASU, AXSIG, TTY_S0};

    fn rec(name: &[u8], uid: u32, tty: u16, flags: u8) -> AcctV3 {
        let mut r = AcctV3 {
            ac_flag: flags,
            ac_version: ACCT_VERSION,
            ac_tty: tty,
            ac_uid: uid,
            ac_pid: 7,
            ac_ppid: 5,
            ac_btime: 1_764_054_122,
            ac_utime: 0x2607,
            ac_stime: 0x2401,
            ac_minflt: 99,
            ac_majflt: 2,
            ..AcctV3::zeroed()
        };
        r.ac_comm[..name.len()].copy_from_slice(name);
        r
    }

    fn line(r: &AcctV3, opts: LastcommOptions) -> String {
        let mut s = String::new();
        write_lastcomm_line(&mut s, r, &TallyNames, &opts).unwrap();
        s
    }

    #[test]
    fn lines() {
        let r = rec(b"spin", 4242, 0, ASU | AXSIG);
        assert_eq!(
            line(&r, LastcommOptions::default()),
            "spin             S   X 4242     __       205.44 secs Tue Nov 25 07:02\n"
        );
        assert_eq!(
            line(&r, LastcommOptions { show_paging: true, show_pid: true, ..Default::default() }),
            "spin             S   X     99min      2maj    0swp 205.44 secs Tue Nov 25 07:02 7 5\n"
        );
        let odd = rec(b"a\x01b", 0, TTY_S0, AFORK);
        assert!(line(&odd, LastcommOptions::default()).starts_with("a?b               F    root     ttyS0 "));
        assert!(line(&odd, LastcommOptions { print_controls: true, ..Default::default() }).starts_with("a\x01b "));
    }

    #[test]
    fn filters_match_any_field() {
        let r = rec(b"spin", 0, TTY_S0, 0);
        let n = &TallyNames;
        assert!(Filter::default().matches(&r, n));
        assert!(Filter { any: &["root"], ..Default::default() }.matches(&r, n));
        assert!(Filter { any: &["ttyS0"], ..Default::default() }.matches(&r, n));
        assert!(Filter { any: &["nobody", "spin"], ..Default::default() }.matches(&r, n));
        assert!(!Filter { any: &["spi"], ..Default::default() }.matches(&r, n), "whole names only");
        assert!(Filter { users: &["root"], ..Default::default() }.matches(&r, n));
        assert!(!Filter { users: &["spin"], ..Default::default() }.matches(&r, n), "--user is the user only");
        assert!(!Filter { commands: &["root"], ..Default::default() }.matches(&r, n));
        assert!(Filter { ttys: &["pts/1", "ttyS0"], ..Default::default() }.matches(&r, n));
        let other = rec(b"sh", 1000, old_encode_dev(4, 70), 0);
        assert!(Filter { users: &["1000"], ..Default::default() }.matches(&other, n));
        assert!(Filter { ttys: &["[4,70]"], ..Default::default() }.matches(&other, n));
    }

    #[test]
    fn newest_first_and_bad_records_counted() {
        let mut bytes = Vec::new();
        for (i, name) in [&b"one"[..], b"two", b"three"].iter().enumerate() {
            let mut r = rec(name, 0, 0, 0);
            r.ac_pid = i as u32;
            bytes.extend(r.to_bytes());
        }
        bytes.extend(AcctV3 { ac_version: 0x83, ..rec(b"x", 0, 0, 0) }.to_bytes());
        let mut s = String::new();
        let skipped = write_lastcomm(&mut s, &bytes, &Filter::default(), &TallyNames, &Default::default()).unwrap();
        assert_eq!(skipped, 1);
        let firsts: Vec<&str> = s.lines().map(|l| l.split(' ').next().unwrap()).collect();
        assert_eq!(firsts, ["three", "two", "one"]);
        s.clear();
        let f = Filter { commands: &["two"], ..Default::default() };
        write_lastcomm(&mut s, &bytes, &f, &TallyNames, &Default::default()).unwrap();
        assert_eq!(s.lines().count(), 1);
    }
}
