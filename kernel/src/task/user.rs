//! # User processes: a kernel thread that drops to ring 3
//!
//! A user process is born as a kernel thread like any other (`lifecycle.rs`), with three
//! differences: its [`Thread`] runs on the process's address space (`vm.rs`), its scheduler
//! entity is marked as having a user space, and its entry function is [`start_user`], which
//! loads nothing of its own on the kernel stack, switches the task's running microstate to
//! ONCPU_USR and jumps to ring 3 (`hal::usermode::enter_user`). Life afterwards:
//!
//! ```text
//!            syscall ──► ONCPU_SYS ──► crate::syscall::dispatch ──► ONCPU_USR ──► sysretq
//!   ring 3   exception ──► ONCPU_TRAP ──► crate::trap (demand-zero fault: fixed) ──► ONCPU_USR ──► iretq
//!            │                                         (anything else: killed by a signal)
//!            interrupt ──► INTERRUPTED ──► (maybe a switch) ──► ONCPU_USR ──► iretq
//! ```
//!
//! The microstate changes go through [`set_running_state`], i.e. the runqueue's
//! `set_running_state`, so they are exact to the TSC tick and correct inside interrupts.
//!
//! How a loader starts a program (`exec.rs` for `spawn`, or the self-tests' machine-code
//! blobs):
//!
//! ```text
//!   let vm = vm::Vm::new()?;
//!   for each PT_LOAD: vm.load_segment(p_vaddr, &file[p_offset..][..p_filesz], p_memsz, prot)?;
//!   let rsp = vm.setup_stack(&initial_stack_bytes)?;      // argc/argv/envp/auxv, built by the loader
//!   let pid = task::spawn_user("name", SchedParams::Normal(0), vm, e_entry, rsp, arg)?;
//!   ... task::wait(Some(pid)) ...
//! ```
//!
//! A second thread of the same process (`threads.rs`) is the same kind of task, sharing
//! the `Vm`: [`start_user_task`] with `CreateKind::Thread`.
//!
//! **Exec in place.** A kernel thread can also become a user process without a new task:
//! [`exec_current`] gives the *running* task the loaded `Vm` (its thread's CR3 switches to
//! it at once: `Thread::exec_user`), user state and a user-task scheduler entity, then takes
//! the same [`start_user`] path a new task takes on its first switch. The pid, parent,
//! children, counters and microstate clocks carry on: the clock simply goes from ONCPU_SYS
//! to ONCPU_USR at the jump. This is how init (pid 1) turns into `/bin/init` once the
//! kernel's part of boot is done (`exec.rs`, `main.rs`), as Linux's `kernel_init` does.

use alloc::sync::Arc;
use core::convert::Infallible;
use tally_microstate::MicroState;
use tally_tasktable::{CreateKind, Task};
use tally_uapi::errno::{EINVAL, ENOMEM};

use super::lifecycle::{start_task, thread_entry, SchedParams};
use super::vm::{FaultOutcome, Vm, USER_END};
use super::{with_kernel, HotStore, Payload, Totals};
use tally_taskstats::Counters;
use tally_runqueue::TaskStore;
use hal::context::Thread;
use crate::file::FileTable;

/// What the task table keeps for a task that has a user mode.
pub(super) struct UserContext {
    vm: Arc<Vm>,
    /// The process's descriptors, shared by its threads (`crate::file`).
    files: Arc<FileTable>,
    /// Where user mode starts: instruction pointer, stack pointer, `rdi`.
    start: (u64, u64, u64),
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
    start_user_task(name, params, vm, (entry, rsp, arg), CreateKind::Process, false)
}

/// Turn the running task, a kernel thread, into a user process running `vm`'s program from
/// `entry` with stack pointer `rsp` and `arg` in `rdi`, in place; returns only on failure
/// (see `exec_current`). The self-tests' counterpart of `exec_program`.
pub fn exec_user(name: &str, vm: Arc<Vm>, entry: u64, rsp: u64, arg: u64) -> Result<Infallible, i32> {
    exec_current(name, vm, (entry, rsp, arg))
}

