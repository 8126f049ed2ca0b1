//! Self-tests of taskstats over the bus, through real bus sockets (`crate::bus::Socket`,
//! what `socket()`/`sendto()`/`recvfrom()` use), from the kernel's init thread (uid 0):
//!
//! * `taskstats` — the exit records of `/bin/threads 4` (four per-pid records, one
//!   per-tgid record equal to their sum), of `/bin/spin` (utime ≫ stime; cpu_delay_total
//!   exactly the run-queue microstates of the exit log, converted once), and a GET by pid
//!   and by tgid that agree with the task layer.
//! * `taskstats_storm` — 10,000 short-lived (kernel) tasks exit while a listener with the default
//!   receive buffer reads only now and then: produced == delivered + dropped exactly, the
//!   drops are reported as ENOBUFS; then again with a buffer sized for the load: no drops;
//!   heap and frames back to their baseline afterwards.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use tally_microstate::MicroState;
use tally_msgbus::taskstats::{parse_taskstats_message, request, AggrKind, Command};
use tally_uapi::errno::{EAGAIN, ENOBUFS};
use tally_uapi::netlink::{AF_NETLINK, NETLINK_GENERIC, SOCK_RAW};
use tally_uapi::taskstats::{Taskstats, AGROUP, TASKSTATS_GENL_NAME};

use crate::bus::Socket;
use crate::proc;
use crate::sched;
use crate::sched::SchedParams;

fn open() -> Result<(Socket, u16), &'static str> {
    let s = crate::acct::open_socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC, false).map_err(|_| "socket failed")?;
    let family = s.family_id(TASKSTATS_GENL_NAME, crate::acct::current_sender()).map_err(|_| "GETFAMILY failed")?;
    Ok((s, family))
}

fn register(s: &Socket, fam: u16) -> Result<(), &'static str> {
    crate::acct::send(s, &request(fam, 2, 0, Command::RegisterCpumask("0")).map_err(|_| "cannot build REGISTER")?)
        .map_err(|_| "register failed")?;
    Ok(())
}

/// Every record waiting on `s`: (kind, id, stats, msa ns). Returns how many messages.
fn drain(
    s: &Socket,
    out: &mut Vec<(AggrKind, u32, Taskstats, Vec<u64>)>,
    enobufs: &mut u64,
) -> Result<u64, &'static str> {
    let mut messages = 0;
    loop {
        match s.recv(true) {
            Ok(d) => {
                messages += 1;
                let m = parse_taskstats_message(&d).map_err(|_| "an exit message does not parse")?;
                for r in &m.records {
                    let ts = Taskstats::from_bytes(r.stats).ok_or("STATS too short")?;
                    out.push((r.kind, r.id, ts, r.msa_values().collect()));
                }
            }
            Err(ENOBUFS) => *enobufs += 1,
            Err(EAGAIN) => return Ok(messages),
            Err(_) => return Err("recv failed"),
        }
    }
}

