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
//! * `sysinfo(info)`: Linux's `struct sysinfo`: uptime in whole seconds rounded up (as
//!   Linux), RAM in bytes (`mem_unit` 1): `totalram` the frames user memory may have,
//!   `freeram` the free frames; no swap, no shared or buffer memory, `procs` the tasks in the
//!   table (threads and zombies, as Linux's `nr_threads`). Deviation: the three load averages
//!   are 0 — Tally keeps no decaying load average (its run-queue kstat has the undecayed one).
//!   musl's `sysconf(_SC_PHYS_PAGES)` and `_SC_AVPHYS_PAGES` read it.
//! * `sched_getaffinity(pid, len, mask)`: one CPU: the mask is bit 0, 8 bytes (Linux's
//!   `cpumask` of `unsigned long`s), and the call returns 8; `EINVAL` for `len` below 8 or
//!   not a multiple of 8, `ESRCH` no such pid (0: the caller). musl's
//!   `sysconf(_SC_NPROCESSORS_ONLN)` counts its bits.
//! * `getgid`/`getegid`: the task's group id; `geteuid`: its uid — Tally keeps one uid
//!   (no saved or effective uid apart from the real one: `setuid` sets all of them).

use tally_uapi::errno::{EFAULT, EINVAL, ERANGE, ESRCH};
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

/// `sysinfo(info)`.
pub fn sysinfo(a: &Args) -> SysResult {
    let ns = crate::base::time::monotonic_ns().unwrap_or(0);
    let page = 4096;
    let info = tally_uapi::utsname::Sysinfo {
        uptime: ns.div_ceil(1_000_000_000) as i64,
        totalram: crate::base::memory::frames_for_users() * page,
        freeram: crate::base::memory::free_frames() * page,
        procs: proc::nr_tasks().min(u16::MAX as usize) as u16,
        mem_unit: 1,
        ..Default::default()
    };
    usercopy::copy_to_user(a[0], &info.to_bytes())?;
    Ok(0)
}

/// `sched_getaffinity(pid, len, mask)`.
pub fn sched_getaffinity(a: &Args) -> SysResult {
    let (pid, len, addr) = (int_arg(a[0]), a[1], a[2]);
    if len < 8 || len % 8 != 0 {
        return Err(EINVAL);
    }
    if pid < 0 || (pid != 0 && proc::ppid(pid).is_none()) {
        return Err(ESRCH);
    }
    usercopy::copy_to_user(addr, &1u64.to_le_bytes())?;
    Ok(8)
}
