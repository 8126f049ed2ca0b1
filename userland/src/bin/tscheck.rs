//! `tscheck CHECK [ARG]` — checks that what the TASKSTATS family says agrees with what
//! the kernel says through other doors. Each check prints what it compared and ends with
//! `tscheck CHECK: ok` (status 0) or `tscheck CHECK: FAILED, N problems` (status 1).
//!
//! * `self` — a live task asks about itself. The program starts a second thread and lets
//!   it finish (so the process has a past as well as a present), then reads its clocks
//!   with `msa()`, sends `GET PID` (its own tid) and `GET TGID` (its pid), and reads
//!   `msa()` again. Every microstate in the PID record must lie between the `MSA_THREAD`
//!   readings taken before and after, and every one in the TGID record between the two
//!   `MSA_SELF` readings: the GET and `msa()` read the same clocks. Within the PID record,
//!   `ac_utime` is ONCPU_USR in µs exactly, `cpu_delay_total` is ONACTIVEQUEUE +
//!   ONEXPIREDQUEUE (to 1 ns: each clock is rounded down on its own) and the clocks add up
//!   to `ac_etime` — the "sum of the clocks is the elapsed time" invariant, seen from user
//!   space through two roundings.
//! * `memhog PAGES` — runs `memhog PAGES` as a child with a listener registered (as
//!   `getdelays -c` does), and checks its exit record: at least PAGES minor faults, no
//!   major fault (Tally has no file-backed pages), `hiwater_rss` at least PAGES × 4 KB,
//!   `hiwater_vm` ≥ `hiwater_rss`, and nonzero memory integrals with `virtmem` ≥ `coremem`.
//! * `io BYTES` — runs `io BYTES` the same way: `write_char` counts the BYTES it wrote to
//!   the console (plus its report line on stderr, under 256 bytes), `write_syscalls` one
//!   per 4 KiB chunk (plus at most two for the report), nothing read.
//! * `eperm` — as root, resolves the family; then `setuid(1000)` and asks again:
//!   `GET PID`, `GET TGID` and `REGISTER_CPUMASK` must be refused with `EPERM` (Linux
//!   requires CAP_NET_ADMIN), while the controller still answers and `msa(MSA_SELF)` — the
//!   unprivileged way to read one's own times — still works.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use tally_bus::msg::Messages;
use tally_bus::taskstats::{AggrKind, Command};
use tally_rt::bus::{parse_reply, BusSocket};
use tally_rt::process::{describe, parse_u64, spawn_command};
use tally_rt::thread::{self, Latch};
use tally_rt::uapi::errno::EPERM;
use tally_rt::uapi::msa::{ClkT, MicroState, MSA_SELF, MSA_THREAD, NR_MICROSTATES};
use tally_rt::uapi::taskstats::{Taskstats, TASKSTATS_CMD_NEW};
use tally_rt::{eprintln, println, sys, Errno};

tally_rt::entry!(main);

const USAGE: &str = "usage: tscheck self | memhog PAGES | io BYTES | eperm";

/// Counts and prints failed expectations.
struct Checker {
    name: &'static str,
    failed: u32,
}

impl Checker {
    fn expect(&mut self, ok: bool, what: core::fmt::Arguments<'_>) {
        if !ok {
            self.failed += 1;
            println!("tscheck {}: MISMATCH: {what}", self.name);
        }
    }

    fn verdict(&self) -> i32 {
        if self.failed == 0 {
            println!("tscheck {}: ok", self.name);
            0
        } else {
            println!("tscheck {}: FAILED, {} problems", self.name, self.failed);
            1
        }
    }
}

fn main() -> i32 {
    let arg = tally_rt::arg(2).and_then(parse_u64);
    let r = match (tally_rt::arg(1), arg) {
        (Some("self"), None) => check_self(),
        (Some("memhog"), Some(n)) if n > 0 => check_memhog(n),
        (Some("io"), Some(n)) if n > 0 => check_io(n),
        (Some("eperm"), None) => check_eperm(),
        _ => {
            eprintln!("{USAGE}");
            return 2;
        }
    };
    r.unwrap_or_else(|(what, e)| {
        println!("tscheck: {what}: {e}");
        1
    })
}