/// Start a user task of `kind` (a new process, or a thread of the current process) running
/// `vm` from `start` = (rip, rsp, rdi); `exec`: a loaded program (see `start_task`).
pub(super) fn start_user_task(
    name: &str,
    params: SchedParams,
    vm: Arc<Vm>,
    start: (u64, u64, u64),
    kind: CreateKind,
    exec: bool,
) -> Result<i32, i32> {
    if start.0 >= USER_END || start.1 > USER_END {
        return Err(EINVAL);
    }
    // A thread shares its process's descriptors; a new process gets a copy of its parent's
    // (posix_spawn), or the console if the kernel starts it.
    let parent_files = with_kernel(|k| {
        let cur = k.current();
        k.tasks.get(cur).ok().and_then(|t| t.payload().user.as_ref().map(|u| Arc::clone(&u.files)))
    });
    let files = match (kind, parent_files) {
        (CreateKind::Thread, Some(f)) => f,
        (_, Some(f)) => Arc::new(f.inherit()),
        (_, None) => Arc::new(FileTable::with_console()),
    };
    let thread = Thread::spawn_user(thread_entry, 0, Arc::clone(vm.space())).map_err(|_| ENOMEM)?;
    let mut payload = Payload::kernel(thread, Some((start_user, 0)));
    payload.user = Some(UserContext { vm, files, start });
    start_task(name, params, payload, kind, exec)
}

/// Turn the running task into a user process running `vm` from `start` = (rip, rsp, rdi),
/// in place (see the module documentation), named `name` and flagged as exec'd; returns
/// only on failure. The task must be a kernel thread alone in its process — init is — so
/// there is no old memory whose accounting would have to be folded into the process's
/// totals, and no other thread to stop (`EINVAL` otherwise, or for a non-user `start`).
/// Its descriptors become the console. The memory integrals start at the process's CPU
/// time now (`MemAcct::start_at`).
pub(super) fn exec_current(name: &str, vm: Arc<Vm>, start: (u64, u64, u64)) -> Result<Infallible, i32> {
    if start.0 >= USER_END || start.1 > USER_END {
        return Err(EINVAL);
    }
    let thread = with_kernel(|k| {
        let cur = k.current();
        let alone = k.tasks.threads(cur).is_ok_and(|t| t.len() == 1);
        match k.tasks.get(cur) {
            Ok(t) if alone && t.payload().user.is_none() => Ok(Arc::clone(&t.payload().thread)),
            _ => Err(EINVAL),
        }
    })?;
    let files = Arc::new(FileTable::with_console());
    hal::cpu::without_interrupts(|| {
        // From here to ring 3 nothing else runs: the thread, the task and the memory map
        // change as one.
        thread.exec_user(Arc::clone(vm.space()));
        let cpu = with_kernel(|k| {
            let me = k.rq.current();
            HotStore(&mut k.hot).entity(me).set_user_space();
            let cur = k.current();
            if let Ok(t) = k.tasks.get_mut(cur) {
                t.exec(name.as_bytes());
                let p = t.payload_mut();
                p.entry = None;
                p.user = Some(UserContext { vm: Arc::clone(&vm), files, start });
            }
            k.process_cpu(hal::tsc::read())
        });
        vm.start_accounting_at(cpu);
    });
    // Nothing that needs dropping may stay on this stack: `start_user` abandons it.
    drop(thread);
    drop(vm);
    start_user(0);
    // `start_user` returns only for a task without user state, installed just above.
    Err(EINVAL)
}

/// The kernel-side entry of a user thread (called by `thread_entry`, interrupts enabled):
/// read where to start, then leave for ring 3 for good — unless its process was killed
/// before it ever ran.
fn start_user(_: u64) {
    let start = with_kernel(|k| {
        let cur = k.current();
        k.tasks.get(cur).ok().and_then(|t| t.payload().user.as_ref().map(|u| u.start))
    });
    let Some((rip, rsp, arg)) = start else {
        log::error!("start_user on a task without user state");
        return;
    };
    // Nothing that needs dropping is alive on this stack now: `enter_user` abandons it.
    hal::cpu::without_interrupts(|| {
        // With interrupts off: a kill cannot come between this check and ring 3.
        super::return_to_user();
        hal::usermode::enter_user(rip, rsp, arg)
    })
}

/// The running task now runs in `state` (ONCPU_USR, ONCPU_SYS or ONCPU_TRAP): its
/// microstate clock switches at this instant (or when the current interrupt ends).
pub fn set_running_state(state: MicroState) {
    with_kernel(|k| {
        let me = k.rq.current();
        k.rq.set_running_state(&mut HotStore(&mut k.hot), me, state, hal::tsc::read());
    });
}

