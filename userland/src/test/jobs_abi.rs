//! `/test/jobs_abi` — job control's system calls from ring 3, with Linux's errnos (run by
//! init, which starts it as the leader of a session of its own): the scenario `jobs_abi`.
//!
//! Checks: it leads its session and group (1-2); `setsid` again is `EPERM` (3); the console
//! is not its controlling terminal yet: `tcgetpgrp` is `ENOTTY` (4), `TIOCSCTTY` takes it (5)
//! and the foreground group is its own (6); `ioctl` on a pipe is `ENOTTY` (7); a child
//! spawned into a new group (`POSIX_SPAWN_SETPGROUP`) leads it (8-9) in the same session
//! (10); `setpgid` on it is `EACCES` (it has exec'd), on a pid that is not a child `ESRCH`,
//! into a group that does not exist `EPERM`, a negative group `EINVAL` (11-14); spawn with a
//! group of no session `EPERM`, unknown flags `EINVAL` (15-16); `kill(-pgid, SIGTSTP)` stops
//! it and `wait4(-pgid, WUNTRACED)` says so (17-18); `wait4` without `WUNTRACED` does not
//! (19); `SIGCONT` and `WCONTINUED` (20-21); `tcsetpgrp` to it and back (22-23), `ESRCH` for
//! a group that does not exist (24); `rt_sigaction`: `SIG_IGN` then reading it back (25-26),
//! `EINVAL` for SIGKILL and for a handler of SIGSTOP (27-28); `kill(-pgid, SIGKILL)` ends the stopped
//! child (29-30); `kill(-999999, 0)` is `ESRCH` (31). A console reader (`cat`) spawned as the
//! foreground job (32), stopped with SIGSTOP (33) and continued in the background once the
//! console is taken back (34) — `bg` after ^Z — is stopped again by SIGTTIN instead of going on
//! reading from the background (35), then killed (36). Exit status: the failed check, 0 if
//! none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::fixture::{check, expect_err, expect_ok, positive};
use tally_rt::uapi::errno::{EACCES, EINVAL, ENOTTY, EPERM, ESRCH};
use tally_rt::uapi::signal::{SIGCONT, SIGKILL, SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU};
use tally_rt::uapi::syscall::{
    POSIX_SPAWN_SETPGROUP, POSIX_SPAWN_SETSID, SPAWN_TCSETPGRP, WCONTINUED, WNOHANG, WUNTRACED,
};
use tally_rt::uapi::wait::{wifcontinued, wifstopped, wstopsig};
use tally_rt::{println, sys};

tally_rt::entry!(main);

fn main() -> i32 {
    let me = sys::getpid().unwrap_or(0);
    expect_ok(sys::getsid(0), me, 1);
    expect_ok(sys::getpgrp(), me, 2);
    expect_err(sys::setsid(), EPERM, 3);
    expect_err(sys::tcgetpgrp(0), ENOTTY, 4);
    expect_ok(sys::set_controlling_tty(0, false), 0, 5);
    expect_ok(sys::tcgetpgrp(0), me, 6);
    let (r, w) = sys::pipe().unwrap_or((0x7fff_0000, 0x7fff_0001));
    let mut pgrp: i32 = 0;
    expect_err(sys::ioctl_int(r, tally_rt::uapi::tty::TIOCGPGRP, &mut pgrp), ENOTTY, 7);
    let _ = (sys::close(r), sys::close(w));

    let child = positive(sys::spawn_attr("/bin/spin", &["spin", "100000"], POSIX_SPAWN_SETPGROUP, 0), 8);
    expect_ok(sys::getpgid(child), child, 9);
    expect_ok(sys::getsid(child), me, 10);
    expect_err(sys::setpgid(child, 0), EACCES, 11);
    expect_err(sys::setpgid(1, 0), ESRCH, 12);
    expect_err(sys::setpgid(0, 424_242), EPERM, 13);
    expect_err(sys::setpgid(0, -5isize as usize), EINVAL, 14);
    expect_err(sys::spawn_attr("/bin/hello", &["hello"], POSIX_SPAWN_SETPGROUP, 424_242), EPERM, 15);
    expect_err(sys::spawn_attr("/bin/hello", &["hello"], POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSID, 0), EINVAL, 16);

    let group = -(child as isize);
    expect_ok(sys::kill(group, i32::from(SIGTSTP)), 0, 17);
    let mut status = 0;
    expect_ok(sys::wait4(group, Some(&mut status), WUNTRACED, None), child, 18);
    check(wifstopped(status) && wstopsig(status) == i32::from(SIGTSTP), 18);
    expect_ok(sys::wait4(group, Some(&mut status), WNOHANG, None), 0, 19);
    expect_ok(sys::kill(group, i32::from(SIGCONT)), 0, 20);
    expect_ok(sys::wait4(child as isize, Some(&mut status), WCONTINUED, None), child, 21);
    check(wifcontinued(status), 21);

    expect_ok(sys::tcsetpgrp(0, child), 0, 22);
    expect_ok(sys::tcgetpgrp(0), child, 22);
    expect_ok(sys::tcsetpgrp(0, me), 0, 23);
    expect_err(sys::tcsetpgrp(0, 424_242), ESRCH, 24);

    expect_ok(sys::ignore_signal(SIGTTOU, true).map(usize::from), 0, 25);
    expect_ok(sys::ignore_signal(SIGTTOU, false).map(usize::from), 1, 26);
    expect_err(sys::ignore_signal(SIGKILL, true).map(usize::from), EINVAL, 27);
    expect_err(sys::sigaction_handler(SIGSTOP, 0x40_1000).map(|h| h as usize), EINVAL, 28);

    expect_ok(sys::kill(group, i32::from(SIGSTOP)), 0, 29);
    expect_ok(sys::wait4(group, Some(&mut status), WUNTRACED, None), child, 29);
    expect_ok(sys::kill(group, i32::from(SIGKILL)), 0, 30);
    expect_ok(sys::wait4(child as isize, Some(&mut status), 0, None), child, 30);
    check(status == i32::from(SIGKILL), 30);
    expect_err(sys::kill(-999_999, 0), ESRCH, 31);

    // ^Z then bg on a job waiting in a console read: whether `cat` was already asleep in its
    // read when stopped, or not yet reading, once continued in the background it must not
    // read — SIGTTIN stops it (a blocking wait: without that, the scenario times out).
    let reader = positive(sys::spawn_attr("/bin/cat", &["cat"], POSIX_SPAWN_SETPGROUP | SPAWN_TCSETPGRP, 0), 32);
    let _ = sys::sleep_ms(20);
    let group = -(reader as isize);
    expect_ok(sys::kill(group, i32::from(SIGSTOP)), 0, 33);
    expect_ok(sys::wait4(group, Some(&mut status), WUNTRACED, None), reader, 33);
    check(wifstopped(status) && wstopsig(status) == i32::from(SIGSTOP), 33);
    expect_ok(sys::tcsetpgrp(0, me), 0, 34);
    expect_ok(sys::kill(group, i32::from(SIGCONT)), 0, 34);
    expect_ok(sys::wait4(group, Some(&mut status), WCONTINUED, None), reader, 34);
    expect_ok(sys::wait4(group, Some(&mut status), WUNTRACED, None), reader, 35);
    check(wifstopped(status) && wstopsig(status) == i32::from(SIGTTIN), 35);
    expect_ok(sys::kill(group, i32::from(SIGKILL)), 0, 36);
    expect_ok(sys::wait4(group, Some(&mut status), 0, None), reader, 36);
    check(status == i32::from(SIGKILL), 36);
    println!("jobs_abi: 36 checks passed");
    0
}
