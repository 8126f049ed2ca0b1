//! The records of one process: a base record (`struct acctcsa`, 136 bytes) and up to three
//! continuation records chained behind it — memory (`acctmem`, 112), I/O (`acctio`, 56)
//! and delay (`acctdelay`, 72).
//!
//! ## Where the numbers come from
//!
//! The kernel fills a [`ProcessExit`] when the last thread of a process that is in a job
//! exits, in plain units (ns, bytes, KB, counts); [`ProcessExit::records`] turns it into the
//! record fields in CSA's units. The conversions, field by field:
//!
//! | record field | from [`ProcessExit`] | conversion |
//! |---|---|---|
//! | `ac_hdr1.ah_flag` | `acct_flags` | the AFORK, ASU, ACORE, AXSIG bits; AMORE is the chain's |
//! | `ac_stat` | `wait_status` | `(status >> 8) & 0xff`, as CSA takes it from taskstats' `ac_exitcode` |
//! | `ac_nice` | `nice` (-20..19) | stored in a byte, two's complement (nice -5 reads 251), as taskstats |
//! | `ac_sched` | `policy` | Linux's policy number |
//! | `ac_uid`, `ac_gid`, `ac_pid`, `ac_ppid`, `ac_comm` | the same | `ac_pid` is the process id (tgid) |
//! | `ac_jid` | the job table | |
//! | `ac_btime` | `begin_unix_ns` | seconds since 1970, truncated |
//! | `ac_etime`, `ac_utime`, `ac_stime` | `elapsed_ns`, `utime_ns`, `stime_ns` | µs, truncated |
//! | `ac_sbu`, `ac_ash`, `ac_prid`, spares | — | 0 (billing units are the tools' business) |
//! | `ac_core.himem`, `ac_virt.himem` | `mem.core_hiwater_kb`, `mem.virt_hiwater_kb` | KB |
//! | `ac_core.mem1`, `ac_virt.mem1` | `mem.core_kb_ns`, `mem.virt_kb_ns` | MB·µs = KB·ns / 1 024 000 (1 MB = 1024 KB), truncated, saturating |
//! | `mem2`, `mem3`, `ac_pgswap` | — | 0 (CSA leaves them unused; Tally does not swap) |
//! | `ac_minflt`, `ac_majflt` | `mem.minflt`, `mem.majflt` | counts |
//! | `ac_chr`, `ac_chw`, `ac_scr`, `ac_scw` | `io` | bytes and calls of read/write |
//! | `acctdelay` fields | `delay` | counts and ns, unchanged (CSA's delay record is in ns) |
//!
//! Two things CSA's own writer does are left out on purpose, because a teaching kernel
//! should report what it measured: CSA gives a process with no CPU time at all half a clock
//! tick of system time, and sets a zero memory integral to `himem / 1024`. Tally writes the
//! zeros.
//!
//! ## The chain
//!
//! ```text
//!  acctcsa (136)                       acctmem (112)        acctio (56)        acctdelay (72)
//!  ┌──────────────┬──────────────┬───┐ ┌──────────────┬───┐ ┌────────────┬───┐ ┌────────────┬───┐
//!  │hdr1 flag=AMORE│hdr2 type=7   │...│ │hdr flag=AMORE│...│ │hdr AMORE   │...│ │hdr flag=0  │...│
//!  │               │   size=240   │   │ │              │   │ │            │   │ │            │   │
//!  └──────────────┴──────────────┴───┘ └──────────────┴───┘ └────────────┴───┘ └────────────┴───┘
//! ```
//!
//! Each record's first header has AMORE set if another continuation follows it; the base
//! record's second header says which ones follow (`ACCT_MEM | ACCT_IO | ACCT_DELAY` bits)
//! and how many bytes they take together. The chain is always in the order mem, io, delay;
//! any of them may be missing. (CSA's daemon starts the second header's type at
//! `ACCT_KERNEL_CSA` = 1 before OR-ing the bits in, which makes "memory follows" and "nothing
//! follows" look alike; Tally writes only the bits, as the reference table says.)

