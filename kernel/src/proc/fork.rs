//! # `fork`, `vfork`, and `clone` of a whole process: a new process as a copy of its creator
//!
//! Unix makes a process by copying one: the child of `fork` is its parent at the instant of
//! the call — the same memory, the same open descriptors, the same registers — except that
//! the call returns 0 in the child and the child's pid in the parent. [`fork_process`] does
//! that in these steps, everything that can fail before the child exists:
//!
//! 1. **memory**: the parent's map copied copy-on-write (`Vm::fork`: the child's page tables
//!    point at the parent's frames, each frame's reference count goes up, every writable page
//!    becomes read-only in both, and the first write to one copies it — a minor fault,
//!    charged to ONCPU_TRAP like a demand-zero fault). With `share_vm` (`vfork`,
//!    `clone(CLONE_VM)`) the child uses the very same map instead (`Vm::add_user`);
//! 2. **descriptors**: every one copied, close-on-exec ones included (`FileTable::fork`); a
//!    pipe end has one more holder until the child closes it or exits;
//! 3. **the task**: `start_task` enters it in the table as a child of the caller — a fresh
//!    pid, the caller's name, uid, process group and session, the accounting flag AFORK
//!    ("forked but did not exec"; `execve` clears it), its nice value and policy; CSA's spawn
//!    observer puts it in its parent's job; the task limit refuses it with `EAGAIN` (a fork
//!    bomb meets that limit and the kernel carries on);
//! 4. **signals**: `signal::on_fork` gives it the parent's handlers and mask, before it can
//!    run (interrupts are off from step 3 on);
//! 5. **registers**: it starts in user mode with the caller's registers, `rax` = 0 (and its
//!    own stack and TLS for `clone` with a stack or `CLONE_SETTLS`), its FS base the caller's.
//!
//! **vfork** ([`ForkHow::vfork`]): the child borrows the parent's memory outright — no copy,
//! no page tables — and the parent sleeps (INTERRUPTIBLE_SLEEP) until the child execs or
//! exits, since both would otherwise run on one stack. The child names its parent thread in
//! its `Payload::vfork_parent`; `execve` and the exit path take it and wake the parent
//! ([`Procs::vfork_done`]). A parent killed meanwhile stops waiting and clears the link, so a
//! later exec of the child wakes nobody.
//!
//! The design and its accounting: `docs/user-mode.md` (fork, copy-on-write and exec).

use alloc::sync::Arc;
use tally_runqueue::SleepKind;
use tally_tasktable::{CreateKind, TaskKey};
use tally_uapi::errno::{EINTR, EINVAL};

use super::create::SpawnAttr;
use super::user::{start_user_task_with, UserStart};
use super::Procs;
use crate::sched::{self, slot_of};
use hal::regs::UserRegs;

/// How [`fork_process`] makes the child (Linux's `clone` flags, reduced to what a new
/// process can differ in).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForkHow {
    /// `CLONE_VM`: the child uses the caller's memory map itself, not a copy.
    pub share_vm: bool,
    /// `CLONE_VFORK`: the caller sleeps until the child execs or exits.
    pub vfork: bool,
    /// The child's stack pointer (`clone`'s `stack`), else the caller's.
    pub child_stack: Option<u64>,
    /// The child's FS base (`CLONE_SETTLS`), else the caller's.
    pub tls: Option<u64>,
    /// The signal the parent receives at the child's end (`SIGCHLD` for fork and vfork).
    /// Tally counts a SIGCHLD whatever this says (see the module documentation of `signal.rs`).
    pub exit_signal: u32,
}

impl ForkHow {
    /// `fork()`: a copy-on-write copy.
    pub const FORK: ForkHow =
        ForkHow { share_vm: false, vfork: false, child_stack: None, tls: None, exit_signal: SIGCHLD };
    /// `vfork()`: `CLONE_VM | CLONE_VFORK | SIGCHLD`.
    pub const VFORK: ForkHow =
        ForkHow { share_vm: true, vfork: true, child_stack: None, tls: None, exit_signal: SIGCHLD };
}

const SIGCHLD: u32 = tally_uapi::signal::SIGCHLD as u32;

