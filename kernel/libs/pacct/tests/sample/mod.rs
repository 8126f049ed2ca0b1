//! The sample session whose records are checked against GNU acct: a dozen processes that
//! exercise every field and every formatting rule. Shared by `tests/gnu_golden.rs` and
//! `examples/sample_acct.rs` (which writes the file the golden outputs were captured from).
//!
//! No two commands tie on every number `sa` sorts by (GNU then orders them by its hash
//! table, Tally by name). Chosen so that the host's own tables do not change what GNU prints: uids 0 (root
//! everywhere), 4242 and 31337 (in no usual password file); terminals none, ttyS0 (4/64,
//! present on any PC Linux), a pseudo-terminal and a device no system names (42/7).

use tally_pacct::record::{build, ProcessSummary};
use tally_pacct::AcctV3;
use tally_uapi::acct::{old_encode_dev, ACORE, AFORK, ASU, AXSIG, TTY_S0};

/// 2025-11-25 07:02:00 UTC.
const T0: u64 = 1_764_054_120;
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn comm(name: &[u8]) -> [u8; 16] {
    let mut c = [0u8; 16];
    let n = name.len().min(16);
    c[..n].copy_from_slice(&name[..n]);
    c
}

fn p(pid: u32, name: &[u8]) -> ProcessSummary {
    ProcessSummary {
        pid,
        ppid: 1,
        uid: 0,
        gid: 0,
        tty: TTY_S0,
        exit_unix_s: T0 + u64::from(pid),
        elapsed_ns: 40 * MS,
        utime_ns: 20 * MS,
        stime_ns: 10 * MS,
        vm_kb: 1_160,
        minflt: 30,
        comm: comm(name),
        ..ProcessSummary::default()
    }
}

/// The summaries, in exit order.
pub fn summaries() -> Vec<ProcessSummary> {
    vec![
        // Two quick `ls` and two `cat` by root on the console: commands seen more than once
        // (`sa` lists them instead of lumping them into ***other).
        ProcessSummary { elapsed_ns: 12 * MS, utime_ns: 3 * MS, stime_ns: 9 * MS, ..p(10, b"ls") },
        ProcessSummary { elapsed_ns: 15 * MS, utime_ns: 0, stime_ns: 11 * MS, vm_kb: 1_164, ..p(11, b"ls") },
        ProcessSummary { elapsed_ns: 2_509_999_999, exit_status: 1 << 8, ..p(12, b"cat") },
        ProcessSummary { elapsed_ns: 7 * MS, minflt: 12, ..p(13, b"cat") },
        // A CPU hog by user 4242 in a pseudo-terminal, killed by SIGKILL after using
        // privilege: 123.45 s user (12345 ticks, comp_t 0x2607, read back as 12344).
        ProcessSummary {
            uid: 4242,
            gid: 100,
            tty: old_encode_dev(136, 3),
            exit_status: 9,
            flags: ASU | AXSIG,
            elapsed_ns: 130 * S + 1,
            utime_ns: 123_450 * MS,
            stime_ns: 82 * MS,
            vm_kb: 100_000,
            minflt: 8196,
            majflt: 3,
            ppid: 14,
            ..p(15, b"spin")
        },
        // A crash with a core dump (SIGSEGV | 0x80), no terminal.
        ProcessSummary { tty: 0, exit_status: 11 | 0x80, flags: AXSIG | ACORE, ..p(16, b"crash") },
        // A child that forked and never exec'd, with a 16-byte name (cut to 15).
        ProcessSummary { flags: AFORK, uid: 31337, gid: 31337, ..p(17, b"forked-worker-01") },
        ProcessSummary { flags: AFORK, uid: 31337, gid: 31337, stime_ns: 0, ..p(18, b"forked-worker-01") },
        // A name with a control byte, on a terminal no system has a name for.
        ProcessSummary { tty: old_encode_dev(42, 7), elapsed_ns: 5 * MS, ..p(19, b"a\x01b") },
        // A daemon that ran for 55.5 hours: 19 980 001 ticks is above 2^24, so the float of
        // ac_etime drops the last one (19 980 000, truncated as Linux does); 2 hours of system time
        // needs comp_t's exponent too.
        ProcessSummary {
            elapsed_ns: 199_800 * S + 17 * MS,
            utime_ns: 601 * S,
            stime_ns: 7_200 * S,
            vm_kb: 20_000_000,
            minflt: 1_000_000,
            majflt: 70_000,
            exit_unix_s: T0 + 200_000,
            ..p(2, b"daemon")
        },
        // The shell, last: exit status 3, started at the epoch of the session.
        ProcessSummary { elapsed_ns: 61 * S, exit_status: 3 << 8, exit_unix_s: T0 + 61, ..p(3, b"sh") },
        ProcessSummary { elapsed_ns: 62 * S, exit_unix_s: T0 + 62, ..p(4, b"sh") },
    ]
}

/// The records [`summaries`] build to, in exit order.
pub fn records() -> Vec<AcctV3> {
    summaries().iter().map(build).collect()
}

/// The file those records make.
pub fn file_bytes() -> Vec<u8> {
    records().iter().flat_map(|r| r.to_bytes()).collect()
}
