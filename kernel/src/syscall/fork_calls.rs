//! `fork` (57) and `vfork` (58): a new process as a copy of the caller.
//!
//! Both are frame handlers: the child starts from the caller's registers as they were at the
//! `syscall` instruction (`rax` = 0 in the child), so the handler passes its whole frame to
//! `proc::fork::fork_process`, which does the work (`proc/fork.rs`: copy-on-write memory,
//! descriptors, the task, signals). The parent's result is the child's pid.

use super::{SysResult, SyscallFrame};
use crate::proc::fork::{fork_process, ForkHow};

/// `fork()` → the child's pid (0 in the child).
pub fn fork(frame: &mut SyscallFrame) -> SysResult {
    fork_process(frame, ForkHow::FORK).map(|pid| pid as u64)
}

/// `vfork()` → the child's pid once it has exec'd or exited (0 in the child, which borrows
/// the caller's memory meanwhile).
pub fn vfork(frame: &mut SyscallFrame) -> SysResult {
    fork_process(frame, ForkHow::VFORK).map(|pid| pid as u64)
}
