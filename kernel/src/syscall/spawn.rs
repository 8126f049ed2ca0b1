//! New tasks from user space: `spawn` (a program from the ramdisk, as a child process) and
//! `thread_create` (another thread of the caller's process).
//!
//! Both only copy their arguments in and hand over to the task layer (`proc/exec.rs`,
//! `proc/threads.rs`); the contracts are in `tally_uapi::syscall`.
//!
//! `spawn(path, path_len, argv, argc)` takes the path and every argument as (pointer,
//! length) pairs — `argv` points to `argc` [`SpawnArg`]s — so no string needs a NUL and no
//! length is guessed. Sizes are checked before anything is allocated: at most
//! `SPAWN_PATH_MAX` bytes of path (`ENAMETOOLONG`), `SPAWN_MAX_ARGS` arguments and 128 KiB
//! of argument bytes (`E2BIG`), so a hostile `argc` or length costs the kernel nothing.
//! The 5th and 6th arguments are `posix_spawn`'s process-group attribute (flags
//! `POSIX_SPAWN_SETPGROUP`/`POSIX_SPAWN_SETSID`, and the group): the child is in its group
//! before it can run, which is how a shell puts a job in a group of its own without a race
//! (`docs/job-control.md`).

use alloc::vec::Vec;
use tally_loader::stack::ARG_MAX;
use tally_tasktable::SpawnGroup;
use tally_uapi::errno::{E2BIG, EINVAL, ENAMETOOLONG, ENOENT};
use tally_uapi::syscall::{
    SpawnArg, POSIX_SPAWN_SETPGROUP, POSIX_SPAWN_SETSID, SPAWN_MAX_ARGS, SPAWN_PATH_MAX, SPAWN_TCSETPGRP,
};

use super::{int_arg, usercopy, Args, SysResult};
use crate::proc::{self, SpawnAttr};

// The argument array is bounded as its strings are: a hostile `argc` costs at most ARG_MAX.
const _: () = assert!(SPAWN_MAX_ARGS * core::mem::size_of::<SpawnArg>() <= ARG_MAX);

/// `spawn(path, path_len, argv, argc)` → the child's pid.
pub fn spawn(a: &Args) -> SysResult {
    let (path_addr, path_len, argv_addr, argc) = (a[0], a[1], a[2], a[3]);
    let attr = spawn_attr(a[4], int_arg(a[5]))?;
    if path_len > SPAWN_PATH_MAX as u64 {
        return Err(ENAMETOOLONG);
    }
    if argc > SPAWN_MAX_ARGS as u64 {
        return Err(E2BIG);
    }
    let mut path = alloc::vec![0u8; path_len as usize];
    usercopy::copy_from_user(path_addr, &mut path)?;
    let mut pairs = alloc::vec![0u8; argc as usize * core::mem::size_of::<SpawnArg>()];
    usercopy::copy_from_user(argv_addr, &mut pairs)?;
    let mut args: Vec<Vec<u8>> = Vec::with_capacity(argc as usize);
    let mut total = 0u64;
    for p in pairs.as_chunks::<16>().0 {
        let word = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().unwrap_or([0; 8]));
        let (addr, len) = (word(0), word(8));
        total = total.saturating_add(len).saturating_add(1);
        if total > ARG_MAX as u64 {
            return Err(E2BIG);
        }
        let mut s = alloc::vec![0u8; len as usize];
        usercopy::copy_from_user(addr, &mut s)?;
        args.push(s);
    }
    // A path that is not UTF-8 names nothing in the archive.
    let path = core::str::from_utf8(&path).map_err(|_| ENOENT)?;
    let argv: Vec<&[u8]> = args.iter().map(|s| s.as_slice()).collect();
    proc::spawn_program_in(path, &argv, attr).map(|pid| pid as u64)
}

/// The child's process group from `spawn`'s 5th and 6th arguments (flags, pgroup), as
/// `posix_spawnattr_setflags`/`setpgroup`, and `SPAWN_TCSETPGRP`: `EINVAL` an unknown flag,
/// both group flags at once, or a negative group.
fn spawn_attr(flags: u64, pgroup: i32) -> Result<SpawnAttr, i32> {
    let (setpgroup, setsid) = (POSIX_SPAWN_SETPGROUP as u64, POSIX_SPAWN_SETSID as u64);
    let foreground = flags & SPAWN_TCSETPGRP as u64 != 0;
    let flags = flags & !(SPAWN_TCSETPGRP as u64);
    if flags & !(setpgroup | setsid) != 0 || flags == setpgroup | setsid {
        return Err(EINVAL);
    }
    let group = match flags {
        0 => SpawnGroup::Inherit,
        f if f == setsid => SpawnGroup::NewSession,
        _ if pgroup < 0 => return Err(EINVAL),
        _ => SpawnGroup::Join(pgroup),
    };
    Ok(SpawnAttr { group, foreground })
}

/// `thread_create(entry, stack_top, arg)` → the new thread's id.
pub fn thread_create(a: &Args) -> SysResult {
    let (entry, stack_top, arg) = (a[0], a[1], a[2]);
    proc::create_thread(entry, stack_top, arg, |ret_slot| usercopy::write_u64(ret_slot, 0)).map(|tid| tid as u64)
}