pub fn records() -> Result<(), &'static str> {
    let (s, fam) = open()?;
    register(&s, fam)?;
    let clock = crate::base::time::clock();

    // threads 4: four per-pid records (main + 3), one per-tgid record equal to their sum.
    let pid = proc::spawn_program("/bin/threads", &[b"threads", b"4", b"20"]).map_err(|_| "cannot spawn threads")?;
    proc::wait(Some(pid)).map_err(|_| "wait failed")?;
    let (mut recs, mut enobufs) = (Vec::new(), 0);
    drain(&s, &mut recs, &mut enobufs)?;
    let pids: Vec<&Taskstats> =
        recs.iter().filter(|r| r.0 == AggrKind::Pid && r.2.ac_tgid == pid as u32).map(|r| &r.2).collect();
    let group: Vec<&Taskstats> =
        recs.iter().filter(|r| r.0 == AggrKind::Tgid && r.1 == pid as u32).map(|r| &r.2).collect();
    println!("  threads 4: {} per-pid records, {} per-tgid record(s)", pids.len(), group.len());
    if pids.len() != 4 || group.len() != 1 {
        return Err("threads 4 did not leave 4 per-pid records and 1 per-tgid record");
    }
    let g = group[0];
    let sum = |f: fn(&Taskstats) -> u64| pids.iter().map(|t| f(t)).sum::<u64>();
    let exact: [(&str, fn(&Taskstats) -> u64); 7] = [
        ("nvcsw", |t| t.nvcsw),
        ("nivcsw", |t| t.nivcsw),
        ("ac_minflt", |t| t.ac_minflt),
        ("write_char", |t| t.write_char),
        ("write_syscalls", |t| t.write_syscalls),
        ("cpu_count", |t| t.cpu_count),
        ("irq_count", |t| t.irq_count),
    ];
    for (name, f) in exact {
        if sum(f) != f(g) {
            println!("  {name}: threads sum {} != group {}", sum(f), f(g));
            return Err("a per-tgid counter is not the sum of the per-pid ones");
        }
    }
    // Times are converted per record: floor(a + b + c + d) exceeds the sum of the four floors
    // by at most 3 units.
    let close: [(&str, fn(&Taskstats) -> u64); 4] = [
        ("ac_utime", |t| t.ac_utime),
        ("ac_stime", |t| t.ac_stime),
        ("cpu_delay_total", |t| t.cpu_delay_total),
        ("cpu_run_real_total", |t| t.cpu_run_real_total),
    ];
    for (name, f) in close {
        if f(g).abs_diff(sum(f)) >= pids.len() as u64 {
            println!("  {name}: threads sum {} vs group {}", sum(f), f(g));
            return Err("a per-tgid time is not the sum of the per-pid ones");
        }
    }
    if g.ac_flag & AGROUP == 0 || pids.iter().any(|t| t.ac_flag & AGROUP != 0) {
        return Err("AGROUP is not set on exactly the group record");
    }

    // spin: utime >> stime; cpu_delay_total == the run-queue microstates, to the ns.
    let pid = proc::spawn_program("/bin/spin", &[b"spin", b"200"]).map_err(|_| "cannot spawn spin")?;
    proc::wait(Some(pid)).map_err(|_| "wait failed")?;
    recs.clear();
    drain(&s, &mut recs, &mut enobufs)?;
    let rec = recs.iter().find(|r| r.0 == AggrKind::Pid && r.1 == pid as u32).ok_or("no exit record for spin")?;
    let log = proc::recent_exits(pid).into_iter().find(|r| r.pid == pid).ok_or("spin not in the exit log")?;
    let q = log.totals.msa[MicroState::OnActiveQueue as usize] + log.totals.msa[MicroState::OnExpiredQueue as usize];
    let t = &rec.2;
    println!(
        "  spin: utime {} us, stime {} us, cpu_count {}, cpu_delay_total {} ns (run-queue microstates {} ns), max {} \
            min {}",
        t.ac_utime,
        t.ac_stime,
        t.cpu_count,
        t.cpu_delay_total,
        clock.ticks_to_ns(q),
        t.cpu_delay_max,
        t.cpu_delay_min
    );
    if t.cpu_delay_total != clock.ticks_to_ns(q) {
        return Err("cpu_delay_total differs from ONACTIVEQUEUE+ONEXPIREDQUEUE");
    }
    if t.ac_utime < 10 * t.ac_stime.max(1) {
        return Err("spin's utime is not far above its stime");
    }
    if rec.3.len() != tally_microstate::NR_MICROSTATES {
        return Err("the MSA attribute is missing or short");
    }

    // GET by pid and by tgid of a live process.
    let pid = proc::spawn_program("/bin/sleeper", &[b"sleeper", b"300"]).map_err(|_| "cannot spawn sleeper")?;
    sched::sleep_ns(20_000_000);
    for (cmd, kind) in [(Command::Pid(pid as u32), AggrKind::Pid), (Command::Tgid(pid as u32), AggrKind::Tgid)] {
        crate::acct::send(&s, &request(fam, 9, 0, cmd).map_err(|_| "cannot build GET")?)
            .map_err(|_| "GET send failed")?;
        let reply = s.recv(true).map_err(|_| "no GET reply")?;
        let m = parse_taskstats_message(&reply).map_err(|_| "GET reply does not parse")?;
        let r = m.records.iter().find(|r| r.kind == kind).ok_or("GET reply lacks the record")?;
        let ts = Taskstats::from_bytes(r.stats).ok_or("short STATS")?;
        if ts.ac_pid != pid as u32 || ts.version != 17 || ts.ac_comm[..7] != *b"sleeper" {
            return Err("GET reply describes the wrong task");
        }
    }
    proc::wait(Some(pid)).map_err(|_| "wait failed")?;
    drop(s);
    if crate::bus::exit_listeners() {
        return Err("closing the socket did not remove its listener registration");
    }
    Ok(())
}

