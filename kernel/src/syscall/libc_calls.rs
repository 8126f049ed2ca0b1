//! Small calls every C library makes: `uname`, `getrandom`, `getcwd`, and the remaining
//! ids (`getgid`, `geteuid`, `getegid`). Each answers exactly as Linux does; what Tally
//! decides differently (the `uname` strings, no working directory) is in
//! `docs/linux-abi.md`.
//!
//! * `uname(buf)`: Linux's `struct utsname` ([`tally_uapi::utsname`]: sysname `Linux`).
//!   `EFAULT` for a bad `buf`.
//! * `getrandom(buf, len, flags)`: `len` bytes of the kernel's ChaCha20 generator
//!   (`base/random.rs`); never blocks (seeded at boot), so `GRND_NONBLOCK` changes nothing
//!   and `GRND_RANDOM` (the old blocking pool) reads the same generator, as on Linux since
//!   5.6. `EINVAL` an unknown flag or `GRND_INSECURE` with `GRND_RANDOM`; `EFAULT` a bad
//!   buffer — after some bytes, the count so far, as Linux's `copy_to_iter` leaves it. One
//!   call gives at most `MAX_RW_COUNT` bytes (a longer request is short, as Linux's).
//! * `getcwd(buf, size)`: the working directory is always `/`: Tally has no `chdir`
//!   (paths are absolute: the ramdisk's `/bin` and `/var`). Returns the length with the
//!   NUL (the system call's value; the C library returns `buf`); `ERANGE` if `size` < 2.
//! * `getgid`/`getegid`: the task's group id; `geteuid`: its uid — Tally keeps one uid
//!   (no saved or effective uid apart from the real one: `setuid` sets all of them).

use tally_uapi::errno::{EFAULT, EINVAL, ERANGE};
use tally_uapi::uio::{GRND_INSECURE, GRND_NONBLOCK, GRND_RANDOM, MAX_RW_COUNT};

use super::{int_arg, usercopy, Args, SysResult};
use crate::base::random;
use crate::proc;

/// `uname(buf)`.
pub fn uname(a: &Args) -> SysResult {
    usercopy::copy_to_user(a[0], &tally_uapi::utsname::utsname_bytes())?;
    Ok(0)
}

/// `getrandom(buf, len, flags)`.
pub fn getrandom(a: &Args) -> SysResult {
    let (addr, len, flags) = (a[0], a[1].min(MAX_RW_COUNT), int_arg(a[2]) as u32);
    if flags & !(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) != 0
        || flags & (GRND_INSECURE | GRND_RANDOM) == (GRND_INSECURE | GRND_RANDOM)
    {
        return Err(EINVAL);
    }
    let mut done = 0u64;
    let mut piece = [0u8; 256];
    while done < len {
        let n = (len - done).min(piece.len() as u64) as usize;
        random::fill(&mut piece[..n]);
        if let Err(e) = usercopy::copy_to_user(addr + done, &piece[..n]) {
            return if done > 0 { Ok(done) } else { Err(e) };
        }
        done += n as u64;
    }
    Ok(done)
}

/// `getcwd(buf, size)`: `/`.
pub fn getcwd(a: &Args) -> SysResult {
    let (addr, size) = (a[0], a[1]);
    const CWD: &[u8] = b"/\0";
    if size < CWD.len() as u64 {
        return Err(ERANGE);
    }
    usercopy::copy_to_user(addr, CWD).map_err(|_| EFAULT)?;
    Ok(CWD.len() as u64)
}

pub fn getgid(_: &Args) -> SysResult {
    Ok(u64::from(proc::current_gid()))
}

pub fn geteuid(_: &Args) -> SysResult {
    Ok(u64::from(proc::current_uid()))
}