use tally_uapi::csa::{
    ACCTCSA_SIZE, ACCTDELAY_SIZE, ACCTIO_SIZE, ACCTMEM_SIZE, ACCT_DELAY, ACCT_IO, ACCT_KERNEL_CSA, ACCT_KERNEL_DELAY,
    ACCT_KERNEL_IO, ACCT_KERNEL_MEM, ACCT_MEM, ACORE, AFORK, AMORE, ASU, AXSIG, REV_CSA, REV_DELAY, REV_IO, REV_MEM,
};

use crate::header::Header;
use crate::wire::{Get, Put};
use tally_uapi::taskstats::Taskstats;

/// The longest chain: a base record and all three continuation records (376 bytes).
pub const CHAIN_MAX: usize = ACCTCSA_SIZE + ACCTMEM_SIZE + ACCTIO_SIZE + ACCTDELAY_SIZE;

/// The process flags a base record carries (AMORE is the chain's own).
pub const PROCESS_FLAGS: u8 = AFORK | ASU | ACORE | AXSIG;

/// What the kernel knows about a process when its last thread exits, in plain units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessExit {
    /// Process id (the thread group id) and its parent's.
    pub pid: u32,
    pub ppid: u32,
    pub uid: u32,
    pub gid: u32,
    /// Command name, NUL-padded.
    pub comm: [u8; 16],
    /// `acct(2)`'s flag bits: AFORK, ASU, ACORE, AXSIG (others are ignored).
    pub acct_flags: u8,
    /// The wait status (as `wait4` reports it).
    pub wait_status: u32,
    /// Nice value, -20..19.
    pub nice: i32,
    /// Scheduling policy (SCHED_NORMAL 0, FIFO 1, RR 2, BATCH 3).
    pub policy: u8,
    /// When the process began, ns since 1970.
    pub begin_unix_ns: u64,
    /// Wall time from its start to its exit, ns.
    pub elapsed_ns: u64,
    /// User and system CPU time of all its threads, ns.
    pub utime_ns: u64,
    pub stime_ns: u64,
    pub mem: MemoryUsage,
    pub io: IoUsage,
    pub delay: DelayUsage,
}

/// Memory numbers of a process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUsage {
    /// Largest resident set and virtual size it ever had, KB.
    pub core_hiwater_kb: u64,
    pub virt_hiwater_kb: u64,
    /// Resident and virtual size integrated over its CPU time, KB·ns.
    pub core_kb_ns: u128,
    pub virt_kb_ns: u128,
    /// Minor and major page faults.
    pub minflt: u64,
    pub majflt: u64,
}

/// Character I/O of a process: bytes passed to `read`/`write` and the number of calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoUsage {
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_calls: u64,
    pub write_calls: u64,
}

/// Delay accounting of a process (as taskstats reports it): waits and their totals in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DelayUsage {
    /// Waits on the run queue.
    pub cpu_count: u64,
    pub cpu_delay_ns: u64,
    /// Waits for block I/O.
    pub blkio_count: u64,
    pub blkio_delay_ns: u64,
    /// Waits for a page from swap (none in Tally).
    pub swapin_count: u64,
    pub swapin_delay_ns: u64,
    /// Time on the CPU, ns ("real" may be corrected for a hypervisor's steal, "virtual" is
    /// what the kernel saw).
    pub cpu_run_real_ns: u64,
    pub cpu_run_virtual_ns: u64,
}

/// ns → µs, truncated (CSA's time unit).
pub const fn ns_to_us(ns: u64) -> u64 {
    ns / 1000
}

/// ns since 1970 → seconds since 1970, truncated (`time_t`).
pub const fn ns_to_secs(ns: u64) -> u64 {
    ns / 1_000_000_000
}

