//! `ubench getpid N` | `ubench msa N` | `ubench yield N START_TSC P` — user-mode
//! microbenchmarks, started by the kernel's `bench=user` case (`cargo xtask bench`).
//!
//! Each mode times its loop with `rdtsc` (allowed in ring 3) and prints one line
//!
//! ```text
//! BENCHRAW {"name":"null_syscall","param":0,"ops":N,"t0":<tsc>,"t1":<tsc>}
//! ```
//!
//! which `xtask` aggregates per (name, param) — (max t1 − min t0) / (sum of ops) — and
//! converts to ns with the TSC frequency the kernel printed.
//!
//! * `getpid N` → `null_syscall`: N `getpid()` calls, the cheapest round trip to the kernel.
//! * `msa N` → `msa_self`: N `msa(13, MSA_SELF, timers)` calls.
//! * `msathread N` → `msa_thread`: N calls of the runtime's `msa(MSA_THREAD)` for all 13
//!   clocks, read from the thread's clock page in user space (no system call): Linux's
//!   `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` is the nearest peer.
//! * `msathreadr N` → `msa_thread_reader`: N reads of a program's own
//!   `tally_rt::msa::ThreadClocks` (the same, without `msa()`'s copy into the caller's array
//!   and its lock around the process's shared reader).
//! * `tsget N` → `taskstats_get`: N taskstats `GET PID` round trips over the message bus
//!   (`sendto` of a prebuilt request for this process, blocking `recvfrom` of the ~1 KB
//!   reply into a buffer, a look at its header) — what `getdelays -p` costs per question.
//! * `exit N L` → `exit_user`, param L: N spawn → exit → wait cycles of `/test/exiter`
//!   with L taskstats listeners (0 or 1) in this process; for `cargo xtask profile`.
//! * `ctx N P` → `lat_ctx`, param P: a user-to-user context switch through a blocking call,
//!   as LMbench's `lat_ctx` measures it. This process makes P pipes in a ring and spawns
//!   P − 1 copies of itself (`ctxring`, each inheriting only its two pipe ends: the pipes
//!   are close-on-exec, see `ctx_leader`); process i reads a one-byte
//!   token from pipe i − 1 and writes it to pipe i. A process whose pipe is empty sleeps in
//!   `read` (INTERRUPTIBLE_SLEEP), so passing the token once round the ring is P
//!   write → wake-up → block → switch steps, each into another address space. After one
//!   warm-up round the leader times N rounds: ops = N × P switches. (LMbench also gives each
//!   process a working set to touch; Tally's processes touch nothing, like `lat_ctx -s 0`.)
//!
//!   Killing any process of the ring (or its leader) ends the whole ring: see `ctx_leader`.
//!
//! After each BENCHRAW line comes the same for a person, in nanoseconds per operation
//! (converted with the TSC frequency the kernel calibrated, from the vvar header).
//!
//! `ubench --profile MODE ...` (for `cargo xtask profile`, `xtask/src/profile.rs`) does the
//! same, but just before its timed loop prints `UBENCH START MODE` and waits for a line on
//! standard input: the host turns QEMU's instruction log on, then types that line, so the
//! log starts at the loop. BENCHRAW, printed after the loop, is the host's cue to stop.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use alloc::format;
use alloc::vec::Vec;
use tally_msgbus::taskstats::{request, Command};
use tally_rt::bus::BusSocket;
use tally_rt::process::{describe, parse_i64};
use tally_rt::uapi::fs::O_CLOEXEC;
use tally_rt::uapi::msa::{ClkT, MSA_SELF, MSA_THREAD, NR_MICROSTATES};
use tally_rt::uapi::netlink::{MSG_DONTWAIT, SOL_SOCKET, SO_RCVBUF};
use tally_rt::{eprintln, println, sys};

extern crate alloc;

tally_rt::entry!(main);

#[allow(unsafe_code)]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC only reads the time-stamp counter (the kernel leaves CR4.TSD clear).
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Is this run profiled (`ubench --profile MODE ...`)?
fn profiled() -> bool {
    tally_rt::arg(1) == Some("--profile")
}

/// Argument `i` after the optional `--profile`.
fn arg(i: usize) -> Option<&'static str> {
    tally_rt::arg(if profiled() { i + 1 } else { i })
}

fn num(i: usize) -> Option<u64> {
    arg(i).and_then(parse_i64).filter(|v| *v >= 0).map(|v| v as u64)
}