fn short_lived(_: u64) {}

/// Spawn `n` kernel tasks that end at once, reading the listener every `read_every`
/// spawns. Returns (messages received, ENOBUFS reports).
fn storm(s: &Socket, n: u32, read_every: u32) -> Result<(u64, u64), &'static str> {
    let (mut recs, mut enobufs) = (Vec::new(), 0);
    let mut received = 0;
    let mut pending = BTreeMap::new();
    for i in 0..n {
        let pid = proc::spawn("storm", SchedParams::Normal(0), short_lived, 0).map_err(|_| "spawn failed")?;
        pending.insert(pid, ());
        if pending.len() >= 32 {
            for (p, ()) in core::mem::take(&mut pending) {
                proc::wait(Some(p)).map_err(|_| "wait failed")?;
            }
        }
        if (i + 1) % read_every == 0 {
            received += drain(s, &mut recs, &mut enobufs)?;
            recs.clear();
        }
    }
    for (p, ()) in pending {
        proc::wait(Some(p)).map_err(|_| "wait failed")?;
    }
    received += drain(s, &mut recs, &mut enobufs)?;
    Ok((received, enobufs))
}

pub fn exit_storm() -> Result<(), &'static str> {
    const N: u32 = 10_000;
    // Baseline after a small storm of the same shape: the exit log (the last 256 exits) is
    // full and the task tables have grown to 32 tasks at once, so what stays afterwards is
    // bounded state, not the storm's.
    {
        let (s, fam) = open()?;
        register(&s, fam)?;
        storm(&s, 300, 100)?;
    }
    sched::sleep_ns(10_000_000);
    let before = crate::base::memory::stats();
    for (label, rcvbuf, read_every) in
        [("default buffer", None, 1_000), ("buffer sized for the load", Some(1u32 << 20), 500)]
    {
        let (s, fam) = open()?;
        if let Some(b) = rcvbuf {
            s.set_rcvbuf(b).map_err(|_| "SO_RCVBUF failed")?;
        }
        register(&s, fam)?;
        let (received, enobufs) = storm(&s, N, read_every)?;
        let st = crate::bus::socket_stats(&s).ok_or("no socket stats")?;
        println!(
            "  {label} ({} bytes): {N} exits: produced {} delivered {} dropped {} received {received} (socket: {}) \
                ENOBUFS {enobufs} (socket: {})",
            s.rcvbuf().unwrap_or(0),
            st.produced,
            st.delivered,
            st.dropped,
            st.received,
            st.enobufs_reported
        );
        // Each exit is one message (a kernel task is its process's only thread: AGGR_PID and
        // AGGR_TGID in one); the GETFAMILY reply is the one more produced and received.
        if st.produced != u64::from(N) + 1 || st.produced != st.delivered + st.dropped || received != st.delivered - 1 {
            return Err("produced != delivered + dropped, or records went missing");
        }
        if (st.dropped > 0) != (enobufs > 0) {
            return Err("drops were not reported as ENOBUFS (or ENOBUFS without drops)");
        }
        if rcvbuf.is_none() && st.dropped == 0 {
            return Err("the default buffer never overflowed: the test does not test flow control");
        }
        if rcvbuf.is_some() && st.dropped != 0 {
            return Err("drops with a buffer sized for the load");
        }
    }
    super::ring3::settle(); // the last stacks are freed after a switch
    let after = crate::base::memory::stats();
    println!(
        "  heap {} -> {} bytes, frames {} -> {}",
        before.heap_bytes, after.heap_bytes, before.frames_in_use, after.frames_in_use
    );
    if after.frames_in_use != before.frames_in_use || after.heap_bytes > before.heap_bytes + 16 * 1024 {
        return Err("memory did not return to its baseline");
    }
    Ok(())
}
