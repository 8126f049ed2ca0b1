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
//! Linux's own way in is `clone(CLONE_VM | CLONE_THREAD | ...)` ([`clone_thread`], called
//! by `syscall/clone.rs`): the new thread starts from the caller's registers (its `rax` 0,
//! its stack and FS base as `clone` says) instead of at an entry point; `thread_create` is
//! the same creation with a register set built from (entry, stack, arg).
//!
//! How threads end, and how `exit_group` stops the others, is in `exit.rs`; a thread with a
//! clear-child-tid address gets it zeroed and one futex waiter woken (`futex.rs`), which
//! is how `pthread_join` waits. A process
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
    let rsp = stack_top - 8;
    write_return_address(rsp)?;
    new_thread(UserStart::at(entry, rsp, arg), 0, |_| {})
}

/// `clone(CLONE_THREAD | ...)`: a thread of the caller's process starting from `start`
/// (the caller's registers with `rax = 0`, its stack and FS base as `clone` asked), whose
/// tid is cleared and futex woken at `clear_child_tid` when it exits (0: nowhere).
/// `before_it_runs(tid)` runs once the thread exists and before it can run — with
/// interrupts off, so it must not sleep: `clone` writes the tid words there
/// (`CLONE_PARENT_SETTID`, `CLONE_CHILD_SETTID`), so a thread library finds its new
/// thread's tid in place before either thread goes on.
pub fn clone_thread(start: UserStart, clear_child_tid: u64, before_it_runs: impl FnOnce(i32)) -> Result<i32, i32> {
    new_thread(start, clear_child_tid, before_it_runs)
}

/// The part `thread_create` and `clone` share: the limits, then the task.
fn new_thread(start: UserStart, clear_child_tid: u64, before_it_runs: impl FnOnce(i32)) -> Result<i32, i32> {
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
    let name = core::str::from_utf8(&name).unwrap_or("").trim_end_matches('\0');
    // Interrupts off from the creation to the tid words: the new thread cannot be switched
    // to before they are written (a preemption needs an interrupt).
    hal::cpu::without_interrupts(|| {
        let tid = start_user_task(name, params, vm, start, (CreateKind::Thread, SpawnAttr::NONE), false)?;
        if clear_child_tid != 0 {
            super::user::set_clear_child_tid_of(tid, clear_child_tid);
        }
        before_it_runs(tid);
        Ok(tid)
    })
}

/// `execve` in a process with several threads (Linux's `de_thread`): every other thread is
/// marked killed — it leaves at its next return towards user mode, as for `exit_group`, but
/// with no group status, so it ends alone and the process lives on — and the caller sleeps
/// until it is the process's only live thread. `EINTR` if the caller is itself killed
/// meanwhile (its process is dying anyway). (Unlike Linux, a thread that is not the leader
/// keeps its own tid: the process keeps the leader's pid, and the leader stays a zombie
/// thread until the process ends.)
pub(super) fn stop_other_threads() -> Result<(), i32> {
    loop {
        let others = super::with(|p| {
            let cur = sched::current();
            let live: alloc::vec::Vec<_> =
                p.table.threads(cur).map(|t| t.iter().copied().filter(|&t| t != cur).collect()).unwrap_or_default();
            let now = hal::tsc::read();
            for &t in &live {
                if !sched::killed(slot_of(t)) {
                    sched::kill(slot_of(t), now);
                }
            }
            live.len()
        });
        if others == 0 {
            return Ok(());
        }
        if sched::kill_pending() {
            return Err(EINTR);
        }
        // They leave at their next return to user mode; a disk request finishes first.
        sched::sleep_ns(1_000_000);
    }
}
