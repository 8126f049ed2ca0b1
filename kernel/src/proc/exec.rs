//! # Starting a program from the ramdisk (`spawn`)
//!
//! Tally starts programs the way `posix_spawn` does, in one step and without `fork`:
//!
//! ```text
//!   spawn("/bin/hello", ["hello", "world"])
//!     1. find the file            ramdisk::find                 ENOENT
//!     2. plan the image           tally_loader::elf::plan         ENOEXEC, EINVAL, E2BIG
//!     3. a fresh memory map       Vm::new                       ENOMEM
//!        each PT_LOAD segment     Vm::load_segment (copies the file bytes, zeroes .bss)
//!     4. the initial stack        tally_loader::stack::StackImage (argc, argv, envp, auxv)
//!                                 Vm::setup_stack → rsp         E2BIG, EINVAL
//!     5. a new process            proc::spawn_user's path: child of the caller, named
//!                                 after the file, first instruction at e_entry
//! ```
//!
//! Steps 1, 2 and 4 are `tally-loader`'s bookkeeping, tested on the host against hostile
//! input; this file is the glue that maps pages. Everything is built before the process
//! exists, so a failure at any step frees what was built (dropping the `Vm` frees its
//! pages) and leaves no trace in the task table.
//!
//! Segments become regions of the memory map with the ELF permissions (`r-x` code, `r--`
//! read-only data, `rw-` data and `.bss`; never writable and executable at once), and the
//! heap (`brk`) starts at the first page after the highest one. The child inherits its
//! creator's uid and scheduling parameters; its name is the file's, and it is flagged as
//! having exec'd (the accounting flag AFORK is clear), as a `fork` + `exec` would leave it.
//!
//! **Exec in place** ([`exec_program`]): steps 1-4 as above, then instead of a new process
//! the *calling* task becomes the program (`user::exec_current`): same pid, parent,
//! children and accounting, new memory, name and user mode. Only a kernel thread alone in
//! its process may do it — init (pid 1) does, once the kernel's part of boot is done
//! (`main.rs`). A failure before the switch leaves the caller as it was.

use alloc::sync::Arc;
use alloc::vec::Vec;
use tally_loader::elf::{self, Limits};
use tally_loader::stack::{StackImage, AT_ENTRY, AT_PAGESZ};
use tally_loader::ExecError;
use tally_tasktable::CreateKind;

use super::ramdisk;
use super::user::{exec_current, start_user_task};
use super::vm::{Prot, Vm, USER_MIN_ADDR, USER_MMAP_BASE, USER_STACK_TOP};
use crate::sched;

/// What the ELF rules allow here: segments between `USER_MIN_ADDR` and the `mmap` area.
fn limits() -> Limits {
    Limits { user_start: USER_MIN_ADDR, user_end: USER_MMAP_BASE, ..Limits::default() }
}

fn errno(e: ExecError) -> i32 {
    e.errno()
}

/// Load the program at `path` into a fresh memory map with arguments `argv`: returns the
/// map, the entry point and the initial stack pointer.
pub(super) fn load(path: &str, argv: &[&[u8]]) -> Result<(Arc<Vm>, u64, u64), i32> {
    let file = ramdisk::find(path).map_err(errno)?;
    let plan = elf::plan(file, &limits()).map_err(|e| {
        log::debug!("spawn {path}: {e}");
        errno(e)
    })?;
    // The stack image first: it is pure computation and fails on oversized arguments
    // before any page is allocated.
    let auxv = [(AT_PAGESZ, 4096), (AT_ENTRY, plan.entry)];
    let image = StackImage::build(USER_STACK_TOP, argv, &[], &auxv).map_err(errno)?;
    let vm = Vm::new()?;
    for seg in &plan.segments {
        let prot = match (seg.flags.write, seg.flags.exec) {
            (_, true) => Prot::READ_EXEC,
            (true, false) => Prot::READ_WRITE,
            (false, false) => Prot::READ,
        };
        vm.load_segment(seg.vaddr, seg.data, seg.memsz, prot)?;
    }
    let rsp = vm.setup_stack(&image.bytes)?;
    if rsp != image.rsp {
        // The two computations of the stack pointer must agree, or argv's pointers are off.
        log::error!("spawn {path}: stack image built for {:#x}, placed at {rsp:#x}", image.rsp);
        return Err(tally_uapi::errno::EINVAL);
    }
    Ok((vm, plan.entry, rsp))
}

/// `spawn(path, argv)`: start the ramdisk program `path` as a child process of the caller;
/// returns its pid. Errors: see the module documentation.
pub fn spawn_program(path: &str, argv: &[&[u8]]) -> Result<i32, i32> {
    spawn_program_vm(path, argv).map(|(pid, _)| pid)
}

/// [`spawn_program`], also handing back the child's memory map: the self-tests read and
/// write their fixtures' result area through it (`tally_uapi::fixture`).
pub fn spawn_program_vm(path: &str, argv: &[&[u8]]) -> Result<(i32, Arc<Vm>), i32> {
    let (vm, entry, rsp) = load(path, argv)?;
    let name = path.rsplit('/').next().unwrap_or(path);
    let params = sched::inherited_params();
    let pid = start_user_task(name, params, Arc::clone(&vm), (entry, rsp, 0), CreateKind::Process, true)?;
    Ok((pid, vm))
}

/// Exec in place: the calling kernel thread becomes the ramdisk program `path` with
/// arguments `argv` (see the module documentation). Returns only on failure, with the
/// caller unchanged: the errors of [`spawn_program`], or `EINVAL` for a caller that is not
/// a kernel thread alone in its process. `argv` is taken by value and freed before the
/// jump to ring 3, which abandons the caller's stack.
pub fn exec_program(path: &'static str, argv: Vec<&[u8]>) -> Result<core::convert::Infallible, i32> {
    let (vm, entry, rsp) = load(path, &argv)?;
    drop(argv);
    let name = path.rsplit('/').next().unwrap_or(path);
    exec_current(name, vm, (entry, rsp, 0))
}
