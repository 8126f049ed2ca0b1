//! # tally-taskstats — Linux `struct taskstats` records from Tally's accounting
//!
//! The kernel keeps its accounting in its own units — TSC ticks in microstate clocks,
//! delay episodes cut from those clocks, page·tick memory integrals — and converts only when
//! a number leaves the kernel. [`fill`] is that conversion for taskstats: the kernel gathers
//! everything about one task (or one thread group) into a plain [`TaskAccounting`], and
//! `fill` turns it into a [`Taskstats`] that Linux's `getdelays` reads unchanged. Nothing
//! here reads a clock or touches a task, so every rule below is host-tested.
//!
//! ## Where each field comes from
//!
//! | field | unit | Tally's source |
//! |---|---|---|
//! | `version` | — | [`TASKSTATS_VERSION`] (17) |
//! | `ac_exitcode` | wait status | `exit_code`, as `wait4` reports it |
//! | `ac_flag` | bits | `flags` (ASU, ACORE, AXSIG; AFORK on a group leader only, as Linux), + AGROUP if `group` |
//! | `ac_nice` | — | `nice` stored in a `u8`, as Linux stores `task_nice()` (-5 reads 251) |
//! | `ac_comm` | — | `comm` up to its first NUL (at most 16 bytes), NUL-padded to 32 |
//! | `ac_sched` | — | `policy` (SCHED_NORMAL 0, FIFO 1, RR 2, BATCH 3) |
//! | `ac_uid`, `ac_gid`, `ac_pid`, `ac_ppid`, `ac_tgid` | — | as given |
//! | `ac_btime64` | s since 1970 | `boot_unix_ns` + monotonic time of `created_tsc` |
//! | `ac_btime` | s since 1970 | the same, clamped to `u32` |
//! | `ac_etime` | µs | `now_tsc − created_tsc` |
//! | `ac_tgetime` | µs | `now_tsc − group_created_tsc` (the process's wall time so far) |
//! | `ac_utime` | µs | ONCPU_USR |
//! | `ac_stime` | µs | ONCPU_SYS + ONCPU_TRAP (the split `wait4`'s rusage uses) |
//! | `ac_utimescaled`, `ac_stimescaled` | µs | = `ac_utime`, `ac_stime` (no frequency scaling) |
//! | `cpu_run_real_total` | ns | ONCPU_USR + ONCPU_SYS + ONCPU_TRAP (no hypervisor steal is known) |
//! | `cpu_run_virtual_total`, `cpu_scaled_run_real_total` | ns | the same (no steal, no scaling) |
//! | `cpu_count` | — | run-queue waits entered (`delays.cpu.count`) |
//! | `cpu_delay_total` | ns | ONACTIVEQUEUE + ONEXPIREDQUEUE, the tick sum converted once |
//! | `blkio_count`, `blkio_delay_total` | ns | disk waits, UNINTERRUPTIBLE_SLEEP episodes (`delays.blkio`) |
//! | `irq_count`, `irq_delay_total` | ns | INTERRUPTED episodes (`delays.irq`) |
//! | `{cpu,blkio,irq}_delay_max`, `_min` | ns | longest / shortest non-empty episode, each converted on its own |
//! | `{cpu,blkio,irq}_delay_max_ts` | timespec | wall clock at the end of the longest episode; 0 when there was none |
//! | `swapin_*`, `freepages_*`, `thrashing_*` | — | 0: Tally has no swap, no reclaim, no thrashing |
//! | `compact_*`, `wpcopy_*` | — | 0: no compaction; a copy-on-write copy never waits, so it is no delay episode |
//! | `ac_minflt`, `ac_majflt` | — | page faults: minor (demand-zero, copy-on-write), major (a page of a `/var` program read in) |
//! | `coremem`, `virtmem` | MB·µs | RSS / VM page·tick integrals over the process's CPU time (Linux: KB × µs / 1024) |
//! | `hiwater_rss`, `hiwater_vm` | KB | high-water marks |
//! | `read_char`, `write_char` | bytes | passed to `read`/`write` (any descriptor, a socket's too) |
//! | `read_syscalls`, `write_syscalls` | calls | those `read`/`write` calls |
//! | `read_bytes`, `write_bytes` | bytes | 512-byte sectors of `blk_read`/`blk_write` and of the task's file requests on `/var` × 512 |
//! | `cancelled_write_bytes` | bytes | 0 (no page cache, so no write is ever cancelled) |
//! | `nvcsw`, `nivcsw` | — | voluntary / involuntary context switches |
//! | `ac_exe_dev`, `ac_exe_inode` | — | 0 (the ramdisk has no devices or inodes) |
//!
//! Neither pair counts `sendto`/`recvfrom`; Linux's do not either (it counts in `vfs_read` and
//! `vfs_write`).
//!
//! ## Exact, and why totals are converted once
//!
//! A tick total converted to nanoseconds is not the sum of its parts converted: each
//! conversion rounds down, so converting ONACTIVEQUEUE and ONEXPIREDQUEUE separately can lose
//! a nanosecond. Every total here is converted from its tick sum in one step, so
//! `cpu_delay_total` is exactly `ticks_to_ns(ONACTIVEQUEUE + ONEXPIREDQUEUE)` — and because
//! `tally-microstate` proves that the delay episodes add up to the clocks tick for tick, the blkio
//! and irq totals are likewise `ticks_to_ns` of the UNINTERRUPTIBLE_SLEEP and INTERRUPTED
//! clocks that `msa()` reports. Maxima and minima are single episodes, each converted on its
//! own; a one- or two-tick episode on a TSC above 1 GHz is under a nanosecond and reads 0 ns
//! like any sub-nanosecond duration (the tick values still tell it apart).
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