/// Called just before a timed loop: when profiled, say so on the console and wait for the
/// host's go-ahead (a line, or end of input, on standard input). Otherwise nothing.
fn start_marker(mode: &str) {
    if !profiled() {
        return;
    }
    println!("UBENCH START {mode}");
    let mut byte = [0u8; 1];
    while let Ok(1) = sys::read(0, &mut byte) {
        if byte[0] == b'\n' {
            break;
        }
    }
}

/// Print the BENCHRAW line; with no operations nothing (the kernel times `ubench getpid 0`
/// to learn the cost of a spawn).
fn report(name: &str, param: u64, ops: u64, t0: u64, t1: u64) {
    if ops == 0 {
        return;
    }
    println!("BENCHRAW {{\"name\":\"{name}\",\"param\":{param},\"ops\":{ops},\"t0\":{t0},\"t1\":{t1}}}");
    // For a person: the same in nanoseconds, with the TSC frequency the kernel calibrated
    // (the vvar header's, as `tally_rt::msa` converts the microstate clocks).
    let ns = tally_rt::msa::tsc_ticks_to_ns(t1.saturating_sub(t0));
    if ns > 0 {
        let tenths = (u128::from(ns) * 10 / u128::from(ops)) as u64;
        println!("ubench: {name} (param {param}): {ops} ops in {ns} ns, {}.{} ns/op", tenths / 10, tenths % 10);
    }
}

fn main() -> i32 {
    let (Some(mode), Some(n)) = (arg(1), num(2)) else { return usage() };
    match mode {
        "getpid" => {
            let _ = sys::getpid(); // warm up
            start_marker(mode);
            let t0 = rdtsc();
            for _ in 0..n {
                let _ = core::hint::black_box(sys::getpid());
            }
            let t1 = rdtsc();
            report("null_syscall", 0, n, t0, t1);
        }
        "msa" => {
            let mut timers = [0 as ClkT; NR_MICROSTATES];
            if let Err(e) = sys::msa(MSA_SELF, &mut timers) {
                eprintln!("ubench: msa: {e}");
                return 1;
            }
            start_marker(mode);
            let t0 = rdtsc();
            for _ in 0..n {
                let _ = core::hint::black_box(sys::msa(MSA_SELF, core::hint::black_box(&mut timers)));
            }
            let t1 = rdtsc();
            report("msa_self", 0, n, t0, t1);
        }
        "msathread" => {
            let mut timers = [0 as ClkT; NR_MICROSTATES];
            if !tally_rt::msa::thread_ns(&mut timers) {
                eprintln!("ubench: msathread: this thread has no clock page");
                return 1;
            }
            start_marker(mode);
            let t0 = rdtsc();
            for _ in 0..n {
                let _ = core::hint::black_box(tally_rt::msa::msa(MSA_THREAD, core::hint::black_box(&mut timers)));
            }
            let t1 = rdtsc();
            report("msa_thread", 0, n, t0, t1);
        }
        "msathreadr" => {
            let mut clocks = tally_rt::msa::ThreadClocks::new();
            if clocks.read().is_none() {
                eprintln!("ubench: msathreadr: this thread has no clock page");
                return 1;
            }
            start_marker(mode);
            let t0 = rdtsc();
            for _ in 0..n {
                let _ = core::hint::black_box(core::hint::black_box(&mut clocks).read());
            }
            let t1 = rdtsc();
            report("msa_thread_reader", 0, n, t0, t1);
        }
        "tsget" => return tsget(n),
        "exit" => return exits(n, num(3).unwrap_or(0)),
        "ctx" => {
            let Some(p) = num(3).filter(|p| (2..=256).contains(p)) else { return usage() };
            return ctx_leader(n, p);
        }
        "ctxring" => {
            let (Some(rfd), Some(wfd)) = (num(3), num(4)) else { return usage() };
            // n + 1 rounds: the warm-up round and the n timed ones.
            for _ in 0..=n {
                // End of file: the ring broke upstream (every writer of our pipe is gone).
                // Leaving closes our write end, which passes the end on; the leader reports.
                if pass_token(rfd as usize, wfd as usize).is_err() {
                    return 1;
                }
            }
        }
        _ => return usage(),
    }
    0
}

fn usage() -> i32 {
    eprintln!("usage: ubench [--profile] getpid N | msa N | msathread N | msathreadr N | tsget N | exit N L | ctx N P");
    2
}

