//! Building one acct v3 record from what the kernel knows about a process that ended.
//!
//! Linux fills a record in two steps: while each thread exits, `acct_collect` adds the
//! thread's CPU times and faults into the process's `pacct_struct` and ORs in its flags;
//! when the last one goes, `fill_ac` converts the sums into the record's units and encodings,
//! and the record is appended to the file. In Tally the kernel does the first step with the
//! accounting it already keeps (the microstate clocks, the task table's accumulators of dead
//! threads, the memory counters) and hands the result over as a plain [`ProcessSummary`];
//! [`build`] is `fill_ac`, field for field, and host-tested here.
//!
//! ## Each field, its unit, and where it comes from
//!
//! | field | unit, encoding | computed from | Linux's source |
//! |---|---|---|---|
//! | `ac_flag` | bits | `flags` & (AFORK \| ASU \| ACORE \| AXSIG) | `PF_FORKNOEXEC` of the leader, `PF_SUPERPRIV`, `PF_DUMPCORE`, `PF_SIGNALED` of any thread |
//! | `ac_version` | — | [`ACCT_VERSION`] (3) | the same |
//! | `ac_tty` | `old_encode_dev` | `tty` (0: none) | the session's controlling terminal |
//! | `ac_exitcode` | wait status | `exit_status` | the leader's exit code (`do_exit`'s argument) |
//! | `ac_uid`, `ac_gid` | — | `uid`, `gid` | the exiting thread's real uid/gid |
//! | `ac_pid`, `ac_ppid` | — | `pid` (tgid), `ppid` (parent's tgid) | `task_tgid_nr`, of `real_parent` for ppid |
//! | `ac_btime` | s since 1970, `u32` | `exit_unix_s − ⌊elapsed ticks / 100⌋`, clamped to `0..=u32::MAX` | `ktime_get_real_seconds() − elapsed` |
//! | `ac_etime` | AHZ ticks, float | `⌊elapsed_ns / 10⁷⌋` through [`encode_float`] | now − the leader's `start_time` |
//! | `ac_utime`, `ac_stime` | AHZ ticks, `comp_t` | `⌊utime_ns / 10⁷⌋`, `⌊stime_ns / 10⁷⌋` | every thread's `task_cputime` summed |
//! | `ac_mem` | KB, `comp_t` | `vm_kb` | the address space's total size (sum of VMAs) / 1024 when the last thread exits |
//! | `ac_io`, `ac_rw`, `ac_swaps` | `comp_t` | 0 | 0: Linux never fills them |
//! | `ac_minflt`, `ac_majflt` | `comp_t` | `minflt`, `majflt` | every thread's `min_flt`, `maj_flt` summed |
//! | `ac_comm` | bytes | `comm` up to its first NUL, at most 15 bytes, NUL-padded | `strscpy(current->comm)` |
//!
//! The header calls `ac_mem` "average memory usage", but no Linux computes an average: it
//! is the size of the address space (virtual, not resident) at the end, in KB. Tally keeps
//! both resident and virtual sizes and their integrals; the record follows Linux and takes
//! the virtual size. Likewise Tally counts the characters each process reads and writes
//! (taskstats carries them), but `ac_io` stays 0 as on Linux, so `sa`'s `avio` column
//! means the same thing on both systems.

use tally_uapi::acct::{AcctV3, ACCT_COMM, ACCT_VERSION, ACORE, AFORK, AHZ, ASU, AXSIG};
use tally_uapi::taskstats::Taskstats;

use crate::encoding::{encode_comp_t, encode_float};

/// The flags a record may carry (AGROUP and ACOMPAT never appear in an acct file).
pub const RECORD_FLAGS: u8 = AFORK | ASU | ACORE | AXSIG;

/// Nanoseconds per AHZ tick (10 ms).
const NS_PER_AHZ: u64 = 1_000_000_000 / AHZ as u64;