/// System-call entry: the task runs in the kernel (ONCPU_SYS) and has made one more call
/// (counted for prstat's SCL) — one lock acquisition for both.
pub fn syscall_entered() {
    with_kernel(|k| {
        let me = k.rq.current();
        k.rq.set_running_state(&mut HotStore(&mut k.hot), me, MicroState::OncpuSys, hal::tsc::read());
        let cur = k.current();
        if let Ok(t) = k.tasks.get_mut(cur) {
            t.payload_mut().counters.syscalls += 1;
        }
    });
}

/// The running task's descriptors, if it has a user mode.
pub fn current_files() -> Option<Arc<FileTable>> {
    with_kernel(|k| {
        let cur = k.current();
        k.tasks.get(cur).ok().and_then(|t| t.payload().user.as_ref().map(|u| Arc::clone(&u.files)))
    })
}

/// The running task's memory map, if it has a user mode.
pub fn current_vm() -> Option<Arc<Vm>> {
    with_kernel(|k| {
        let cur = k.current();
        k.tasks.get(cur).ok().and_then(|t| t.payload().user.as_ref().map(|u| Arc::clone(&u.vm)))
    })
}

fn with_counters(f: impl FnOnce(&mut Counters)) {
    with_kernel(|k| {
        let cur = k.current();
        if let Ok(t) = k.tasks.get_mut(cur) {
            f(&mut t.payload_mut().counters);
        }
    });
}

/// Count a minor fault (a demand-zero page mapped) for the running task.
pub fn note_minor_fault() {
    with_counters(|c| c.minflt += 1);
}

/// Count one `write` of `bytes` bytes for the running task.
pub fn account_write(bytes: u64) {
    with_counters(|c| {
        c.write_syscalls += 1;
        c.write_char += bytes;
    });
}

/// Count one `read` of `bytes` bytes for the running task.
pub fn account_read(bytes: u64) {
    with_counters(|c| {
        c.read_syscalls += 1;
        c.read_char += bytes;
    });
}

/// Count `sectors` 512-byte blocks read (`write` false) or written by the running task.
pub fn account_blocks(sectors: u64, write: bool) {
    with_counters(|c| {
        if write {
            c.oublock += sectors;
        } else {
            c.inblock += sectors;
        }
    });
}

/// A page fault from user mode at `addr`: map a demand-zero page if the process may use the
/// address that way (a minor fault, counted). False: the access is not allowed.
pub fn user_page_fault(addr: u64, write: bool, exec: bool) -> bool {
    let Some(vm) = current_vm() else { return false };
    match vm.fault(addr, write, exec, super::current_process_cpu_ticks()) {
        FaultOutcome::Mapped => {
            note_minor_fault();
            true
        }
        FaultOutcome::Present => true,
        FaultOutcome::Denied => false,
    }
}

/// Who the running task is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ids {
    /// Thread id (Linux's `gettid`; the kernel's pid of this task).
    pub tid: i32,
    /// Process id (`getpid`: the thread group id).
    pub pid: i32,
    pub uid: u32,
    /// The command name (NUL-padded).
    pub comm: [u8; 16],
}

/// One field of the running task, read under the kernel lock without copying the rest:
/// what `getpid`, `gettid`, `getppid` and `getuid` need (a null system call should cost a
/// lookup, not a copy of the task's name and counters). 0 if the task is gone.
fn current_field<R: Default>(f: impl FnOnce(&Task<Payload, Totals>) -> R) -> R {
    with_kernel(|k| {
        let cur = k.current();
        k.tasks.get(cur).map(f).unwrap_or_default()
    })
}

/// The running thread's id (`gettid`).
pub fn current_tid() -> i32 {
    current_field(|t| t.pid())
}

/// The running thread's process id (`getpid`: its thread group id).
pub fn current_pid() -> i32 {
    current_field(|t| t.tgid())
}

/// The running process's parent's process id (`getppid`; 0 if none).
pub fn current_ppid() -> i32 {
    with_kernel(|k| k.tasks.ppid(k.current()).unwrap_or(0))
}

/// The running task's user id (`getuid`).
pub fn current_uid() -> u32 {
    current_field(|t| t.uid())
}

/// The running task's ids and name, read at one time (all zero if it is gone).
pub fn current_ids() -> Ids {
    current_field(|t| Ids { tid: t.pid(), pid: t.tgid(), uid: t.uid(), comm: *t.comm() })
}
