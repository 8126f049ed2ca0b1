//! `tscheck CHECK [ARG]` — checks that what the TASKSTATS family says agrees with what
//! the kernel says through other doors. Each check prints what it compared and ends with
//! `tscheck CHECK: ok` (status 0) or `tscheck CHECK: FAILED, N problems` (status 1).
//! Other endings have their own status, so a script can tell them from a mismatch: 2 bad
//! usage; 3 **the workload failed** — a child that must succeed for its record to mean
//! anything (`memhog`, `io`, `blk`, `spin`) did not exit with 0, which is reported as
//! `tscheck: workload memhog 99999999 failed: exited with status 1` and no field is checked;
//! 4 one of tscheck's own calls failed (`tscheck: socket: ...`). Wait statuses are printed
//! decoded everywhere (`exited with status 1`, `killed by SIGKILL (9)`: the runtime's
//! `process::describe`).
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
//!
//! The modes below check the fields of real exit records that only host tests covered. Each
//! runs its workload as a child with a listener registered first (not reaped before its
//! record is in), and checks the per-pid and the per-tgid record of the child. Exact
//! expectations where the kernel's answer is exact; where a value depends on timing, only
//! relations that must hold whatever the timing (never a threshold). Every record they
//! receive must also be *consistent*:
//!
//! * for each delay kind (cpu, blkio, irq): with `count` 0 everything is 0, `max_ts`
//!   included; with `count` > 0, `min ≤ total / count ≤ max ≤ total` and `max_ts` is not
//!   zero; the kinds Tally does not have (swapin, freepages, thrashing, compact, wpcopy)
//!   are all zero;
//! * the delay totals are the microstates of the MSA attribute: `cpu_delay_total` =
//!   ONACTIVEQUEUE + ONEXPIREDQUEUE (converted once, so up to 1 ns above the sum of the two
//!   converted clocks), `blkio_delay_total` = UNINTERRUPTIBLE_SLEEP and `irq_delay_total` =
//!   INTERRUPTED exactly; `cpu_run_real_total` = `cpu_run_virtual_total` = the three on-CPU
//!   clocks (to 2 ns), `ac_utime` = ONCPU_USR in µs exactly, `ac_stime` = ONCPU_SYS +
//!   ONCPU_TRAP in µs (to 1 µs), the scaled times equal the plain ones, and the 13 clocks add
//!   up to `ac_etime`;
//! * `max_ts` of each kind lies between the wall clock read just before the spawn and just
//!   after the record arrived, and so does `ac_btime64` (= `ac_btime`);
//!   `ac_etime` is at most the monotonic time between those two readings;
//! * the per-tgid record of a one-thread process is its per-pid record with AGROUP added,
//!   field for field.
//!
//! * `fields` — as root registers the listener, then sets its own nice to 7 and its policy
//!   to SCHED_BATCH, drops to uid 1000, and runs `spin 20`, which inherits them: `ac_uid`
//!   1000, `ac_gid` 0, `ac_nice` 7, `ac_sched` 3, `ac_pid` = `ac_tgid` = the child,
//!   `ac_ppid` = tscheck's pid, `ac_comm` "spin", `ac_flag` exactly 0 (exec'd: no AFORK; no
//!   ASU, AXSIG, ACORE), `ac_exitcode` 0 = the status `wait4` gives, `ac_tgetime` =
//!   `ac_etime`.
//! * `crash` — `crash divide` (SIGFPE), `crash null` (SIGSEGV), `crash panic` (exit 101) and a
//!   `sleeper` killed with SIGTERM: `ac_exitcode` is exactly the wait status (0x88, 0x8b,
//!   0x6500, 0x0f) and `ac_flag` exactly AXSIG|ACORE for the faults (core-dumping signals),
//!   AXSIG alone for SIGTERM, 0 for the panic.
//! * `blk SECTORS` — `blk -w SECTORS`, then `blk SECTORS`: `read_bytes` is SECTORS × 512 in
//!   both, plus the one sector blk reads first to check the disk's size, `write_bytes` SECTORS × 512 then 0; each waited for the disk at least once
//!   (`blkio_count` ≥ 1), and nothing was read through a descriptor.
//! * `sockio` — `sendto`/`recvfrom` on a bus socket are not `read`/`write` (Linux counts
//!   rchar/wchar/syscr/syscw in `vfs_read`/`vfs_write` only): two `GET PID` of itself in a
//!   row show the same four counters; then a request sent with `write` and its reply taken
//!   with `read` add exactly one call and their byte counts to each side.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use tally_msgbus::msg::Messages;
use tally_msgbus::taskstats::{AggrKind, Command};
use tally_rt::bus::{parse_reply, BusSocket};
use tally_rt::process::{describe, parse_u64, spawn_command};
use tally_rt::thread::{self, Latch};
use tally_rt::uapi::errno::EPERM;
use tally_rt::uapi::msa::{ClkT, MicroState, MSA_SELF, MSA_THREAD, NR_MICROSTATES};
use tally_rt::uapi::signal::{SIGFPE, SIGSEGV, SIGTERM};
use tally_rt::uapi::syscall::{CLOCK_REALTIME, PRIO_PROCESS, SCHED_BATCH};
use tally_rt::uapi::taskstats::{KernelTimespec, Taskstats, ACORE, AGROUP, AXSIG, TASKSTATS_CMD_NEW};
use tally_rt::{eprintln, println, sys, Errno};

