//! `accton on|off|FILE` — turn Linux process accounting on or off, as GNU acct's `accton`.
//!
//! ```text
//! $ accton /var/account/pacct
//! Turning on process accounting, file set to '/var/account/pacct'.
//! $ accton off
//! Turning off process accounting.
//! ```
//!
//! `accton FILE` first creates FILE if it does not exist (`open(FILE, O_WRONLY | O_CREAT |
//! O_EXCL)`, `EEXIST` meaning it does, then `close`: the kernel's `acct(2)` only opens existing files), then calls
//! `acct(FILE)`; from then on the kernel appends one 64-byte `acct_v3` record per process
//! that ends. `accton on` does the same with the default file (`/var/account/pacct`, GNU
//! acct's upstream default; `/var/account` is made if missing); `accton off` calls `acct(NULL)`. Only root may (`EPERM`):
//! errors are printed as GNU's `accton: REASON`, exit status 1. The messages are GNU acct
//! 6.6.4's.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::acct::ACCT_FILE;
use tally_rt::fs::File;
use tally_rt::uapi::errno::EEXIST;
use tally_rt::uapi::fs::{O_CREAT, O_EXCL, O_WRONLY};
use tally_rt::{eprintln, println, sys, Errno};

tally_rt::entry!(main);

fn usage() -> i32 {
    eprintln!("Usage: accton [OPTION] on|off|ACCOUNTING_FILE");
    eprintln!("The system's default process accounting file is '{ACCT_FILE}'.");
    1
}

fn main() -> i32 {
    let args: alloc::vec::Vec<&str> = tally_rt::args().skip(1).collect();
    let arg = match args.as_slice() {
        [] => {
            eprintln!("accton: no arguments");
            return usage();
        }
        ["-h" | "--help"] => {
            println!("Usage: accton [OPTION] on|off|ACCOUNTING_FILE");
            println!("The system's default process accounting file is '{ACCT_FILE}'.");
            return 0;
        }
        [a] => *a,
        _ => {
            eprintln!("accton: too many arguments");
            return usage();
        }
    };
    if arg.eq_ignore_ascii_case("off") {
        return match sys::acct(None) {
            Ok(_) => {
                println!("Turning off process accounting.");
                0
            }
            Err(e) => {
                eprintln!("accton: {}", e.strerror());
                1
            }
        };
    }
    let default = arg.eq_ignore_ascii_case("on");
    let file = if default { ACCT_FILE } else { arg };
    // The default file's directory is the tools' own: made if missing.
    if default {
        if let Err(e) = tally_rt::acct::make_parent_dir(file) {
            eprintln!("accton: {file}: {}", e.strerror());
            return 1;
        }
    }
    // GNU accton creates the file (fopen "a") before acct(2), which never creates one. Only
    // if it is missing (O_EXCL): a file accounting appends to already may not be opened for
    // writing, by root either (docs/files.md §6), and accton at the current file must work.
    match File::open(file, O_WRONLY | O_CREAT | O_EXCL, 0o600).and_then(File::close) {
        Ok(()) | Err(Errno(EEXIST)) => {}
        Err(e) => {
            eprintln!("accton: {file}: {}", e.strerror());
            return 1;
        }
    }
    match sys::acct(Some(file)) {
        Ok(_) if default => println!("Turning on process accounting, file set to the default '{file}'."),
        Ok(_) => println!("Turning on process accounting, file set to '{file}'."),
        Err(e) => {
            eprintln!("accton: {}", e.strerror());
            return 1;
        }
    }
    0
}

extern crate alloc;
