//! `/test/spawner N` — `spawn`'s contract from ring 3, then N children: the fixture of the
//! `user_spawn` and `spawn_stress` self-tests (`tally_uapi::fixture`).
//!
//! Checks 10-17: a missing program and a directory (ENOENT), a path longer than
//! `SPAWN_PATH_MAX` (ENAMETOOLONG), more than `SPAWN_MAX_ARGS` arguments or one longer than
//! `ARG_MAX` (E2BIG), the path, an argument or the argument array at a bad address (EFAULT).
//! Then N times: `spawn /bin/hello` (1: a pid), `wait4` for it (2: that pid), status 0 (3).
//! Exit status: the number of the failed check, 0 if none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::fixture::{check, expect_err, expect_ok, positive, usage};
use tally_rt::process::parse_u64;
use tally_rt::sys;
use tally_rt::sys::probe::{self, BadPtr};
use tally_rt::uapi::errno::{E2BIG, EFAULT, ENAMETOOLONG, ENOENT};
use tally_rt::uapi::syscall::{SpawnArg, SPAWN_MAX_ARGS};

tally_rt::entry!(main);

const HELLO: &str = "/bin/hello";

fn arg(s: &str) -> SpawnArg {
    SpawnArg { addr: s.as_ptr() as u64, len: s.len() as u64 }
}

fn main() -> i32 {
    let Some(n) = tally_rt::arg(1).and_then(parse_u64) else { usage("N") };
    let hello = [arg("hello")];
    let (path, argv) = (HELLO.as_ptr() as usize, hello.as_ptr() as usize);
    expect_err(sys::spawn("/bin/nope", &["hello"]), ENOENT, 10);
    expect_err(sys::spawn("/bin", &["hello"]), ENOENT, 11); // a directory
    expect_err(probe::spawn(path, 5000, argv, 1), ENAMETOOLONG, 12);
    expect_err(probe::spawn(path, HELLO.len(), argv, SPAWN_MAX_ARGS + 1), E2BIG, 13);
    expect_err(probe::spawn(BadPtr::UNMAPPED.addr(), 4, argv, 1), EFAULT, 14);
    let in_kernel = [SpawnArg { addr: BadPtr::KERNEL.addr() as u64, len: 4 }];
    expect_err(probe::spawn(path, HELLO.len(), in_kernel.as_ptr() as usize, 1), EFAULT, 15);
    // One argument of 200 000 bytes (beyond ARG_MAX), which the kernel must not read.
    let too_long = [SpawnArg { addr: path as u64, len: 200_000 }];
    expect_err(probe::spawn(path, HELLO.len(), too_long.as_ptr() as usize, 1), E2BIG, 16);
    expect_err(probe::spawn(path, HELLO.len(), BadPtr::UNMAPPED.addr(), 1), EFAULT, 17);
    for _ in 0..n {
        let pid = positive(sys::spawn(HELLO, &["hello"]), 1);
        let mut status = -1;
        expect_ok(sys::wait4(pid as isize, Some(&mut status), 0, None), pid, 2);
        check(status == 0, 3);
    }
    0
}
