//! Memory: `brk` (the heap's end), `mmap` and `munmap` (anonymous regions).
//!
//! The heap is a demand-zero region from the page after the program image up to the
//! *break*; `brk(addr)` moves the break and returns the new one, or the unchanged one if
//! `addr` is not acceptable (`brk(0)` is the usual way to ask where it is). Growing only
//! widens the region — pages appear when first touched — and shrinking unmaps and frees the
//! pages given back. The policy is `proc::vm::Vm::brk`.
//!
//! `mmap(addr, len, prot, flags, fd, offset)` makes anonymous private memory only (there
//! are no files): `flags` must say `MAP_PRIVATE | MAP_ANONYMOUS` (`MAP_SHARED` → `EINVAL`,
//! no `MAP_ANONYMOUS` → `EBADF`, as for a file mapping with no valid file), `fd` is
//! ignored, `offset` must be page-aligned and `len` non-zero (`EINVAL`). `prot` is any mix
//! of `PROT_READ/WRITE/EXEC` (every user page is readable; `PROT_NONE` reserves the range
//! and forbids all access); other bits are `EINVAL`. Placement, `MAP_FIXED` and
//! `MAP_FIXED_NOREPLACE`: `proc::vm::Vm::mmap`. A writable mapping larger than the machine's
//! user memory is `ENOMEM` unless `MAP_NORESERVE` (Linux's overcommit guess; `proc/oom.rs`);
//! a too large heap growth leaves the break where it was. Other flags (`MAP_POPULATE`,
//! `MAP_STACK`...) are accepted and ignored, as Linux ignores what it does not need. Pages
//! are demand-zero: the first touch of each is a minor fault (and, when no frame is left,
//! the process is OOM-killed: `proc/oom.rs`).
//!
//! `munmap(addr, len)`: `proc::vm::Vm::munmap`. `mprotect(addr, len, prot)`:
//! `proc::vm::Vm::mprotect` (for `mmap`'s regions; what musl's `pthread_create` needs for
//! its stacks' guard pages); `prot` bits other than `PROT_READ/WRITE/EXEC` are `EINVAL`.
//!
//! Every change moves the process's RSS/VM numbers (`tally_memacct`), stamped with its
//! CPU time.

use tally_uapi::errno::{EBADF, EINVAL, ENOMEM};
use tally_uapi::syscall::{
    MAP_ANONYMOUS, MAP_FIXED, MAP_FIXED_NOREPLACE, MAP_NORESERVE, MAP_PRIVATE, MAP_SHARED, PROT_EXEC, PROT_READ,
    PROT_WRITE,
};

use super::{int_arg, Args, SysResult};
use crate::proc::{
    self,
    vm::{MmapRequest, Prot},
};

pub fn brk(a: &Args) -> SysResult {
    let vm = proc::current_vm().ok_or(ENOMEM)?;
    Ok(vm.brk(a[0], proc::current_process_cpu_ticks()))
}

/// `mmap(addr, len, prot, flags, fd, offset)` → the mapping's address.
pub fn mmap(a: &Args) -> SysResult {
    let (addr, len, prot, flags, offset) =
        (a[0], a[1], int_arg(a[2]) as u32 as usize, int_arg(a[3]) as u32 as usize, a[5]);
    if len == 0 || offset % 4096 != 0 || prot & !(PROT_READ | PROT_WRITE | PROT_EXEC) != 0 {
        return Err(EINVAL);
    }
    match flags & 3 {
        MAP_PRIVATE => {}
        MAP_SHARED => return Err(EINVAL),
        _ => return Err(EINVAL),
    }
    if flags & MAP_ANONYMOUS == 0 {
        return Err(EBADF);
    }
    let req = MmapRequest {
        addr,
        len,
        prot: Prot { write: prot & PROT_WRITE != 0, exec: prot & PROT_EXEC != 0 },
        none: prot == 0,
        fixed: flags & MAP_FIXED != 0,
        noreplace: flags & MAP_FIXED_NOREPLACE != 0,
        noreserve: flags & MAP_NORESERVE != 0,
    };
    let vm = proc::current_vm().ok_or(ENOMEM)?;
    vm.mmap(&req, proc::current_process_cpu_ticks())
}

/// `munmap(addr, len)`.
pub fn munmap(a: &Args) -> SysResult {
    let vm = proc::current_vm().ok_or(EINVAL)?;
    vm.munmap(a[0], a[1], proc::current_process_cpu_ticks()).map(|()| 0)
}

/// `mprotect(addr, len, prot)`.
pub fn mprotect(a: &Args) -> SysResult {
    let prot = int_arg(a[2]) as u32 as usize;
    if prot & !(PROT_READ | PROT_WRITE | PROT_EXEC) != 0 {
        return Err(EINVAL);
    }
    let vm = proc::current_vm().ok_or(ENOMEM)?;
    let p = Prot { write: prot & PROT_WRITE != 0, exec: prot & PROT_EXEC != 0 };
    vm.mprotect(a[0], a[1], p, prot == 0).map(|()| 0)
}
