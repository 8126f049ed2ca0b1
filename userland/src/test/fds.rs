//! `/test/fds` — close-on-exec and the descriptor calls from ring 3, run from the shell by
//! the `descriptors` scenario (`tests/descriptors.toml`; numbered checks as every fixture,
//! `tally_uapi::fixture`).
//!
//! Checks: `pipe2(O_CLOEXEC)` sets `FD_CLOEXEC` on both ends (1) and `F_SETFD` clears it
//! (2); `F_GETFL` says `O_RDONLY`/`O_WRONLY` for the ends (3); `fcntl` on a descriptor that is
//! not open is `EBADF` (4), an unknown command `EINVAL` (5); `pipe2` with another flag is
//! `EINVAL` (6); `dup2` makes a copy without the flag (7), `dup3(O_CLOEXEC)` one with it (8),
//! `dup3` onto itself is `EINVAL` (9), `dup2` beyond the table `EBADF` (10),
//! `F_DUPFD_CLOEXEC` the lowest free descriptor at or above its argument, flagged (11);
//! a spawned child (`/test/fds child R W`) inherits the two descriptors without the flag
//! and none of those with it (12: its status, the number of its failed check); a reader
//! sees end of file once the last write end, its copies included, is closed (13); a child
//! that writes to a pipe nobody can read is killed by SIGPIPE (14). Exit status: the number
//! of the failed check, 0 if none (the child's own checks are numbered from 20).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use alloc::format;
use tally_rt::fixture::{check, expect_err, expect_ok, run_child, usage};
use tally_rt::process::{exited, term_signal};
use tally_rt::sys;
use tally_rt::uapi::errno::{EBADF, EINVAL};
use tally_rt::uapi::fs::{FD_CLOEXEC, F_DUPFD_CLOEXEC, F_GETFD, F_GETFL, O_CLOEXEC, O_RDONLY, O_WRONLY};
use tally_rt::uapi::signal::SIGPIPE;

extern crate alloc;

tally_rt::entry!(main);

const SELF: &str = "/test/fds";

fn getfd(fd: usize) -> Result<usize, tally_rt::Errno> {
    sys::fcntl(fd, F_GETFD, 0)
}

fn main() -> i32 {
    match tally_rt::arg(1) {
        None => parent(),
        Some("child") => child(),
        Some("write") => writer(),
        Some(_) => usage("[child CLOSED OPEN | write FD]"),
    }
}

fn parent() -> i32 {
    let Ok((r, w)) = sys::pipe2(O_CLOEXEC) else { return 1 };
    expect_ok(getfd(r), FD_CLOEXEC as usize, 1);
    expect_ok(getfd(w), FD_CLOEXEC as usize, 1);
    check(sys::set_cloexec(r, false).is_ok(), 2);
    expect_ok(getfd(r), 0, 2);
    check(sys::set_cloexec(r, true).is_ok(), 2);
    expect_ok(sys::fcntl(r, F_GETFL, 0), O_RDONLY as usize, 3);
    expect_ok(sys::fcntl(w, F_GETFL, 0), O_WRONLY as usize, 3);
    expect_err(sys::fcntl(900, F_GETFD, 0), EBADF, 4);
    expect_err(sys::fcntl(r, 9999, 0), EINVAL, 5);
    expect_err(sys::pipe2(1).map(|_| 0), EINVAL, 6);

    expect_ok(sys::dup2(w, 40), 40, 7);
    expect_ok(getfd(40), 0, 7);
    expect_ok(sys::dup3(w, 41, O_CLOEXEC), 41, 8);
    expect_ok(getfd(41), FD_CLOEXEC as usize, 8);
    expect_err(sys::dup3(w, w, 0), EINVAL, 9);
    expect_err(sys::dup2(w, 5000), EBADF, 10);
    expect_ok(sys::fcntl(w, F_DUPFD_CLOEXEC, 39), 39, 11);
    expect_ok(getfd(39), FD_CLOEXEC as usize, 11);

    // The child gets 40 (a plain copy of the write end) and nothing flagged: r, w, 39, 41.
    let (closed, open) = (format!("{r},{w},39,41"), "40");
    let status = run_child(SELF, &["fds", "child", &closed, open], 12);
    check(status == 0, 12);

    // Every write end closed (w, 39, 40, 41; the child's copy went with it): end of file.
    for fd in [w, 39, 40, 41] {
        expect_ok(sys::close(fd), 0, 13);
    }
    let mut b = [0u8; 1];
    expect_ok(sys::read(r, &mut b), 0, 13);
    expect_ok(sys::close(r), 0, 13);

    // A write end whose read end is gone everywhere: the writer dies of SIGPIPE.
    let Ok((r2, w2)) = sys::pipe2(0) else { return 14 };
    expect_ok(sys::close(r2), 0, 14);
    let status = run_child(SELF, &["fds", "write", &format!("{w2}")], 14);
    check(!exited(status) && term_signal(status) == i32::from(SIGPIPE), 14);
    0
}

/// `child CLOSED OPEN`: the comma-separated descriptors CLOSED must not be open here, the
/// ones in OPEN must be, without the flag.
fn child() -> i32 {
    let (Some(closed), Some(open)) = (tally_rt::arg(2), tally_rt::arg(3)) else { usage("child CLOSED OPEN") };
    for fd in closed.split(',').filter_map(|s| s.parse::<usize>().ok()) {
        expect_err(getfd(fd), EBADF, 20);
    }
    for fd in open.split(',').filter_map(|s| s.parse::<usize>().ok()) {
        expect_ok(getfd(fd), 0, 21);
    }
    0
}

/// `write FD`: write a byte to FD, whose pipe has no reader: SIGPIPE ends this process.
fn writer() -> i32 {
    let Some(fd) = tally_rt::arg(2).and_then(|s| s.parse::<usize>().ok()) else { usage("write FD") };
    let _ = sys::write(fd, b"x");
    // Not reached when SIGPIPE did its work.
    30
}
