//! `sa [-a] [-c] [-i] [-j] [-l] [-n] [-r] [FILE]` — a summary of a process accounting file
//! per command, exactly as GNU acct 6.6.4's `sa` prints it (the format and its rules are
//! `tally_pacct::sa`):
//!
//! ```text
//!        5       0.07re       0.03cp         0avio       812k
//!        3       0.05re       0.03cp         0avio       800k   spin
//!        2       0.02re       0.00cp         0avio       830k   ***other
//! ```
//!
//! The file is `/var/account/pacct` unless FILE names another. `-a` lists every command
//! (none lumped into `***other`), `-c` adds percentages, `-j` prints seconds per call, `-l`
//! splits user and system time, `-n` sorts by calls, `-r` reverses the order. `-i` (GNU:
//! do not read the summary file `savacct`) is accepted and changes nothing: Tally's `sa`
//! never keeps summary files, so it always reads only FILE (as GNU's `sa -i` does).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;

use tally_pacct::sa::{CommandStats, SaOptions, SaSort, Summary};
use tally_rt::acct::{read_acct_file, ACCT_FILE};
use tally_rt::eprintln;

tally_rt::entry!(main);

fn usage() -> i32 {
    eprintln!("Usage: sa [-a] [-c] [-i] [-j] [-l] [-n] [-r] [FILE]");
    1
}

fn main() -> i32 {
    let mut opts = SaOptions::default();
    let mut file: Option<&str> = None;
    for a in tally_rt::args().skip(1) {
        match a.strip_prefix('-') {
            Some(flags) if !flags.is_empty() && !a.starts_with("--") => {
                for c in flags.chars() {
                    match c {
                        'a' => opts.all = true,
                        'c' => opts.percentages = true,
                        'i' => {}
                        'j' => opts.seconds_per_call = true,
                        'l' => opts.separate_times = true,
                        'n' => opts.sort = SaSort::Calls,
                        'r' => opts.reverse = true,
                        _ => {
                            eprintln!("sa: invalid option -- '{c}'");
                            return usage();
                        }
                    }
                }
            }
            Some(_) if a.starts_with("--") => {
                eprintln!("sa: unrecognized option '{a}'");
                return usage();
            }
            _ if file.is_some() => {
                eprintln!("sa: too many files");
                return usage();
            }
            _ => file = Some(a),
        }
    }
    let file = file.unwrap_or(ACCT_FILE);
    let Some(bytes) = read_acct_file(file) else { return 1 };
    // At most one distinct command per record.
    let mut table = alloc::vec![CommandStats::EMPTY; bytes.len() / tally_pacct::AcctV3::SIZE + 1];
    let mut summary = Summary::new(&mut table);
    // The table has a slot per record, so it cannot fill.
    let skipped = summary.add_file(&bytes).unwrap_or(0);
    let mut out = String::new();
    let _ = summary.write(&mut out, &opts);
    tally_rt::io::write_out(&out);
    if skipped > 0 {
        eprintln!("sa: {file}: {skipped} records of an unknown acct file format skipped");
    }
    0
}
