//! `rm [-f] FILE...` — remove files on `/var`, as GNU coreutils' `rm` does.
//!
//! Each FILE is removed with `unlink`. A directory is refused (`Is a directory`: Tally has
//! no `rmdir`, and `rm` has no `-r`). A failure is reported as
//! `rm: cannot remove 'FILE': REASON`, the others are still removed, and the exit status
//! is 1. With `-f`, a FILE that does not exist is not an error.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::uapi::errno::ENOENT;
use tally_rt::{eprintln, sys};

tally_rt::entry!(main);

fn main() -> i32 {
    let mut force = false;
    let mut status = 0;
    let mut any = false;
    for a in tally_rt::args().skip(1) {
        if a == "-f" {
            force = true;
            continue;
        }
        any = true;
        match sys::unlink(a) {
            Ok(_) => {}
            Err(e) if force && e.0 == ENOENT => {}
            Err(e) => {
                eprintln!("rm: cannot remove '{a}': {}", e.strerror());
                status = 1;
            }
        }
    }
    if !any && !force {
        eprintln!("rm: missing operand");
        return 1;
    }
    status
}
