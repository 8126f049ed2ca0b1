//! `proc_stat`: a snapshot of every live thread's accounting, for `prstat`.
//!
//! Solaris `prstat -m` reads each LWP's microstate times from `/proc/<pid>/lwp/<lwpid>/
//! lwpusage`; Tally has no file system, so one system call copies an array of
//! [`ProcStat`] records (one per live thread, zombies included) into the caller's buffer.
//! `prstat` takes two snapshots an interval apart and prints each state's *share of the
//! interval* — the same arithmetic `prstat -m` does.

use crate::msa::NR_MICROSTATES;

/// One thread, as seen at `now_ns`. Times are nanoseconds.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    pub tgid: i32,
    pub ppid: i32,
    pub uid: u32,
    /// Command name, NUL-padded (TASK_COMM_LEN).
    pub comm: [u8; 16],
    /// 0 live, 1 zombie.
    pub state: u32,
    pub nice: i32,
    /// SCHED_NORMAL 0, FIFO 1, RR 2, BATCH 3.
    pub policy: u32,
    pub rt_priority: u32,
    /// Nanoseconds in each microstate (the `msa()` order) since the thread was created.
    pub msa_ns: [u64; NR_MICROSTATES],
    /// Voluntary and involuntary context switches.
    pub nvcsw: u64,
    pub nivcsw: u64,
    /// System calls made, signals received.
    pub syscalls: u64,
    pub signals: u64,
    pub minflt: u64,
    pub majflt: u64,
    /// The process's memory (every thread of a process shows the same): resident and
    /// virtual size now, and their high-water marks, in KiB; 0 for a kernel thread.
    pub rss_kb: u64,
    pub vm_kb: u64,
    pub hiwater_rss_kb: u64,
    pub hiwater_vm_kb: u64,
    /// Monotonic time (ns since boot) the thread was created, and of this snapshot.
    pub start_ns: u64,
    pub now_ns: u64,
}

pub const PROC_STAT_SIZE: usize = core::mem::size_of::<ProcStat>();
const _: () = assert!(PROC_STAT_SIZE == 48 + 8 * NR_MICROSTATES + 96);

impl ProcStat {
    pub const fn zeroed() -> Self {
        ProcStat {
            pid: 0,
            tgid: 0,
            ppid: 0,
            uid: 0,
            comm: [0; 16],
            state: 0,
            nice: 0,
            policy: 0,
            rt_priority: 0,
            msa_ns: [0; NR_MICROSTATES],
            nvcsw: 0,
            nivcsw: 0,
            syscalls: 0,
            signals: 0,
            minflt: 0,
            majflt: 0,
            rss_kb: 0,
            vm_kb: 0,
            hiwater_rss_kb: 0,
            hiwater_vm_kb: 0,
            start_ns: 0,
            now_ns: 0,
        }
    }

    /// The name up to its first NUL.
    pub fn comm_str(&self) -> &str {
        let len = self.comm.iter().position(|&b| b == 0).unwrap_or(self.comm.len());
        core::str::from_utf8(&self.comm[..len]).unwrap_or("?")
    }
}