/// KB·ns → MB·µs (1 MB = 1024 KB), truncated; saturates at `u64::MAX`.
pub const fn kb_ns_to_mb_us(kb_ns: u128) -> u64 {
    // BEGIN LAB 9: 1 MB·µs is 1024 KB × 1000 ns; truncate, and saturate rather than wrap
    // STUB: let _ = kb_ns;
    // STUB: 0
    let v = kb_ns / 1_024_000;
    if v > u64::MAX as u128 {
        u64::MAX
    } else {
        v as u64
    }
    // END LAB 9
}

/// Memory integrals as the kernel keeps them (page·TSC ticks of CPU time, 4 KiB pages, a
/// TSC of `tsc_hz`) → KB·ns for [`MemoryUsage`]. Saturates instead of wrapping.
pub const fn page_ticks_to_kb_ns(page_ticks: u128, tsc_hz: u64) -> u128 {
    if tsc_hz == 0 {
        return 0;
    }
    page_ticks.saturating_mul(4).saturating_mul(1_000_000_000) / tsc_hz as u128
}

/// The base record `struct acctcsa`, field for field in the file's units.
///
/// ```text
///   0 hdr1 · 8 hdr2 · 16 ac_sbu u64 · 24 ac_stat u8 · 25 ac_nice u8 · 26 ac_sched u8 ·
///  28 ac_uid u32 · 32 ac_gid u32 · 40 ac_ash u64 · 48 ac_jid u64 · 56 ac_prid u64 ·
///  64 ac_pid u32 · 68 ac_ppid u32 · 72 ac_btime (s) · 80 ac_comm[16] · 96 ac_etime µs ·
/// 104 ac_utime µs · 112 ac_stime µs · 120 ac_spare · 128 ac_spare1
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BaseRecord {
    /// The process flags of the first header (AMORE excluded: the encoder sets it).
    pub flag: u8,
    /// System billing units (written 0; the bits of a `double` in the SGI CSA design).
    pub sbu: u64,
    pub stat: u8,
    pub nice: u8,
    pub sched: u8,
    pub uid: u32,
    pub gid: u32,
    pub ash: u64,
    pub jid: u64,
    pub prid: u64,
    pub pid: u32,
    pub ppid: u32,
    pub btime: u64,
    pub comm: [u8; 16],
    pub etime: u64,
    pub utime: u64,
    pub stime: u64,
    pub spare: u64,
    pub spare1: u64,
}

/// `struct memint`: a high-water mark (KB) and three integrals (MB·µs; only `mem1` used).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemInt {
    pub himem: u64,
    pub mem1: u64,
    pub mem2: u64,
    pub mem3: u64,
}

/// The memory continuation record `struct acctmem`.
///
/// ```text
///   0 hdr · 8 ac_sbu · 16 ac_core{himem, mem1, mem2, mem3} · 48 ac_virt{…} ·
///  80 ac_pgswap · 88 ac_minflt · 96 ac_majflt · 104 ac_spare
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemRecord {
    pub sbu: u64,
    pub core: MemInt,
    pub virt: MemInt,
    pub pgswap: u64,
    pub minflt: u64,
    pub majflt: u64,
    pub spare: u64,
}

/// The I/O continuation record `struct acctio` (CSA 4's 56-byte form).
///
/// ```text
///   0 hdr · 8 ac_sbu · 16 ac_chr · 24 ac_chw · 32 ac_scr · 40 ac_scw · 48 ac_spare
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoRecord {
    pub sbu: u64,
    pub chr: u64,
    pub chw: u64,
    pub scr: u64,
    pub scw: u64,
    pub spare: u64,
}

