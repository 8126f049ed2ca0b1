//! The record's rules checked by hand and by property: unit conversions, identity, delays,
//! memory, counters (the tests of `lib.rs`, kept apart from the code a lab hands out).
use super::*;
use proptest::prelude::*;
use tally_microstate::MsaClock;
use tally_microstate::NR_MICROSTATES;
use tally_uapi::taskstats::{AFORK, ASU, TASKSTATS_V13_SIZE, TS_COMM_LEN};
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
    fn comm_is_copied_up_to_its_first_nul(comm in prop::array::uniform16(prop_oneof![Just(0u8), any::<u8>()])) {
        let t = fill(&TaskAccounting { comm, ..Default::default() }, &GHZ, BOOT);
        let mut expected = [0u8; TS_COMM_LEN];
        for (e, &c) in expected.iter_mut().zip(comm.iter().take_while(|&&c| c != 0)) {
            *e = c;
        }
        prop_assert_eq!(t.ac_comm, expected);
    }

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
