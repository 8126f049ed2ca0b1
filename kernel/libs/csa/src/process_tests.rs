//! Tests of `process.rs` (kept apart: lab 9 hands out process.rs for editing).

use super::*;
use tally_uapi::csa::{ACCT_MAGIC, ACCT_MAGIC_HDR2};

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[test]
fn a_taskstats_record_becomes_the_process_exit() {
    let mut ts = Taskstats::zeroed();
    ts.ac_tgid = 42;
    ts.ac_pid = 42;
    ts.ac_ppid = 7;
    ts.ac_uid = 1000;
    ts.ac_gid = 100;
    ts.ac_comm[..5].copy_from_slice(b"spawn");
    ts.ac_flag = ASU | AXSIG | tally_uapi::taskstats::AGROUP;
    ts.ac_exitcode = 9;
    ts.ac_nice = (-5i8) as u8;
    ts.ac_sched = 3;
    ts.ac_btime64 = 1_700_000_000;
    ts.ac_tgetime = 2_000_001;
    ts.ac_etime = 5;
    ts.ac_utime = 1_500;
    ts.ac_stime = 250;
    ts.coremem = 3;
    ts.virtmem = 7;
    ts.hiwater_rss = 1160;
    ts.hiwater_vm = 4096;
    ts.ac_minflt = 11;
    ts.ac_majflt = 1;
    ts.read_char = 100;
    ts.write_char = 200;
    ts.read_syscalls = 3;
    ts.write_syscalls = 4;
    ts.cpu_count = 5;
    ts.cpu_delay_total = 6;
    ts.blkio_count = 7;
    ts.blkio_delay_total = 8;
    ts.cpu_run_real_total = 1_750_000;
    ts.cpu_run_virtual_total = 1_750_001;
    let p = ProcessExit::from_taskstats(&ts);
    assert_eq!((p.pid, p.ppid, p.uid, p.gid), (42, 7, 1000, 100));
    assert_eq!(&p.comm[..6], b"spawn\0");
    assert_eq!(p.acct_flags, ASU | AXSIG, "AGROUP is taskstats' own");
    assert_eq!((p.wait_status, p.nice, p.policy), (9, -5, 3));
    assert_eq!(p.begin_unix_ns, 1_700_000_000_000_000_000);
    assert_eq!((p.elapsed_ns, p.utime_ns, p.stime_ns), (2_000_001_000, 1_500_000, 250_000));
    assert_eq!(p.io, IoUsage { read_bytes: 100, write_bytes: 200, read_calls: 3, write_calls: 4 });
    assert_eq!((p.delay.cpu_count, p.delay.cpu_delay_ns, p.delay.blkio_count, p.delay.blkio_delay_ns), (5, 6, 7, 8));
    assert_eq!((p.delay.cpu_run_real_ns, p.delay.cpu_run_virtual_ns), (1_750_000, 1_750_001));
    // The records carry taskstats' numbers unchanged: µs, KB, MB·µs.
    let r = p.records(1);
    assert_eq!((r.base.etime, r.base.utime, r.base.stime, r.base.btime), (2_000_001, 1_500, 250, 1_700_000_000));
    assert_eq!(r.base.nice, 251);
    assert_eq!(r.base.stat, 0, "a signal's status has no exit code");
    let m = r.mem.unwrap();
    assert_eq!((m.core.himem, m.core.mem1, m.virt.himem, m.virt.mem1), (1160, 3, 4096, 7));
    assert_eq!((m.minflt, m.majflt), (11, 1));
}

/// Every field a different value, so a field written at a wrong offset shows.
fn sample() -> ProcessExit {
    let mut comm = [0u8; 16];
    comm[..5].copy_from_slice(b"spawn");
    ProcessExit {
        pid: 42,
        ppid: 7,
        uid: 1000,
        gid: 100,
        comm,
        acct_flags: AFORK | AXSIG | 0x40,
        wait_status: 0x0300,
        nice: -5,
        policy: 3,
        begin_unix_ns: 1_700_000_000_999_999_999,
        elapsed_ns: 2_500_000_999,
        utime_ns: 1_234_567,
        stime_ns: 890_123,
        mem: MemoryUsage {
            core_hiwater_kb: 1111,
            virt_hiwater_kb: 2222,
            core_kb_ns: 4 * 1_024_000 + 5,
            virt_kb_ns: 9 * 1_024_000,
            minflt: 33,
            majflt: 44,
        },
        io: IoUsage { read_bytes: 555, write_bytes: 666, read_calls: 77, write_calls: 88 },
        delay: DelayUsage {
            cpu_count: 11,
            cpu_delay_ns: 12,
            blkio_count: 13,
            blkio_delay_ns: 14,
            swapin_count: 15,
            swapin_delay_ns: 16,
            cpu_run_real_ns: 17,
            cpu_run_virtual_ns: 18,
        },
    }
}