type Step<T> = Result<T, (&'static str, Errno)>;

fn step<T>(what: &'static str, r: Result<T, Errno>) -> Step<T> {
    r.map_err(|e| (what, e))
}

fn msa(which: u32) -> Step<[ClkT; NR_MICROSTATES]> {
    let mut t = [0; NR_MICROSTATES];
    step("msa", sys::msa(which, &mut t))?;
    Ok(t)
}

/// The STATS and MSA values of the one record (of `kind`) in a GET reply.
fn get(sock: &mut BusSocket, family: u16, cmd: Command<'_>, kind: AggrKind) -> Step<(Taskstats, Vec<u64>)> {
    let reply = step("GET", sock.taskstats(family, cmd))?;
    let msg = step("GET reply", parse_reply(&reply))?;
    let r = msg.records.iter().find(|r| r.kind == kind).ok_or(("GET reply without its record", Errno(tally_rt::uapi::errno::EPROTO)))?;
    let t = Taskstats::from_bytes(r.stats).ok_or(("STATS", Errno(tally_rt::uapi::errno::EPROTO)))?;
    Ok((t, r.msa_values().collect()))
}

static HELPER_DONE: Latch = Latch::new();
static STOP: AtomicBool = AtomicBool::new(false);

/// The second thread: some CPU time of its own, then exit.
extern "C" fn helper(_: usize) -> ! {
    let t0 = sys::monotonic_ns().unwrap_or(0);
    while !STOP.load(Ordering::Relaxed) && sys::monotonic_ns().unwrap_or(u64::MAX) < t0 + 5_000_000 {}
    HELPER_DONE.arrive();
    sys::exit(0)
}

fn check_self() -> Step<i32> {
    let mut c = Checker { name: "self", failed: 0 };
    step("thread", thread::spawn(helper, 0, thread::DEFAULT_STACK_SIZE))?;
    step("join", HELPER_DONE.wait_for(1, 1))?;
    let (tid, pid) = (step("gettid", sys::gettid())? as u32, step("getpid", sys::getpid())? as u32);
    let mut sock = step("socket", BusSocket::open())?;
    let family = step("family", sock.taskstats_family())?;

    let (thread_before, self_before) = (msa(MSA_THREAD)?, msa(MSA_SELF)?);
    let (pt, pm) = get(&mut sock, family, Command::Pid(tid), AggrKind::Pid)?;
    let (gt, gm) = get(&mut sock, family, Command::Tgid(pid), AggrKind::Tgid)?;
    let (self_after, thread_after) = (msa(MSA_SELF)?, msa(MSA_THREAD)?);

    c.expect(pm.len() == NR_MICROSTATES && gm.len() == NR_MICROSTATES, format_args!("MSA attributes of {} and {} values", pm.len(), gm.len()));
    c.expect(pt.ac_pid == tid && pt.ac_tgid == pid, format_args!("PID record: pid {} tgid {}, expected {tid} {pid}", pt.ac_pid, pt.ac_tgid));
    c.expect(gt.ac_tgid == pid, format_args!("TGID record: tgid {}, expected {pid}", gt.ac_tgid));
    for s in MicroState::ALL {
        let i = s.index();
        let (p, g) = (pm.get(i).copied().unwrap_or(0), gm.get(i).copied().unwrap_or(0));
        c.expect(
            thread_before[i] <= p && p <= thread_after[i],
            format_args!("{}: GET PID says {p} ns, MSA_THREAD {}..{}", s.name(), thread_before[i], thread_after[i]),
        );
        c.expect(
            self_before[i] <= g && g <= self_after[i],
            format_args!("{}: GET TGID says {g} ns, MSA_SELF {}..{}", s.name(), self_before[i], self_after[i]),
        );
    }
    let at = |m: &[u64], s: MicroState| m.get(s.index()).copied().unwrap_or(0);
    let usr = at(&pm, MicroState::OncpuUsr);
    c.expect(pt.ac_utime == usr / 1000, format_args!("ac_utime {} us, ONCPU_USR {usr} ns", pt.ac_utime));
    let queued = at(&pm, MicroState::OnActiveQueue) + at(&pm, MicroState::OnExpiredQueue);
    c.expect(
        pt.cpu_delay_total.abs_diff(queued) <= 1,
        format_args!("cpu_delay_total {} ns, run-queue microstates {queued} ns", pt.cpu_delay_total),
    );
    // etime is floor(elapsed µs); the sum of 13 clocks, each floored to ns, is at most 13 ns
    // short of the elapsed ns.
    let sum: u64 = pm.iter().sum();
    c.expect(
        pt.ac_etime * 1000 <= sum + 13 && sum < (pt.ac_etime + 1) * 1000,
        format_args!("the clocks add up to {sum} ns, ac_etime is {} us", pt.ac_etime),
    );
    let own = |m: &[u64]| m.iter().sum::<u64>();
    c.expect(own(&gm) > own(&pm), format_args!("the TGID record ({} ns) includes the helper thread's time", own(&gm)));
    println!(
        "tscheck self: pid {tid}: ONCPU_USR {usr} ns, ONCPU_SYS {} ns in [{}, {}]; tgid {pid}: {} ns of clocks over 2 threads",
        at(&pm, MicroState::OncpuSys),
        thread_before[MicroState::OncpuSys.index()],
        thread_after[MicroState::OncpuSys.index()],
        own(&gm)
    );
    Ok(c.verdict())
}

/// Runs `argv` with a listener on CPU 0 and returns the STATS of the record that closes
/// its process (`AGGR_TGID`), then reaps it. Like `getdelays -c`: the child is not reaped
/// before its record is in.
fn exit_record(argv: &[&str]) -> Step<Taskstats> {
    let mut sock = step("socket", BusSocket::open())?;
    let family = step("family", sock.taskstats_family())?;
    step("REGISTER_CPUMASK 0", sock.taskstats_acked(family, Command::RegisterCpumask("0")))?;
    let pid = step("spawn", spawn_command(argv))? as u32;
    let stats = 'wait: loop {
        let d = step("recv", sock.recv(0))?;
        for m in Messages::new(d).flatten() {
            if m.header.nlmsg_type != family || m.header.nlmsg_pid != 0 {
                continue;
            }
            let Ok(ts) = parse_reply(m.bytes) else { continue };
            if ts.cmd != TASKSTATS_CMD_NEW {
                continue;
            }
            if let Some(r) = ts.records.iter().find(|r| r.kind == AggrKind::Tgid && r.id == pid) {
                break 'wait Taskstats::from_bytes(r.stats).ok_or(("STATS", Errno(tally_rt::uapi::errno::EPROTO)))?;
            }
        }
    };
    let _ = sock.taskstats_acked(family, Command::DeregisterCpumask("0"));
    let mut status = 0;
    step("wait4", sys::wait4(pid as isize, Some(&mut status), 0, None))?;
    println!("tscheck: pid {pid} ({}) {}", argv.join(" "), describe(status));
    Ok(stats)
}

