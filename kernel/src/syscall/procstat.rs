//! `proc_stat(buf, max)`: every live thread's accounting in one call, for `prstat`.
//!
//! Solaris' `prstat -m` opens `/proc/PID/lwp/LWPID/lwpusage` for each LWP; Tally has no file
//! system, so one call copies an array of [`ProcStat`] records (`tally_uapi::procstat`):
//! one per task in the task table — kernel threads, user threads, and zombies not yet
//! reaped — with identity (pid, tgid, ppid, uid, comm), scheduling (nice, policy, real-time
//! priority), the 13 microstate clocks in nanoseconds, the event counters, the creation time
//! and the time of the snapshot.
//!
//! The contract:
//!
//! * `max` (a count of records, `size_t`) = 0: nothing is written, `buf` is not looked at
//!   (it may be NULL), and the call returns how many threads exist — the size to allocate.
//! * Otherwise the first `min(max, threads)` records are written and their number returned.
//!   A result equal to `max` may mean "there were more": ask again with a bigger buffer.
//! * `EINVAL`: `max` above [`PROC_STAT_MAX`] (more records than a buffer the size of the
//!   user half could hold — a garbage count, not a big buffer). `EFAULT`: the records to
//!   be written do not fit in writable user memory at `buf`; the range is checked before
//!   anything is copied, so a bad pointer leaves the caller's memory as it was.
//!
//! **One instant.** Every record is read under the task table's and the scheduler's locks
//! at one TSC value (the
//! `now_ns` of every record), so the records are mutually consistent: summing a process's
//! threads gives its state at that instant, and two snapshots an interval apart give each
//! thread's share of exactly that interval — what `prstat` computes.
//!
//! The accounting keeps clocks in TSC ticks ([`crate::acct::task_stats`]); they become
//! nanoseconds here, on the way out, as in `msa()`.
//!
//! **Counters.** `syscalls` is counted at every system-call entry (`sched::syscall_entered`).
//! `signals` counts the signals the thread received (`proc/signal.rs`): SIGCHLD for each
//! ended child, `kill`s, fatal exceptions.
//! `minflt`, `majflt` (a page of a program on `/var` read in: `proc/vm_file.rs`), `nvcsw` and `nivcsw` are the task's counters.
//!
//! **Memory.** `rss_kb`, `vm_kb` and their high-water marks are the process's
//! (`tally_memacct`), the same in every thread's record, read from its memory map after the
//! other locks are released (the map has a lock of its own); a kernel thread has none and shows zeros.

use alloc::vec::Vec;
use tally_microstate::NR_MICROSTATES;
use tally_uapi::errno::EINVAL;
use tally_uapi::procstat::{ProcStat, PROC_STAT_SIZE};

use super::{usercopy, Args, SysResult};
use crate::acct::{self, TaskStat};

/// Most records one call may be asked for: more than a 128 TiB user half could hold.
pub const PROC_STAT_MAX: u64 = (1 << 47) / PROC_STAT_SIZE as u64;

/// `proc_stat(buf, max)` → records written (or, with `max` = 0, threads that exist).
pub fn sys_proc_stat(a: &Args) -> SysResult {
    let (addr, max) = (a[0], a[1]);
    if max > PROC_STAT_MAX {
        return Err(EINVAL);
    }
    let (tasks, now) = acct::task_stats();
    if max == 0 {
        return Ok(tasks.len() as u64);
    }
    let n = tasks.len().min(max as usize);
    let bytes = n * PROC_STAT_SIZE;
    // Checked before anything is converted or copied: a bad pointer changes nothing.
    usercopy::check(addr, bytes as u64, true)?;
    let clock = crate::base::time::clock();
    let now_ns = clock.monotonic_ns(now);
    let mut out = Vec::new();
    out.try_reserve_exact(bytes).map_err(|_| tally_uapi::errno::ENOMEM)?;
    for t in &tasks[..n] {
        encode(&record(t, now_ns, &clock), &mut out);
    }
    usercopy::copy_to_user(addr, &out)?;
    Ok(n as u64)
}

/// A task as its user-space record: times converted from TSC ticks to ns.
fn record(t: &TaskStat, now_ns: u64, clock: &tally_clock::TscClock) -> ProcStat {
    let c = &t.counters;
    let mut msa_ns = [0u64; NR_MICROSTATES];
    for (ns, ticks) in msa_ns.iter_mut().zip(t.msa.iter()) {
        *ns = clock.ticks_to_ns(*ticks);
    }
    let mem = t.vm.as_ref().map(|vm| vm.usage(0)).unwrap_or_default();
    ProcStat {
        pid: t.pid,
        tgid: t.tgid,
        ppid: t.ppid,
        uid: t.uid,
        comm: t.comm,
        state: u32::from(t.zombie),
        nice: t.nice,
        policy: t.policy,
        rt_priority: t.rt_priority,
        msa_ns,
        nvcsw: c.nvcsw,
        nivcsw: c.nivcsw,
        syscalls: c.syscalls,
        signals: c.signals,
        minflt: c.minflt,
        majflt: c.majflt,
        rss_kb: mem.rss_pages * 4,
        vm_kb: mem.vm_pages * 4,
        hiwater_rss_kb: mem.hiwater_rss_kb(),
        hiwater_vm_kb: mem.hiwater_vm_kb(),
        start_ns: clock.monotonic_ns(t.created),
        now_ns,
    }
}

// The record's layout, field by field: `encode` writes exactly this, little-endian, which is
// its memory image on x86_64 (no padding anywhere, so every byte is written).
const _: () = {
    use core::mem::offset_of;
    assert!(offset_of!(ProcStat, pid) == 0);
    assert!(offset_of!(ProcStat, tgid) == 4);
    assert!(offset_of!(ProcStat, ppid) == 8);
    assert!(offset_of!(ProcStat, uid) == 12);
    assert!(offset_of!(ProcStat, comm) == 16);
    assert!(offset_of!(ProcStat, state) == 32);
    assert!(offset_of!(ProcStat, nice) == 36);
    assert!(offset_of!(ProcStat, policy) == 40);
    assert!(offset_of!(ProcStat, rt_priority) == 44);
    assert!(offset_of!(ProcStat, msa_ns) == 48);
    assert!(offset_of!(ProcStat, nvcsw) == 48 + 8 * NR_MICROSTATES);
    assert!(offset_of!(ProcStat, rss_kb) == 48 + 8 * NR_MICROSTATES + 48);
    assert!(offset_of!(ProcStat, now_ns) == PROC_STAT_SIZE - 8);
};

/// Appends the record's bytes, in field order (see the layout assertions above).
fn encode(p: &ProcStat, out: &mut Vec<u8>) {
    let start = out.len();
    for v in [p.pid, p.tgid, p.ppid] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&p.uid.to_le_bytes());
    out.extend_from_slice(&p.comm);
    out.extend_from_slice(&p.state.to_le_bytes());
    out.extend_from_slice(&p.nice.to_le_bytes());
    out.extend_from_slice(&p.policy.to_le_bytes());
    out.extend_from_slice(&p.rt_priority.to_le_bytes());
    for v in p.msa_ns {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [p.nvcsw, p.nivcsw, p.syscalls, p.signals, p.minflt, p.majflt] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for v in [p.rss_kb, p.vm_kb, p.hiwater_rss_kb, p.hiwater_vm_kb, p.start_ns, p.now_ns] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    debug_assert_eq!(out.len() - start, PROC_STAT_SIZE);
}
