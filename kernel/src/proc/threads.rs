//! # More threads in a process: `thread_create`
//!
//! A process starts with one thread. `thread_create(entry, stack_top, arg)` adds another —
//! Linux's `clone(CLONE_VM | CLONE_THREAD | ...)` reduced to what a thread library needs:
//!
//! * the task table records it with `CreateKind::Thread`: a new tid, the same tgid and
//!   parent, a member of the caller's thread group (so `getpid` is the same, `gettid` new);
//! * it shares the caller's [`Vm`](super::vm::Vm) — the same `Arc`, hence the same page
//!   tables: the memory is the process's, not the thread's. Its own are a kernel stack, the
//!   saved registers, its microstate clocks and counters (the scheduler's);
//! * it inherits the caller's scheduling policy and nice value, and its name;
//! * it starts in user mode at `entry` as if `entry(arg)` had been *called*: the kernel
//!   writes a return address of 0 at `stack_top - 8` (through `uaccess`, so a bad stack is
//!   `EFAULT` in the caller, not a fault in the new thread) and starts it with
//!   `rsp = stack_top - 8`, `rdi = arg`. A 16-byte aligned `stack_top` therefore gives the
//!   alignment the System V ABI promises at a function's entry; returning from `entry`
//!   jumps to 0 and kills the process with SIGSEGV — a thread ends with `exit`.
//!
//! How threads end, and how `exit_group` stops the others, is in `exit.rs`. A process
//! that is already being killed gets no new threads (`EINTR`, as Linux's `copy_process`
//! refuses with a fatal signal pending).

use tally_tasktable::CreateKind;

use super::create::SpawnAttr;
use tally_uapi::errno::{EAGAIN, EINTR, EINVAL};

use super::user::{start_user_task, UserStart};
use super::vm::{USER_END, USER_MIN_ADDR};
use crate::base::config::MAX_THREADS_PER_PROCESS;
use crate::sched::{self, slot_of};

/// `thread_create`: see the module documentation. `write_return_address(addr)` stores the
/// fake return address in the caller's memory (the system call passes `uaccess`).
pub fn create_thread(
    entry: u64,
    stack_top: u64,
    arg: u64,
    write_return_address: impl FnOnce(u64) -> Result<(), i32>,
) -> Result<i32, i32> {
    if !(USER_MIN_ADDR..USER_END).contains(&entry) || !(USER_MIN_ADDR + 8..=USER_END).contains(&stack_top) {
        return Err(EINVAL);
    }
    let (vm, name) = super::with(|p| {
        let cur = sched::current();
        if sched::killed(slot_of(cur)) {
            return Err(EINTR);
        }
        if p.table.threads(cur)?.len() >= MAX_THREADS_PER_PROCESS {
            return Err(EAGAIN);
        }
        let t = p.table.get(cur)?;
        let vm = t.payload().vm().cloned().ok_or(EINVAL)?;
        Ok((vm, *t.comm()))
    })?;
    let params = sched::inherited_params();
    let rsp = stack_top - 8;
    write_return_address(rsp)?;
    let name = core::str::from_utf8(&name).unwrap_or("").trim_end_matches('\0');
    start_user_task(name, params, vm, UserStart::at(entry, rsp, arg), (CreateKind::Thread, SpawnAttr::NONE), false)
}
