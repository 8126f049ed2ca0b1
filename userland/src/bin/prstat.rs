//! `prstat [-L] [-c] [-m] [INTERVAL_MS] [COUNT]` — where each process's time went in the
//! last interval, as Solaris `prstat -m` shows it.
//!
//! Microstate accounting gives every thread one clock per state; a clock only ever grows.
//! So "what share of the last second did this thread spend waiting for a CPU?" takes two
//! readings: `proc_stat` (one record per thread, all taken at one instant) now, again
//! INTERVAL_MS later (default 1000), and for every state `Δclock / Δelapsed`. That is the
//! arithmetic of illumos' `prstat -m` (`lwp_update` in `prstat.c`), which reads the same
//! clocks from `/proc/PID/lwp/LWPID/lwpusage`. COUNT reports (default 1) follow each
//! other, each over its own interval; `-c` (print reports one below the other) is the only
//! way this prstat prints, and `-m` is its only view, so both are accepted and change
//! nothing. INTERVAL is in milliseconds, not seconds as on Solaris: runs under QEMU are short.
//!
//! Without `-L` a row is a process: the sum over its threads, divided by the sum of their
//! elapsed times — the average over its LWPs, so a row adds up to 100 % whatever NLWP is
//! (prstat reads the process's `usage`, whose times are summed over its LWPs likewise).
//! With `-L` a row is one thread, PROCESS/LWPID. A thread born during the interval is
//! measured over its life so far, as prstat does for an LWP it sees for the first time.
//!
//! ## Tally's 13 microstates in Solaris' columns
//!
//! | column | Solaris (`prusage_t`)            | Tally's states |
//! |--------|----------------------------------|----------------|
//! | USR    | `pr_utime`, LMS_USER             | ONCPU_USR |
//! | SYS    | `pr_stime`, LMS_SYSTEM           | ONCPU_SYS |
//! | TRP    | `pr_ttime`, LMS_TRAP             | ONCPU_TRAP (page faults handled on the CPU, other exceptions) |
//! | TFL    | `pr_tftime`, text page faults    | always 0: Tally does not tell text faults from data faults |
//! | DFL    | `pr_dftime`, data page faults    | PAGING_SLEEP (waiting for a page from disk) |
//! | LCK    | `pr_ltime`, user locks           | FUTEX_SLEEP |
//! | SLP    | `pr_slptime`, all other sleep    | INTERRUPTIBLE_SLEEP + UNINTERRUPTIBLE_SLEEP + POLL_SLEEP |
//! | LAT    | `pr_wtime`, waiting for a CPU    | ONACTIVEQUEUE + ONEXPIREDQUEUE |
//! | INT    | (none: Tally's own column)       | INTERRUPTED (an interrupt handler ran on the thread's time) |
//! | STP    | (none: Tally's own column)       | STOPPED (job control: SIGSTOP/SIGTSTP until SIGCONT) |
//! | VCX ICX | `pr_vctx`, `pr_ictx`            | voluntary / involuntary context switches in the interval |
//! | SCL SIG | `pr_sysc`, `pr_sigs`            | system calls / signals in the interval (SIGCHLD, `kill`, faults) |
//!
//! **INT is not Solaris'.** Solaris has no INTERRUPTED state: an interrupt there runs on an
//! interrupt thread of its own, and the time is not the pinned thread's USR or SYS, so
//! `prstat -m` has no column for it. Tally charges it to the thread that was interrupted, in
//! its own state; counting it as SYS would charge a thread for another device's work, and as
//! LAT would call it scheduling latency, which it is not. Leaving it out made a CPU-bound
//! row add up to ~98.7 %, so it gets a column of its own, INT, after LAT. The per-IRQ kstats
//! (`kstat -p unix:0:irq_timer`) say which line's handlers the time went to.
//!
//! **STP is not Solaris' either.** Solaris keeps a stopped LWP's time (`pr_stoptime`) but
//! `prstat -m` never prints it, so a stopped process's row adds up to less than 100 % there.
//! Tally shows it, after INT: job control is where students stop processes on purpose and
//! want to see the time go somewhere (`docs/job-control.md`).
//!
//! With INT and STP, a row adds up to 100 % (each column rounded to 0.1: ± 0.5 over the ten)
//! for a thread that lived through the interval. ZOMBIE has no column (an exited thread has
//! no time left to spend; prstat shows such an LWP as all zero); a row whose thread exited
//! during the interval adds up to less.
//!
//! **The idle task is not listed** (pid 0, the boot thread that halts the CPU when nothing
//! runs): its time is the CPU's idle time, not work of a process, and Solaris' idle threads
//! belong to no process prstat shows either. The `Total:` line does not count it.
//!
//! USERNAME is the uid (Tally has no password file), `root` for 0. Rows are sorted by CPU
//! share (USR + SYS + TRP), highest first, as prstat sorts by CPU; the `Total:` line counts
//! processes and LWPs, and gives the measured interval in place of load averages.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use tally_rt::process::parse_u64;
use tally_rt::uapi::msa::{MicroState, NR_MICROSTATES};
use tally_rt::uapi::procstat::ProcStat;
use tally_rt::uapi::syscall::SYS_PROC_STAT;
use tally_rt::{eprintln, println, sys, Errno};

