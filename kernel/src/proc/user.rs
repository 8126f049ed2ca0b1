//! # User processes: a kernel thread that drops to ring 3
//!
//! A user process is born as a kernel thread like any other (`create.rs`), with three
//! differences: its thread runs on the process's address space (`vm.rs`), its scheduler
//! entity is marked as having a user space, and its body is [`start_user`], which leaves
//! nothing of its own on the kernel stack, switches the task's running microstate to
//! ONCPU_USR and jumps to ring 3 (`hal::usermode::enter_user`). From then on it comes back
//! only through system calls (ONCPU_SYS), exceptions (ONCPU_TRAP) and interrupts.
//!
//! **Exec in place** ([`exec_current`]): a kernel thread alone in its process — init — becomes
//! a user process without a new task: its thread switches to the new address space at once
//! (`sched::exec_user_space`) and takes the same [`start_user`] path, keeping its pid,
//! parent, children, counters and clocks, as Linux's `kernel_init` becomes `/sbin/init`.
//! The whole path from the ramdisk to ring 3: `docs/user-mode.md`.

use alloc::sync::Arc;
use core::convert::Infallible;
use tally_tasktable::CreateKind;

use super::create::SpawnAttr;
use tally_uapi::errno::{EBADF, EINVAL};

use super::create::start_task;
use super::vm::{FaultOutcome, Vm, USER_END};
use super::Payload;
use crate::file::{FileTable, OpenFile};
use crate::sched::{self, SchedParams, ThreadStart};
use hal::regs::UserRegs;

/// How a user thread starts: every register (a new program's are all zero but `rip`,
/// `rsp` and perhaps `rdi`; a forked child's are its parent's, with `rax = 0`) and its FS
/// base (a new thread's TLS pointer, `clone`'s `CLONE_SETTLS`; a forked child's copy).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserStart {
    pub regs: UserRegs,
    pub fs_base: u64,
}

impl UserStart {
    /// Start at `rip` with stack pointer `rsp` and `rdi = arg`, every other register zero.
    pub fn at(rip: u64, rsp: u64, arg: u64) -> UserStart {
        UserStart { regs: UserRegs::start(rip, rsp, arg), fs_base: 0 }
    }
}

/// What the task table keeps for a task that has a user mode.
pub struct UserContext {
    vm: Arc<Vm>,
    /// The process's descriptors, shared by its threads (`crate::file`).
    files: Arc<FileTable>,
    /// Where user mode starts (read once, by the thread's first run).
    start: UserStart,
    /// `set_tid_address`/`CLONE_CHILD_CLEARTID`: the user address where this thread's tid
    /// is cleared, and a futex waiter woken, when it exits (0: none) — how a thread library
    /// learns that a thread it joins has ended.
    clear_child_tid: u64,
}

impl UserContext {
    pub(super) fn vm(&self) -> &Arc<Vm> {
        &self.vm
    }

    pub(super) fn files(&self) -> &Arc<FileTable> {
        &self.files
    }
}

/// Start a new user process, child of the current task, running `vm`'s program from `entry`
/// with stack pointer `rsp` and `arg` in `rdi`. Returns its pid. `EINVAL` if `entry` or
/// `rsp` is not a user address.
pub fn spawn_user(name: &str, params: SchedParams, vm: Arc<Vm>, entry: u64, rsp: u64, arg: u64) -> Result<i32, i32> {
    start_user_task(name, params, vm, UserStart::at(entry, rsp, arg), (CreateKind::Process, SpawnAttr::NONE), false)
}

/// Turn the running task, a kernel thread, into a user process running `vm`'s program from
/// `entry` with stack pointer `rsp` and `arg` in `rdi`, in place; returns only on failure
/// (see `exec_current`). The self-tests' counterpart of `exec_program`.
pub fn exec_user(name: &str, vm: Arc<Vm>, entry: u64, rsp: u64, arg: u64) -> Result<Infallible, i32> {
    exec_current(name, vm, UserStart::at(entry, rsp, arg))
}