use tally_clock::TscClock;
use tally_microstate::{DelayEpisodes, DelayStats, MicroState, MsaTimes};
use tally_uapi::taskstats::AGROUP;
pub use tally_uapi::taskstats::{KernelTimespec, Taskstats, TASKSTATS_VERSION};

/// Length of the kernel's command names (Linux `TASK_COMM_LEN`).
pub const TASK_COMM_LEN: usize = 16;

/// Per-task event counters: the kernel's only definition, kept in each task and summed into
/// dead-thread and children totals. Taskstats reads the I/O, fault and switch counters,
/// wait4's rusage the faults, blocks and switches, prstat (`proc_stat`) the faults,
/// switches, system calls and signals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Minor page faults: demand-zero pages mapped on first touch.
    pub minflt: u64,
    /// Major page faults: faults that waited for a disk (none exist yet: no paging).
    pub majflt: u64,
    /// Bytes passed to `read` / `write` (`rchar`/`wchar`), and the number of those calls
    /// (`syscr`/`syscw`); as on Linux, `sendto`/`recvfrom` on a socket are not counted.
    pub read_char: u64,
    pub write_char: u64,
    pub read_syscalls: u64,
    pub write_syscalls: u64,
    /// System calls of every kind: read only by prstat's SCL (not in taskstats or rusage).
    pub syscalls: u64,
    /// 512-byte sectors read / written with `blk_read` / `blk_write` (`ru_inblock`/`oublock`).
    pub inblock: u64,
    pub oublock: u64,
    /// Switches away from this task because it blocked or yielded (voluntary), or because it
    /// was preempted (involuntary). (Linux counts a yield as involuntary, since the task
    /// was still runnable; getrusage(2) calls it voluntary, and so does Tally.)
    pub nvcsw: u64,
    pub nivcsw: u64,
    /// Signals received (SIGCHLD from ended children, `kill`s, faults): read only by
    /// prstat's SIG (rusage's `ru_nsignals` stays 0, as on Linux).
    pub signals: u64,
}

impl Counters {
    /// Folds another task's counters into these (a process's threads, a reaped child),
    /// wrapping like every accounting sum. The pattern names every field, so a counter
    /// added later cannot be left out of the sums unnoticed (an unused binding warns).
    pub fn add(&mut self, o: &Counters) {
        let Counters {
            minflt,
            majflt,
            read_char,
            write_char,
            read_syscalls,
            write_syscalls,
            syscalls,
            inblock,
            oublock,
            nvcsw,
            nivcsw,
            signals,
        } = self;
        for (a, b) in [
            (minflt, o.minflt),
            (majflt, o.majflt),
            (read_char, o.read_char),
            (write_char, o.write_char),
            (read_syscalls, o.read_syscalls),
            (write_syscalls, o.write_syscalls),
            (syscalls, o.syscalls),
            (inblock, o.inblock),
            (oublock, o.oublock),
            (nvcsw, o.nvcsw),
            (nivcsw, o.nivcsw),
            (signals, o.signals),
        ] {
            *a = a.wrapping_add(b);
        }
    }
}