tally_rt::entry!(main);

use MicroState::*;

/// prstat -m's microstate columns, each the sum of the Tally states listed (see the table in
/// the module documentation).
const COLUMNS: [(&str, &[MicroState]); 10] = [
    ("USR", &[OncpuUsr]),
    ("SYS", &[OncpuSys]),
    ("TRP", &[OncpuTrap]),
    ("TFL", &[]),
    ("DFL", &[PagingSleep]),
    ("LCK", &[FutexSleep]),
    ("SLP", &[InterruptibleSleep, UninterruptibleSleep, PollSleep]),
    ("LAT", &[OnActiveQueue, OnExpiredQueue]),
    ("INT", &[Interrupted]),
    ("STP", &[Stopped]),
];

/// The idle task's process id: not listed (see the module documentation).
const IDLE_PID: i32 = 0;

const DEFAULT_INTERVAL_MS: u64 = 1000;
const MAX_INTERVAL_MS: u64 = 3_600_000;

struct Opts {
    lwps: bool,
    interval_ms: u64,
    count: u64,
}

fn main() -> i32 {
    let Some(opts) = parse_args() else {
        eprintln!(
            "usage: prstat [-L] [-c] [-m] [INTERVAL_MS] [COUNT]   \
             (INTERVAL_MS 1..{MAX_INTERVAL_MS}, default {DEFAULT_INTERVAL_MS}; COUNT >= 1, default 1)"
        );
        return 2;
    };
    let mut before = match sys::proc_stat_all() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    for i in 0..opts.count {
        if let Err(e) = sys::sleep_ms(opts.interval_ms) {
            eprintln!("prstat: nanosleep({} ms): {e}", opts.interval_ms);
            return 1;
        }
        let now = match sys::proc_stat_all() {
            Ok(mut s) => {
                s.retain(|p| p.tgid != IDLE_PID);
                s
            }
            Err(e) => return fail(e),
        };
        if i > 0 {
            println!();
        }
        report(&before, &now, opts.lwps);
        before = now;
    }
    0
}

fn parse_args() -> Option<Opts> {
    let mut opts = Opts { lwps: false, interval_ms: DEFAULT_INTERVAL_MS, count: 1 };
    let mut numbers = Vec::new();
    for a in tally_rt::args().skip(1) {
        match a.strip_prefix('-') {
            Some(flags) if !flags.is_empty() => {
                for f in flags.chars() {
                    match f {
                        'L' => opts.lwps = true,
                        'c' | 'm' => {}
                        _ => return None,
                    }
                }
            }
            _ => numbers.push(parse_u64(a)?),
        }
    }
    match numbers[..] {
        [] => {}
        [i] => opts.interval_ms = i,
        [i, c] => (opts.interval_ms, opts.count) = (i, c),
        _ => return None,
    }
    (1..=MAX_INTERVAL_MS).contains(&opts.interval_ms).then_some(())?;
    (opts.count >= 1).then_some(opts)
}

fn fail(e: Errno) -> i32 {
    if e == Errno::ENOSYS {
        eprintln!("prstat: proc_stat: {e}: this kernel does not serve system call {SYS_PROC_STAT} (proc_stat) yet");
    } else {
        eprintln!("prstat: proc_stat: {e}");
    }
    1
}

/// What one thread (or a process: the sum of its threads) did during the interval.
#[derive(Clone, Default)]
struct Usage {
    /// ns in each microstate.
    ns: [u64; NR_MICROSTATES],
    /// ns that passed for it: the sum over all states (the interval, for a thread that
    /// lived through all of it).
    elapsed: u64,
    vcx: u64,
    icx: u64,
    scl: u64,
    sig: u64,
}

impl Usage {
    /// `now - before`, or everything since creation if the thread is new.
    fn between(now: &ProcStat, before: Option<&ProcStat>) -> Usage {
        let zero = ProcStat::zeroed();
        let b = before.unwrap_or(&zero);
        let mut u = Usage::default();
        for (i, ns) in u.ns.iter_mut().enumerate() {
            *ns = now.msa_ns[i].saturating_sub(b.msa_ns[i]);
        }
        u.elapsed = u.ns.iter().fold(0u64, |a, &x| a.saturating_add(x));
        u.vcx = now.nvcsw.saturating_sub(b.nvcsw);
        u.icx = now.nivcsw.saturating_sub(b.nivcsw);
        u.scl = now.syscalls.saturating_sub(b.syscalls);
        u.sig = now.signals.saturating_sub(b.signals);
        u
    }

    fn add(&mut self, o: &Usage) {
        for (a, b) in self.ns.iter_mut().zip(o.ns) {
            *a = a.saturating_add(b);
        }
        self.elapsed = self.elapsed.saturating_add(o.elapsed);
        self.vcx = self.vcx.saturating_add(o.vcx);
        self.icx = self.icx.saturating_add(o.icx);
        self.scl = self.scl.saturating_add(o.scl);
        self.sig = self.sig.saturating_add(o.sig);
    }