/// Start a user task of `kind` (a new process, or a thread of the current process) running
/// `vm` from `start`; `exec`: a loaded program (see `start_task`).
pub(super) fn start_user_task(
    name: &str,
    params: SchedParams,
    vm: Arc<Vm>,
    start: UserStart,
    kind: (CreateKind, SpawnAttr),
    exec: bool,
) -> Result<i32, i32> {
    // A thread shares its process's descriptors; a new process gets a copy of its parent's
    // (posix_spawn), or the console if the kernel starts it.
    let parent_files = current_files();
    let files = match (kind.0, parent_files) {
        (CreateKind::Thread, Some(f)) => f,
        (_, Some(f)) => Arc::new(f.inherit()),
        (_, None) => Arc::new(FileTable::with_console()),
    };
    start_user_task_with(name, params, (vm, files), start, kind, (exec, None))
}

/// [`start_user_task`] with the descriptors given (`fork` copies them all) and, for a
/// `vfork` child, the parent thread to wake when it execs or exits.
pub(super) fn start_user_task_with(
    name: &str,
    params: SchedParams,
    (vm, files): (Arc<Vm>, Arc<FileTable>),
    start: UserStart,
    kind: (CreateKind, SpawnAttr),
    (exec, vfork_parent): (bool, Option<tally_tasktable::TaskKey>),
) -> Result<i32, i32> {
    if start.regs.rip >= USER_END || start.regs.rsp > USER_END || start.fs_base >= USER_END {
        return Err(EINVAL);
    }
    let thread = sched::new_thread(Some(Arc::clone(vm.space())))?;
    let payload =
        Payload { user: Some(UserContext { vm, files, start, clear_child_tid: 0 }), group_exit: None, vfork_parent };
    let body = ThreadStart { body: start_user, arg: 0, exit: exit_after_start };
    start_task(name, params, payload, thread, body, kind, exec)
}

/// Turn the running task into a user process running `vm` from `start`, in place (see the module documentation), named `name` and flagged as exec'd; returns
/// only on failure. The task must be a kernel thread alone in its process — init is — so
/// there is no old memory whose accounting would have to be folded into the process's
/// totals, and no other thread to stop (`EINVAL` otherwise, or for a non-user `start`).
/// Its descriptors become the console. The memory integrals start at the process's CPU
/// time now (`MemAcct::start_at`).
pub(super) fn exec_current(name: &str, vm: Arc<Vm>, start: UserStart) -> Result<Infallible, i32> {
    if start.regs.rip >= USER_END || start.regs.rsp > USER_END {
        return Err(EINVAL);
    }
    super::with(|p| {
        let cur = sched::current();
        let alone = p.table.threads(cur).is_ok_and(|t| t.len() == 1);
        match p.table.get(cur) {
            Ok(t) if alone && !t.payload().is_user() => Ok(()),
            _ => Err(EINVAL),
        }
    })?;
    let files = Arc::new(FileTable::with_console());
    // Before anything changes: the one step here that can fail.
    sched::map_vvar_header(vm.space())?;
    hal::cpu::without_interrupts(|| {
        // From here to ring 3 nothing else runs: the thread, the task and the memory map
        // change as one.
        sched::exec_user_space(Arc::clone(vm.space()));
        let cpu = super::with(|p| {
            let cur = sched::current();
            if let Ok(t) = p.table.get_mut(cur) {
                t.exec(name.as_bytes());
                t.payload_mut().user = Some(UserContext { vm: Arc::clone(&vm), files, start, clear_child_tid: 0 });
            }
            p.process_cpu(cur, hal::tsc::read())
        });
        vm.start_accounting_at(cpu);
    });
    // Nothing that needs dropping may stay on this stack: `start_user` abandons it.
    drop(vm);
    start_user(0);
    // `start_user` returns only for a task without user state, installed just above.
    Err(EINVAL)
}

