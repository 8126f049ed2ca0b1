//! `mkdir [-p] DIR...` — make directories on `/var`, as GNU coreutils' `mkdir` does.
//!
//! Each DIR is made with `mkdir(DIR, 0755)` (FAT keeps no mode). With `-p` the missing
//! parents are made too and a directory that already exists is not an error. A failure is
//! reported as `mkdir: cannot create directory 'DIR': REASON` (e.g. `File exists`, or
//! `File name too long` for a name that is not 8.3 — FAT's short names, see
//! `docs/files.md`), the other DIRs are still made, and the exit status is 1.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::uapi::errno::EEXIST;
use tally_rt::{eprintln, sys, Errno};

tally_rt::entry!(main);

fn main() -> i32 {
    let mut parents = false;
    let mut status = 0;
    let mut any = false;
    for a in tally_rt::args().skip(1) {
        if a == "-p" {
            parents = true;
            continue;
        }
        any = true;
        let r = if parents { make_parents(a) } else { sys::mkdir(a, 0o755).map(|_| ()) };
        if let Err(e) = r {
            eprintln!("mkdir: cannot create directory '{a}': {}", e.strerror());
            status = 1;
        }
    }
    if !any {
        eprintln!("mkdir: missing operand");
        return 1;
    }
    status
}

/// `mkdir -p`: every prefix of `path` that ends at a `/`, then `path`; existing
/// directories are fine, an existing file is not (`File exists`).
fn make_parents(path: &str) -> Result<(), Errno> {
    let ends = path.match_indices('/').map(|(i, _)| i).filter(|&i| i > 0).chain(core::iter::once(path.len()));
    for end in ends {
        let prefix = path[..end].trim_end_matches('/');
        if prefix.is_empty() {
            continue;
        }
        match sys::mkdir(prefix, 0o755) {
            Ok(_) => {}
            Err(e) if e.0 == EEXIST => match sys::stat(prefix) {
                Ok(st) if st.is_dir() => {}
                _ => return Err(e),
            },
            // `/var` itself is a mount point the kernel may refuse to create (EROFS,
            // EEXIST...): if it is a directory, carry on.
            Err(e) => match sys::stat(prefix) {
                Ok(st) if st.is_dir() => {}
                _ => return Err(e),
            },
        }
    }
    Ok(())
}
