//! `threads N [MS]` — one process of N threads, each burning MS milliseconds of CPU
//! (default 200), and where each thread's time went.
//!
//! The main thread is thread 1: it starts threads 2..=N (`tally_rt::thread::spawn`: a
//! 64 KiB stack from `mmap`, then `thread_create`), burns its own MS, then waits for the
//! others with a [`Latch`] — a counter each thread bumps on its way out, which the main
//! thread polls, sleeping 1 ms between looks (Tally has no futexes to sleep on). Each
//! thread spins until its *own* CPU time, read with `msa(MSA_THREAD)`, reaches MS, then
//! prints its microstates:
//!
//! ```text
//! threads: thread 2 (tid 8): USR 200.1 ms  SYS 0.4 ms  TRAP 0.2 ms  LAT 401.7 ms  SLP 0.0 ms
//! ```
//!
//! On one CPU the N threads take turns, so each also spends about (N-1) × MS waiting on the
//! run queue (LAT: ONACTIVEQUEUE + ONEXPIREDQUEUE). At the end the main thread prints
//! `msa(MSA_SELF)`, the whole process: the sum over all its threads, the ones that have
//! exited included — its USR is at least the sum of the threads' — and its own
//! `MSA_THREAD`: its burn, then INTERRUPTIBLE_SLEEP (the polling join). So `threads 4` is a
//! process of four threads, and leaves four per-pid taskstats records.
//!
//! Without `msa` (a kernel that answers `ENOSYS`) a thread burns MS of wall-clock time
//! instead and says so. Any other failure is reported with its errno and a non-zero exit.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use tally_rt::process::parse_u64;
use tally_rt::thread::{self, Latch, DEFAULT_STACK_SIZE};
use tally_rt::uapi::msa::{ClkT, MicroState, MSA_SELF, MSA_THREAD, NR_MICROSTATES};
use tally_rt::{eprintln, println, sys, Errno};

tally_rt::entry!(main);

/// Most threads this program starts (the kernel's own limit may be lower: `EAGAIN`).
const MAX_THREADS: u64 = 64;

/// Threads that are done (see the module comment).
static DONE: Latch = Latch::new();
/// Work steps between two looks at the thread's CPU time (about a millisecond under QEMU):
/// looking is a system call, which would otherwise turn much of the USR time into SYS.
const STEPS_PER_LOOK: u32 = 20_000;
/// What each thread burns, in ns of CPU time.
static BURN_NS: AtomicU64 = AtomicU64::new(0);
/// Threads that failed (a system call error): the exit status tells.
static FAILED: AtomicU32 = AtomicU32::new(0);

fn main() -> i32 {
    let n = tally_rt::arg(1).and_then(parse_u64).filter(|n| (1..=MAX_THREADS).contains(n));
    let ms = match tally_rt::arg(2) {
        None => Some(200),
        Some(a) => parse_u64(a).filter(|&ms| ms <= 3_600_000),
    };
    let (Some(n), Some(ms), None) = (n, ms, tally_rt::arg(3)) else {
        eprintln!("usage: threads N [MS]   (N in 1..={MAX_THREADS}, MS <= 3600000, default 200)");
        return 2;
    };
    BURN_NS.store(ms * 1_000_000, Ordering::Relaxed);
    let pid = sys::getpid().unwrap_or(0);
    println!("threads: pid {pid}, {n} threads of {ms} ms CPU each (thread 1 is tid {pid})");
    let mut started = 1u64;
    for i in 2..=n {
        match thread::spawn(burner, i as usize, DEFAULT_STACK_SIZE) {
            Ok(t) => {
                println!(
                    "threads: thread {i} is tid {}, stack {:#x}..{:#x}",
                    t.tid,
                    t.stack_base,
                    t.stack_base + t.stack_len
                );
                started += 1;
            }
            Err(e) => {
                eprintln!("threads: thread_create for thread {i}: {e}");
                break;
            }
        }
    }
    if !work(1) {
        FAILED.fetch_add(1, Ordering::Relaxed);
    }
    // The stacks are not unmapped after the join: see `tally_rt::thread` for why.
    if let Err(e) = DONE.wait_for(started as usize - 1, 1) {
        eprintln!("threads: nanosleep while joining: {e}");
        return 1;
    }
    println!("threads: all {started} threads done");
    let mut me = [0 as ClkT; NR_MICROSTATES];
    let mut all = [0 as ClkT; NR_MICROSTATES];
    if let Err(e) = sys::msa(MSA_THREAD, &mut me).and_then(|_| sys::msa(MSA_SELF, &mut all)) {
        eprintln!("threads: msa: {e}");
        return 1;
    }
    println!("threads: main thread:   {}", Times(&me));
    println!("threads: whole process: {}", Times(&all));
    let failed = FAILED.load(Ordering::Relaxed);
    if started < n || failed > 0 {
        eprintln!("threads: {} of {n} threads could not start, {failed} failed", n - started);
        return 1;
    }
    0
}

