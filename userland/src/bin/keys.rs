//! `keys [N]` — the console's raw mode, key by key: shows the terminal's settings, switches
//! to raw mode (`ICANON`, `ECHO`, `ISIG` and `ICRNL` off, `VMIN` 1, as `cfmakeraw`), reads N
//! bytes (default 8) as they come and prints each, then puts the settings back.
//!
//! ```text
//! $ keys 3
//! keys: canonical on, echo on, isig on, icrnl on; VMIN 1; erase 0x7f kill 0x15 eof 0x04; 24x80
//! keys: raw mode: press 3 keys
//! keys: 0x1b ^[
//! keys: 0x5b '['
//! keys: 0x41 'A'
//! keys: settings restored
//! ```
//!
//! In canonical mode the line discipline would have swallowed that arrow key (`ESC [ A`); in
//! raw mode a program sees every byte, DEL and `^C` included (the latter only without
//! `ISIG`). The calls are `ioctl`s with Linux's numbers (`TCGETS`, `TCSETS`, `TIOCGWINSZ`):
//! `docs/console.md`. Exit status: 0, or 1 if standard input is not a terminal (`ENOTTY`)
//! or a call fails.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::process::parse_u64;
use tally_rt::sys::{self, When};
use tally_rt::uapi::tty::{ECHO, ICANON, ICRNL, ISIG, VEOF, VERASE, VKILL, VMIN};
use tally_rt::{eprintln, println};

tally_rt::entry!(main);

fn on(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

fn main() -> i32 {
    let n = match tally_rt::args().nth(1) {
        None => 8,
        Some(a) => match parse_u64(a) {
            Some(n) => n,
            None => {
                eprintln!("usage: keys [N]");
                return 2;
            }
        },
    };
    let saved = match sys::tcgetattr(0) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("keys: standard input: {e}");
            return 1;
        }
    };
    let ws = sys::window_size(0).map(|w| (w.ws_row, w.ws_col)).unwrap_or((0, 0));
    println!(
        "keys: canonical {}, echo {}, isig {}, icrnl {}; VMIN {}; erase {:#04x} kill {:#04x} eof {:#04x}; {}x{}",
        on(saved.lflag(ICANON)),
        on(saved.lflag(ECHO)),
        on(saved.lflag(ISIG)),
        on(saved.c_iflag & ICRNL != 0),
        saved.c_cc[VMIN],
        saved.c_cc[VERASE],
        saved.c_cc[VKILL],
        saved.c_cc[VEOF],
        ws.0,
        ws.1
    );
    let mut raw = saved;
    raw.make_raw();
    if let Err(e) = sys::tcsetattr(0, When::Now, &raw) {
        eprintln!("keys: TCSETS: {e}");
        return 1;
    }
    println!("keys: raw mode: press {n} keys");
    let mut status = 0;
    let mut got = 0;
    while got < n {
        let mut b = [0u8; 1];
        match sys::read(0, &mut b) {
            Ok(0) => break,
            Ok(_) => {
                got += 1;
                match b[0] {
                    c @ 0x20..=0x7e => println!("keys: {c:#04x} '{}'", c as char),
                    c @ (0..=0x1f | 0x7f) => println!("keys: {c:#04x} ^{}", (c ^ 0x40) as char),
                    c => println!("keys: {c:#04x}"),
                }
            }
            Err(e) => {
                eprintln!("keys: read: {e}");
                status = 1;
                break;
            }
        }
    }
    // TCSETS, not TCSETSF: what was typed after the keys stays for the next reader.
    if let Err(e) = sys::tcsetattr(0, When::Now, &saved) {
        eprintln!("keys: TCSETS: {e}");
        return 1;
    }
    println!("keys: settings restored");
    status
}
