//! # Starting a program from the ramdisk: `spawn`, and exec in place
//!
//! Tally starts programs the way `posix_spawn` does, in one step and without `fork`: find the
//! file in the ramdisk, plan its image and build its initial stack (`tally_loader`'s
//! bookkeeping, tested on the host against hostile input), make a fresh memory map and load
//! each segment into it (`vm.rs`), then start a new process, child of the caller, at the
//! entry point ([`spawn_program`]). Everything is built before the process exists, so a
//! failure at any step frees what was built and leaves no trace in the task table. The child
//! inherits its creator's uid and scheduling parameters and is flagged as having exec'd
//! (AFORK clear). [`exec_program`] loads the same way but turns the *calling* kernel thread
//! into the program (`user.rs`): init does, once the kernel's part of boot is done. The
//! steps with their errors: `docs/user-mode.md`.

use alloc::sync::Arc;
use alloc::vec::Vec;
use tally_loader::elf::{self, Limits};
use tally_loader::stack::{StackImage, AT_ENTRY, AT_PAGESZ};
use tally_loader::ExecError;
use tally_tasktable::CreateKind;

use super::create::SpawnAttr;

use super::ramdisk;
use super::user::{exec_current, start_user_task, UserStart};
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

/// [`spawn_program`] with `spawn`'s attributes: the child is put in its process group (and
/// that group made the console's foreground group) before it runs ([`SpawnAttr`]).
pub fn spawn_program_in(path: &str, argv: &[&[u8]], attr: SpawnAttr) -> Result<i32, i32> {
    let (vm, entry, rsp) = load(path, argv)?;
    let name = path.rsplit('/').next().unwrap_or(path);
    let params = sched::inherited_params();
    start_user_task(name, params, vm, UserStart::at(entry, rsp, 0), (CreateKind::Process, attr), true)
}

/// [`spawn_program`], also handing back the child's memory map: the self-tests read and
/// write their fixtures' result area through it (`tally_uapi::fixture`).
pub fn spawn_program_vm(path: &str, argv: &[&[u8]]) -> Result<(i32, Arc<Vm>), i32> {
    let (vm, entry, rsp) = load(path, argv)?;
    let name = path.rsplit('/').next().unwrap_or(path);
    let params = sched::inherited_params();
    let kind = (CreateKind::Process, SpawnAttr::NONE);
    let pid = start_user_task(name, params, Arc::clone(&vm), UserStart::at(entry, rsp, 0), kind, true)?;
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
    exec_current(name, vm, UserStart::at(entry, rsp, 0))
}