/// The delay continuation record `struct acctdelay` (all u64; totals in ns).
///
/// ```text
///   0 hdr · 8 cpu_count · 16 cpu_delay_total · 24 blkio_count · 32 blkio_delay_total ·
///  40 swapin_count · 48 swapin_delay_total · 56 cpu_run_real_total · 64 cpu_run_virtual_total
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DelayRecord {
    pub cpu_count: u64,
    pub cpu_delay_total: u64,
    pub blkio_count: u64,
    pub blkio_delay_total: u64,
    pub swapin_count: u64,
    pub swapin_delay_total: u64,
    pub cpu_run_real_total: u64,
    pub cpu_run_virtual_total: u64,
}

/// A base record and the continuation records chained to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessRecord {
    pub base: BaseRecord,
    pub mem: Option<MemRecord>,
    pub io: Option<IoRecord>,
    pub delay: Option<DelayRecord>,
}

/// Which continuation records a chain carries: a set of `ACCT_MEM`, `ACCT_IO`,
/// `ACCT_DELAY` bits (the second header's `ah_type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Continuations(pub u8);

impl Continuations {
    pub const NONE: Continuations = Continuations(0);
    pub const ALL: Continuations = Continuations(ACCT_MEM | ACCT_IO | ACCT_DELAY);

    pub const fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

impl ProcessExit {
    /// A process's numbers from its **taskstats** record at exit — the per-process
    /// (`AGROUP`) `struct taskstats` the kernel builds for the same exit
    /// (`tally_taskstats::fill`), as Linux CSA's kernel side reads its numbers out of the
    /// task's taskstats accounting:
    ///
    /// | `ProcessExit` | from the taskstats record |
    /// |---|---|
    /// | `pid`, `ppid`, `uid`, `gid`, `comm` | `ac_tgid`, `ac_ppid`, `ac_uid`, `ac_gid`, `ac_comm`'s first 16 bytes |
    /// | `acct_flags`, `wait_status` | `ac_flag` (AGROUP dropped), `ac_exitcode` |
    /// | `nice`, `policy` | `ac_nice` (a byte: 251 is -5), `ac_sched` |
    /// | `begin_unix_ns` | `ac_btime64` s (the record keeps seconds) |
    /// | `elapsed_ns`, `utime_ns`, `stime_ns` | `ac_tgetime`, `ac_utime`, `ac_stime` µs × 1000 |
    /// | `mem.*_hiwater_kb` | `hiwater_rss`, `hiwater_vm` KB |
    /// | `mem.core_kb_ns`, `virt_kb_ns` | `coremem`, `virtmem` MB·µs × 1 024 000 |
    /// | `mem.minflt`, `majflt` | `ac_minflt`, `ac_majflt` |
    /// | `io` | `read_char`, `write_char`, `read_syscalls`, `write_syscalls` |
    /// | `delay` | `cpu_count`, `cpu_delay_total`, `blkio_*`, `swapin_*`, `cpu_run_real_total`, `cpu_run_virtual_total` |
    ///
    /// Every record field is in a unit at least as coarse as taskstats' (µs, s, MB·µs), so
    /// the round trip through taskstats changes no byte of the records.
    pub fn from_taskstats(ts: &Taskstats) -> ProcessExit {
        let mut comm = [0u8; 16];
        comm.copy_from_slice(&ts.ac_comm[..16]);
        let us = |v: u64| v.saturating_mul(1000);
        // BEGIN LAB 9: taskstats' memory numbers (KB, MB·µs) back into plain units (KB, KB·ns)
        // STUB: let mem = MemoryUsage::default();
        let mem = MemoryUsage {
            core_hiwater_kb: ts.hiwater_rss,
            virt_hiwater_kb: ts.hiwater_vm,
            core_kb_ns: ts.coremem as u128 * 1_024_000,
            virt_kb_ns: ts.virtmem as u128 * 1_024_000,
            minflt: ts.ac_minflt,
            majflt: ts.ac_majflt,
        };
        // END LAB 9
        ProcessExit {
            pid: ts.ac_tgid,
            ppid: ts.ac_ppid,
            uid: ts.ac_uid,
            gid: ts.ac_gid,
            comm,
            acct_flags: ts.ac_flag & PROCESS_FLAGS,
            wait_status: ts.ac_exitcode,
            nice: ts.ac_nice as i8 as i32,
            policy: ts.ac_sched,
            begin_unix_ns: ts.ac_btime64.saturating_mul(1_000_000_000),
            elapsed_ns: us(ts.ac_tgetime),
            utime_ns: us(ts.ac_utime),
            stime_ns: us(ts.ac_stime),
            mem,
            io: IoUsage {
                read_bytes: ts.read_char,
                write_bytes: ts.write_char,
                read_calls: ts.read_syscalls,
                write_calls: ts.write_syscalls,
            },
            delay: DelayUsage {
                cpu_count: ts.cpu_count,
                cpu_delay_ns: ts.cpu_delay_total,
                blkio_count: ts.blkio_count,
                blkio_delay_ns: ts.blkio_delay_total,
                swapin_count: ts.swapin_count,
                swapin_delay_ns: ts.swapin_delay_total,
                cpu_run_real_ns: ts.cpu_run_real_total,
                cpu_run_virtual_ns: ts.cpu_run_virtual_total,
            },
        }
    }

