//! Job control's calls: process groups and sessions (`setpgid`, `getpgid`, `getpgrp`,
//! `setsid`, `getsid`) and the console's foreground group (`ioctl` `TIOCGPGRP`/`TIOCSPGRP`, `TIOCSCTTY`,
//! `TIOCNOTTY`). The rules are the task table's (`tally_tasktable`'s `jobs.rs`) and
//! `proc/job_control.rs`'s; the contracts for user space are in `tally_uapi::syscall`,
//! `::signal` and `::tty`; the design in `docs/job-control.md`.

use tally_uapi::errno::ENOTTY;
use tally_uapi::tty::{TIOCGPGRP, TIOCNOTTY, TIOCSCTTY, TIOCSPGRP};

use super::{int_arg, usercopy, Args, SysResult};
use crate::file::OpenFile;
use crate::proc;

/// `setpgid(pid, pgid)`.
pub fn setpgid(a: &Args) -> SysResult {
    proc::setpgid(int_arg(a[0]), int_arg(a[1])).map(|()| 0)
}

/// `getpgid(pid)` (0: the caller).
pub fn getpgid(a: &Args) -> SysResult {
    proc::getpgid(int_arg(a[0])).map(|g| g as u64)
}

/// `getpgrp()`: the caller's process group.
pub fn getpgrp(_: &Args) -> SysResult {
    proc::getpgid(0).map(|g| g as u64)
}

/// `setsid()` → the new session id.
pub fn setsid(_: &Args) -> SysResult {
    proc::setsid().map(|s| s as u64)
}

/// `getsid(pid)` (0: the caller).
pub fn getsid(a: &Args) -> SysResult {
    proc::getsid(int_arg(a[0])).map(|s| s as u64)
}

/// Job control's `ioctl` requests on descriptor `f` (the caller checked the fd exists):
/// `None` if `request` is not one of them (the tty's own requests are handled elsewhere).
pub fn tty_ioctl(f: &OpenFile, request: u32, arg: u64) -> Option<SysResult> {
    let ours = matches!(request, TIOCGPGRP | TIOCSPGRP | TIOCSCTTY | TIOCNOTTY);
    if !ours {
        return None;
    }
    if !matches!(f, OpenFile::Console) {
        return Some(Err(ENOTTY));
    }
    Some(match request {
        TIOCGPGRP => {
            let r = usercopy::check(arg, 4, true).and_then(|()| proc::tcgetpgrp());
            r.and_then(|pgrp| usercopy::write_i32(arg, pgrp)).map(|()| 0)
        }
        TIOCSPGRP => usercopy::read_i32(arg).and_then(proc::tcsetpgrp).map(|()| 0),
        TIOCSCTTY => proc::set_controlling_tty(int_arg(arg) == 1).map(|()| 0),
        _ => proc::give_up_tty().map(|()| 0),
    })
}