/// `tsget N`: one socket, one request built once, N round trips. Each reply must be a
/// TASKSTATS message (the family's type) answering this port, or the run fails.
fn tsget(n: u64) -> i32 {
    let setup = || -> Result<(BusSocket, u16, Vec<u8>), tally_rt::Errno> {
        let mut sock = BusSocket::open()?;
        let family = sock.taskstats_family()?;
        let pid = sys::getpid()? as u32;
        let req = request(family, 1, 0, Command::Pid(pid)).map_err(tally_rt::Errno)?;
        Ok((sock, family, req))
    };
    let (sock, family, req) = match setup() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ubench: tsget: {e}");
            return 1;
        }
    };
    let mut buf = [0u8; 4096];
    let mut round_trip = || -> Result<(), &'static str> {
        sys::send(sock.fd(), &req).map_err(|_| "sendto failed")?;
        let got = sys::recv(sock.fd(), &mut buf, 0).map_err(|_| "recvfrom failed")?;
        let ty = buf.get(4..6).map(|b| u16::from_le_bytes([b[0], b[1]]));
        if got < 16 || ty != Some(family) {
            Err("the reply is not a TASKSTATS message")
        } else {
            Ok(())
        }
    };
    if let Err(why) = round_trip() {
        eprintln!("ubench: tsget: {why}");
        return 1;
    }
    start_marker("tsget");
    let t0 = rdtsc();
    for _ in 0..n {
        if let Err(why) = round_trip() {
            eprintln!("ubench: tsget: {why}");
            return 1;
        }
    }
    let t1 = rdtsc();
    report("taskstats_get", 0, n, t0, t1);
    0
}

/// `exit N L`: N spawn → exit → wait cycles of `/test/exiter`, with L (0 or 1) taskstats
/// listeners in this process (its socket emptied after each cycle, outside the timed part).
/// For `cargo xtask profile exit0|exit1`: the two whole loops side by side show, function by
/// function, what an exit costs more with a listener. (The bench's own rows of this,
/// `taskstats_exit_user`, are timed by the kernel: `kernel/src/bench/bus_records.rs`.)
fn exits(n: u64, listeners: u64) -> i32 {
    let mut sock = None;
    if listeners > 0 {
        let setup = || -> Result<BusSocket, tally_rt::Errno> {
            let mut s = BusSocket::open()?;
            sys::setsockopt_int(s.fd(), SOL_SOCKET, SO_RCVBUF, 1 << 20)?;
            let family = s.taskstats_family()?;
            s.taskstats_acked(family, Command::RegisterCpumask("0"))?;
            Ok(s)
        };
        match setup() {
            Ok(s) => sock = Some(s),
            Err(e) => {
                eprintln!("ubench: exit: {e}");
                return 1;
            }
        }
    }
    let mut buf = [0u8; 4096];
    let mut drain = || {
        if let Some(s) = &sock {
            while sys::recv(s.fd(), &mut buf, MSG_DONTWAIT).is_ok() {}
        }
    };
    let life = || -> Result<(), tally_rt::Errno> {
        let pid = sys::spawn("/test/exiter", &["exiter"])?;
        sys::wait4(pid as isize, None, 0, None).map(|_| ())
    };
    if let Err(e) = life() {
        eprintln!("ubench: exit: {e}");
        return 1;
    }
    drain();
    start_marker(if listeners > 0 { "exit1" } else { "exit0" });
    let mut ticks = 0;
    for _ in 0..n {
        let t0 = rdtsc();
        if life().is_err() {
            return 1;
        }
        ticks += rdtsc() - t0;
        drain();
    }
    report("exit_user", listeners, n, 0, ticks);
    0
}

/// Wait for the token on `rfd`, hand it on through `wfd`. End of file (every process
/// upstream that could write the pipe is gone) is an error without a message; a write with
/// no reader left does not come back: SIGPIPE ends the process, as on Linux.
fn pass_token(rfd: usize, wfd: usize) -> Result<(), ()> {
    let mut token = [0u8; 1];
    match sys::read(rfd, &mut token) {
        Ok(1) => {}
        Ok(_) => return Err(()),
        Err(e) => {
            eprintln!("ubench: ctx: read from fd {rfd}: {e}");
            return Err(());
        }
    }
    sys::write_all(wfd, &token).map_err(|e| eprintln!("ubench: ctx: write to fd {wfd}: {e}"))
}

