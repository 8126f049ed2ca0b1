//! `arch_prctl`: a thread's FS base, where C libraries keep thread-local storage.
//!
//! On x86_64 a thread's `%fs`-relative accesses (`mov rax, fs:[0]`) add the FS base, a
//! 64-bit address the segment register itself cannot hold: it lives in the `FS_BASE` MSR,
//! which only the kernel may write. A C library's start-up code (musl's `__init_tp`, glibc's
//! `TLS_INIT_TP`) points it at the thread's control block with `ARCH_SET_FS`; `clone`'s
//! `CLONE_SETTLS` does the same for each new thread. The kernel keeps the value per thread
//! and loads it at every switch (`hal::context`). The whole start of a Linux program:
//! `docs/linux-abi.md`.

use tally_uapi::errno::EINVAL;
use tally_uapi::syscall::{ARCH_GET_FS, ARCH_SET_FS};

use super::{usercopy, Args, SysResult};
use crate::sched;

/// `arch_prctl(code, addr)`: see `tally_uapi::syscall::SYS_ARCH_PRCTL`.
pub fn arch_prctl(a: &Args) -> SysResult {
    // Linux reads `code` as an int.
    match super::int_arg(a[0]) as u32 as u64 {
        ARCH_SET_FS => sched::set_fs_base(a[1]).map(|()| 0),
        ARCH_GET_FS => usercopy::write_u64(a[1], sched::fs_base()).map(|()| 0),
        _ => Err(EINVAL),
    }
}
