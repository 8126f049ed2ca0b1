//! `execve(path, argv, envp)` (59): replace the caller's program.
//!
//! The handler's part is the user side of the contract: the path (at most `PATH_MAX` bytes,
//! `ENAMETOOLONG`) and two NULL-terminated arrays of pointers to C strings, copied in with
//! Linux's limits — `EFAULT` for any bad pointer, `E2BIG` for a string longer than
//! `MAX_ARG_STRLEN` (`EXECVE_ARG_STRLEN`), more strings than fit, or more bytes in all than
//! the loader's `ARG_MAX` — all before anything changes, so a failing `execve` returns to an
//! untouched caller. A NULL `argv` or `envp` is an empty list (Linux accepts it and warns).
//! `proc::execve` then loads the program and replaces the process's (`proc/exec.rs`); on
//! success the frame becomes the new program's start: every register zero but `rip` (the
//! entry point) and `rsp` (the System V initial stack), as Linux's `start_thread` leaves it.

use alloc::vec::Vec;
use tally_loader::stack::ARG_MAX;
use tally_uapi::errno::{E2BIG, EFAULT, ENAMETOOLONG, ENOENT};
use tally_uapi::fs::PATH_MAX;
use tally_uapi::syscall::{EXECVE_ARG_STRLEN, EXECVE_MAX_STRINGS};

use super::{usercopy, SysResult, SyscallFrame};
use crate::proc;
use hal::regs::UserRegs;

/// Copy a NULL-terminated array of C strings at `addr` (NULL: none), adding each string's
/// bytes and NUL to `*total`.
fn strings(addr: u64, total: &mut usize) -> Result<Vec<Vec<u8>>, i32> {
    let mut out = Vec::new();
    if addr == 0 {
        return Ok(out);
    }
    for i in 0.. {
        if i >= EXECVE_MAX_STRINGS {
            return Err(E2BIG);
        }
        let at = addr.checked_add(i as u64 * 8).ok_or(EFAULT)?;
        let ptr = u64::from_le_bytes(usercopy::read_array::<8>(at)?);
        if ptr == 0 {
            break;
        }
        let s = usercopy::str_from_user(ptr, EXECVE_ARG_STRLEN - 1)?;
        *total = total.saturating_add(s.len() + 1).saturating_add(8);
        if *total > ARG_MAX {
            return Err(E2BIG);
        }
        out.push(s);
    }
    Ok(out)
}

/// `execve(path, argv, envp)`: 0 in the new program's `rax`; on failure `-errno` to the
/// unchanged caller.
pub fn execve(frame: &mut SyscallFrame) -> SysResult {
    let (path, argv, envp) = (frame.rdi, frame.rsi, frame.rdx);
    let path = usercopy::str_from_user(path, PATH_MAX - 1).map_err(|e| if e == E2BIG { ENAMETOOLONG } else { e })?;
    if path.is_empty() {
        return Err(ENOENT);
    }
    let mut total = 0;
    let args = strings(argv, &mut total)?;
    let env = strings(envp, &mut total)?;
    // A path that is not UTF-8 names nothing Tally can load.
    let path = core::str::from_utf8(&path).map_err(|_| ENOENT)?;
    let argv: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    let envp: Vec<&[u8]> = env.iter().map(Vec::as_slice).collect();
    let (entry, rsp) = proc::execve(path, &argv, &envp)?;
    *frame = UserRegs::start(entry, rsp, 0);
    Ok(0)
}
