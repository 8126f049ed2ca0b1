//! The accounting system calls: Linux's `acct(2)` and SGI CSA's `job_create`,
//! `job_getjid` and `csa_ctl` (their contracts are in `tally_uapi::syscall`; the kernel's
//! side is `acct/process_acct.rs` and `acct/job_acct.rs`, the semantics of CSA's calls the
//! `tally-csa` crate's).
//!
//! `acct(path)` checks in Linux's order: privilege first (`EPERM`, and the path is not even
//! read), then the path from user memory (`EFAULT`, `ENAMETOOLONG`), then the file itself —
//! opened by the file layer before anything changes, so a failed call leaves accounting as
//! it was. Turning accounting off, or switching files, waits until the old file's records
//! are on the disk.
//!
//! `csa_ctl(request, arg)` checks in this order: an unknown request (`EINVAL`), privilege
//! for the requests CSA reserves to root (`EPERM`), then the argument — copied in
//! (`EFAULT`), decoded and validated by the crate (`EINVAL`, `ENODATA`). For the requests
//! that answer in `arg`, `arg` must also be writable, and that is checked before anything
//! changes, so a read-only `arg` never leaves a change behind an `EFAULT`.

use alloc::vec;
use tally_csa::control::{check_request, needs_privilege, Caller, CtlArg};
use tally_uapi::csa::{ctl_arg_size, ctl_copies_out};
use tally_uapi::errno::{E2BIG, EINVAL, ENAMETOOLONG, EPERM};

use super::{int_arg, usercopy, Args, SysResult};
use crate::{acct, proc};

/// `job_create(uid)` → the new job id.
pub fn job_create(a: &Args) -> SysResult {
    if !proc::use_privilege() {
        return Err(EPERM);
    }
    acct::job_acct::job_create(a[0] as u32)
}

/// `job_getjid(pid)` → the job id of process `pid` (0: the caller).
pub fn job_getjid(a: &Args) -> SysResult {
    acct::job_acct::job_getjid(int_arg(a[0]))
}

/// `csa_ctl(request, arg)` → 0.
pub fn csa_ctl(a: &Args) -> SysResult {
    let request = int_arg(a[0]) as u32;
    let addr = a[1];
    // Privilege is looked at (and, when used, recorded as ASU) only where CSA requires it.
    let privileged = needs_privilege(request) && proc::use_privilege();
    check_request(request, privileged)?;
    let size = ctl_arg_size(request).ok_or(EINVAL)?;
    let mut bytes = vec![0u8; size];
    if size > 0 {
        usercopy::copy_from_user(addr, &mut bytes)?;
        if ctl_copies_out(request) {
            usercopy::check(addr, size as u64, true)?;
        }
    }
    let mut arg = CtlArg::decode(request, &bytes)?;
    let caller = Caller { pid: proc::current_pid() as u32, privileged };
    acct::job_acct::control(request, &caller, &mut arg)?;
    if ctl_copies_out(request) {
        let n = arg.encode(&mut bytes);
        usercopy::copy_to_user(addr, &bytes[..n])?;
    }
    Ok(0)
}

/// Longest path accepted (Linux's `PATH_MAX` includes the NUL).
const PATH_MAX: usize = 4095;

/// `acct(path)` → 0.
pub fn acct(a: &Args) -> SysResult {
    if !proc::use_privilege() {
        return Err(EPERM);
    }
    if a[0] == 0 {
        acct::process_acct::set_file(None)?;
        return Ok(0);
    }
    let path = usercopy::str_from_user(a[0], PATH_MAX).map_err(|e| if e == E2BIG { ENAMETOOLONG } else { e })?;
    acct::process_acct::set_file(Some(&path))?;
    Ok(0)
}