tally_rt::entry!(main);

const USAGE: &str = "usage: tscheck self | memhog PAGES | io BYTES | eperm | fields | crash | blk SECTORS | sockio";

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
        (Some("fields"), None) => check_fields(),
        (Some("crash"), None) => check_crash(),
        (Some("blk"), Some(n)) if n > 0 => check_blk(n),
        (Some("sockio"), None) => check_sockio(),
        _ => {
            eprintln!("{USAGE}");
            return 2;
        }
    };
    r.unwrap_or_else(|f| match f {
        Fail::Call(what, e) => {
            println!("tscheck: {what}: {e}");
            CALL_FAILED
        }
        Fail::Workload(cmd, status) => {
            println!("tscheck: workload {cmd} failed: {}", describe(status));
            WORKLOAD_FAILED
        }
    })
}

/// Exit statuses besides 0 (ok), 1 (mismatch) and 2 (usage): see the module documentation.
const WORKLOAD_FAILED: i32 = 3;
const CALL_FAILED: i32 = 4;

/// Why a check could not be made at all.
enum Fail {
    /// One of tscheck's own calls failed: what it was, and the error.
    Call(&'static str, Errno),
    /// The workload (its command line) did not exit with 0: its wait status.
    Workload(String, i32),
}

impl From<(&'static str, Errno)> for Fail {
    fn from((what, e): (&'static str, Errno)) -> Self {
        Fail::Call(what, e)
    }
}

type Step<T> = Result<T, Fail>;

fn step<T>(what: &'static str, r: Result<T, Errno>) -> Step<T> {
    r.map_err(|e| Fail::Call(what, e))
}

/// A workload that must succeed for its record to be worth checking: `Fail::Workload`
/// unless it exited with 0.
fn succeeded(e: Exit, argv: &[&str]) -> Step<Exit> {
    if e.status == 0 {
        Ok(e)
    } else {
        Err(Fail::Workload(argv.join(" "), e.status))
    }
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
    let r = msg
        .records
        .iter()
        .find(|r| r.kind == kind)
        .ok_or(("GET reply without its record", Errno(tally_rt::uapi::errno::EPROTO)))?;
    let t = Taskstats::from_bytes(r.stats).ok_or(("STATS", Errno(tally_rt::uapi::errno::EPROTO)))?;
    Ok((t, r.msa_values().collect()))
}

static HELPER_DONE: Latch = Latch::new();
static STOP: AtomicBool = AtomicBool::new(false);

/// The second thread: some CPU time of its own, then exit.
extern "C" fn helper(_: usize) -> ! {
    let t0 = sys::monotonic_ns().unwrap_or(0);
    while !STOP.load(Ordering::Relaxed) && sys::monotonic_ns().unwrap_or(u64::MAX) < t0 + 5_000_000 {
        core::hint::spin_loop()
    }
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

    c.expect(
        pm.len() == NR_MICROSTATES && gm.len() == NR_MICROSTATES,
        format_args!("MSA attributes of {} and {} values", pm.len(), gm.len()),
    );
    c.expect(
        pt.ac_pid == tid && pt.ac_tgid == pid,
        format_args!("PID record: pid {} tgid {}, expected {tid} {pid}", pt.ac_pid, pt.ac_tgid),
    );
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
        "tscheck self: pid {tid}: ONCPU_USR {usr} ns, ONCPU_SYS {} ns in [{}, {}]; \
         tgid {pid}: {} ns of clocks over 2 threads",
        at(&pm, MicroState::OncpuSys),
        thread_before[MicroState::OncpuSys.index()],
        thread_after[MicroState::OncpuSys.index()],
        own(&gm)
    );
    Ok(c.verdict())
}

/// A socket registered for the exit records of CPU 0 (as `getdelays -c` registers).
struct Listener {
    sock: BusSocket,
    family: u16,
}

/// What a child left: its wait status and both records of its exit, with their clocks, and
/// the clocks read around its life.
struct Exit {
    pid: u32,
    status: i32,
    per_pid: Taskstats,
    pid_msa: Vec<u64>,
    group: Taskstats,
    group_msa: Vec<u64>,
    /// CLOCK_REALTIME (ns since 1970) just before the spawn and just after the record came.
    wall_before: u64,
    wall_after: u64,
    /// CLOCK_MONOTONIC ns between the same two points.
    mono_span: u64,
}

fn realtime_ns() -> Step<u64> {
    let t = step("clock_gettime(CLOCK_REALTIME)", sys::clock_gettime(CLOCK_REALTIME))?;
    Ok((t.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(t.tv_nsec as u64))
}

const EPROTO: Errno = Errno(tally_rt::uapi::errno::EPROTO);

impl Listener {
    fn register() -> Step<Listener> {
        let mut sock = step("socket", BusSocket::open())?;
        let family = step("family", sock.taskstats_family())?;
        step("REGISTER_CPUMASK 0", sock.taskstats_acked(family, Command::RegisterCpumask("0")))?;
        Ok(Listener { sock, family })
    }

    /// Runs `argv` as a child, calls `after_spawn` with its pid (e.g. to signal it), waits
    /// for the record that closes its process (`AGGR_TGID`; the `AGGR_PID` comes with it or
    /// before), and only then reaps it.
    fn run(&mut self, argv: &[&str], after_spawn: impl FnOnce(u32) -> Step<()>) -> Step<Exit> {
        let (wall_before, mono_before) = (realtime_ns()?, step("monotonic", sys::monotonic_ns())?);
        let pid = step("spawn", spawn_command(argv))? as u32;
        after_spawn(pid)?;
        let family = self.family;
        let mut per_pid = None;
        let (group, group_msa) = 'wait: loop {
            let d = step("recv", self.sock.recv(0))?;
            for m in Messages::new(d).flatten() {
                if m.header.nlmsg_type != family || m.header.nlmsg_pid != 0 {
                    continue;
                }
                let Ok(ts) = parse_reply(m.bytes) else { continue };
                if ts.cmd != TASKSTATS_CMD_NEW {
                    continue;
                }
                for r in ts.records.iter().filter(|r| r.id == pid) {
                    let t = Taskstats::from_bytes(r.stats).ok_or(("STATS", EPROTO))?;
                    match r.kind {
                        AggrKind::Pid => per_pid = Some((t, r.msa_values().collect::<Vec<u64>>())),
                        AggrKind::Tgid => break 'wait (t, r.msa_values().collect::<Vec<u64>>()),
                    }
                }
            }
        };
        let (wall_after, mono_after) = (realtime_ns()?, step("monotonic", sys::monotonic_ns())?);
        let (per_pid, pid_msa) = per_pid.ok_or(("no AGGR_PID record before the AGGR_TGID one", EPROTO))?;
        let mut status = 0;
        step("wait4", sys::wait4(pid as isize, Some(&mut status), 0, None))?;
        println!("tscheck: pid {pid} ({}) {}", argv.join(" "), describe(status));
        Ok(Exit {
            pid,
            status,
            per_pid,
            pid_msa,
            group,
            group_msa,
            wall_before,
            wall_after,
            mono_span: mono_after.saturating_sub(mono_before),
        })
    }
}

/// Runs `argv` with a listener on CPU 0 and returns the STATS of the record that closes
/// its process (`AGGR_TGID`), then reaps it. Like `getdelays -c`: the child is not reaped
/// before its record is in.
fn exit_record(argv: &[&str]) -> Step<Taskstats> {
    let mut l = Listener::register()?;
    let e = l.run(argv, |_| Ok(()))?;
    let _ = l.sock.taskstats_acked(l.family, Command::DeregisterCpumask("0"));
    Ok(succeeded(e, argv)?.group)
}

fn ts_ns(t: &KernelTimespec) -> u64 {
    (t.tv_sec.max(0) as u64).saturating_mul(1_000_000_000).saturating_add(t.tv_nsec.max(0) as u64)
}

/// The relations of the module documentation that hold for any record of a child's exit:
/// delays, clocks, times.
fn consistent(c: &mut Checker, who: &str, t: &Taskstats, msa: &[u64], e: &Exit) {
    c.expect(t.version == 17, format_args!("{who}: version {}", t.version));
    let delays = [
        ("cpu", t.cpu_count, t.cpu_delay_total, t.cpu_delay_max, t.cpu_delay_min, t.cpu_delay_max_ts),
        ("blkio", t.blkio_count, t.blkio_delay_total, t.blkio_delay_max, t.blkio_delay_min, t.blkio_delay_max_ts),
        ("irq", t.irq_count, t.irq_delay_total, t.irq_delay_max, t.irq_delay_min, t.irq_delay_max_ts),
    ];
    for (kind, count, total, max, min, ts) in delays {
        if count == 0 {
            c.expect(
                total == 0 && max == 0 && min == 0 && ts == KernelTimespec::ZERO,
                format_args!("{who}: {kind}: no delay, yet total {total} max {max} min {min} max_ts {ts:?}"),
            );
            continue;
        }
        let mean = total / count;
        c.expect(
            min <= mean && mean <= max && max <= total,
            format_args!(
                "{who}: {kind}: count {count}, total {total}: not min {min} <= mean {mean} <= max {max} <= total"
            ),
        );
        c.expect(ts != KernelTimespec::ZERO, format_args!("{who}: {kind}: {count} delays but max_ts is zero"));
        let at = ts_ns(&ts);
        c.expect(
            e.wall_before <= at && at <= e.wall_after && ts.tv_nsec < 1_000_000_000,
            format_args!(
                "{who}: {kind}: max_ts {}.{:09} outside the child's life {}..{} ns",
                ts.tv_sec, ts.tv_nsec, e.wall_before, e.wall_after
            ),
        );
    }
    let absent = [
        t.swapin_count,
        t.swapin_delay_total,
        t.swapin_delay_max,
        t.swapin_delay_min,
        t.freepages_count,
        t.freepages_delay_total,
        t.freepages_delay_max,
        t.freepages_delay_min,
        t.thrashing_count,
        t.thrashing_delay_total,
        t.thrashing_delay_max,
        t.thrashing_delay_min,
        t.compact_count,
        t.compact_delay_total,
        t.compact_delay_max,
        t.compact_delay_min,
        t.wpcopy_count,
        t.wpcopy_delay_total,
        t.wpcopy_delay_max,
        t.wpcopy_delay_min,
    ];
    let absent_ts = [
        t.swapin_delay_max_ts,
        t.freepages_delay_max_ts,
        t.thrashing_delay_max_ts,
        t.compact_delay_max_ts,
        t.wpcopy_delay_max_ts,
    ];
    c.expect(
        absent.iter().all(|&v| v == 0) && absent_ts.iter().all(|ts| *ts == KernelTimespec::ZERO),
        format_args!("{who}: a delay kind Tally does not have is not zero: {absent:?}"),
    );

    // The clocks of the MSA attribute.
    c.expect(msa.len() == NR_MICROSTATES, format_args!("{who}: MSA attribute of {} values", msa.len()));
    let at = |s: MicroState| msa.get(s.index()).copied().unwrap_or(0);
    let queued = at(MicroState::OnActiveQueue) + at(MicroState::OnExpiredQueue);
    c.expect(
        t.cpu_delay_total >= queued && t.cpu_delay_total - queued <= 1,
        format_args!("{who}: cpu_delay_total {} ns, run-queue microstates {queued} ns", t.cpu_delay_total),
    );
    let disk = at(MicroState::UninterruptibleSleep);
    c.expect(
        t.blkio_delay_total == disk,
        format_args!("{who}: blkio_delay_total {} ns, UNINTERRUPTIBLE_SLEEP {disk} ns", t.blkio_delay_total),
    );
    let irq = at(MicroState::Interrupted);
    c.expect(
        t.irq_delay_total == irq,
        format_args!("{who}: irq_delay_total {} ns, INTERRUPTED {irq} ns", t.irq_delay_total),
    );
    let (usr, sys_trap) = (at(MicroState::OncpuUsr), at(MicroState::OncpuSys) + at(MicroState::OncpuTrap));
    c.expect(
        t.cpu_run_real_total >= usr + sys_trap && t.cpu_run_real_total - (usr + sys_trap) <= 2,
        format_args!("{who}: cpu_run_real_total {} ns, on-CPU microstates {} ns", t.cpu_run_real_total, usr + sys_trap),
    );
    c.expect(
        t.cpu_run_virtual_total == t.cpu_run_real_total && t.cpu_scaled_run_real_total == t.cpu_run_real_total,
        format_args!(
            "{who}: cpu_run_virtual_total {}, cpu_scaled_run_real_total {}, real {}",
            t.cpu_run_virtual_total, t.cpu_scaled_run_real_total, t.cpu_run_real_total
        ),
    );
    c.expect(t.ac_utime == usr / 1000, format_args!("{who}: ac_utime {} us, ONCPU_USR {usr} ns", t.ac_utime));
    c.expect(
        t.ac_stime >= sys_trap / 1000 && t.ac_stime - sys_trap / 1000 <= 1,
        format_args!("{who}: ac_stime {} us, ONCPU_SYS + ONCPU_TRAP {sys_trap} ns", t.ac_stime),
    );
    c.expect(
        t.ac_utimescaled == t.ac_utime && t.ac_stimescaled == t.ac_stime,
        format_args!(
            "{who}: scaled times {} {} differ from {} {}",
            t.ac_utimescaled, t.ac_stimescaled, t.ac_utime, t.ac_stime
        ),
    );
    // etime is floor(elapsed µs); the 13 clocks, each floored to ns, are at most 13 ns short.
    let sum: u64 = msa.iter().sum();
    c.expect(
        t.ac_etime * 1000 <= sum + 13 && sum < (t.ac_etime + 1) * 1000,
        format_args!("{who}: the clocks add up to {sum} ns, ac_etime is {} us", t.ac_etime),
    );
    c.expect(
        t.ac_utime + t.ac_stime <= t.ac_etime,
        format_args!("{who}: utime {} + stime {} > etime {}", t.ac_utime, t.ac_stime, t.ac_etime),
    );

    // Begin and elapsed time against the clocks read around the child's life.
    let (lo, hi) = (e.wall_before / 1_000_000_000, e.wall_after / 1_000_000_000);
    c.expect(
        lo <= t.ac_btime64 && t.ac_btime64 <= hi && u64::from(t.ac_btime) == t.ac_btime64,
        format_args!("{who}: ac_btime64 {} (ac_btime {}) outside {lo}..={hi} s", t.ac_btime64, t.ac_btime),
    );
    c.expect(
        t.ac_etime * 1000 <= e.mono_span,
        format_args!("{who}: ac_etime {} us > the {} ns the parent saw", t.ac_etime, e.mono_span),
    );
}

/// Identity, exit and the agreement of the two records of a one-thread child's exit:
/// pid = tgid = the child, ppid = us, `comm`, `ac_exitcode` = `status` = the wait status,
/// `ac_flag` = `flag` (+ AGROUP in the group record), and the group record = the per-pid
/// one with AGROUP; plus [`consistent`] for both.
fn one_thread_exit(c: &mut Checker, e: &Exit, comm: &str, status: i32, flag: u8) -> Step<()> {
    let me = step("getpid", sys::getpid())? as u32;
    let p = &e.per_pid;
    c.expect(
        e.status == status,
        format_args!("{comm}: {} (wait status {:#x}), expected {}", describe(e.status), e.status, describe(status)),
    );
    c.expect(
        p.ac_exitcode == e.status as u32,
        format_args!(
            "{comm}: ac_exitcode says {} ({:#x}), the wait status {}",
            describe(p.ac_exitcode as i32),
            p.ac_exitcode,
            describe(e.status)
        ),
    );
    c.expect(p.ac_flag == flag, format_args!("{comm}: ac_flag {:#04x}, expected {flag:#04x}", p.ac_flag));
    c.expect(
        p.ac_pid == e.pid && p.ac_tgid == e.pid && p.ac_ppid == me,
        format_args!(
            "{comm}: pid {} tgid {} ppid {}, expected {} {} {me}",
            p.ac_pid, p.ac_tgid, p.ac_ppid, e.pid, e.pid
        ),
    );
    c.expect(p.comm_str() == comm, format_args!("{comm}: ac_comm {:?}", p.comm_str()));
    c.expect(
        p.ac_tgetime == p.ac_etime,
        format_args!("{comm}: ac_tgetime {} != ac_etime {} for the leader", p.ac_tgetime, p.ac_etime),
    );
    let mut as_group = *p;
    as_group.ac_flag |= AGROUP;
    c.expect(
        as_group == e.group,
        format_args!("{comm}: the per-tgid record is not the per-pid one with AGROUP ({:?} vs {:?})", e.group, p),
    );
    c.expect(e.group_msa == e.pid_msa, format_args!("{comm}: the two records' clocks differ"));
    consistent(c, comm, p, &e.pid_msa, e);
    consistent(c, comm, &e.group, &e.group_msa, e);
    Ok(())
}

fn delays_line(t: &Taskstats) -> alloc::string::String {
    alloc::format!(
        "cpu {}/{} ns (max {} min {}), blkio {}/{} ns (max {} min {}), irq {}/{} ns",
        t.cpu_count,
        t.cpu_delay_total,
        t.cpu_delay_max,
        t.cpu_delay_min,
        t.blkio_count,
        t.blkio_delay_total,
        t.blkio_delay_max,
        t.blkio_delay_min,
        t.irq_count,
        t.irq_delay_total
    )
}

fn check_fields() -> Step<i32> {
    let mut c = Checker { name: "fields", failed: 0 };
    let mut l = Listener::register()?; // as root: REGISTER needs it
                                       // What a child inherits: nice (raising it needs no privilege), policy, uid.
    step("setpriority(7)", sys::setpriority(PRIO_PROCESS, 0, 7))?;
    step("sched_setscheduler(SCHED_BATCH)", sys::sched_setscheduler(0, SCHED_BATCH, 0))?;
    step("setuid(1000)", sys::setuid(1000))?;
    let e = succeeded(l.run(&["spin", "20"], |_| Ok(()))?, &["spin", "20"])?;
    let t = &e.per_pid;
    println!(
        "tscheck fields: pid {}: uid {} gid {} nice {} sched {} ac_flag {:#04x}/{:#04x} exitcode {:#x} ppid {} comm {}",
        t.ac_pid,
        t.ac_uid,
        t.ac_gid,
        t.ac_nice,
        t.ac_sched,
        t.ac_flag,
        e.group.ac_flag,
        t.ac_exitcode,
        t.ac_ppid,
        t.comm_str()
    );
    println!(
        "tscheck fields: btime {} etime {} us (parent saw {} us) utime {} stime {}; {}",
        t.ac_btime64,
        t.ac_etime,
        e.mono_span / 1000,
        t.ac_utime,
        t.ac_stime,
        delays_line(t)
    );
    c.expect(t.ac_uid == 1000, format_args!("ac_uid {}, the parent is uid 1000", t.ac_uid));
    c.expect(t.ac_gid == 0, format_args!("ac_gid {}; nothing sets a gid, init's is 0", t.ac_gid));
    c.expect(t.ac_nice == 7, format_args!("ac_nice {}, inherited nice 7", t.ac_nice));
    c.expect(t.ac_sched == SCHED_BATCH as u8, format_args!("ac_sched {}, inherited SCHED_BATCH (3)", t.ac_sched));
    one_thread_exit(&mut c, &e, "spin", 0, 0)?;
    Ok(c.verdict())
}

fn check_crash() -> Step<i32> {
    let mut c = Checker { name: "crash", failed: 0 };
    let mut l = Listener::register()?;
    // (argv, comm, wait status, ac_flag): a fault's signal dumps core (core flag 0x80).
    let signaled = |sig: u8, core: bool| i32::from(sig) | if core { 0x80 } else { 0 };
    let cases: [(&[&str], &str, i32, u8, bool); 4] = [
        (&["crash", "divide"], "crash", signaled(SIGFPE, true), AXSIG | ACORE, false),
        (&["crash", "null"], "crash", signaled(SIGSEGV, true), AXSIG | ACORE, false),
        (&["crash", "panic"], "crash", 101 << 8, 0, false),
        (&["sleeper", "10000"], "sleeper", signaled(SIGTERM, false), AXSIG, true),
    ];
    for (argv, comm, status, flag, kill) in cases {
        let e = l.run(argv, |pid| {
            if kill {
                step("kill", sys::kill(pid as isize, i32::from(SIGTERM))).map(|_| ())
            } else {
                Ok(())
            }
        })?;
        println!(
            "tscheck crash: {}: ac_exitcode {:#x} ac_flag {:#04x}/{:#04x}",
            argv.join(" "),
            e.per_pid.ac_exitcode,
            e.per_pid.ac_flag,
            e.group.ac_flag
        );
        one_thread_exit(&mut c, &e, comm, status, flag)?;
    }
    Ok(c.verdict())
}

fn check_blk(sectors: u64) -> Step<i32> {
    let mut c = Checker { name: "blk", failed: 0 };
    let mut l = Listener::register()?;
    let n = alloc::format!("{sectors}");
    let bytes = sectors * 512;
    for (argv, written) in [(&["blk", "-w", n.as_str()][..], bytes), (&["blk", n.as_str()][..], 0)] {
        let e = succeeded(l.run(argv, |_| Ok(()))?, argv)?;
        let t = &e.per_pid;
        println!(
            "tscheck blk: {}: read_bytes {} write_bytes {} blkio_count {} blkio_delay_total {} ns \
             (max {} min {}) read_syscalls {}",
            argv.join(" "),
            t.read_bytes,
            t.write_bytes,
            t.blkio_count,
            t.blkio_delay_total,
            t.blkio_delay_max,
            t.blkio_delay_min,
            t.read_syscalls
        );
        // blk reads the last sector once first, to check the disk is big enough.
        let read = bytes + 512;
        c.expect(
            t.read_bytes == read,
            format_args!(
                "{}: read_bytes {}, expected {read} (with the size check's sector)",
                argv.join(" "),
                t.read_bytes
            ),
        );
        c.expect(
            t.write_bytes == written,
            format_args!("{}: write_bytes {}, expected {written}", argv.join(" "), t.write_bytes),
        );
        c.expect(t.blkio_count >= 1, format_args!("{}: never waited for the disk (blkio_count 0)", argv.join(" ")));
        c.expect(
            t.cancelled_write_bytes == 0 && t.ac_majflt == 0,
            format_args!("cancelled_write_bytes {}, majflt {}", t.cancelled_write_bytes, t.ac_majflt),
        );
        c.expect(
            t.read_char == 0 && t.read_syscalls == 0,
            format_args!("read_char {}, read_syscalls {}", t.read_char, t.read_syscalls),
        );
        one_thread_exit(&mut c, &e, "blk", 0, 0)?;
    }
    Ok(c.verdict())
}

/// The four I/O counters of a live record.
fn io_counters(t: &Taskstats) -> [u64; 4] {
    [t.read_char, t.write_char, t.read_syscalls, t.write_syscalls]
}

fn check_sockio() -> Step<i32> {
    let mut c = Checker { name: "sockio", failed: 0 };
    let tid = step("gettid", sys::gettid())? as u32;
    let mut sock = step("socket", BusSocket::open())?;
    let family = step("family", sock.taskstats_family())?;
    // Between the snapshots of A and B: A's reply taken (recvfrom), B sent (sendto).
    let (a, _) = get(&mut sock, family, Command::Pid(tid), AggrKind::Pid)?;
    let (b, _) = get(&mut sock, family, Command::Pid(tid), AggrKind::Pid)?;
    // Then a GET sent with write() and answered with read(), and D (sendto) to see them.
    let seq = sock.next_seq();
    let req = step("request", tally_msgbus::taskstats::request(family, seq, 0, Command::Pid(tid)).map_err(Errno))?;
    let mut buf = alloc::vec![0u8; 4096];
    let sent = step("write", sys::write(sock.fd(), &req))?;
    let got = step("read", sys::read(sock.fd(), &mut buf))?;
    let (d, _) = get(&mut sock, family, Command::Pid(tid), AggrKind::Pid)?;
    let reply_ok =
        Messages::new(&buf[..got.min(buf.len())]).flatten().next().is_some_and(|m| m.header.nlmsg_seq == seq);
    println!(
        "tscheck sockio: rchar/wchar/syscr/syscw {:?} -> {:?} over recvfrom+sendto; \
         -> {:?} after write({sent}) + read({got})",
        io_counters(&a),
        io_counters(&b),
        io_counters(&d)
    );
    c.expect(reply_ok, format_args!("read() did not return the reply to the request written"));
    c.expect(
        io_counters(&b) == io_counters(&a),
        format_args!("recvfrom/sendto changed the counters: {:?} -> {:?}", io_counters(&a), io_counters(&b)),
    );
    let want = [b.read_char + got as u64, b.write_char + sent as u64, b.read_syscalls + 1, b.write_syscalls + 1];
    c.expect(io_counters(&d) == want, format_args!("after write + read: {:?}, expected {want:?}", io_counters(&d)));
    Ok(c.verdict())
}

fn check_memhog(pages: u64) -> Step<i32> {
    let mut c = Checker { name: "memhog", failed: 0 };
    let arg = alloc::format!("{pages}");
    let t = exit_record(&["memhog", &arg])?;
    println!(
        "tscheck memhog: minflt {}, majflt {}, hiwater_rss {} KB, hiwater_vm {} KB, coremem {} MB-us, virtmem {} MB-us",
        t.ac_minflt, t.ac_majflt, t.hiwater_rss, t.hiwater_vm, t.coremem, t.virtmem
    );
    c.expect(t.ac_exitcode == 0, format_args!("the record's ac_exitcode says {}", describe(t.ac_exitcode as i32)));
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
    c.expect(t.ac_exitcode == 0, format_args!("the record's ac_exitcode says {}", describe(t.ac_exitcode as i32)));
    c.expect(
        t.write_char >= bytes && t.write_char < bytes + 256,
        format_args!("write_char {} for {bytes} bytes", t.write_char),
    );
    c.expect(
        t.write_syscalls > chunks && t.write_syscalls <= chunks + 2,
        format_args!("write_syscalls {} for {chunks} chunks and a report", t.write_syscalls),
    );
    c.expect(
        t.read_char == 0 && t.read_syscalls == 0,
        format_args!("read_char {}, read_syscalls {}", t.read_char, t.read_syscalls),
    );
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