    /// The records of this process in job `jid`, with all three continuation records.
    pub fn records(&self, jid: u64) -> ProcessRecord {
        let m = &self.mem;
        let d = &self.delay;
        // BEGIN LAB 9: the memory record: high-water marks in KB, integrals in MB·µs (mem1; mem2, mem3 unused), faults
        // STUB: let mem = MemRecord::default();
        let mem = MemRecord {
            core: MemInt { himem: m.core_hiwater_kb, mem1: kb_ns_to_mb_us(m.core_kb_ns), ..MemInt::default() },
            virt: MemInt { himem: m.virt_hiwater_kb, mem1: kb_ns_to_mb_us(m.virt_kb_ns), ..MemInt::default() },
            minflt: m.minflt,
            majflt: m.majflt,
            ..MemRecord::default()
        };
        // END LAB 9
        ProcessRecord {
            base: BaseRecord {
                flag: self.acct_flags & PROCESS_FLAGS,
                stat: (self.wait_status >> 8) as u8,
                nice: self.nice.clamp(i8::MIN as i32, i8::MAX as i32) as i8 as u8,
                sched: self.policy,
                uid: self.uid,
                gid: self.gid,
                jid,
                pid: self.pid,
                ppid: self.ppid,
                btime: ns_to_secs(self.begin_unix_ns),
                comm: self.comm,
                etime: ns_to_us(self.elapsed_ns),
                utime: ns_to_us(self.utime_ns),
                stime: ns_to_us(self.stime_ns),
                ..BaseRecord::default()
            },
            mem: Some(mem),
            io: Some(IoRecord {
                chr: self.io.read_bytes,
                chw: self.io.write_bytes,
                scr: self.io.read_calls,
                scw: self.io.write_calls,
                ..IoRecord::default()
            }),
            delay: Some(DelayRecord {
                cpu_count: d.cpu_count,
                cpu_delay_total: d.cpu_delay_ns,
                blkio_count: d.blkio_count,
                blkio_delay_total: d.blkio_delay_ns,
                swapin_count: d.swapin_count,
                swapin_delay_total: d.swapin_delay_ns,
                cpu_run_real_total: d.cpu_run_real_ns,
                cpu_run_virtual_total: d.cpu_run_virtual_ns,
            }),
        }
    }
}

impl ProcessRecord {
    /// Which continuation records this chain carries.
    pub fn continuations(&self) -> Continuations {
        let mut c = 0;
        if self.mem.is_some() {
            c |= ACCT_MEM;
        }
        if self.io.is_some() {
            c |= ACCT_IO;
        }
        if self.delay.is_some() {
            c |= ACCT_DELAY;
        }
        Continuations(c)
    }

