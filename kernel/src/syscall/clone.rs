//! `clone(flags, stack, parent_tid, child_tid, tls)` (Linux's x86_64 argument order):
//! a new thread, or a new process.
//!
//! The flags are judged by `tally_usync::clone::plan` (Linux's checks in `copy_process`'s
//! order: `CLONE_THREAD` without `CLONE_SIGHAND`, or `CLONE_SIGHAND` without `CLONE_VM`, is
//! `EINVAL`; Tally has no namespaces: `EINVAL`). Then:
//!
//! * **`CLONE_THREAD`** — what musl's `pthread_create` asks for
//!   (`CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|
//!   CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID|CLONE_DETACHED`): a thread of the caller's
//!   process (`proc::clone_thread`) whose registers are the caller's at the `syscall` with
//!   `rax = 0`, `rsp = stack` (the caller's if `stack` is 0), its FS base `tls` with
//!   `CLONE_SETTLS` (the caller's otherwise; a `tls` outside the user half is `EPERM`, as
//!   Linux's). Before it can run, its tid is written at `parent_tid`
//!   (`CLONE_PARENT_SETTID`) and at `child_tid` (`CLONE_CHILD_SETTID`); with
//!   `CLONE_CHILD_CLEARTID`, `child_tid` is where its exit writes 0 and wakes one futex
//!   waiter (`proc/futex.rs`). As on Linux, a tid word that cannot be written is skipped,
//!   not an error. Returns the new thread's tid; the thread itself sees 0.
//! * **without `CLONE_THREAD`**: a new process — `fork` (`SIGCHLD`), `vfork`
//!   (`CLONE_VM|CLONE_VFORK|SIGCHLD`, musl's `posix_spawn`) — made by the fork code
//!   (`proc/fork.rs`, [`new_process`]).

use tally_uapi::errno::EPERM;
use tally_usync::clone::{plan, Kind, Plan};

use super::{usercopy, SysResult, SyscallFrame};
use crate::proc::fork::{fork_process, ForkHow};
use crate::proc::{self, UserStart};
use crate::sched;
use hal::address_space::USER_END;

/// `clone(flags, stack, parent_tid, child_tid, tls)`: a frame handler (the child starts
/// from the caller's registers).
pub fn clone(frame: &mut SyscallFrame) -> SysResult {
    let (flags, stack, parent_tid, child_tid, tls) = (frame.rdi, frame.rsi, frame.rdx, frame.r10, frame.r8);
    let plan = plan(flags)?;
    match plan.kind {
        Kind::Thread => thread(frame, &plan, stack, parent_tid, child_tid, tls),
        Kind::Process { share_vm, vfork, exit_signal } => {
            let how = ForkHow {
                share_vm,
                vfork,
                child_stack: (stack != 0).then_some(stack),
                tls: plan.set_tls.then_some(tls),
                exit_signal,
            };
            new_process(frame, &plan, how, parent_tid, child_tid)
        }
    }
}

fn thread(frame: &SyscallFrame, plan: &Plan, stack: u64, parent_tid: u64, child_tid: u64, tls: u64) -> SysResult {
    if plan.set_tls && tls >= USER_END {
        return Err(EPERM);
    }
    let mut regs = *frame;
    regs.rax = 0;
    if stack != 0 {
        regs.rsp = stack;
    }
    let fs_base = if plan.set_tls { tls } else { sched::fs_base() };
    // The tid words are written with the direct copy, which cannot sleep (the new thread
    // must not run first): their pages are faulted in now. A failure here is not the
    // call's: Linux ignores a tid word it cannot write.
    let settid = |wanted: bool, addr: u64| wanted && usercopy::check(addr, 4, true).is_ok();
    let (parent_word, child_word) = (settid(plan.parent_settid, parent_tid), settid(plan.child_settid, child_tid));
    let clear = if plan.child_cleartid { child_tid } else { 0 };
    let tid = proc::clone_thread(UserStart { regs, fs_base }, clear, |tid| {
        let bytes = tid.to_ne_bytes();
        if parent_word {
            usercopy::copy_to_user_direct(parent_tid, &bytes);
        }
        if child_word {
            usercopy::copy_to_user_direct(child_tid, &bytes);
        }
    })?;
    Ok(tid as u64)
}

/// `clone` without `CLONE_THREAD`: a new process from the caller's registers, made by the
/// fork code (`proc::fork::fork_process`). `CLONE_PARENT_SETTID` writes the child's pid in
/// the caller's memory once the call returns (after the child has exec'd or exited, for a
/// `vfork`); `CLONE_CHILD_CLEARTID` is where the child's exit clears its pid word.
/// `CLONE_CHILD_SETTID` for a process is not written (it would go to the child's own copy of
/// memory before it runs: glibc's `fork` asks for it, musl's does not): a documented
/// deviation.
fn new_process(frame: &SyscallFrame, plan: &Plan, how: ForkHow, parent_tid: u64, child_tid: u64) -> SysResult {
    if how.tls.is_some_and(|t| t >= USER_END) {
        return Err(EPERM);
    }
    let pid = fork_process(frame, how)?;
    if plan.parent_settid {
        // Linux ignores a tid word it cannot write.
        let _ = usercopy::copy_to_user(parent_tid, &pid.to_ne_bytes());
    }
    if plan.child_cleartid {
        proc::set_clear_child_tid_of(pid, child_tid);
    }
    Ok(pid as u64)
}