fn check_memhog(pages: u64) -> Step<i32> {
    let mut c = Checker { name: "memhog", failed: 0 };
    let arg = alloc::format!("{pages}");
    let t = exit_record(&["memhog", &arg])?;
    println!(
        "tscheck memhog: minflt {}, majflt {}, hiwater_rss {} KB, hiwater_vm {} KB, coremem {} MB-us, virtmem {} MB-us",
        t.ac_minflt, t.ac_majflt, t.hiwater_rss, t.hiwater_vm, t.coremem, t.virtmem
    );
    c.expect(t.ac_exitcode == 0, format_args!("exit code {}", t.ac_exitcode));
    c.expect(t.ac_minflt >= pages, format_args!("{} minor faults for {pages} pages", t.ac_minflt));
    c.expect(t.ac_majflt == 0, format_args!("{} major faults", t.ac_majflt));
    c.expect(t.hiwater_rss >= pages * 4, format_args!("hiwater_rss {} KB for {pages} pages", t.hiwater_rss));
    c.expect(t.hiwater_vm >= t.hiwater_rss, format_args!("hiwater_vm {} KB < hiwater_rss", t.hiwater_vm));
    c.expect(t.coremem > 0 && t.virtmem >= t.coremem, format_args!("coremem {}, virtmem {}", t.coremem, t.virtmem));
    Ok(c.verdict())
}