/// Threads 2..=N: [`work`], count itself done, exit.
extern "C" fn burner(index: usize) -> ! {
    let ok = work(index);
    if !ok {
        FAILED.fetch_add(1, Ordering::Relaxed);
    }
    DONE.arrive();
    sys::exit(if ok { 0 } else { 1 })
}

/// What every thread does, the main one included: burn the CPU, print where the time went.
fn work(index: usize) -> bool {
    let tid = sys::gettid().unwrap_or(0);
    match burn(BURN_NS.load(Ordering::Relaxed)) {
        Ok(t) => {
            println!("threads: thread {index} (tid {tid}): {}", Times(&t));
            true
        }
        Err((what, e)) => {
            eprintln!("threads: thread {index} (tid {tid}): {what}: {e}");
            false
        }
    }
}

/// Spins until this thread's CPU time (USR + SYS + TRAP) reaches `ns`; returns its clocks.
/// Falls back to wall-clock time if the kernel has no `msa`.
fn burn(ns: u64) -> Result<[ClkT; NR_MICROSTATES], (&'static str, Errno)> {
    let mut t = [0 as ClkT; NR_MICROSTATES];
    let mut x: u64 = 1;
    match sys::msa(MSA_THREAD, &mut t) {
        Ok(_) => {
            while cpu(&t) < ns {
                for _ in 0..STEPS_PER_LOOK {
                    x = step(x);
                }
                sys::msa(MSA_THREAD, &mut t).map_err(|e| ("msa(MSA_THREAD)", e))?;
            }
        }
        Err(e) if e == Errno::ENOSYS => {
            eprintln!("threads: msa: {e}; burning wall-clock time instead");
            let start = sys::monotonic_ns().map_err(|e| ("clock_gettime", e))?;
            while sys::monotonic_ns().map_err(|e| ("clock_gettime", e))?.saturating_sub(start) < ns {
                for _ in 0..STEPS_PER_LOOK {
                    x = step(x);
                }
            }
        }
        Err(e) => return Err(("msa(MSA_THREAD)", e)),
    }
    core::hint::black_box(x);
    Ok(t)
}

fn cpu(t: &[ClkT; NR_MICROSTATES]) -> u64 {
    t[MicroState::OncpuUsr.index()] + t[MicroState::OncpuSys.index()] + t[MicroState::OncpuTrap.index()]
}

/// One step of work the optimiser cannot remove.
#[inline(never)]
fn step(x: u64) -> u64 {
    x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407).rotate_left(7)
}

/// The interesting clocks in ms: on CPU, waiting for a CPU, sleeping, interrupted.
struct Times<'a>(&'a [ClkT; NR_MICROSTATES]);

impl core::fmt::Display for Times<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use MicroState::*;
        let t = self.0;
        let ms = |ns: u64| (ns / 1_000_000, ns / 100_000 % 10);
        let groups: [(&str, u64); 6] = [
            ("USR", t[OncpuUsr.index()]),
            ("SYS", t[OncpuSys.index()]),
            ("TRAP", t[OncpuTrap.index()]),
            ("LAT", t[OnActiveQueue.index()] + t[OnExpiredQueue.index()]),
            ("SLP", t[InterruptibleSleep.index()] + t[UninterruptibleSleep.index()]),
            ("INTR", t[Interrupted.index()]),
        ];
        for (i, (name, ns)) in groups.iter().enumerate() {
            let (whole, tenth) = ms(*ns);
            write!(f, "{}{name} {whole}.{tenth} ms", if i > 0 { "  " } else { "" })?;
        }
        Ok(())
    }
}
