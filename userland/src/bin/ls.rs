//! `ls [-a] [-l] [PATH...]` — list directories and files, as GNU coreutils' `ls` does
//! when its output is not a terminal (one name per line, sorted by name in the C locale).
//!
//! Without a PATH, `ls` lists `/var` (Tally has no current directory; `/var` is the one
//! file system with directories, the FAT accounting disk). A PATH that names a file prints
//! that name; a directory prints its entries, names starting with `.` only with `-a`. With
//! several PATHs the files come first, then each directory under a `DIR:` heading, a blank
//! line between, as GNU does.
//!
//! `-l` adds what `stat` says, in GNU's long format:
//!
//! ```text
//! total 4
//! drwxr-xr-x 1 root root    0 Nov 27 04:01 ACCOUNT
//! -rw-r--r-- 1 root root  128 Nov 27 04:02 PACCT
//! ```
//!
//! FAT keeps no owner or permission bits: the kernel reports uid and gid 0, mode 0644 for
//! a file and 0755 for a directory (`tally_uapi::fs::Stat`), and `ls` prints them. Times are
//! UTC; a date more than six months from now shows its year instead of the time, as GNU
//! does. `total` is the sum of the entries' `st_blocks` in 1 KiB units. Errors are GNU's:
//! `ls: cannot access 'X': No such file or directory`, exit status 2.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use tally_clock::calendar::UtcTime;
use tally_rt::fs::read_dir;
use tally_rt::uapi::fs::{Stat, S_IFDIR, S_IFMT, S_IFREG};
use tally_rt::uapi::syscall::CLOCK_REALTIME;
use tally_rt::{eprintln, sys};

tally_rt::entry!(main);

/// GNU's exit status for "cannot access a command-line argument".
const SERIOUS: i32 = 2;

struct Opts {
    all: bool,
    long: bool,
    now: i64,
}

fn main() -> i32 {
    let mut opts = Opts { all: false, long: false, now: sys::clock_gettime(CLOCK_REALTIME).map_or(0, |t| t.tv_sec) };
    let mut paths: Vec<&str> = Vec::new();
    for a in tally_rt::args().skip(1) {
        match a.strip_prefix('-') {
            Some(flags) if !flags.is_empty() => {
                for c in flags.chars() {
                    match c {
                        'a' => opts.all = true,
                        'l' => opts.long = true,
                        // `-1` (one per line) is what ls does here anyway.
                        '1' => {}
                        _ => {
                            eprintln!("ls: invalid option -- '{c}'");
                            eprintln!("usage: ls [-a] [-l] [PATH...]");
                            return SERIOUS;
                        }
                    }
                }
            }
            _ => paths.push(a),
        }
    }
    if paths.is_empty() {
        paths.push(tally_rt::uapi::fs::VAR_MOUNT);
    }
    let mut status = 0;
    let mut files: Vec<(String, Stat)> = Vec::new();
    let mut dirs: Vec<&str> = Vec::new();
    for p in &paths {
        match sys::stat(p) {
            Ok(st) if st.is_dir() => dirs.push(p),
            Ok(st) => files.push((String::from(*p), st)),
            Err(e) => {
                eprintln!("ls: cannot access '{p}': {}", e.strerror());
                status = SERIOUS;
            }
        }
    }
    files.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    dirs.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut out = String::new();
    print_entries(&mut out, &files, &opts);
    let headings = paths.len() > 1;
    for (i, d) in dirs.iter().enumerate() {
        if i > 0 || !files.is_empty() {
            out.push('\n');
        }
        if headings {
            let _ = writeln!(out, "{d}:");
        }
        match list(d, &opts) {
            Ok(entries) => {
                if opts.long {
                    let total: i64 = entries.iter().map(|(_, s)| s.st_blocks).sum();
                    let _ = writeln!(out, "total {}", (total + 1) / 2);
                }
                print_entries(&mut out, &entries, &opts);
            }
            Err(e) => {
                tally_rt::io::write_out(&out);
                out.clear();
                eprintln!("ls: cannot open directory '{d}': {}", e.strerror());
                status = SERIOUS;
            }
        }
    }
    tally_rt::io::write_out(&out);
    status
}

/// The entries of directory `dir` with their `stat`, sorted by name.
fn list(dir: &str, opts: &Opts) -> Result<Vec<(String, Stat)>, tally_rt::Errno> {
    let mut out = Vec::new();
    for e in read_dir(dir)? {
        if e.name.starts_with('.') && !opts.all {
            continue;
        }
        let st = if opts.long {
            let path = format!("{}/{}", dir.trim_end_matches('/'), e.name);
            // An entry that vanished meanwhile (another process's rm) is shown without
            // details rather than failing the listing.
            sys::stat(&path).unwrap_or_default()
        } else {
            Stat::default()
        };
        out.push((e.name, st));
    }
    out.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    Ok(out)
}

fn print_entries(out: &mut String, entries: &[(String, Stat)], opts: &Opts) {
    if !opts.long {
        for (name, _) in entries {
            let _ = writeln!(out, "{name}");
        }
        return;
    }
    let width = |f: &dyn Fn(&Stat) -> String| entries.iter().map(|(_, s)| f(s).len()).max().unwrap_or(0);
    let links_w = width(&|s| format!("{}", s.st_nlink));
    let user_w = width(&|s| user(s.st_uid));
    let group_w = width(&|s| user(s.st_gid));
    let size_w = width(&|s| format!("{}", s.st_size));
    for (name, s) in entries {
        let _ = writeln!(
            out,
            "{} {:>links_w$} {:<user_w$} {:<group_w$} {:>size_w$} {} {name}",
            mode(s.st_mode),
            s.st_nlink,
            user(s.st_uid),
            user(s.st_gid),
            s.st_size,
            date(s.st_mtime, opts.now),
        );
    }
}

/// `root` for 0 (Tally's one named user, as in `prstat`), else the number.
fn user(id: u32) -> String {
    if id == 0 {
        String::from("root")
    } else {
        format!("{id}")
    }
}

/// `drwxr-xr-x`: the type letter and the nine permission bits.
fn mode(m: u32) -> String {
    let mut s = String::new();
    s.push(match m & S_IFMT {
        S_IFDIR => 'd',
        S_IFREG => '-',
        _ => '?',
    });
    for (bit, c) in [(0o400, 'r'), (0o200, 'w'), (0o100, 'x'), (0o40, 'r'), (0o20, 'w'), (0o10, 'x')]
        .into_iter()
        .chain([(0o4, 'r'), (0o2, 'w'), (0o1, 'x')])
    {
        s.push(if m & bit != 0 { c } else { '-' });
    }
    s
}

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// `Nov 27 04:02`, or `Nov 27  2025` for a time more than six months (GNU: 365.2425 / 2
/// days) before now or in the future.
fn date(t: i64, now: i64) -> String {
    let u = UtcTime::from_unix(t);
    let month = MONTHS[(u.month as usize).saturating_sub(1) % 12];
    const HALF_YEAR: i64 = 31_556_952 / 2;
    if now - HALF_YEAR < t && t <= now {
        format!("{month} {:>2} {:02}:{:02}", u.day, u.hour, u.minute)
    } else {
        format!("{month} {:>2}  {}", u.day, u.year)
    }
}
