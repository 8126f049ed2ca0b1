//! `io BYTES` — writes BYTES bytes to standard output; `io -r BYTES` reads up to BYTES
//! bytes from standard input (until end of file).
//!
//! Writing: lines of 64 printable characters (the last one shorter), in `write` calls of up
//! to 4 KiB, so the console driver and the time spent in ONCPU_SYS (and sleeping while the
//! UART drains, if the kernel's console sleeps) can be measured. The byte count excludes
//! the final report line, which goes to standard error.
//! Reading: reports how many bytes arrived in how many `read` calls, and their sum.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::process::parse_u64;
use tally_rt::{eprintln, sys};

tally_rt::entry!(main);

const CHUNK: usize = 4096;

fn main() -> i32 {
    let (read, n) = match (tally_rt::arg(1), tally_rt::arg(2)) {
        (Some("-r"), Some(n)) => (true, parse_u64(n)),
        (Some(n), None) => (false, parse_u64(n)),
        _ => (false, None),
    };
    let Some(n) = n else {
        eprintln!("usage: io BYTES | io -r BYTES");
        return 2;
    };
    if read {
        read_in(n)
    } else {
        write_out(n)
    }
}

fn write_out(total: u64) -> i32 {
    let mut buf = [0u8; CHUNK];
    let (mut done, mut calls) = (0u64, 0u64);
    while done < total {
        let n = (total - done).min(CHUNK as u64) as usize;
        for (i, b) in buf[..n].iter_mut().enumerate() {
            let pos = done + i as u64;
            *b = if pos % 64 == 63 || pos + 1 == total { b'\n' } else { b'a' + (pos % 26) as u8 };
        }
        match sys::write(1, &buf[..n]) {
            Ok(0) => {
                eprintln!("io: write returned 0 after {done} bytes");
                return 1;
            }
            Ok(w) => {
                done += w as u64;
                calls += 1;
            }
            Err(e) => {
                eprintln!("io: write after {done} bytes: {e}");
                return 1;
            }
        }
    }
    eprintln!("io: wrote {done} bytes in {calls} write calls");
    0
}

fn read_in(limit: u64) -> i32 {
    let mut buf = [0u8; CHUNK];
    let (mut done, mut calls, mut sum) = (0u64, 0u64, 0u64);
    while done < limit {
        let want = (limit - done).min(CHUNK as u64) as usize;
        match sys::read(0, &mut buf[..want]) {
            Ok(0) => break,
            Ok(r) => {
                sum = buf[..r].iter().fold(sum, |s, &b| s.wrapping_add(u64::from(b)));
                done += r as u64;
                calls += 1;
            }
            Err(e) => {
                eprintln!("io: read after {done} bytes: {e}");
                return 1;
            }
        }
    }
    eprintln!("io: read {done} bytes in {calls} read calls (byte sum {sum})");
    0
}