/// A process's memory numbers (from `tally_memacct::MemUsage`, which the kernel keeps with
/// each memory map).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    pub hiwater_rss_kb: u64,
    pub hiwater_vm_kb: u64,
    /// Resident / virtual 4 KiB pages integrated over TSC ticks of the process's CPU time.
    pub rss_page_ticks: u128,
    pub vm_page_ticks: u128,
}

/// Everything the kernel hands over for one record, raw: times as TSC values or tick
/// counts, nothing converted yet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskAccounting {
    pub pid: u32,
    pub tgid: u32,
    pub ppid: u32,
    pub uid: u32,
    pub gid: u32,
    /// Command name, NUL-padded (bytes after the first NUL are ignored).
    pub comm: [u8; TASK_COMM_LEN],
    /// `nice` (-20..=19).
    pub nice: i32,
    /// Scheduling policy number.
    pub policy: u8,
    /// The wait status, as Linux puts it in `ac_exitcode`.
    pub exit_code: u32,
    /// AFORK | ASU | ACORE | AXSIG (`tally_uapi::taskstats`).
    pub flags: u8,
    /// This is a thread group's aggregate (adds AGROUP).
    pub group: bool,
    /// TSC when the task was created, when the record is taken, and when its thread
    /// group's leader was created.
    pub created_tsc: u64,
    pub now_tsc: u64,
    pub group_created_tsc: u64,
    /// Microstate clocks at `now_tsc`, TSC ticks.
    pub msa_ticks: MsaTimes,
    /// Delay episodes at `now_tsc`, TSC ticks.
    pub delays: DelayStats,
    pub counters: Counters,
    pub memory: Memory,
}

/// Each microstate clock in nanoseconds (`msa()` order), written as little-endian `u64`s
/// straight into `out`, the payload of the `TASKSTATS_TYPE_MSA` attribute
/// (`8 × NR_MICROSTATES` bytes; a shorter `out` takes the first clocks). A clock of 0
/// ticks — most of them, in a live task — is 0 ns without a division.
pub fn write_msa_ns(msa_ticks: &MsaTimes, clock: &TscClock, out: &mut [u8]) {
    for (word, &t) in out.as_chunks_mut::<8>().0.iter_mut().zip(msa_ticks) {
        let ns = if t == 0 { 0 } else { clock.ticks_to_ns(t) };
        word.copy_from_slice(&ns.to_le_bytes());
    }
}

/// page·ticks of CPU time → MB·µs: × 10⁶ / hz gives page·µs, / 256 gives MB·µs (4 KiB
/// pages) — Linux's "RSS in KB × µs / 1024". Saturates instead of wrapping.
pub fn page_ticks_to_mb_us(page_ticks: u128, clock: &TscClock) -> u64 {
    // BEGIN LAB 6: page-ticks -> page-us -> MB-us (256 pages a MB), multiplying first, saturating at u64::MAX
    // STUB: 0
    let mb_us = page_ticks.saturating_mul(1_000_000) / clock.hz() as u128 / 256;
    u64::try_from(mb_us).unwrap_or(u64::MAX)
    // END LAB 6
}

/// The record for `a`, with `clock` converting ticks and `boot_unix_ns` (the wall clock at
/// boot, ns since 1970) anchoring begin times and `*_delay_max_ts`: [`fill_into`] read back
/// as a structure (what process accounting, CSA and the tests use).
pub fn fill(a: &TaskAccounting, clock: &TscClock, boot_unix_ns: u64) -> Taskstats {
    let mut image = [0u8; Taskstats::SIZE];
    fill_into(a, clock, boot_unix_ns, &mut image);
    Taskstats::from_bytes(&image).unwrap_or_default()
}

/// Byte offset of a `Taskstats` field in the image.
macro_rules! at {
    ($field:ident) => {
        core::mem::offset_of!(Taskstats, $field)
    };
}

/// A `struct taskstats` image being written field by field (little-endian, at the offsets
/// `tally_uapi` pins): each write is one store, no structure is built and encoded after.
struct Image<'a>(&'a mut [u8; Taskstats::SIZE]);