    /// Tenths of a percent of `elapsed` the states of column `c` took.
    fn permille(&self, c: usize) -> u64 {
        let part: u128 = COLUMNS[c].1.iter().map(|s| u128::from(self.ns[s.index()])).sum();
        if self.elapsed == 0 {
            return 0;
        }
        let e = u128::from(self.elapsed);
        ((part * 1000 + e / 2) / e) as u64
    }

    fn cpu_permille(&self) -> u64 {
        self.permille(0) + self.permille(1) + self.permille(2)
    }
}

struct Row {
    pid: i32,
    uid: u32,
    name: String,
    /// LWPID with -L, NLWP without.
    lwp: i64,
    usage: Usage,
}

fn report(before: &[ProcStat], now: &[ProcStat], lwps: bool) {
    // The same thread in the earlier snapshot: same tid, same creation time (a tid can be
    // reused by a thread created after the first snapshot).
    let old: BTreeMap<i32, &ProcStat> = before.iter().map(|p| (p.pid, p)).collect();
    let usage_of = |p: &ProcStat| {
        let b = old.get(&p.pid).copied().filter(|b| b.start_ns == p.start_ns);
        Usage::between(p, b)
    };
    let mut rows: Vec<Row> = Vec::new();
    if lwps {
        for p in now {
            rows.push(Row {
                pid: p.tgid,
                uid: p.uid,
                name: p.comm_str().to_string(),
                lwp: p.pid.into(),
                usage: usage_of(p),
            });
        }
    } else {
        let mut procs: BTreeMap<i32, Row> = BTreeMap::new();
        for p in now {
            let u = usage_of(p);
            let row = procs.entry(p.tgid).or_insert_with(|| Row {
                pid: p.tgid,
                uid: p.uid,
                name: p.comm_str().to_string(),
                lwp: 0,
                usage: Usage::default(),
            });
            // The process is named after (and owned by the uid of) its leader thread.
            if p.pid == p.tgid {
                row.uid = p.uid;
                row.name = p.comm_str().to_string();
            }
            row.lwp += 1;
            row.usage.add(&u);
        }
        rows.extend(procs.into_values());
    }
    rows.sort_by(|a, b| {
        b.usage.cpu_permille().cmp(&a.usage.cpu_permille()).then(a.pid.cmp(&b.pid)).then(a.lwp.cmp(&b.lwp))
    });

    let mut header = String::from("   PID USERNAME");
    for (name, _) in COLUMNS {
        header.push_str(&alloc::format!(" {name:>5}"));
    }
    header.push_str("  VCX  ICX  SCL  SIG ");
    header.push_str(if lwps { "PROCESS/LWPID" } else { "PROCESS/NLWP" });
    println!("{header}");
    for r in &rows {
        let mut line = alloc::format!("{:>6} {:<8}", r.pid, User(r.uid));
        for c in 0..COLUMNS.len() {
            line.push_str(&alloc::format!(" {:>5}", Pct(r.usage.permille(c))));
        }
        let u = &r.usage;
        line.push_str(&alloc::format!(
            " {:>4} {:>4} {:>4} {:>4} ",
            Count(u.vcx),
            Count(u.icx),
            Count(u.scl),
            Count(u.sig)
        ));
        let name: String = r.name.chars().take(12).collect();
        line.push_str(&alloc::format!("{name}/{}", r.lwp));
        println!("{line}");
    }
    let nprocs = {
        let mut tgids: Vec<i32> = now.iter().map(|p| p.tgid).collect();
        tgids.sort_unstable();
        tgids.dedup();
        tgids.len()
    };
    let interval = match (before.first(), now.first()) {
        (Some(b), Some(n)) => n.now_ns.saturating_sub(b.now_ns),
        _ => 0,
    };
    println!(
        "Total: {nprocs} processes, {} lwps, interval {}.{:03} s",
        now.len(),
        interval / 1_000_000_000,
        interval / 1_000_000 % 1000
    );
}

/// A share in tenths of a percent, shown with one decimal: `1000` → `100.0`.
struct Pct(u64);

impl fmt::Display for Pct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&alloc::format!("{}.{}", self.0 / 10, self.0 % 10))
    }
}

/// A count in at most 4 characters, as prstat prints VCX..SIG: `9999`, `12K`, `3M`.
struct Count(u64);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        let s = if n < 10_000 {
            n.to_string()
        } else if n < 10_000_000 {
            alloc::format!("{}K", n / 1000)
        } else {
            alloc::format!("{}M", n / 1_000_000)
        };
        f.pad(&s)
    }
}

/// The uid as a name: `root` for 0, the number otherwise (no password file).
struct User(u32);

impl fmt::Display for User {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            f.pad("root")
        } else {
            f.pad(&self.0.to_string())
        }
    }
}