/// `execve` past its checks: the running user process, alone in it (the caller killed its
/// other threads), becomes the program loaded in `vm` named `name`, starting at `start`.
/// Nothing here can fail but the vvar header's page table (`ENOMEM`, before anything
/// changes). In order, as Linux's `begin_new_exec`:
///
/// 1. the thread switches to the new address space (`sched::exec_user_space`: CR3, a fresh
///    FPU state, its clock page mapped there);
/// 2. the task takes the new map and start, its name becomes the program's and AFORK is
///    cleared (`Task::exec`); the new map's integrals start at the process's CPU time now;
/// 3. the old map is let go of (`Vm::release`): its pages freed if the process was its last
///    user, and its final integrals and high-water marks carried into the new map
///    (`Vm::carry`), so the process's memory numbers span both programs; a `vfork` child's
///    borrowed map just goes back to its parent, whom this wakes;
/// 4. the close-on-exec descriptors are closed and handled signals reset
///    (`signal::on_exec`).
///
/// The caller then starts the program (the system call rewrites its frame).
pub(super) fn exec_replace(name: &str, vm: Arc<Vm>, start: UserStart) -> Result<(), i32> {
    if start.regs.rip >= USER_END || start.regs.rsp > USER_END {
        return Err(EINVAL);
    }
    sched::map_vvar_header(vm.space())?;
    let (old, files) = hal::cpu::without_interrupts(|| {
        sched::exec_user_space(Arc::clone(vm.space()));
        let (old, files, cpu) = super::with(|p| {
            let cur = sched::current();
            let mut old = None;
            let mut files = None;
            if let Ok(t) = p.table.get_mut(cur) {
                t.exec(name.as_bytes());
                if let Some(u) = t.payload_mut().user.as_mut() {
                    old = Some(core::mem::replace(&mut u.vm, Arc::clone(&vm)));
                    u.start = start;
                    // The old program's tid word is gone with its memory (Linux's
                    // exec_mm_release forgets it too).
                    u.clear_child_tid = 0;
                    files = Some(Arc::clone(&u.files));
                }
            }
            p.vfork_done(cur);
            (old, files, p.process_cpu(cur, hal::tsc::read()))
        });
        vm.start_accounting_at(cpu);
        if let Some(old) = &old {
            vm.carry(&old.release(cpu));
        }
        // A new program starts without TLS: musl's start code sets its own.
        let _ = sched::set_fs_base(start.fs_base);
        (old, files)
    });
    drop(old);
    if let Some(files) = files {
        files.close_on_exec();
    }
    super::signal::on_exec();
    Ok(())
}

/// The kernel-side entry of a user thread (its [`ThreadStart`] body, interrupts enabled):
/// read where to start, then leave for ring 3 for good — unless its process was killed
/// before it ever ran.
fn start_user(_: u64) {
    let start =
        super::with(|p| p.table.get(sched::current()).ok().and_then(|t| t.payload().user.as_ref().map(|u| u.start)));
    let Some(mut start) = start else {
        log::error!("start_user on a task without user state");
        return;
    };
    // Checked by `start_user_task`: a user-half address, which the HAL accepts.
    let _ = sched::set_fs_base(start.fs_base);
    // Nothing that needs dropping is alive on this stack now: `enter_user_regs` abandons it.
    hal::cpu::without_interrupts(|| {
        // With interrupts off: a kill cannot come between this check and ring 3. A signal
        // already pending runs its handler before the first instruction.
        super::return_to_user(&mut start.regs, false);
        hal::usermode::enter_user_regs(&start.regs)
    })
}

/// `start_user` returned: the task had no user state (a bug, logged there).
fn exit_after_start() -> ! {
    super::exit(0)
}

/// `set_tid_address(ptr)`: remember where the running thread's tid is cleared at its exit
/// (0: nowhere). No-op for a kernel thread.
pub fn set_clear_child_tid(ptr: u64) {
    super::with(|p| {
        if let Some(u) = p.table.get_mut(sched::current()).ok().and_then(|t| t.payload_mut().user.as_mut()) {
            u.clear_child_tid = ptr;
        }
    })
}

/// `clone`'s `CLONE_CHILD_CLEARTID` for the new thread `tid` (before it runs).
pub fn set_clear_child_tid_of(tid: i32, ptr: u64) {
    super::with(|p| {
        let key = p.table.lookup(tid);
        if let Some(u) = key.and_then(|k| p.table.get_mut(k)).ok().and_then(|t| t.payload_mut().user.as_mut()) {
            u.clear_child_tid = ptr;
        }
    })
}

/// Where task `key`'s tid is cleared at its exit (0: nowhere, or no such user task).
pub fn clear_child_tid(key: tally_tasktable::TaskKey) -> u64 {
    super::with(|p| p.table.get(key).ok().and_then(|t| t.payload().user.as_ref()).map_or(0, |u| u.clear_child_tid))
}

/// The running task's descriptors, if it has a user mode.
pub fn current_files() -> Option<Arc<FileTable>> {
    super::with(|p| p.table.get(sched::current()).ok().and_then(|t| t.payload().files().cloned()))
}

