//! The running task's event counters: what Linux's `struct task_struct` counts and
//! taskstats, `wait4` and `prstat` report (context switches, system calls, minor and major faults,
//! characters and calls of `read`/`write`, disk blocks, signals).
//!
//! They live with the scheduler's per-task state because the switch and the system-call
//! entry bump them under the lock they take anyway; everything else goes through
//! [`with_current`].

use tally_taskstats::Counters;

use super::state;

/// Run `f` on the running task's counters.
pub fn with_current<R>(f: impl FnOnce(&mut Counters) -> R) -> R {
    state::with(|s| f(&mut s.current_hot().counters))
}

/// Count a minor fault (a demand-zero page mapped) for the running task.
pub fn note_minor_fault() {
    with_current(|c| c.minflt += 1);
}

/// Count a major fault (a page read from a file on the disk: the task slept in
/// PAGING_SLEEP for it) for the running task: Linux's `maj_flt`, `ru_majflt`, taskstats'
/// `ac_majflt`.
pub fn note_major_fault() {
    with_current(|c| c.majflt += 1);
}

/// Count one `read` of `bytes` bytes for the running task.
pub fn account_read(bytes: u64) {
    with_current(|c| {
        c.read_syscalls += 1;
        c.read_char += bytes;
    });
}

/// Count one `write` of `bytes` bytes for the running task.
pub fn account_write(bytes: u64) {
    with_current(|c| {
        c.write_syscalls += 1;
        c.write_char += bytes;
    });
}

/// The last `calls` reads (or writes) counted were the pieces of one `readv`/`writev`
/// (`syscall/uio.rs`): count them as the one system call they were, as Linux's `do_readv`
/// counts one `syscr` whatever the number of segments.
pub fn merge_io_calls(write: bool, calls: u64) {
    if calls > 1 {
        with_current(|c| {
            let n = if write { &mut c.write_syscalls } else { &mut c.read_syscalls };
            *n = n.saturating_sub(calls - 1);
        });
    }
}

/// Count `sectors` 512-byte blocks read (`write` false) or written by the running task.
pub fn account_blocks(sectors: u64, write: bool) {
    with_current(|c| {
        if write {
            c.oublock += sectors;
        } else {
            c.inblock += sectors;
        }
    });
}
