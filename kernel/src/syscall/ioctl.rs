//! `ioctl(fd, request, arg)` (Linux number 16): device requests, Linux's numbers
//! (`tally_uapi::tty`). Only the console answers: job control's requests (the foreground
//! process group, the controlling terminal: `job_control.rs`). Any other descriptor is
//! `ENOTTY`, as Linux answers for a file that is not a terminal; an unknown request on the
//! console is `ENOTTY` too (Linux's tty answers `-ENOIOCTLCMD` → `ENOTTY`). `EBADF` no such
//! descriptor.

use tally_uapi::errno::ENOTTY;

use super::{int_arg, io, job_calls, Args, SysResult};

/// `ioctl(fd, request, arg)`.
pub fn ioctl(a: &Args) -> SysResult {
    let (fd, request, arg) = (int_arg(a[0]), a[1] as u32, a[2]);
    let f = io::file(fd)?;
    job_calls::tty_ioctl(&f, request, arg).unwrap_or(Err(ENOTTY))
}
