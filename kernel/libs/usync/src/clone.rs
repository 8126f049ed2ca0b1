//! # `clone`'s flags: what Linux accepts, and what the kernel must do
//!
//! `clone(flags, stack, parent_tid, child_tid, tls)` makes a thread or a process depending on
//! its flags. [`plan`] applies Linux's checks (`kernel/fork.c`'s `copy_process`, in order)
//! and returns a [`Plan`]: what to create and which of the extra steps to take. Tally's
//! deviations, each for something it does not have:
//!
//! * the namespace flags (`CLONE_NEWNS`, `CLONE_NEWPID`, ...) are `EINVAL`, as on a Linux
//!   built without namespaces; `CLONE_PIDFD` is `EINVAL` (no pidfds);
//! * a thread always shares its process's descriptors and signal dispositions (Linux lets a
//!   `CLONE_THREAD` without `CLONE_FILES` have a table of its own: no program does);
//! * `CLONE_FS`, `CLONE_SYSVSEM`, `CLONE_IO`, `CLONE_PTRACE`, `CLONE_UNTRACED` and
//!   `CLONE_DETACHED` change nothing (Tally has one working directory, no System V IPC, no
//!   tracing).
//!
//! The legacy `clone` call takes the exit signal from the low byte and ignores the upper 32
//! bits of `flags` (only `clone3` has flags there), as Linux's `sys_clone` does.

use tally_uapi::clone::*;
use tally_uapi::errno::EINVAL;

/// What to create.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A thread of the caller's process (`CLONE_THREAD`).
    Thread,
    /// A new process: `share_vm` (`CLONE_VM`: the same memory, as `vfork`), `vfork`
    /// (`CLONE_VFORK`: the parent waits until the child execs or exits), `exit_signal` (sent
    /// to the parent when the child ends; 0: none).
    Process { share_vm: bool, vfork: bool, exit_signal: u32 },
}

/// What `clone` must do, from its flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub kind: Kind,
    /// `CLONE_SETTLS`: the child's FS base is `tls`.
    pub set_tls: bool,
    /// `CLONE_PARENT_SETTID`: write the child's tid at `parent_tid`.
    pub parent_settid: bool,
    /// `CLONE_CHILD_SETTID`: write the child's tid at `child_tid` in the child's memory.
    pub child_settid: bool,
    /// `CLONE_CHILD_CLEARTID`: at the child's exit, 0 at `child_tid` and a futex wake.
    pub child_cleartid: bool,
}

/// Linux's checks of `clone`'s `flags`, in `copy_process`'s order; `EINVAL` for a
/// combination Linux refuses or a feature Tally does not have (see the module comment).
pub fn plan(flags: u64) -> Result<Plan, i32> {
    let flags = flags & 0xffff_ffff; // sys_clone: lower_32_bits
    let exit_signal = (flags & CSIGNAL) as u32;
    let has = |f: u64| flags & f != 0;
    if has(CLONE_NEWNS) && has(CLONE_FS) || has(CLONE_NEWUSER) && has(CLONE_FS) {
        return Err(EINVAL);
    }
    // Thread groups must share signals as well, and detached threads can only be started
    // from within the group.
    if has(CLONE_THREAD) && !has(CLONE_SIGHAND) {
        return Err(EINVAL);
    }
    // Shared signal handlers imply shared VM.
    if has(CLONE_SIGHAND) && !has(CLONE_VM) {
        return Err(EINVAL);
    }
    if has(CLONE_NEW_ANY & !CLONE_NEWTIME) || has(CLONE_PIDFD) {
        return Err(EINVAL); // no namespaces, no pidfds
    }
    let kind = if has(CLONE_THREAD) {
        Kind::Thread
    } else {
        Kind::Process { share_vm: has(CLONE_VM), vfork: has(CLONE_VFORK), exit_signal }
    };
    Ok(Plan {
        kind,
        set_tls: has(CLONE_SETTLS),
        parent_settid: has(CLONE_PARENT_SETTID),
        child_settid: has(CLONE_CHILD_SETTID),
        child_cleartid: has(CLONE_CHILD_CLEARTID),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_uapi::signal::SIGCHLD;

    #[test]
    fn musl_threads() {
        let p = plan(MUSL_THREAD_FLAGS).unwrap();
        assert_eq!(p.kind, Kind::Thread);
        assert!(p.set_tls && p.parent_settid && p.child_cleartid && !p.child_settid);
    }

    #[test]
    fn fork_and_vfork() {
        let fork = plan(SIGCHLD as u64).unwrap();
        assert_eq!(fork.kind, Kind::Process { share_vm: false, vfork: false, exit_signal: SIGCHLD as u32 });
        // musl's posix_spawn: CLONE_VM|CLONE_VFORK|SIGCHLD.
        let spawn = plan(CLONE_VM | CLONE_VFORK | SIGCHLD as u64).unwrap();
        assert_eq!(spawn.kind, Kind::Process { share_vm: true, vfork: true, exit_signal: SIGCHLD as u32 });
        assert!(!spawn.set_tls && !spawn.parent_settid);
    }

    #[test]
    fn linux_refusals() {
        assert_eq!(plan(CLONE_THREAD | CLONE_VM), Err(EINVAL)); // THREAD without SIGHAND
        assert_eq!(plan(CLONE_SIGHAND), Err(EINVAL)); // SIGHAND without VM
        assert_eq!(plan(CLONE_THREAD | CLONE_SIGHAND), Err(EINVAL)); // ... so THREAD needs VM
        assert_eq!(plan(CLONE_NEWNS | CLONE_FS), Err(EINVAL));
        assert_eq!(plan(CLONE_NEWUSER | CLONE_FS), Err(EINVAL));
        assert_eq!(plan(CLONE_NEWPID), Err(EINVAL));
        assert_eq!(plan(CLONE_PIDFD | SIGCHLD as u64), Err(EINVAL));
    }

    #[test]
    fn upper_bits_ignored() {
        assert_eq!(plan(MUSL_THREAD_FLAGS | 0x1_0000_0000), plan(MUSL_THREAD_FLAGS));
    }

    proptest::proptest! {
        /// Whatever the flags, a plan keeps Linux's implications: a thread shares signal
        /// handlers and memory; a process never comes from CLONE_THREAD.
        #[test]
        fn implications(flags in proptest::prelude::any::<u64>()) {
            if let Ok(p) = plan(flags) {
                let f = flags & 0xffff_ffff;
                if p.kind == Kind::Thread {
                    proptest::prop_assert!(f & CLONE_SIGHAND != 0 && f & CLONE_VM != 0);
                } else {
                    proptest::prop_assert!(f & CLONE_THREAD == 0);
                }
                proptest::prop_assert!(f & CLONE_SIGHAND == 0 || f & CLONE_VM != 0);
            }
        }
    }
}
