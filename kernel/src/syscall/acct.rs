//! `acct(path)`: Linux's process accounting switch (the contract: `SYS_ACCT` in
//! `tally_uapi::syscall`).
//!
//! The order of the checks is Linux's: privilege first (`EPERM`, and the path is not even
//! read), then the path from user memory (`EFAULT`, `ENAMETOOLONG`), then the file itself —
//! opened by the file layer before anything changes, so a failed call leaves accounting as
//! it was (`acct/pacct.rs`). Turning accounting off, or switching files, waits until the
//! old file's records are on the disk.

use tally_uapi::errno::{E2BIG, ENAMETOOLONG, EPERM};

use super::{usercopy, Args, SysResult};
use crate::{acct, proc};

/// Longest path accepted (Linux's `PATH_MAX` includes the NUL).
const PATH_MAX: usize = 4095;

/// `acct(path)` → 0.
pub fn acct(a: &Args) -> SysResult {
    if !proc::use_privilege() {
        return Err(EPERM);
    }
    if a[0] == 0 {
        acct::pacct::set_file(None)?;
        return Ok(0);
    }
    let path = usercopy::str_from_user(a[0], PATH_MAX).map_err(|e| if e == E2BIG { ENAMETOOLONG } else { e })?;
    acct::pacct::set_file(Some(&path))?;
    Ok(0)
}