#[test]
fn conversions_are_to_csa_units() {
    let r = sample().records(0x7A11_0000_002A);
    let b = r.base;
    assert_eq!(b.flag, AFORK | AXSIG, "only the process flags");
    assert_eq!(b.stat, 3);
    assert_eq!(b.nice, 251, "nice -5 in a byte");
    assert_eq!(b.btime, 1_700_000_000, "seconds, truncated");
    assert_eq!((b.etime, b.utime, b.stime), (2_500_000, 1_234, 890), "µs, truncated");
    let m = r.mem.unwrap();
    assert_eq!((m.core.himem, m.virt.himem), (1111, 2222));
    assert_eq!((m.core.mem1, m.virt.mem1), (4, 9), "MB·µs");
    assert_eq!(kb_ns_to_mb_us(u128::MAX), u64::MAX, "saturates");
    assert_eq!(r.io.unwrap().scw, 88);
    assert_eq!(r.delay.unwrap().cpu_run_virtual_total, 18);
}

#[test]
fn page_ticks_become_kb_ns() {
    // 256 pages (1 MB) for 2 GHz-ticks of one second: 1024 KB·s = 1024e9 KB·ns = 1e6 MB·µs.
    let kb_ns = page_ticks_to_kb_ns(256 * 2_000_000_000, 2_000_000_000);
    assert_eq!(kb_ns, 1024 * 1_000_000_000);
    assert_eq!(kb_ns_to_mb_us(kb_ns), 1_000_000);
    assert_eq!(page_ticks_to_kb_ns(u128::MAX, 1), u128::MAX, "saturates");
    assert_eq!(page_ticks_to_kb_ns(5, 0), 0);
}

#[test]
fn a_full_chain_sits_at_the_reference_offsets() {
    let mut out = [0xAAu8; CHAIN_MAX];
    let r = sample().records(0x7A11_0000_002A);
    assert_eq!(r.encode(&mut out), 376);
    let b = &out[..];
    // hdr1
    assert_eq!(u16_at(b, 0), ACCT_MAGIC);
    assert_eq!(u16_at(b, 2), 0o6000);
    assert_eq!(b[4], 0o1);
    assert_eq!(b[5], AFORK | AXSIG | AMORE);
    assert_eq!(u16_at(b, 6), 136);
    // hdr2
    assert_eq!(u16_at(b, 8), 0xCEB5);
    assert_eq!(u16_at(b, 8), ACCT_MAGIC_HDR2);
    assert_eq!(b[12], 1 | 2 | 4, "mem, io and delay follow");
    assert_eq!(b[13], 0);
    assert_eq!(u16_at(b, 14), 112 + 56 + 72);
    // acctcsa fields
    assert_eq!(u64_at(b, 16), 0, "sbu");
    assert_eq!((b[24], b[25], b[26], b[27]), (3, 251, 3, 0));
    assert_eq!(u32_at(b, 28), 1000);
    assert_eq!(u32_at(b, 32), 100);
    assert_eq!(u32_at(b, 36), 0, "padding");
    assert_eq!(u64_at(b, 40), 0, "ash");
    assert_eq!(u64_at(b, 48), 0x7A11_0000_002A);
    assert_eq!(u64_at(b, 56), 0, "prid");
    assert_eq!(u32_at(b, 64), 42);
    assert_eq!(u32_at(b, 68), 7);
    assert_eq!(u64_at(b, 72), 1_700_000_000);
    assert_eq!(&b[80..85], b"spawn");
    assert_eq!(&b[85..96], &[0; 11]);
    assert_eq!(u64_at(b, 96), 2_500_000);
    assert_eq!(u64_at(b, 104), 1_234);
    assert_eq!(u64_at(b, 112), 890);
    assert_eq!((u64_at(b, 120), u64_at(b, 128)), (0, 0));
    // acctmem at 136
    let m = 136;
    assert_eq!(u16_at(b, m), ACCT_MAGIC);
    assert_eq!(u16_at(b, m + 2), 0o6000);
    assert_eq!((b[m + 4], b[m + 5]), (0o2, AMORE));
    assert_eq!(u16_at(b, m + 6), 112);
    assert_eq!(u64_at(b, m + 8), 0, "sbu");
    assert_eq!(u64_at(b, m + 16), 1111, "core himem");
    assert_eq!(u64_at(b, m + 24), 4, "core mem1");
    assert_eq!((u64_at(b, m + 32), u64_at(b, m + 40)), (0, 0), "mem2, mem3");
    assert_eq!(u64_at(b, m + 48), 2222, "virt himem");
    assert_eq!(u64_at(b, m + 56), 9, "virt mem1");
    assert_eq!(u64_at(b, m + 80), 0, "pgswap");
    assert_eq!(u64_at(b, m + 88), 33);
    assert_eq!(u64_at(b, m + 96), 44);
    assert_eq!(u64_at(b, m + 104), 0);
    // acctio at 248
    let i = 248;
    assert_eq!(u16_at(b, i), ACCT_MAGIC);
    assert_eq!(u16_at(b, i + 2), 0o7000);
    assert_eq!((b[i + 4], b[i + 5]), (0o4, AMORE));
    assert_eq!(u16_at(b, i + 6), 56);
    assert_eq!([u64_at(b, i + 16), u64_at(b, i + 24), u64_at(b, i + 32), u64_at(b, i + 40)], [555, 666, 77, 88]);
    assert_eq!(u64_at(b, i + 48), 0);
    // acctdelay at 304
    let d = 304;
    assert_eq!(u16_at(b, d), ACCT_MAGIC);
    assert_eq!(u16_at(b, d + 2), 0o7000);
    assert_eq!((b[d + 4], b[d + 5]), (0o10, 0), "the last record has no AMORE");
    assert_eq!(u16_at(b, d + 6), 72);
    let fields: Vec<u64> = (0..8).map(|k| u64_at(b, d + 8 + 8 * k)).collect();
    assert_eq!(fields, [11, 12, 13, 14, 15, 16, 17, 18]);
}

