//! `dump-acct [-r] [-n N] FILE...` — every field of every record of Linux process
//! accounting files, one line each, exactly as GNU acct 6.6.4's `dump-acct` prints them
//! (the format is `tally_pacct::dump`):
//!
//! ```text
//! hello           |v3|     0.00|     1.00|     2.00|     0|     0|   396.00|     0.00|       7|       5|     |       0|ttyS0   |Thu Nov 27 04:05:01 2026
//! ```
//!
//! `-r` (`--reverse`) prints newest first, `-n N` (`--num N`) only the first N lines.
//! Terminal names are Tally's (`ttyS0`...).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;

use tally_pacct::dump::write_dump_line;
use tally_pacct::names::TallyNames;
use tally_rt::acct::read_acct_file;
use tally_rt::eprintln;
use tally_rt::process::parse_u64;

tally_rt::entry!(main);

fn usage() -> i32 {
    eprintln!("Usage: dump-acct [-r] [-n N] FILE...");
    1
}

fn main() -> i32 {
    let mut reverse = false;
    let mut limit: Option<u64> = None;
    let mut files: Vec<&str> = Vec::new();
    let mut args = tally_rt::args().skip(1);
    while let Some(a) = args.next() {
        match a {
            "-r" | "--reverse" => reverse = true,
            "-n" | "--num" => match args.next().and_then(parse_u64) {
                Some(n) => limit = Some(n),
                None => return usage(),
            },
            a if a.starts_with('-') && a.len() > 1 => {
                eprintln!("dump-acct: unrecognized option '{a}'");
                return usage();
            }
            f => files.push(f),
        }
    }
    if files.is_empty() {
        return usage();
    }
    let mut status = 0;
    for f in files {
        let Some(bytes) = read_acct_file(f) else {
            status = 1;
            continue;
        };
        let records = tally_pacct::records(&bytes);
        let trailing = records.trailing();
        let mut out = String::new();
        let mut printed = 0u64;
        let mut skipped = 0usize;
        let mut each = |r: Result<tally_pacct::AcctV3, tally_pacct::BadRecord>| {
            if limit.is_some_and(|n| printed >= n) {
                return;
            }
            match r {
                Ok(r) => {
                    let _ = write_dump_line(&mut out, &r, &TallyNames);
                    printed += 1;
                }
                Err(_) => skipped += 1,
            }
        };
        if reverse {
            records.rev().for_each(&mut each);
        } else {
            records.for_each(&mut each);
        }
        tally_rt::io::write_out(&out);
        if skipped > 0 {
            eprintln!("dump-acct: {f}: {skipped} records of an unknown acct file format skipped");
        }
        if trailing > 0 {
            eprintln!("dump-acct: {f}: {trailing} bytes after the last whole record");
        }
    }
    status
}