/// The `ctx N P` ring (see the module documentation). Process 0 (this one) reads pipe
/// P − 1 and writes pipe 0; child i reads pipe i − 1 and writes pipe i.
///
/// Every pipe is made close-on-exec, and each child gets exactly its two ends: the leader
/// clears the flag on those two, spawns the child, then closes them (it uses neither), so
/// each end has one owner. Hence a ring that loses a member ends by itself: the member
/// after it reads end of file and leaves, closing its own write end, and so on round the
/// ring; the one before it is killed by SIGPIPE when it writes. The leader, whatever
/// happened, closes its ends and reaps every child before it exits; if the leader itself
/// is killed, its ends close with it and the children end the same way (init reaps them).
fn ctx_leader(n: u64, p: u64) -> i32 {
    let p = p as usize;
    let mut pipes: Vec<(Option<usize>, Option<usize>)> = Vec::new();
    for _ in 0..p {
        match sys::pipe2(O_CLOEXEC) {
            Ok((r, w)) => pipes.push((Some(r), Some(w))),
            Err(e) => {
                eprintln!("ubench: ctx: pipe2: {e}");
                close_all(&mut pipes);
                return 1;
            }
        }
    }
    let mut children = Vec::new();
    for i in 1..p {
        let (Some(rfd), Some(wfd)) = (pipes[i - 1].0, pipes[i].1) else { break };
        let (ns, rs, ws) = (format!("{n}"), format!("{rfd}"), format!("{wfd}"));
        let spawned = sys::set_cloexec(rfd, false)
            .and_then(|()| sys::set_cloexec(wfd, false))
            .and_then(|()| sys::spawn("/bin/ubench", &["ubench", "ctxring", &ns, &rs, &ws]));
        // The child has its copies (or there is no child): the leader needs neither end.
        let _ = sys::close(rfd);
        let _ = sys::close(wfd);
        pipes[i - 1].0 = None;
        pipes[i].1 = None;
        match spawned {
            Ok(pid) => children.push(pid),
            Err(e) => {
                eprintln!("ubench: ctx: spawn: {e}");
                close_all(&mut pipes);
                reap_ring(&children, false);
                return 1;
            }
        }
    }
    let (Some(rfd), Some(wfd)) = (pipes[p - 1].0, pipes[0].1) else { return 1 };
    let round = || {
        let token = *b"t";
        sys::write_all(wfd, &token).map_err(|_| ())?;
        let mut back = [0u8; 1];
        match sys::read(rfd, &mut back) {
            Ok(1) => Ok(()),
            _ => Err(()),
        }
    };
    let mut broken = None;
    if round().is_err() {
        broken = Some(0);
    }
    start_marker("ctx");
    let t0 = rdtsc();
    if broken.is_none() {
        for r in 1..=n {
            if round().is_err() {
                broken = Some(r);
                break;
            }
        }
    }
    let t1 = rdtsc();
    // Our ends go first: a member still waiting for the token then sees end of file.
    close_all(&mut pipes);
    if let Some(r) = broken {
        eprintln!("ubench: ctx: the ring broke in round {r} of {n} (0: the warm-up)");
        reap_ring(&children, true);
        return 1;
    }
    if !reap_ring(&children, true) {
        return 1;
    }
    report("lat_ctx", p as u64, n * p as u64, t0, t1);
    0
}

/// Close every pipe end the leader still holds.
fn close_all(pipes: &mut [(Option<usize>, Option<usize>)]) {
    for (r, w) in pipes.iter_mut() {
        for fd in [r.take(), w.take()].into_iter().flatten() {
            let _ = sys::close(fd);
        }
    }
}

/// Reap the ring's children; with `tell`, say how each one that did not exit with 0 ended
/// (decoded: "exited with status 1", "killed by SIGPIPE (13)"). True if all exited with 0.
fn reap_ring(children: &[usize], tell: bool) -> bool {
    let mut all_ok = true;
    for &pid in children {
        let mut status = 0;
        match sys::wait4(pid as isize, Some(&mut status), 0, None) {
            Ok(_) if status == 0 => {}
            Ok(_) => {
                all_ok = false;
                if tell {
                    eprintln!("ubench: ctx: reaped ring process {pid}, {}", describe(status));
                }
            }
            Err(e) => {
                all_ok = false;
                eprintln!("ubench: ctx: wait4({pid}): {e}");
            }
        }
    }
    all_ok
}