impl Image<'_> {
    fn u64(&mut self, at: usize, v: u64) {
        self.0[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, at: usize, v: u32) {
        self.0[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    fn u16(&mut self, at: usize, v: u16) {
        self.0[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }
    fn u8(&mut self, at: usize, v: u8) {
        self.0[at] = v;
    }
    fn timespec(&mut self, at: usize, t: KernelTimespec) {
        self.u64(at, t.tv_sec as u64);
        self.u64(at + 8, t.tv_nsec as u64);
    }
    /// One delay kind, `(count, total, max, min, max_ts)`, at the offsets `at`; a kind the
    /// task never waited in (all zeros) is left as the zeroed image has it.
    #[inline(always)]
    fn delay(&mut self, [count, total, max, min, max_ts]: [usize; 5], d: (u64, u64, u64, u64, KernelTimespec)) {
        if d == (0, 0, 0, 0, KernelTimespec::ZERO) {
            return;
        }
        self.u64(count, d.0);
        self.u64(total, d.1);
        self.u64(max, d.2);
        self.u64(min, d.3);
        self.timespec(max_ts, d.4);
    }
    /// A command name up to its first NUL (at most 16 bytes); the rest stays 0. Two word
    /// stores: the bytes from the first NUL on are masked off instead of copied one by one.
    fn comm(&mut self, at: usize, comm: &[u8; TASK_COMM_LEN]) {
        let v = u128::from_le_bytes(*comm);
        // The classic zero-byte test: the lowest 0x80 bit set marks the first zero byte
        // (bits above it may be false alarms; only the lowest is used).
        const ONES: u128 = u128::MAX / 255;
        let zero_bytes = v.wrapping_sub(ONES) & !v & (ONES << 7);
        let keep = if zero_bytes == 0 { u128::MAX } else { (1u128 << (zero_bytes.trailing_zeros() - 7)) - 1 };
        self.0[at..at + TASK_COMM_LEN].copy_from_slice(&(v & keep).to_le_bytes());
    }
}

/// [`fill`] written straight into `out`, the `struct taskstats` image where it is sent (the
/// STATS attribute of a bus message), without a structure built first and encoded after.
/// Only the fields Tally produces are written: `out` must come zeroed (swapin, freepages,
/// thrashing, compact, wpcopy, `cancelled_write_bytes`, `ac_exe_*` and the padding stay 0).
pub fn fill_into(a: &TaskAccounting, clock: &TscClock, boot_unix_ns: u64, out: &mut [u8; Taskstats::SIZE]) {
    let m = &a.msa_ticks;
    let at = |s: MicroState| m[s.index()];
    let us = |ticks: u64| clock.ticks_to_ns(ticks) / 1000;
    let wall_ns = |tsc: u64| boot_unix_ns.saturating_add(clock.monotonic_ns(tsc));

    // BEGIN LAB 7: CPU times from the clocks: user = ONCPU_USR, sys = ONCPU_SYS + ONCPU_TRAP (ticks), their sum in ns
    // STUB: let (user, sys, on_cpu_ns) = (0, 0, 0);
    let user = at(MicroState::OncpuUsr);
    let sys = at(MicroState::OncpuSys).wrapping_add(at(MicroState::OncpuTrap));
    let on_cpu_ns = clock.ticks_to_ns(user.wrapping_add(sys));
    // END LAB 7
    // BEGIN LAB 7: begin time in whole seconds since 1970; elapsed times (µs) since the task's and its group leader's creation
    // STUB: let (btime, etime_us, tgetime_us) = (0, 0, 0);
    let btime = wall_ns(a.created_tsc) / 1_000_000_000;
    let etime_us = us(a.now_tsc.saturating_sub(a.created_tsc));
    let tgetime_us = us(a.now_tsc.saturating_sub(a.group_created_tsc));
    // END LAB 7

    // One delay kind: (count, total ns, max ns, min ns, max_ts), the total from `total_ticks`.
    // A kind the task never waited in (most tasks never wait for a disk or an interrupt) is
    // all zeros, with no conversion.
    // BEGIN LAB 7: one delay kind in ns: (count, total, max, min, max_ts); the CPU total is the run-queue clocks' sum
    // STUB: let run_queue = 0;
    // STUB: let delay = |_: &DelayEpisodes, _: u64| (0, 0, 0, 0, KernelTimespec::ZERO);
    let run_queue = at(MicroState::OnActiveQueue).wrapping_add(at(MicroState::OnExpiredQueue));
    let delay = |e: &DelayEpisodes, total_ticks: u64| {
        if e.count == 0 && total_ticks == 0 && e.max == 0 && e.min == 0 {
            return (0, 0, 0, 0, KernelTimespec::ZERO);
        }
        let ts = if e.max == 0 { KernelTimespec::ZERO } else { KernelTimespec::from_unix_ns(wall_ns(e.max_seen)) };
        (e.count, clock.ticks_to_ns(total_ticks), clock.ticks_to_ns(e.max), clock.ticks_to_ns(e.min), ts)
    };
    // END LAB 7

    let mut w = Image(out);
    w.u16(at!(version), TASKSTATS_VERSION);
    w.u32(at!(ac_exitcode), a.exit_code);
    w.u8(at!(ac_flag), a.flags | if a.group { AGROUP } else { 0 });
    w.u8(at!(ac_nice), a.nice as u8);

    // The three kinds in one loop: `delay` and `Image::delay` then appear once and are
    // inlined (called three times, they were calls passing the tuple through memory).
    const CPU: [usize; 5] =
        [at!(cpu_count), at!(cpu_delay_total), at!(cpu_delay_max), at!(cpu_delay_min), at!(cpu_delay_max_ts)];
    const BLKIO: [usize; 5] =
        [at!(blkio_count), at!(blkio_delay_total), at!(blkio_delay_max), at!(blkio_delay_min), at!(blkio_delay_max_ts)];
    const IRQ: [usize; 5] =
        [at!(irq_count), at!(irq_delay_total), at!(irq_delay_max), at!(irq_delay_min), at!(irq_delay_max_ts)];
    let d = &a.delays;
    for (offsets, e, total) in [(CPU, &d.cpu, run_queue), (BLKIO, &d.blkio, d.blkio.total), (IRQ, &d.irq, d.irq.total)]
    {
        w.delay(offsets, delay(e, total));
    }
    w.u64(at!(cpu_run_real_total), on_cpu_ns);
    w.u64(at!(cpu_run_virtual_total), on_cpu_ns);
    w.u64(at!(cpu_scaled_run_real_total), on_cpu_ns);

    w.comm(at!(ac_comm), &a.comm); // the rest of its 32 bytes stays 0
    w.u8(at!(ac_sched), a.policy);
    w.u32(at!(ac_uid), a.uid);
    w.u32(at!(ac_gid), a.gid);
    w.u32(at!(ac_pid), a.pid);
    w.u32(at!(ac_ppid), a.ppid);
    w.u32(at!(ac_tgid), a.tgid);
    w.u32(at!(ac_btime), u32::try_from(btime).unwrap_or(u32::MAX));
    w.u64(at!(ac_btime64), btime);
    w.u64(at!(ac_etime), etime_us);
    w.u64(at!(ac_tgetime), tgetime_us);
    let (user_us, sys_us) = (us(user), us(sys));
    w.u64(at!(ac_utime), user_us);
    w.u64(at!(ac_stime), sys_us);
    w.u64(at!(ac_utimescaled), user_us);
    w.u64(at!(ac_stimescaled), sys_us);

    let c = &a.counters;
    w.u64(at!(ac_minflt), c.minflt);
    w.u64(at!(ac_majflt), c.majflt);
    w.u64(at!(coremem), page_ticks_to_mb_us(a.memory.rss_page_ticks, clock));
    w.u64(at!(virtmem), page_ticks_to_mb_us(a.memory.vm_page_ticks, clock));
    w.u64(at!(hiwater_rss), a.memory.hiwater_rss_kb);
    w.u64(at!(hiwater_vm), a.memory.hiwater_vm_kb);
    w.u64(at!(read_char), c.read_char);
    w.u64(at!(write_char), c.write_char);
    w.u64(at!(read_syscalls), c.read_syscalls);
    w.u64(at!(write_syscalls), c.write_syscalls);
    w.u64(at!(read_bytes), c.inblock.saturating_mul(512));
    w.u64(at!(write_bytes), c.oublock.saturating_mul(512));
    w.u64(at!(nvcsw), c.nvcsw);
    w.u64(at!(nivcsw), c.nivcsw);
    // swapin, freepages, thrashing, compact, wpcopy, cancelled_write_bytes, ac_exe_*:
    // nothing in Tally produces them (see the table above); they stay 0.
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
