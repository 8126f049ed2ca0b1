//! `lastcomm [-f FILE] [-p] [--pid] [--user NAME] [--tty NAME] [--command NAME] [NAME...]`
//! — the commands that ran, newest first, exactly as GNU acct 6.6.4's `lastcomm` prints
//! them (the format is `tally_pacct::lastcomm`):
//!
//! ```text
//! hello                  root     ttyS0      0.00 secs Thu Nov 27 04:05
//! ```
//!
//! The file is `/var/account/pacct` unless `-f FILE` (`--file FILE`) names another. NAMEs
//! select records whose user, terminal or command is NAME; `--user`, `--tty` and
//! `--command` match only that field. `-p` (`--show-paging`) prints faults instead of user
//! and terminal, `--pid` adds the process and parent ids, `--print-controls` shows a
//! command's control bytes as they are. Users and terminals are named as Tally knows them
//! (uid 0 is `root`, the serial ports `ttyS0`...); GNU prints numbers for the others too.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;

use tally_pacct::lastcomm::{write_lastcomm, Filter, LastcommOptions};
use tally_pacct::names::TallyNames;
use tally_rt::acct::{read_acct_file, ACCT_FILE};
use tally_rt::eprintln;

tally_rt::entry!(main);

fn usage() -> i32 {
    eprintln!(
        "Usage: lastcomm [-f FILE] [-p] [--pid] [--print-controls] [--user NAME] [--tty NAME] [--command NAME] [NAME...]"
    );
    1
}

fn main() -> i32 {
    let mut file = ACCT_FILE;
    let mut opts = LastcommOptions::default();
    let (mut any, mut users, mut ttys, mut commands): (Vec<&str>, Vec<&str>, Vec<&str>, Vec<&str>) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut args = tally_rt::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |list: &mut Vec<&'static str>| match args.next() {
            Some(v) => {
                list.push(v);
                true
            }
            None => false,
        };
        let ok = match a {
            "-f" | "--file" => match args.next() {
                Some(f) => {
                    file = f;
                    true
                }
                None => false,
            },
            "-p" | "--show-paging" => {
                opts.show_paging = true;
                true
            }
            "--pid" => {
                opts.show_pid = true;
                true
            }
            "--print-controls" => {
                opts.print_controls = true;
                true
            }
            "--user" => value(&mut users),
            "--tty" => value(&mut ttys),
            "--command" => value(&mut commands),
            "-h" | "--help" => return usage(),
            a if a.starts_with('-') && a.len() > 1 => {
                eprintln!("lastcomm: unrecognized option '{a}'");
                false
            }
            a => {
                any.push(a);
                true
            }
        };
        if !ok {
            return usage();
        }
    }
    let Some(bytes) = read_acct_file(file) else { return 1 };
    let filter = Filter { any: &any, users: &users, ttys: &ttys, commands: &commands };
    let mut out = String::new();
    let skipped = write_lastcomm(&mut out, &bytes, &filter, &TallyNames, &opts).unwrap_or(0);
    tally_rt::io::write_out(&out);
    if skipped > 0 {
        eprintln!("lastcomm: {file}: {skipped} records of an unknown acct file format skipped");
    }
    0
}
