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
//! | `compact_*`, `wpcopy_*` | — | 0: no compaction, no copy-on-write either |
//! | `ac_minflt`, `ac_majflt` | — | page faults (majflt is 0: no paging) |
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
pub use tally_uapi::taskstats::{KernelTimespec, Taskstats, TASKSTATS_VERSION};
use tally_uapi::taskstats::{AGROUP, TS_COMM_LEN};

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
    let mb_us = page_ticks.saturating_mul(1_000_000) / clock.hz() as u128 / 256;
    u64::try_from(mb_us).unwrap_or(u64::MAX)
}

/// The record for `a`, with `clock` converting ticks and `boot_unix_ns` (the wall clock at
/// boot, ns since 1970) anchoring begin times and `*_delay_max_ts`.
pub fn fill(a: &TaskAccounting, clock: &TscClock, boot_unix_ns: u64) -> Taskstats {
    let m = &a.msa_ticks;
    let at = |s: MicroState| m[s.index()];
    let us = |ticks: u64| clock.ticks_to_ns(ticks) / 1000;
    let wall_ns = |tsc: u64| boot_unix_ns.saturating_add(clock.monotonic_ns(tsc));

    let user = at(MicroState::OncpuUsr);
    let sys = at(MicroState::OncpuSys).wrapping_add(at(MicroState::OncpuTrap));
    let on_cpu_ns = clock.ticks_to_ns(user.wrapping_add(sys));
    let run_queue = at(MicroState::OnActiveQueue).wrapping_add(at(MicroState::OnExpiredQueue));
    let btime = wall_ns(a.created_tsc) / 1_000_000_000;

    // One delay kind: (count, total ns, max ns, min ns, max_ts), the total from `total_ticks`.
    // A kind the task never waited in (most tasks never wait for a disk or an interrupt) is
    // all zeros, with no conversion.
    let delay = |e: &DelayEpisodes, total_ticks: u64| {
        if e.count == 0 && total_ticks == 0 && e.max == 0 && e.min == 0 {
            return (0, 0, 0, 0, KernelTimespec::ZERO);
        }
        let ts = if e.max == 0 { KernelTimespec::ZERO } else { KernelTimespec::from_unix_ns(wall_ns(e.max_seen)) };
        (e.count, clock.ticks_to_ns(total_ticks), clock.ticks_to_ns(e.max), clock.ticks_to_ns(e.min), ts)
    };
    let cpu = delay(&a.delays.cpu, run_queue);
    let blkio = delay(&a.delays.blkio, a.delays.blkio.total);
    let irq = delay(&a.delays.irq, a.delays.irq.total);

    let mut comm = [0u8; TS_COMM_LEN];
    for (dst, &src) in comm.iter_mut().zip(a.comm.iter().take_while(|&&b| b != 0)) {
        *dst = src;
    }

    let c = &a.counters;
    Taskstats {
        version: TASKSTATS_VERSION,
        ac_exitcode: a.exit_code,
        ac_flag: a.flags | if a.group { AGROUP } else { 0 },
        ac_nice: a.nice as u8,

        cpu_count: cpu.0,
        cpu_delay_total: cpu.1,
        cpu_delay_max: cpu.2,
        cpu_delay_min: cpu.3,
        cpu_delay_max_ts: cpu.4,
        blkio_count: blkio.0,
        blkio_delay_total: blkio.1,
        blkio_delay_max: blkio.2,
        blkio_delay_min: blkio.3,
        blkio_delay_max_ts: blkio.4,
        irq_count: irq.0,
        irq_delay_total: irq.1,
        irq_delay_max: irq.2,
        irq_delay_min: irq.3,
        irq_delay_max_ts: irq.4,
        cpu_run_real_total: on_cpu_ns,
        cpu_run_virtual_total: on_cpu_ns,
        cpu_scaled_run_real_total: on_cpu_ns,

        ac_comm: comm,
        ac_sched: a.policy,
        ac_uid: a.uid,
        ac_gid: a.gid,
        ac_pid: a.pid,
        ac_ppid: a.ppid,
        ac_tgid: a.tgid,
        ac_btime: u32::try_from(btime).unwrap_or(u32::MAX),
        ac_btime64: btime,
        ac_etime: us(a.now_tsc.saturating_sub(a.created_tsc)),
        ac_tgetime: us(a.now_tsc.saturating_sub(a.group_created_tsc)),
        ac_utime: us(user),
        ac_stime: us(sys),
        ac_utimescaled: us(user),
        ac_stimescaled: us(sys),
        ac_minflt: c.minflt,
        ac_majflt: c.majflt,

        coremem: page_ticks_to_mb_us(a.memory.rss_page_ticks, clock),
        virtmem: page_ticks_to_mb_us(a.memory.vm_page_ticks, clock),
        hiwater_rss: a.memory.hiwater_rss_kb,
        hiwater_vm: a.memory.hiwater_vm_kb,
        read_char: c.read_char,
        write_char: c.write_char,
        read_syscalls: c.read_syscalls,
        write_syscalls: c.write_syscalls,
        read_bytes: c.inblock.saturating_mul(512),
        write_bytes: c.oublock.saturating_mul(512),
        nvcsw: c.nvcsw,
        nivcsw: c.nivcsw,
        // swapin, freepages, thrashing, compact, wpcopy, cancelled_write_bytes, ac_exe_*:
        // nothing in Tally produces them (see the table above).
        ..Taskstats::zeroed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tally_microstate::MsaClock;
    use tally_microstate::NR_MICROSTATES;
    use tally_uapi::taskstats::{AFORK, ASU, TASKSTATS_V13_SIZE};
    use MicroState::*;

    /// Each microstate clock in nanoseconds: the plain form `write_msa_ns` is tested against.
    fn msa_ns(msa_ticks: &MsaTimes, clock: &TscClock) -> [u64; NR_MICROSTATES] {
        let mut ns = [0; NR_MICROSTATES];
        for (n, &t) in ns.iter_mut().zip(msa_ticks) {
            *n = clock.ticks_to_ns(t);
        }
        ns
    }

    const GHZ: TscClock = TscClock::new(1_000_000_000, 0);
    /// 2023-11-14T22:13:20Z.
    const BOOT: u64 = 1_700_000_000 * 1_000_000_000;

    fn times(pairs: &[(MicroState, u64)]) -> MsaTimes {
        let mut m = [0; NR_MICROSTATES];
        for &(s, t) in pairs {
            m[s.index()] = t;
        }
        m
    }

    #[test]
    fn user_and_system_time_split_like_rusage() {
        let clock = TscClock::new(2_000_000_000, 0);
        let a = TaskAccounting {
            msa_ticks: times(&[
                (OncpuUsr, 6_000_000),
                (OncpuSys, 2_000_000),
                (OncpuTrap, 1_000_000),
                (InterruptibleSleep, 99),
            ]),
            ..Default::default()
        };
        let t = fill(&a, &clock, BOOT);
        assert_eq!(t.ac_utime, 3_000, "ONCPU_USR: 6e6 ticks at 2 GHz = 3 ms");
        assert_eq!(t.ac_stime, 1_500, "ONCPU_SYS + ONCPU_TRAP");
        assert_eq!((t.ac_utimescaled, t.ac_stimescaled), (3_000, 1_500));
        assert_eq!(t.cpu_run_real_total, 4_500_000);
        assert_eq!(t.cpu_run_virtual_total, 4_500_000);
        assert_eq!(t.cpu_scaled_run_real_total, 4_500_000);
        assert_eq!(t.version, 17);
    }

    #[test]
    fn group_records_carry_agroup() {
        let mut a = TaskAccounting { flags: AFORK | ASU, ..Default::default() };
        assert_eq!(fill(&a, &GHZ, BOOT).ac_flag, AFORK | ASU);
        a.group = true;
        assert_eq!(fill(&a, &GHZ, BOOT).ac_flag, AFORK | ASU | AGROUP);
    }

    #[test]
    fn identity_nice_and_policy() {
        let a = TaskAccounting {
            pid: 7,
            tgid: 5,
            ppid: 1,
            uid: 1000,
            gid: 100,
            nice: -5,
            policy: 1,
            exit_code: 3 << 8,
            ..Default::default()
        };
        let t = fill(&a, &GHZ, BOOT);
        assert_eq!((t.ac_pid, t.ac_tgid, t.ac_ppid, t.ac_uid, t.ac_gid), (7, 5, 1, 1000, 100));
        assert_eq!(t.ac_nice, 251, "Linux stores task_nice() in a u8");
        assert_eq!(t.ac_sched, 1);
        assert_eq!(t.ac_exitcode, 0x300);
    }

    #[test]
    fn begin_and_elapsed_times_from_boot() {
        let clock = TscClock::new(1_000_000_000, 5_000); // booted at TSC 5 000
        let a = TaskAccounting {
            created_tsc: 5_000 + 2_500_000_000, // 2.5 s after boot
            group_created_tsc: 5_000 + 1_000_000_000,
            now_tsc: 5_000 + 4_000_000_000,
            ..Default::default()
        };
        let t = fill(&a, &clock, BOOT);
        assert_eq!(t.ac_btime64, 1_700_000_002, "boot + 2.5 s, whole seconds");
        assert_eq!(t.ac_btime, 1_700_000_002);
        assert_eq!(t.ac_etime, 1_500_000, "1.5 s in µs");
        assert_eq!(t.ac_tgetime, 3_000_000, "since the group leader began");
        // Past 2106 the 32-bit field clamps; the 64-bit one does not.
        let far = fill(&a, &clock, 5_000_000_000 * 1_000_000_000);
        assert_eq!((far.ac_btime, far.ac_btime64), (u32::MAX, 5_000_000_002));
    }

    #[test]
    fn comm_is_cut_at_its_nul_and_padded() {
        let mut comm = [0u8; TASK_COMM_LEN];
        comm[..2].copy_from_slice(b"sh");
        comm[3..9].copy_from_slice(b"stale!"); // left over from a longer name
        let t = fill(&TaskAccounting { comm, ..Default::default() }, &GHZ, BOOT);
        assert_eq!(t.comm_str(), "sh");
        assert_eq!(t.ac_comm[2..], [0u8; TS_COMM_LEN - 2], "nothing after the NUL leaks");
        let full = fill(&TaskAccounting { comm: *b"0123456789abcdef", ..Default::default() }, &GHZ, BOOT);
        assert_eq!(full.comm_str(), "0123456789abcdef", "16 bytes without a NUL: all kept");
        assert_eq!(full.ac_comm[16..], [0u8; 16], "and still NUL-terminated in the 32");
    }

    #[test]
    fn no_delay_means_zero_max_ts() {
        let mut a = TaskAccounting::default();
        a.delays.irq = DelayEpisodes { count: 2, total: 0, max: 0, min: 0, max_seen: 0 }; // two empty episodes
        let t = fill(&a, &GHZ, BOOT);
        for ts in [t.cpu_delay_max_ts, t.blkio_delay_max_ts, t.irq_delay_max_ts] {
            assert_eq!(ts, KernelTimespec::ZERO);
        }
        assert_eq!(t.irq_count, 2);
        // The kinds Tally does not have stay zero, ts included.
        assert_eq!((t.swapin_count, t.freepages_delay_max, t.wpcopy_delay_min), (0, 0, 0));
        assert_eq!(t.thrashing_delay_max_ts, KernelTimespec::ZERO);
    }

    #[test]
    fn delay_max_ts_is_wall_clock() {
        let clock = TscClock::new(2_000_000_000, 1_000);
        let mut a = TaskAccounting {
            msa_ticks: times(&[(OnActiveQueue, 300), (OnExpiredQueue, 100)]),
            ..TaskAccounting::default()
        };
        a.delays.cpu = DelayEpisodes { count: 2, total: 400, max: 300, min: 100, max_seen: 1_000 + 3_000_000_001 };
        a.delays.blkio = DelayEpisodes { count: 1, total: 10_000, max: 10_000, min: 10_000, max_seen: 1_000 + 20_000 };
        let t = fill(&a, &clock, BOOT + 7);
        assert_eq!((t.cpu_count, t.cpu_delay_total, t.cpu_delay_max, t.cpu_delay_min), (2, 200, 150, 50));
        // 3_000_000_001 ticks at 2 GHz = 1.5000000005 s → 1_500_000_000 ns after boot.
        assert_eq!(t.cpu_delay_max_ts, KernelTimespec { tv_sec: 1_700_000_001, tv_nsec: 500_000_007 });
        assert_eq!((t.blkio_count, t.blkio_delay_total, t.blkio_delay_max), (1, 5_000, 5_000));
        assert_eq!(t.blkio_delay_max_ts, KernelTimespec { tv_sec: 1_700_000_000, tv_nsec: 10_007 });
    }

    #[test]
    fn coremem_by_hand() {
        // 100 resident pages (400 KB) for 3 ms of CPU at 2.5 GHz: 7.5e6 ticks.
        // Linux: 400 KB × 3 000 µs / 1024 = 1171.875 → 1171 MB·µs.
        let clock = TscClock::new(2_500_000_000, 0);
        let memory = Memory {
            rss_page_ticks: 100 * 7_500_000,
            vm_page_ticks: 256 * 2_500_000_000,
            hiwater_rss_kb: 400,
            hiwater_vm_kb: 1024,
        };
        let t = fill(&TaskAccounting { memory, ..Default::default() }, &clock, BOOT);
        assert_eq!(t.coremem, 1171);
        assert_eq!(t.virtmem, 1_000_000, "1 MB (256 pages) for 1 s");
        assert_eq!((t.hiwater_rss, t.hiwater_vm), (400, 1024));
        assert_eq!(page_ticks_to_mb_us(u128::MAX, &clock), u64::MAX, "saturates");
    }

    /// Every field of `c`, in declaration order (the pattern fails to compile if one is missing).
    fn fields(c: &Counters) -> [u64; 12] {
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
        } = *c;
        [
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
        ]
    }

    fn counters(v: [u64; 12]) -> Counters {
        let [minflt, majflt, read_char, write_char, read_syscalls, write_syscalls, syscalls, inblock, oublock, nvcsw, nivcsw, signals] =
            v;
        Counters {
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
        }
    }

    fn sum(a: &Counters, b: &Counters) -> Counters {
        let mut s = *a;
        s.add(b);
        s
    }

    #[test]
    fn add_folds_every_counter() {
        // Distinct values per field, so a field added to the wrong one shows.
        let a = counters(core::array::from_fn(|i| 1 << i));
        let b = counters(core::array::from_fn(|i| 1 << (i + 20)));
        let s = sum(&a, &b);
        assert_eq!(fields(&s), core::array::from_fn(|i| (1 << i) | (1 << (i + 20))));
        // The two prstat reads, which taskstats leaves out, are folded too.
        assert_eq!((s.syscalls, s.signals), (1 << 6 | 1 << 26, 1 << 11 | 1 << 31));
        let mut w = counters([u64::MAX; 12]);
        w.add(&counters([2; 12]));
        assert_eq!(fields(&w), [1; 12], "wraps like the clocks");
    }

    proptest! {
        #[test]
        fn add_is_a_fieldwise_wrapping_sum(a in any::<[u64; 12]>(), b in any::<[u64; 12]>(), c in any::<[u64; 12]>()) {
            let (a, b, c) = (counters(a), counters(b), counters(c));
            let s = sum(&a, &b);
            for ((x, y), z) in fields(&a).into_iter().zip(fields(&b)).zip(fields(&s)) {
                prop_assert_eq!(z, x.wrapping_add(y));
            }
            // So threads and children may be folded in any order.
            prop_assert_eq!(s, sum(&b, &a));
            prop_assert_eq!(sum(&s, &c), sum(&a, &sum(&b, &c)));
            prop_assert_eq!(sum(&a, &Counters::default()), a, "zero is the identity");
        }
    }

    #[test]
    fn io_counters() {
        let counters = Counters {
            inblock: 8,
            oublock: 3,
            read_char: 11,
            write_char: 12,
            read_syscalls: 2,
            write_syscalls: 1,
            minflt: 9,
            nvcsw: 4,
            nivcsw: 5,
            majflt: 0,
            syscalls: 7,
            signals: 6,
        };
        let t = fill(&TaskAccounting { counters, ..Default::default() }, &GHZ, BOOT);
        assert_eq!((t.read_bytes, t.write_bytes), (4096, 1536));
        assert_eq!((t.read_char, t.write_char, t.read_syscalls, t.write_syscalls), (11, 12, 2, 1));
        assert_eq!((t.ac_minflt, t.nvcsw, t.nivcsw), (9, 4, 5));
        assert_eq!((t.cancelled_write_bytes, t.ac_exe_dev, t.ac_exe_inode), (0, 0, 0));
    }

    #[test]
    fn a_filled_record_survives_the_wire() {
        let a = TaskAccounting { pid: 3, comm: *b"init\0\0\0\0\0\0\0\0\0\0\0\0", group: true, ..Default::default() };
        let t = fill(&a, &GHZ, BOOT);
        let b = t.to_bytes();
        assert_eq!(Taskstats::from_bytes(&b), Some(t));
        assert_eq!(Taskstats::from_bytes(&b[..TASKSTATS_V13_SIZE]).unwrap().comm_str(), "init");
    }

    proptest! {
        #[test]
        fn write_msa_ns_writes_msa_ns_as_bytes(
            hz in 1_000_000u64..10_000_000_000,
            ticks in prop::array::uniform13(prop_oneof![Just(0u64), any::<u64>()]),
        ) {
            let clock = TscClock::new(hz, 0);
            let mut out = [0xa5u8; 8 * NR_MICROSTATES];
            write_msa_ns(&ticks, &clock, &mut out);
            let expected: Vec<u8> = msa_ns(&ticks, &clock).iter().flat_map(|v| v.to_le_bytes()).collect();
            prop_assert_eq!(&out[..], &expected[..]);
        }

        #[test]
        fn cpu_delay_total_is_the_run_queue_sum_converted_once(
            hz in 1_000_000u64..10_000_000_000,
            active in 0u64..(1 << 50),
            expired in 0u64..(1 << 50),
        ) {
            let clock = TscClock::new(hz, 0);
            let a = TaskAccounting {
                msa_ticks: times(&[(OnActiveQueue, active), (OnExpiredQueue, expired)]),
                ..Default::default()
            };
            let t = fill(&a, &clock, BOOT);
            prop_assert_eq!(t.cpu_delay_total, clock.ticks_to_ns(active + expired));
            // Converting per state could lose up to a nanosecond; the record does not.
            let parts = msa_ns(&a.msa_ticks, &clock);
            let split = parts[OnActiveQueue.index()] + parts[OnExpiredQueue.index()];
            prop_assert!(t.cpu_delay_total >= split && t.cpu_delay_total - split <= 1);
        }

        /// End to end: a real clock through random switches; every delay total in the record
        /// is exactly the conversion of the clocks `msa()` reports, and the extremes are
        /// consistent in nanoseconds too.
        #[test]
        fn delay_totals_agree_with_the_clocks(
            hz in 1_000_000u64..10_000_000_000,
            events in prop::collection::vec((0u64..1_000_000, 0usize..NR_MICROSTATES), 0..100),
        ) {
            let clock = TscClock::new(hz, 0);
            let mut now = 1_000;
            let mut c = MsaClock::new(now, OnActiveQueue);
            for (dt, s) in events {
                now += dt;
                c.switch(now, MicroState::ALL[s]);
            }
            let a = TaskAccounting {
                msa_ticks: c.snapshot(now),
                delays: c.delays(now),
                created_tsc: 1_000,
                now_tsc: now,
                ..Default::default()
            };
            let t = fill(&a, &clock, BOOT);
            let ns = |s: &[MicroState]| clock.ticks_to_ns(s.iter().map(|s| a.msa_ticks[s.index()]).sum());
            prop_assert_eq!(t.cpu_delay_total, ns(&[OnActiveQueue, OnExpiredQueue]));
            prop_assert_eq!(t.blkio_delay_total, ns(&[UninterruptibleSleep]));
            prop_assert_eq!(t.irq_delay_total, ns(&[Interrupted]));
            prop_assert_eq!(t.cpu_run_real_total, ns(&[OncpuUsr, OncpuSys, OncpuTrap]));
            prop_assert_eq!(t.cpu_count, a.delays.cpu.count);
            prop_assert!(t.cpu_delay_min <= t.cpu_delay_max && t.cpu_delay_max <= t.cpu_delay_total);
            prop_assert!(t.irq_delay_min <= t.irq_delay_max && t.irq_delay_max <= t.irq_delay_total);
            prop_assert_eq!(t.blkio_delay_max_ts == KernelTimespec::ZERO, a.delays.blkio.max == 0);
        }
    }
}