#[test]
fn a_bare_base_record_has_no_amore_and_an_empty_second_header() {
    let mut out = [0xAAu8; CHAIN_MAX];
    let r = sample().records(1).only(Continuations::NONE);
    assert_eq!(r.encode(&mut out), 136);
    assert_eq!(out[5], AFORK | AXSIG);
    assert_eq!((out[12], u16_at(&out, 14)), (0, 0));
    assert_eq!(out[136], 0xAA, "nothing written past the chain");
}

#[test]
fn a_partial_chain_links_what_is_there() {
    let mut out = [0u8; CHAIN_MAX];
    let r = sample().records(1).only(Continuations(ACCT_MEM | ACCT_DELAY));
    assert_eq!(r.encode(&mut out), 136 + 112 + 72);
    assert_eq!(out[12], ACCT_MEM | ACCT_DELAY);
    assert_eq!(u16_at(&out, 14), 112 + 72);
    assert_eq!(out[136 + 5], AMORE, "mem → delay");
    assert_eq!(out[248 + 4], ACCT_KERNEL_DELAY, "delay right after mem");
    assert_eq!(out[248 + 5], 0);
}

#[test]
fn memory_integrals_become_mb_us() {
    assert_eq!(kb_ns_to_mb_us(0), 0);
    assert_eq!(kb_ns_to_mb_us(1_023_999), 0, "less than 1 MB·µs truncates to 0");
    assert_eq!(kb_ns_to_mb_us(1_024_000), 1, "1024 KB for 1000 ns is 1 MB·µs");
    assert_eq!(kb_ns_to_mb_us(3 * 1_024_000 + 1_023_999), 3, "truncated, not rounded");
    let top = u64::MAX as u128 * 1_024_000;
    assert_eq!(kb_ns_to_mb_us(top + 1_023_999), u64::MAX, "the largest value that fits");
    assert_eq!(kb_ns_to_mb_us(top + 1_024_000), u64::MAX, "one more saturates, it does not wrap to 0");
    assert_eq!(kb_ns_to_mb_us(u128::MAX), u64::MAX, "saturates");
}

#[test]
fn the_memory_record_of_a_process() {
    let r = sample().records(1);
    let m = r.mem.expect("records() always builds the memory record");
    assert_eq!((m.core.himem, m.virt.himem), (1111, 2222), "high-water marks, KB");
    assert_eq!((m.core.mem1, m.virt.mem1), (4, 9), "integrals in mem1, MB·µs (KB·ns / 1 024 000)");
    assert_eq!((m.core.mem2, m.core.mem3, m.virt.mem2, m.virt.mem3), (0, 0, 0, 0), "mem2 and mem3 unused");
    assert_eq!((m.minflt, m.majflt, m.pgswap, m.sbu), (33, 44, 0, 0), "(minflt, majflt, pgswap, sbu)");
    // From taskstats and back: hiwater_rss/hiwater_vm are KB, coremem/virtmem MB·µs.
    let mut ts = Taskstats::zeroed();
    ts.hiwater_rss = 1160;
    ts.hiwater_vm = 4096;
    ts.coremem = 3;
    ts.virtmem = 7;
    ts.ac_minflt = 11;
    ts.ac_majflt = 1;
    let p = ProcessExit::from_taskstats(&ts);
    assert_eq!((p.mem.core_hiwater_kb, p.mem.virt_hiwater_kb), (1160, 4096), "hiwater_rss, hiwater_vm are KB already");
    assert_eq!((p.mem.core_kb_ns, p.mem.virt_kb_ns), (3 * 1_024_000, 7 * 1_024_000), "MB·µs × 1 024 000 = KB·ns");
    assert_eq!((p.mem.minflt, p.mem.majflt), (11, 1));
    let m = p.records(1).mem.unwrap();
    assert_eq!(
        (m.core.himem, m.core.mem1, m.virt.himem, m.virt.mem1),
        (1160, 3, 4096, 7),
        "the round trip changes nothing"
    );
}