/// Everything about one ended process that its record needs, gathered by the kernel when the
/// last thread of the process exits. Plain numbers, already in ns / KB / counts: the
/// conversions to the record's units and encodings are [`build`]'s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessSummary {
    /// The process: its thread group id.
    pub pid: u32,
    /// The parent's thread group id at the time of the exit (1 if it was reparented).
    pub ppid: u32,
    /// Real user and group id.
    pub uid: u32,
    pub gid: u32,
    /// The controlling terminal as `old_encode_dev(major, minor)`
    /// ([`tally_uapi::acct::TTY_S0`] for the console), 0 for none.
    pub tty: u16,
    /// The wait status `wait4` reports for the process: `code << 8` after `exit(code)`, the
    /// signal number (+ 0x80 with a core dump) after a fatal signal.
    pub exit_status: u32,
    /// AFORK | ASU | ACORE | AXSIG ([`tally_uapi::acct`]), as collected from the threads;
    /// other bits are dropped. [`signal_flags`] derives ACORE and AXSIG from a wait status.
    pub flags: u8,
    /// The wall clock when the record is built, whole seconds since 1970.
    pub exit_unix_s: u64,
    /// Time since the process (its first thread) was created, ns, on a monotonic clock.
    pub elapsed_ns: u64,
    /// User and system CPU time of all its threads, ns.
    pub utime_ns: u64,
    pub stime_ns: u64,
    /// Total size of the address space when the last thread exits, KB.
    pub vm_kb: u64,
    /// Page faults of all its threads: minor (resolved without I/O) and major.
    pub minflt: u64,
    pub majflt: u64,
    /// The command name, NUL-padded; bytes after the first NUL are ignored, and at most 15
    /// are kept (Linux's `TASK_COMM_LEN` of 16 includes the NUL).
    pub comm: [u8; ACCT_COMM],
}

/// Linux's `nsec_to_AHZ` for AHZ = 100: whole hundredths of a second, truncated.
pub const fn nsec_to_ahz(ns: u64) -> u64 {
    ns / NS_PER_AHZ
}

/// The flags a wait status implies, as Linux's exit path sets them: AXSIG when a signal
/// ended the process (`PF_SIGNALED`), plus ACORE when it dumped core (`PF_DUMPCORE`).
pub const fn signal_flags(wait_status: u32) -> u8 {
    let sig = wait_status & 0x7f;
    if sig == 0 || sig == 0x7f {
        return 0;
    }
    if wait_status & 0x80 != 0 {
        AXSIG | ACORE
    } else {
        AXSIG
    }
}

/// The record for `p`, exactly as Linux's `fill_ac` and `acct_write_process` compute each
/// field (see the table above).
pub fn build(p: &ProcessSummary) -> AcctV3 {
    let elapsed = nsec_to_ahz(p.elapsed_ns);
    let btime = p.exit_unix_s.saturating_sub(elapsed / AHZ as u64);
    let mut comm = [0u8; ACCT_COMM];
    for (dst, &src) in comm[..ACCT_COMM - 1].iter_mut().zip(p.comm.iter().take_while(|&&b| b != 0)) {
        *dst = src;
    }
    AcctV3 {
        ac_flag: p.flags & RECORD_FLAGS,
        ac_version: ACCT_VERSION,
        ac_tty: p.tty,
        ac_exitcode: p.exit_status,
        ac_uid: p.uid,
        ac_gid: p.gid,
        ac_pid: p.pid,
        ac_ppid: p.ppid,
        ac_btime: if btime > u32::MAX as u64 { u32::MAX } else { btime as u32 },
        ac_etime: f32::from_bits(encode_float(elapsed)),
        ac_utime: encode_comp_t(nsec_to_ahz(p.utime_ns)),
        ac_stime: encode_comp_t(nsec_to_ahz(p.stime_ns)),
        ac_mem: encode_comp_t(p.vm_kb),
        ac_io: 0,
        ac_rw: 0,
        ac_minflt: encode_comp_t(p.minflt),
        ac_majflt: encode_comp_t(p.majflt),
        ac_swaps: 0,
        ac_comm: comm,
    }
}

