//! `/test/acct_abi` — Linux's `acct(2)` from ring 3: the fixture of the `acct_abi`
//! self-test (`kernel/src/selftest/acct_files.rs`), which has created `/var/TMP/PACCT`
//! before and reads it back afterwards (`tally_uapi::fixture`).
//!
//! Checks, as root: `acct(NULL)` while off is fine (1); ENOENT for a missing file (2),
//! EISDIR for a directory (3), ENOTDIR for a path through a file (4), ENAMETOOLONG for a
//! name that is not 8.3 (5), EFAULT for a path at nothing (6); accounting on (7); three
//! children, each waited for: `/bin/hello` (8), `/bin/crash ud2` killed by SIGILL (9),
//! `/test/threads exit_group` — four threads, one process — with status 7 (10); off again
//! (11), which waits until their records are on the disk. Then `setuid(1000)` (12), and
//! every call is EPERM, checked before the path is even read: off (13), a good path (14), a
//! path at nothing (15). Exit status: the number of the failed check, 0 if none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::fixture::{check, expect_err, expect_ok, run_child};
use tally_rt::process::{exit_code, exited, term_signal};
use tally_rt::sys;
use tally_rt::sys::probe::BadPtr;
use tally_rt::uapi::errno::{EFAULT, EISDIR, ENAMETOOLONG, ENOENT, ENOTDIR, EPERM};
use tally_rt::uapi::syscall::SYS_ACCT;
use tally_rt::Errno;

tally_rt::entry!(main);

/// The accounting file the self-test made.
const FILE: &str = "/var/TMP/PACCT";

/// `acct(addr)` with a raw address: the wrapper only passes strings it owns.
#[allow(unsafe_code)]
fn acct_at(addr: usize) -> Result<usize, Errno> {
    // SAFETY: acct only reads the NUL-terminated string at `addr` (or fails with EFAULT);
    // it writes nothing of this program's memory.
    let r = unsafe { sys::raw::syscall6(SYS_ACCT, addr, 0, 0, 0, 0, 0) };
    if r < 0 {
        Err(Errno(-r as i32))
    } else {
        Ok(r as usize)
    }
}

fn main() -> i32 {
    expect_ok(sys::acct(None), 0, 1);
    expect_err(sys::acct(Some("/var/TMP/NOSUCH")), ENOENT, 2);
    expect_err(sys::acct(Some("/var/TMP")), EISDIR, 3);
    expect_err(sys::acct(Some("/var/TMP/PACCT/X")), ENOTDIR, 4);
    expect_err(sys::acct(Some("/var/TMP/muchtoolongname")), ENAMETOOLONG, 5);
    expect_err(acct_at(BadPtr::UNMAPPED.addr()), EFAULT, 6);
    expect_ok(sys::acct(Some(FILE)), 0, 7);
    let s = run_child("/bin/hello", &["hello", "acct"], 8);
    check(exited(s) && exit_code(s) == 0, 8);
    let s = run_child("/bin/crash", &["crash", "ud2"], 9);
    check(!exited(s) && term_signal(s) == 4, 9);
    let s = run_child("/test/threads", &["threads", "exit_group"], 10);
    check(exited(s) && exit_code(s) == 7, 10);
    expect_ok(sys::acct(None), 0, 11);
    expect_ok(sys::setuid(1000), 0, 12);
    expect_err(sys::acct(None), EPERM, 13);
    expect_err(sys::acct(Some(FILE)), EPERM, 14);
    expect_err(acct_at(BadPtr::UNMAPPED.addr()), EPERM, 15);
    0
}
