//! `newjob [-v] [-u UID] CMD [ARGS...]` — run a command in a new SGI CSA job, as a login
//! starts a user's session.
//!
//! ```text
//! $ newjob -v -u 1000 sh
//! newjob: job 0x00007a1100000009
//! ```
//!
//! `newjob` calls `job_create(UID)` (root only: `EPERM` otherwise), which puts newjob itself
//! in a fresh job owned by UID (the caller's uid without `-u`); the job id is
//! `0x7A11 << 32 | pid` (`tally_uapi::csa::jid_of`). With `-u`, newjob then becomes UID
//! (`setuid`), as a login does after it made the job, so the command runs as that user and
//! may use `ja` on its own job. It spawns CMD (`/bin/CMD` for a bare name), which inherits
//! the job, waits for it and exits with its status (128 + the signal if it was killed, as a
//! shell reports it). The job ends when its last process — often newjob itself — exits;
//! with CSA on, the kernel then writes its end-of-job record. `-v` prints the job id.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::process::{parse_u64, shell_status, spawn_command, spawn_failure_status};
use tally_rt::uapi::errno::EINTR;
use tally_rt::{eprintln, println, sys};

tally_rt::entry!(main);

fn usage() -> i32 {
    eprintln!("usage: newjob [-v] [-u UID] CMD [ARGS...]");
    2
}

fn main() -> i32 {
    let args: alloc::vec::Vec<&str> = tally_rt::args().skip(1).collect();
    let mut i = 0;
    let mut uid: Option<u32> = None;
    let mut verbose = false;
    while let Some(&a) = args.get(i) {
        match a {
            "-v" => verbose = true,
            "-u" => {
                i += 1;
                match args.get(i).and_then(|u| parse_u64(u)).and_then(|u| u32::try_from(u).ok()) {
                    Some(u) if u != u32::MAX => uid = Some(u),
                    _ => return usage(),
                }
            }
            "--" => {
                i += 1;
                break;
            }
            a if a.starts_with('-') => return usage(),
            _ => break,
        }
        i += 1;
    }
    let cmd = &args[i.min(args.len())..];
    if cmd.is_empty() {
        return usage();
    }
    let jid = match sys::job_create(uid.unwrap_or(u32::MAX)) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("newjob: job_create: {}", e.strerror());
            return 1;
        }
    };
    if verbose {
        println!("newjob: job {jid:#018x}");
    }
    if let Some(u) = uid {
        if let Err(e) = sys::setuid(u) {
            eprintln!("newjob: setuid({u}): {}", e.strerror());
            return 1;
        }
    }
    let pid = match spawn_command(cmd) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("newjob: {}: {}", cmd[0], e.strerror());
            return spawn_failure_status(e);
        }
    };
    loop {
        let mut status = 0;
        match sys::wait4(pid as isize, Some(&mut status), 0, None) {
            Ok(_) => return shell_status(status),
            Err(e) if e.0 == EINTR => continue,
            Err(e) => {
                eprintln!("newjob: wait4({pid}): {}", e.strerror());
                return 1;
            }
        }
    }
}

extern crate alloc;
