//! `clone(flags, stack, parent_tid, child_tid, tls)`'s flags: Linux's numbers
//! (`<linux/sched.h>`). The low byte of `flags` is the exit signal (`CSIGNAL`), the signal
//! the parent receives when a child *process* ends (`SIGCHLD` for a `fork`); a thread has
//! none. Which combinations Tally accepts, and what each does: the `tally-usync` crate's
//! `clone` module and `docs/user-mode.md` (threads).

/// The exit signal's bits.
pub const CSIGNAL: u64 = 0x0000_00ff;
pub const CLONE_NEWTIME: u64 = 0x0000_0080;
/// Share the memory (the same address space).
pub const CLONE_VM: u64 = 0x0000_0100;
/// Share the working directory, root and umask.
pub const CLONE_FS: u64 = 0x0000_0200;
/// Share the descriptor table.
pub const CLONE_FILES: u64 = 0x0000_0400;
/// Share the signal handlers (and so the dispositions).
pub const CLONE_SIGHAND: u64 = 0x0000_0800;
pub const CLONE_PIDFD: u64 = 0x0000_1000;
pub const CLONE_PTRACE: u64 = 0x0000_2000;
/// The parent sleeps until the child execs or exits (`vfork`).
pub const CLONE_VFORK: u64 = 0x0000_4000;
pub const CLONE_PARENT: u64 = 0x0000_8000;
/// A thread of the caller's process (same thread group: same pid).
pub const CLONE_THREAD: u64 = 0x0001_0000;
pub const CLONE_NEWNS: u64 = 0x0002_0000;
/// Share System V semaphore undo lists (Tally has no System V IPC: accepted, nothing to do).
pub const CLONE_SYSVSEM: u64 = 0x0004_0000;
/// The child's FS base (TLS) is `tls`.
pub const CLONE_SETTLS: u64 = 0x0008_0000;
/// Write the child's tid at `parent_tid` (in the parent's memory) before `clone` returns.
pub const CLONE_PARENT_SETTID: u64 = 0x0010_0000;
/// At the child's exit write 0 at `child_tid` and wake one futex waiter there
/// (`pthread_join`); `set_tid_address` sets the same address.
pub const CLONE_CHILD_CLEARTID: u64 = 0x0020_0000;
/// Unused since Linux 2.6.2, ignored.
pub const CLONE_DETACHED: u64 = 0x0040_0000;
pub const CLONE_UNTRACED: u64 = 0x0080_0000;
/// Write the child's tid at `child_tid` in the child's memory before it runs.
pub const CLONE_CHILD_SETTID: u64 = 0x0100_0000;
pub const CLONE_NEWCGROUP: u64 = 0x0200_0000;
pub const CLONE_NEWUTS: u64 = 0x0400_0000;
pub const CLONE_NEWIPC: u64 = 0x0800_0000;
pub const CLONE_NEWUSER: u64 = 0x1000_0000;
pub const CLONE_NEWPID: u64 = 0x2000_0000;
pub const CLONE_NEWNET: u64 = 0x4000_0000;
pub const CLONE_IO: u64 = 0x8000_0000;

/// The namespace flags: Tally has no namespaces.
pub const CLONE_NEW_ANY: u64 = CLONE_NEWNS
    | CLONE_NEWCGROUP
    | CLONE_NEWUTS
    | CLONE_NEWIPC
    | CLONE_NEWUSER
    | CLONE_NEWPID
    | CLONE_NEWNET
    | CLONE_NEWTIME;

/// What musl's `pthread_create` passes (`src/thread/pthread_create.c`).
pub const MUSL_THREAD_FLAGS: u64 = CLONE_VM
    | CLONE_FS
    | CLONE_FILES
    | CLONE_SIGHAND
    | CLONE_THREAD
    | CLONE_SYSVSEM
    | CLONE_SETTLS
    | CLONE_PARENT_SETTID
    | CLONE_CHILD_CLEARTID
    | CLONE_DETACHED;
