//! `cat [FILE...]` — copy files to standard output, as GNU coreutils' `cat` does.
//!
//! Each FILE is opened and copied in 4 KiB reads; `-` or no FILE at all is standard input
//! (on Tally, the console: end it with ^D). A file that cannot be opened or read is
//! reported as `cat: FILE: REASON` (`cat: /var/x: No such file or directory`) and the
//! others are still copied; the exit status is then 1. Files live on `/var`, the FAT
//! accounting disk (see `docs/files.md`).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::fs::File;
use tally_rt::uapi::fs::O_RDONLY;
use tally_rt::{eprintln, sys, Errno};

tally_rt::entry!(main);

fn main() -> i32 {
    let mut status = 0;
    let mut any = false;
    for path in tally_rt::args().skip(1) {
        any = true;
        let r = if path == "-" {
            copy(0)
        } else {
            match File::open(path, O_RDONLY, 0) {
                Ok(f) => copy(f.fd()),
                Err(e) => Err(Failure::Read(e)),
            }
        };
        if let Err(f) = r {
            report(path, f);
            status = 1;
        }
    }
    if !any {
        if let Err(f) = copy(0) {
            report("-", f);
            status = 1;
        }
    }
    status
}

/// What went wrong: opening or reading the input, or writing the output.
enum Failure {
    Read(Errno),
    Write(Errno),
}

fn report(path: &str, f: Failure) {
    match f {
        Failure::Read(e) => eprintln!("cat: {path}: {}", e.strerror()),
        Failure::Write(e) => eprintln!("cat: write error: {}", e.strerror()),
    }
}

/// Copies descriptor `fd` to standard output until its end.
fn copy(fd: usize) -> Result<(), Failure> {
    let mut buf = [0u8; 4096];
    loop {
        let n = sys::read(fd, &mut buf).map_err(Failure::Read)?;
        if n == 0 {
            return Ok(());
        }
        sys::write_all(1, &buf[..n]).map_err(Failure::Write)?;
    }
}