/// The open file behind the running task's descriptor `fd` (`EBADF` if there is none, or
/// the task has no user mode): looked up in one critical section, without taking a
/// reference to the whole descriptor table (`read` and `write` do this on every call).
pub fn current_file(fd: i32) -> Result<Arc<OpenFile>, i32> {
    super::with(|p| match p.table.get(sched::current()).ok().and_then(|t| t.payload().files()) {
        Some(files) => files.get_irqs_off(fd), // `with` turned interrupts off
        None => Err(EBADF),
    })
}

/// The running task's memory map, if it has a user mode.
pub fn current_vm() -> Option<Arc<Vm>> {
    super::with(|p| p.table.get(sched::current()).ok().and_then(|t| t.payload().vm().cloned()))
}

/// A page a kernel copy to or from `vm` needs that the direct copy found missing or
/// read-only (`hal::uaccess`'s fallback): fault it in as user code touching it would — a
/// demand-zero page or a copy-on-write copy (a minor fault, counted), a page of a `/var`
/// program read from the disk (a major fault, PAGING_SLEEP) only where the caller may sleep
/// (interrupts on: a copy made with them off fails instead). True if the copy may go on.
/// `cpu`: the process's CPU time now, for its memory integrals.
pub fn resolve_for_copy(vm: &Vm, page: u64, write: bool, cpu: u64) -> bool {
    match vm.fault(page, write, false, cpu) {
        FaultOutcome::Mapped | FaultOutcome::CopiedOnWrite => {
            sched::note_minor_fault();
            true
        }
        FaultOutcome::Present => true,
        FaultOutcome::FilePage => {
            hal::cpu::interrupts_enabled() && super::vm_file::page_in(vm, page) == super::vm_file::PageIn::Fixed
        }
        // No frame for the page: the copy fails (`EFAULT`), as Linux's does when its fault is
        // out of memory (the OOM killer acts on faults from user mode only).
        FaultOutcome::Denied | FaultOutcome::OutOfMemory => false,
    }
}

/// What a page fault from user mode came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserFault {
    /// A demand-zero page was mapped (a minor fault, counted), or was there already: retry.
    Fixed,
    /// A page `fork` shared was copied or taken over (a minor fault, counted): retry.
    CopiedOnWrite,
    /// The process may not use the address that way: SIGSEGV.
    Denied,
    /// Allowed, but no frame can be had: the process is OOM-killed (`oom.rs`).
    OutOfMemory,
    /// A page of a program on `/var` not read yet: the caller must call [`user_page_in`]
    /// with interrupts on (it sleeps while the disk works).
    PageIn,
    /// The file behind the page could not give its bytes: SIGBUS.
    BusError,
}

/// A page fault from user mode at `addr`: map a demand-zero page if the process may use the
/// address that way (a minor fault, counted).
pub fn user_page_fault(addr: u64, write: bool, exec: bool) -> UserFault {
    let Some(vm) = current_vm() else { return UserFault::Denied };
    match vm.fault(addr, write, exec, super::current_process_cpu_ticks()) {
        FaultOutcome::Mapped => {
            sched::note_minor_fault();
            UserFault::Fixed
        }
        FaultOutcome::CopiedOnWrite => {
            sched::note_minor_fault();
            UserFault::CopiedOnWrite
        }
        FaultOutcome::Present => UserFault::Fixed,
        FaultOutcome::Denied => UserFault::Denied,
        FaultOutcome::OutOfMemory => UserFault::OutOfMemory,
        FaultOutcome::FilePage => UserFault::PageIn,
    }
}

/// The second half of a fault [`user_page_fault`] answered with `PageIn`: read the page
/// from its file and map it (`vm_file.rs`: a major fault, PAGING_SLEEP while the disk
/// works). Interrupts on, no lock held. Never `PageIn` again.
pub fn user_page_in(addr: u64) -> UserFault {
    let Some(vm) = current_vm() else { return UserFault::Denied };
    match super::vm_file::page_in(&vm, addr) {
        super::vm_file::PageIn::Fixed => UserFault::Fixed,
        super::vm_file::PageIn::Denied => UserFault::Denied,
        super::vm_file::PageIn::OutOfMemory => UserFault::OutOfMemory,
        super::vm_file::PageIn::IoError => UserFault::BusError,
    }
}