/// The summary of a process from its **taskstats** record at exit — the per-process
/// (`AGROUP`) `struct taskstats` the kernel builds for the same exit
/// (`tally_taskstats::fill`), so both accountings read one harvest of the same numbers.
/// What taskstats does not carry is passed in: the wall clock at the exit
/// (`exit_unix_s`), the terminal (`tty`) and the address space's size when the last thread
/// exited (`vm_kb`, Linux's `ac_mem`).
///
/// | summary | from the taskstats record |
/// |---|---|
/// | `pid`, `ppid`, `uid`, `gid` | `ac_tgid`, `ac_ppid`, `ac_uid`, `ac_gid` |
/// | `exit_status` | `ac_exitcode` (a wait status) |
/// | `flags` | `ac_flag` (AGROUP and other bits dropped; AFORK is there only for a leader, as in Linux) |
/// | `elapsed_ns` | `ac_tgetime` µs × 1000: the process's wall time, from its first thread's start |
/// | `utime_ns`, `stime_ns` | `ac_utime`, `ac_stime` µs × 1000 |
/// | `minflt`, `majflt` | `ac_minflt`, `ac_majflt` |
/// | `comm` | `ac_comm`'s first 16 bytes |
///
/// Going through microseconds loses nothing the record keeps: ⌊⌊ns / 1000⌋ / 10⁴⌋ is
/// ⌊ns / 10⁷⌋, the AHZ tick [`build`] takes.
pub fn summary_from_taskstats(ts: &Taskstats, exit_unix_s: u64, tty: u16, vm_kb: u64) -> ProcessSummary {
    let mut comm = [0u8; ACCT_COMM];
    comm.copy_from_slice(&ts.ac_comm[..ACCT_COMM]);
    ProcessSummary {
        pid: ts.ac_tgid,
        ppid: ts.ac_ppid,
        uid: ts.ac_uid,
        gid: ts.ac_gid,
        tty,
        exit_status: ts.ac_exitcode,
        flags: ts.ac_flag & RECORD_FLAGS,
        exit_unix_s,
        elapsed_ns: ts.ac_tgetime.saturating_mul(1000),
        utime_ns: ts.ac_utime.saturating_mul(1000),
        stime_ns: ts.ac_stime.saturating_mul(1000),
        vm_kb,
        minflt: ts.ac_minflt,
        majflt: ts.ac_majflt,
        comm,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{decode_comp_t, decode_float};
    use proptest::prelude::*;
    use tally_uapi::acct::TTY_S0;

    fn comm(s: &[u8]) -> [u8; ACCT_COMM] {
        let mut c = [0u8; ACCT_COMM];
        c[..s.len()].copy_from_slice(s);
        c
    }

    fn summary() -> ProcessSummary {
        ProcessSummary {
            pid: 12,
            ppid: 1,
            uid: 0,
            gid: 0,
            tty: TTY_S0,
            exit_status: 3 << 8,
            flags: ASU,
            exit_unix_s: 1_764_054_130,
            elapsed_ns: 2_509_999_999,
            utime_ns: 123_450_000_000,
            stime_ns: 9_999_999,
            vm_kb: 100_000,
            minflt: 8196,
            majflt: 0,
            comm: comm(b"spin"),
        }
    }

    #[test]
    fn every_field_as_fill_ac_computes_it() {
        let r = build(&summary());
        assert_eq!(r.ac_flag, ASU);
        assert_eq!(r.ac_version, 3);
        assert_eq!(r.ac_tty, 0x0440);
        assert_eq!(r.ac_exitcode, 0x300);
        assert_eq!((r.ac_uid, r.ac_gid, r.ac_pid, r.ac_ppid), (0, 0, 12, 1));
        // 2.509999999 s is 250 whole ticks: etime 250.0; begin = now − ⌊250 / 100⌋ s.
        assert_eq!(r.ac_etime.to_bits(), 0x437a_0000);
        assert_eq!(r.ac_btime, 1_764_054_128);
        // 123.45 s = 12345 ticks → 0x2607; 9.999999 ms is 0 ticks.
        assert_eq!(r.ac_utime, 0x2607);
        assert_eq!(r.ac_stime, 0);
        assert_eq!(r.ac_mem, 0x461b);
        assert_eq!(r.ac_minflt, 0x2401);
        assert_eq!((r.ac_io, r.ac_rw, r.ac_swaps, r.ac_majflt), (0, 0, 0, 0));
        assert_eq!(&r.ac_comm, b"spin\0\0\0\0\0\0\0\0\0\0\0\0");
    }

    #[test]
    fn comm_keeps_fifteen_bytes_and_stops_at_nul() {
        let mut p = summary();
        p.comm = *b"abcdefghijklmnop";
        assert_eq!(&build(&p).ac_comm, b"abcdefghijklmno\0");
        p.comm = comm(b"ab\0cd");
        assert_eq!(&build(&p).ac_comm, b"ab\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
    }

    #[test]
    fn begin_time_clamps_like_linux() {
        let mut p = summary();
        p.exit_unix_s = 5;
        p.elapsed_ns = 60_000_000_000;
        assert_eq!(build(&p).ac_btime, 0, "never before 1970");
        p.exit_unix_s = u64::from(u32::MAX) + 1000;
        p.elapsed_ns = 0;
        assert_eq!(build(&p).ac_btime, u32::MAX, "the u32 ends in 2106");
    }

    #[test]
    fn only_record_flags_pass() {
        let mut p = summary();
        p.flags = 0xff;
        assert_eq!(build(&p).ac_flag, AFORK | ASU | ACORE | AXSIG);
    }

    #[test]
    fn flags_from_wait_statuses() {
        assert_eq!(signal_flags(0), 0, "exit(0)");
        assert_eq!(signal_flags(42 << 8), 0, "exit(42)");
        assert_eq!(signal_flags(9), AXSIG, "SIGKILL");
        assert_eq!(signal_flags(11 | 0x80), AXSIG | ACORE, "SIGSEGV with a core");
        assert_eq!(signal_flags(0x137f), 0, "stopped is not an end");
    }

    #[test]
    fn a_taskstats_record_becomes_the_summary() {
        let mut ts = Taskstats::zeroed();
        ts.ac_tgid = 12;
        ts.ac_pid = 12;
        ts.ac_ppid = 1;
        ts.ac_uid = 1000;
        ts.ac_gid = 100;
        ts.ac_exitcode = 3 << 8;
        ts.ac_flag = ASU | AFORK | tally_uapi::taskstats::AGROUP;
        ts.ac_tgetime = 2_509_999;
        ts.ac_etime = 1;
        ts.ac_utime = 123_450_000;
        ts.ac_stime = 9_999;
        ts.ac_minflt = 8196;
        ts.ac_majflt = 2;
        ts.ac_comm[..4].copy_from_slice(b"spin");
        let s = summary_from_taskstats(&ts, 1_764_054_130, TTY_S0, 100_000);
        let want = ProcessSummary {
            uid: 1000,
            gid: 100,
            flags: ASU | AFORK,
            elapsed_ns: 2_509_999_000,
            utime_ns: 123_450_000_000,
            stime_ns: 9_999_000,
            majflt: 2,
            ..summary()
        };
        assert_eq!(s, want);
        // The record is the one the plain summary gives (stime 9.999 ms: 0 ticks).
        assert_eq!(build(&s).ac_utime, 0x2607);
        assert_eq!(build(&s).ac_etime.to_bits(), 0x437a_0000);
    }

    proptest! {
        /// Taking the times through taskstats' microseconds changes no tick of the record.
        #[test]
        fn microseconds_lose_no_tick(ns in any::<u64>()) {
            let mut ts = Taskstats::zeroed();
            ts.ac_utime = ns / 1000;
            ts.ac_tgetime = ns / 1000;
            let s = summary_from_taskstats(&ts, 0, 0, 0);
            prop_assert_eq!(nsec_to_ahz(s.utime_ns), nsec_to_ahz(ns));
            prop_assert_eq!(nsec_to_ahz(s.elapsed_ns), nsec_to_ahz(ns));
        }
    }

    proptest! {
        #[test]
        fn built_records_decode_to_the_summary_within_comp_t_precision(
            elapsed in any::<u64>(), ut in any::<u64>(), st in any::<u64>(), vm in 0u64..1 << 34,
            minflt in 0u64..1 << 34, now in any::<u64>(), flags in any::<u8>(),
        ) {
            let p = ProcessSummary {
                elapsed_ns: elapsed, utime_ns: ut, stime_ns: st, vm_kb: vm, minflt,
                exit_unix_s: now, flags, ..summary()
            };
            let r = build(&p);
            let ticks = nsec_to_ahz(elapsed);
            let etime = decode_float(r.ac_etime.to_bits()) as f64;
            prop_assert!(etime <= ticks as f64 && etime >= ticks as f64 * (1.0 - 1.0 / 8_388_608.0));
            let pairs = [(r.ac_utime, nsec_to_ahz(ut)), (r.ac_stime, nsec_to_ahz(st)), (r.ac_mem, vm), (r.ac_minflt, minflt)];
            for (c, v) in pairs {
                let back = decode_comp_t(c);
                if v <= crate::encoding::COMP_T_MAX {
                    prop_assert!(back.abs_diff(v) as f64 <= v as f64 / 2048.0);
                } else {
                    prop_assert_eq!(c, 0xffff);
                }
            }
            prop_assert_eq!(r.ac_flag & !RECORD_FLAGS, 0);
            prop_assert!(u64::from(r.ac_btime) <= now);
        }
    }
}