    /// The same records with only the continuations in `keep` (a system file gets the
    /// record kinds that are on).
    pub fn only(&self, keep: Continuations) -> ProcessRecord {
        ProcessRecord {
            base: self.base,
            mem: self.mem.filter(|_| keep.has(ACCT_MEM)),
            io: self.io.filter(|_| keep.has(ACCT_IO)),
            delay: self.delay.filter(|_| keep.has(ACCT_DELAY)),
        }
    }

    /// Bytes of the whole chain.
    pub fn len(&self) -> usize {
        ACCTCSA_SIZE
            + self.mem.map_or(0, |_| ACCTMEM_SIZE)
            + self.io.map_or(0, |_| ACCTIO_SIZE)
            + self.delay.map_or(0, |_| ACCTDELAY_SIZE)
    }

    /// A chain always has its base record.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Write the chain into the start of `out` (at least [`ProcessRecord::len`] bytes;
    /// [`CHAIN_MAX`] always suffices) and return its length. Every byte of the chain is
    /// written, padding and spare fields included.
    pub fn encode(&self, out: &mut [u8]) -> usize {
        let len = self.len();
        let out = &mut out[..len];
        out.fill(0);
        let cont = self.continuations();
        let mut hdr2 = Header::second(REV_CSA);
        hdr2.ah_type = cont.0;
        hdr2.size = (len - ACCTCSA_SIZE) as u16;
        let mut hdr1 = Header::first(REV_CSA, ACCT_KERNEL_CSA, ACCTCSA_SIZE);
        hdr1.flag = self.base.flag & !AMORE;
        // Each record's first header gets AMORE when another record follows it.
        let mut headers: [(usize, Header); 4] = [(0, hdr1); 4];
        let mut n = 1;
        let mut at = ACCTCSA_SIZE;
        for (present, rev, ty, size) in [
            (self.mem.is_some(), REV_MEM, ACCT_KERNEL_MEM, ACCTMEM_SIZE),
            (self.io.is_some(), REV_IO, ACCT_KERNEL_IO, ACCTIO_SIZE),
            (self.delay.is_some(), REV_DELAY, ACCT_KERNEL_DELAY, ACCTDELAY_SIZE),
        ] {
            if present {
                headers[n - 1].1.flag |= AMORE;
                headers[n] = (at, Header::first(rev, ty, size));
                n += 1;
                at += size;
            }
        }
        let mut p = Put(out);
        for (at, h) in &headers[..n] {
            h.put(&mut p, *at);
        }
        hdr2.put(&mut p, 8);
        self.base.put(&mut p);
        let mut at = ACCTCSA_SIZE;
        if let Some(m) = &self.mem {
            m.put(&mut Put(&mut p.0[at..at + ACCTMEM_SIZE]));
            at += ACCTMEM_SIZE;
        }
        if let Some(io) = &self.io {
            io.put(&mut Put(&mut p.0[at..at + ACCTIO_SIZE]));
            at += ACCTIO_SIZE;
        }
        if let Some(d) = &self.delay {
            d.put(&mut Put(&mut p.0[at..at + ACCTDELAY_SIZE]));
        }
        len
    }
}

impl BaseRecord {
    /// The fields after the two headers (the caller writes the headers).
    fn put(&self, p: &mut Put<'_>) {
        p.u64(16, self.sbu);
        p.u8(24, self.stat);
        p.u8(25, self.nice);
        p.u8(26, self.sched);
        p.u32(28, self.uid);
        p.u32(32, self.gid);
        p.u64(40, self.ash);
        p.u64(48, self.jid);
        p.u64(56, self.prid);
        p.u32(64, self.pid);
        p.u32(68, self.ppid);
        p.u64(72, self.btime);
        p.bytes(80, &self.comm);
        p.u64(96, self.etime);
        p.u64(104, self.utime);
        p.u64(112, self.stime);
        p.u64(120, self.spare);
        p.u64(128, self.spare1);
    }