/// Start a copy of the calling process (see the module documentation); `regs` are the
/// caller's registers at its system call (its frame), which the child starts with, `rax` = 0
/// (and `rsp` = `how.child_stack`, FS base = `how.tls`, if given). Returns the child's pid,
/// after the child has exec'd or exited if `how.vfork`. Errors: `EINVAL` (the caller has no
/// user mode, or a child stack or TLS outside the user half), `ENOMEM` (no memory for the
/// child's page tables, stack or table entry), `EAGAIN` (the task limit), `EINTR` (the
/// caller's process is being killed).
pub fn fork_process(regs: &UserRegs, how: ForkHow) -> Result<i32, i32> {
    let mut child = *regs;
    child.rax = 0;
    if let Some(sp) = how.child_stack {
        child.rsp = sp;
    }
    let fs_base = how.tls.unwrap_or_else(sched::fs_base);
    let start = UserStart { regs: child, fs_base };
    if start.regs.rsp > super::vm::USER_END || start.fs_base >= super::vm::USER_END {
        return Err(EINVAL);
    }
    fork_with_start(start, how)
}

fn fork_with_start(start: UserStart, how: ForkHow) -> Result<i32, i32> {
    let (parent_key, vm, files, comm) = super::with(|p| {
        let cur = sched::current();
        if sched::killed(slot_of(cur)) || p.group_exiting(cur) {
            return Err(EINTR);
        }
        let t = p.table.get(cur)?;
        let vm = t.payload().vm().cloned().ok_or(EINVAL)?;
        let files = t.payload().files().cloned().ok_or(EINVAL)?;
        Ok((cur, vm, files, *t.comm()))
    })?;
    let child_vm = if how.share_vm {
        vm.add_user();
        Arc::clone(&vm)
    } else {
        vm.fork()?
    };
    let files = Arc::new(files.fork());
    let params = sched::inherited_params();
    let name = core::str::from_utf8(&comm).unwrap_or("").trim_end_matches('\0');
    let vfork_parent = how.vfork.then_some(parent_key);
    let parent_pid = super::current_pid();
    // Interrupts off from the child's entry to its signal state: it cannot run in between.
    let started = hal::cpu::without_interrupts(|| {
        let kind = (CreateKind::Process, SpawnAttr::NONE);
        let pid =
            start_user_task_with(name, params, (Arc::clone(&child_vm), files), start, kind, (false, vfork_parent))?;
        super::signal::on_fork(parent_pid, pid);
        Ok(pid)
    });
    let pid = match started {
        Ok(pid) => pid,
        Err(e) => {
            if how.share_vm {
                // Give back the use counted above (the map stays the caller's).
                child_vm.release(0);
            }
            return Err(e);
        }
    };
    drop(child_vm);
    if how.vfork {
        wait_for_vfork_child(pid);
    }
    Ok(pid)
}

/// The `vfork` parent's sleep: until child `pid` has exec'd or exited (its
/// `vfork_parent` taken), or the caller's process is being killed.
fn wait_for_vfork_child(pid: i32) {
    loop {
        let done = hal::cpu::without_interrupts(|| {
            let waiting = super::with(|p| {
                let Ok(key) = p.table.lookup(pid) else { return false };
                let waiting = p.table.get(key).is_ok_and(|c| c.payload().vfork_parent.is_some());
                if waiting && sched::kill_pending() {
                    // Killed: stop waiting, and let the child wake nobody later.
                    if let Ok(c) = p.table.get_mut(key) {
                        c.payload_mut().vfork_parent = None;
                    }
                    return false;
                }
                waiting
            });
            if waiting {
                // Checked and blocked with interrupts off: the child's exec or exit cannot
                // come in between.
                sched::block_current(SleepKind::Interruptible, None);
            }
            !waiting
        });
        if done {
            return;
        }
    }
}

impl Procs {
    /// Process `member`'s `vfork` parent may run again (it exec'd or exited): wake it.
    pub(super) fn vfork_done(&mut self, member: TaskKey) {
        let Ok(leader) = self.table.leader(member) else { return };
        let parent = self.table.get_mut(leader).ok().and_then(|t| t.payload_mut().vfork_parent.take());
        if let Some(parent) = parent {
            sched::wake(slot_of(parent));
        }
    }
}