fn check_io(bytes: u64) -> Step<i32> {
    let mut c = Checker { name: "io", failed: 0 };
    let arg = alloc::format!("{bytes}");
    let t = exit_record(&["io", &arg])?;
    println!(
        "tscheck io: read_char {}, write_char {}, read_syscalls {}, write_syscalls {}",
        t.read_char, t.write_char, t.read_syscalls, t.write_syscalls
    );
    let chunks = bytes.div_ceil(4096);
    c.expect(t.ac_exitcode == 0, format_args!("exit code {}", t.ac_exitcode));
    c.expect(t.write_char >= bytes && t.write_char < bytes + 256, format_args!("write_char {} for {bytes} bytes", t.write_char));
    c.expect(
        t.write_syscalls > chunks && t.write_syscalls <= chunks + 2,
        format_args!("write_syscalls {} for {chunks} chunks and a report", t.write_syscalls),
    );
    c.expect(t.read_char == 0 && t.read_syscalls == 0, format_args!("read_char {}, read_syscalls {}", t.read_char, t.read_syscalls));
    Ok(c.verdict())
}

fn check_eperm() -> Step<i32> {
    let mut c = Checker { name: "eperm", failed: 0 };
    let pid = step("getpid", sys::getpid())? as u32;
    let mut sock = step("socket", BusSocket::open())?;
    let family = step("family", sock.taskstats_family())?;
    c.expect(sock.taskstats(family, Command::Pid(pid)).is_ok(), format_args!("GET PID refused to root"));

    step("setuid(1000)", sys::setuid(1000))?;
    let refused = |r: Result<(), Errno>| r == Err(Errno(EPERM));
    let pid_get = sock.taskstats(family, Command::Pid(pid)).map(|_| ());
    let tgid_get = sock.taskstats(family, Command::Tgid(pid)).map(|_| ());
    let register = sock.taskstats_acked(family, Command::RegisterCpumask("0"));
    let shown = |r: &Result<(), Errno>| match r {
        Ok(()) => alloc::string::String::from("answered"),
        Err(e) => alloc::format!("{e}"),
    };
    println!(
        "tscheck eperm: as uid 1000: GET PID {}, GET TGID {}, REGISTER_CPUMASK {}",
        shown(&pid_get),
        shown(&tgid_get),
        shown(&register)
    );
    c.expect(refused(pid_get), format_args!("GET PID as uid 1000: {pid_get:?}"));
    c.expect(refused(tgid_get), format_args!("GET TGID as uid 1000: {tgid_get:?}"));
    c.expect(refused(register), format_args!("REGISTER_CPUMASK as uid 1000: {register:?}"));
    let mut fresh = step("socket as uid 1000", BusSocket::open())?;
    let again = fresh.taskstats_family();
    c.expect(again == Ok(family), format_args!("GETFAMILY as uid 1000: {again:?}"));
    let mine = msa(MSA_SELF)?;
    c.expect(mine.iter().sum::<u64>() > 0, format_args!("msa(MSA_SELF) as uid 1000 is all zero"));
    c.expect(sys::setuid(0) == Err(Errno(EPERM)), format_args!("uid 1000 became root again"));
    Ok(c.verdict())
}