    /// Decode the fields of a 136-byte base record (`flag` from its first header, AMORE
    /// removed).
    pub(crate) fn get(b: &Get<'_>) -> BaseRecord {
        BaseRecord {
            flag: b.u8(5) & !AMORE,
            sbu: b.u64(16),
            stat: b.u8(24),
            nice: b.u8(25),
            sched: b.u8(26),
            uid: b.u32(28),
            gid: b.u32(32),
            ash: b.u64(40),
            jid: b.u64(48),
            prid: b.u64(56),
            pid: b.u32(64),
            ppid: b.u32(68),
            btime: b.u64(72),
            comm: b.array(80),
            etime: b.u64(96),
            utime: b.u64(104),
            stime: b.u64(112),
            spare: b.u64(120),
            spare1: b.u64(128),
        }
    }

    /// The command name up to its first NUL (lossy: a name is bytes).
    pub fn comm_bytes(&self) -> &[u8] {
        let n = self.comm.iter().position(|&c| c == 0).unwrap_or(self.comm.len());
        &self.comm[..n]
    }
}

impl MemInt {
    fn put(&self, p: &mut Put<'_>, at: usize) {
        p.u64(at, self.himem);
        p.u64(at + 8, self.mem1);
        p.u64(at + 16, self.mem2);
        p.u64(at + 24, self.mem3);
    }
    fn get(b: &Get<'_>, at: usize) -> MemInt {
        MemInt { himem: b.u64(at), mem1: b.u64(at + 8), mem2: b.u64(at + 16), mem3: b.u64(at + 24) }
    }
}

impl MemRecord {
    /// Fields after the header of a 112-byte image.
    fn put(&self, p: &mut Put<'_>) {
        // BEGIN LAB 9: struct acctmem after its header: sbu, ac_core and ac_virt (struct memint), pgswap, faults, spare
        // STUB: let _ = p;
        p.u64(8, self.sbu);
        self.core.put(p, 16);
        self.virt.put(p, 48);
        p.u64(80, self.pgswap);
        p.u64(88, self.minflt);
        p.u64(96, self.majflt);
        p.u64(104, self.spare);
        // END LAB 9
    }
    pub(crate) fn get(b: &Get<'_>) -> MemRecord {
        MemRecord {
            sbu: b.u64(8),
            core: MemInt::get(b, 16),
            virt: MemInt::get(b, 48),
            pgswap: b.u64(80),
            minflt: b.u64(88),
            majflt: b.u64(96),
            spare: b.u64(104),
        }
    }
}

impl IoRecord {
    fn put(&self, p: &mut Put<'_>) {
        p.u64(8, self.sbu);
        p.u64(16, self.chr);
        p.u64(24, self.chw);
        p.u64(32, self.scr);
        p.u64(40, self.scw);
        p.u64(48, self.spare);
    }
    pub(crate) fn get(b: &Get<'_>) -> IoRecord {
        IoRecord { sbu: b.u64(8), chr: b.u64(16), chw: b.u64(24), scr: b.u64(32), scw: b.u64(40), spare: b.u64(48) }
    }
}

impl DelayRecord {
    fn put(&self, p: &mut Put<'_>) {
        p.u64(8, self.cpu_count);
        p.u64(16, self.cpu_delay_total);
        p.u64(24, self.blkio_count);
        p.u64(32, self.blkio_delay_total);
        p.u64(40, self.swapin_count);
        p.u64(48, self.swapin_delay_total);
        p.u64(56, self.cpu_run_real_total);
        p.u64(64, self.cpu_run_virtual_total);
    }
    pub(crate) fn get(b: &Get<'_>) -> DelayRecord {
        DelayRecord {
            cpu_count: b.u64(8),
            cpu_delay_total: b.u64(16),
            blkio_count: b.u64(24),
            blkio_delay_total: b.u64(32),
            swapin_count: b.u64(40),
            swapin_delay_total: b.u64(48),
            cpu_run_real_total: b.u64(56),
            cpu_run_virtual_total: b.u64(64),
        }
    }
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
