//! Self-test `kstat`: the kernel's kstat registry (`stats/`) read the way a user-space
//! `kstat -p` will read it, through `stats::read_chain` and `stats::read` (the ABI bytes a
//! system call will copy out), decoded with `tally_uapi::kstat`.
//!
//! Checked, in order:
//! 1. the chain (KID 0) lists every kstat once, KIDs strictly increasing, KID 0 first, and
//!    the KCID is above every KID;
//! 2. the KCID changes when kstats appear: a spurious IRQ 7 (a line that never fired)
//!    brings `pic:7:irq7` and `unix:7:irq_timer` into the chain; a test kstat created and
//!    deleted moves the KCID once each, its KID is never reused, and reading it after the
//!    delete is `ENOENT`;
//! 3. the disk's io kstat `ata:1:ata1` rises by exactly the requests made here through
//!    `drivers::ata` (2 reads, 1536 bytes; 1 write, 512 bytes) and equals the driver's own
//!    numbers;
//! 4. the run queue's `unix:0:runq` integrates: after two CPU-bound threads ran for 100 ms
//!    its `wlentime` (tasks waiting × time) and `rtime` (CPU busy time) have grown;
//! 5. every kstat reads with a fresh snaptime (between the times taken just before and
//!    just after the read) and a crtime not after it; then all of them are printed in
//!    illumos `kstat -p` form;
//! 6. (with 1) the clock line's kstats carry the time its handler was registered as their
//!    crtime, before the run queue's kstat was made, not the time of their first read.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use tally_kstat::KstatError;
use tally_uapi::errno;
use tally_uapi::kstat::{
    records, KidT, KstatHeader, KstatIntr, KstatIo, KstatRecord, KstatTimer, KstatValue, KSTAT_DATA_UINT64,
    KSTAT_HEADERS_KID, KSTAT_TYPE_INTR, KSTAT_TYPE_IO, KSTAT_TYPE_TIMER,
};

use crate::drivers::ata;
use crate::proc;
use crate::sched;
use crate::sched::SchedParams;
use crate::stats::{self, kstat_print as print};

fn headers() -> Result<(KidT, Vec<KstatHeader>), &'static str> {
    // As libkstat does: try, learn the size needed from the refusal (ENOMEM), retry. The
    // first try, with an empty buffer, is always refused.
    let mut buf = Vec::new();
    for _ in 0..4 {
        match stats::read_chain(&mut buf) {
            Ok(got) => return Ok((got.chain_id, records::<KstatHeader>(&buf[..got.len]).collect())),
            Err(e @ KstatError::BufferTooSmall { needed }) if needed > buf.len() && e.errno() == errno::ENOMEM => {
                buf.resize(needed, 0)
            }
            Err(_) => return Err("reading the chain (KID 0) failed"),
        }
    }
    Err("the chain kept growing while it was read")
}

fn find<'a>(hs: &'a [KstatHeader], m: &str, i: i32, n: &str) -> Option<&'a KstatHeader> {
    hs.iter().find(|h| h.module() == m && h.ks_instance == i && h.name() == n)
}

/// Read `kid`, checking the snapshot time is that of this read. Returns header and data.
fn read_fresh(kid: KidT) -> Result<(KstatHeader, Vec<u8>), &'static str> {
    let before = stats::now();
    let (got, data) = stats::read_vec(kid).map_err(|_| "a kstat in the chain could not be read")?;
    let after = stats::now();
    let h = got.header;
    if h.ks_snaptime < before || h.ks_snaptime > after {
        return Err("a read's snaptime is not the time of the read");
    }
    if h.ks_crtime > h.ks_snaptime {
        return Err("a kstat's crtime is after its snaptime");
    }
    if h.ks_kid != kid || data.len() as u64 != h.ks_data_size || stats::data_size(kid) != Ok(data.len()) {
        return Err("a read returned another kstat's header or a short data section");
    }
    Ok((h, data))
}

fn io(m: &str, i: i32, n: &str) -> Result<KstatIo, &'static str> {
    let kid = stats::lookup(m, i, n).ok_or("an io kstat is missing")?;
    let (_, data) = read_fresh(kid)?;
    KstatIo::decode(&data).ok_or("an io kstat's data does not decode")
}

pub fn chain() -> Result<(), &'static str> {
    // 1. The chain.
    let (kcid, hs) = headers()?;
    let kids: Vec<KidT> = hs.iter().map(|h| h.ks_kid).collect();
    if kids.first() != Some(&KSTAT_HEADERS_KID) || hs[0].name() != "kstat_headers" {
        return Err("KID 0 is not unix:0:kstat_headers");
    }
    if !kids.windows(2).all(|w| w[0] < w[1]) || kids.iter().any(|&k| k >= kcid) {
        return Err("KIDs are not unique and strictly increasing below the KCID");
    }
    println!("kstat: chain id {kcid}, {} kstats, KIDs {:?}: unique, strictly increasing", hs.len(), kids);
    for (m, i, n) in [
        ("unix", 0, "kstat_types"),
        ("unix", 0, "runq"),
        ("unix", 0, "system_misc"),
        ("pic", 0, "clock"),
        ("unix", 0, "irq_timer"),
        ("ata", 1, "ata1"),
    ] {
        if find(&hs, m, i, n).is_none() {
            println!("kstat: {m}:{i}:{n} missing from the chain");
            return Err("an expected kstat is missing from the chain");
        }
    }
    // A line's kstats are dated from when the line came into use — the clock's handler was
    // registered in `irq::init`, before `stats::init` made the run queue's kstat — not from
    // the first read, which comes long after.
    let crtime = |m, i, n| find(&hs, m, i, n).map(|h| h.ks_crtime);
    let runq_born = crtime("unix", 0, "runq");
    if crtime("pic", 0, "clock") > runq_born || crtime("unix", 0, "irq_timer") > runq_born {
        return Err("the clock line's kstats are dated from a read, not from the line's registration");
    }

    // 2a. A line that never fired fires: its kstats appear, the KCID moves.
    let line = if stats::lookup("pic", 7, "irq7").is_none() { 7 } else { 15 };
    let name = if line == 7 { "irq7" } else { "ide1" };
    if stats::lookup("pic", line, name).is_some() {
        return Err("IRQ 7 and 15 have both fired already: no new line to watch");
    }
    hal::idt::raise_irq_vector(line as u8);
    let (kcid2, hs2) = headers()?;
    let intr = find(&hs2, "pic", line, name).ok_or("no interrupt kstat for the line that just fired")?;
    let timer = find(&hs2, "unix", line, "irq_timer").ok_or("no timer kstat for the line that just fired")?;
    if kcid2 == kcid || intr.ks_kid < kcid || timer.ks_kid < kcid {
        return Err("the chain id did not change when a new IRQ line's kstats appeared");
    }
    let (_, data) = read_fresh(intr.ks_kid)?;
    let counts = KstatIntr::decode(&data).ok_or("an intr kstat's data does not decode")?;
    let (_, data) = read_fresh(timer.ks_kid)?;
    let t = KstatTimer::decode(&data).ok_or("a timer kstat's data does not decode")?;
    println!(
        "kstat: a new IRQ line appeared: chain id {kcid} -> {kcid2}, pic:{line}:{name} (KID {}) spurious {}, \
            unix:{line}:irq_timer (KID {}) {} events",
        intr.ks_kid, counts.intrs[3], timer.ks_kid, t.num_events
    );
    if counts.intrs[3] != 1 || (tally_microstate::ACCOUNTING_ENABLED && t.num_events != 1) {
        return Err("the new line's kstats do not show its one spurious interrupt");
    }

    // 2b. A provider's kstat: create, read, delete.
    let before = stats::chain_id();
    let kid = stats::create_named("tally", 0, "selftest", "misc", &[("answer", KSTAT_DATA_UINT64)])
        .map_err(|_| "create failed")?;
    stats::set_named(kid, "answer", KstatValue::Uint64(42)).map_err(|_| "set failed")?;
    let created = stats::chain_id();
    let (_, data) = read_fresh(kid)?;
    let answer = records::<tally_uapi::kstat::KstatNamed>(&data).next().and_then(|n| n.value());
    stats::delete(kid).map_err(|_| "delete failed")?;
    let deleted = stats::chain_id();
    let gone = stats::read(kid, &mut [0u8; 64]);
    let again = stats::create_named("tally", 0, "selftest", "misc", &[("answer", KSTAT_DATA_UINT64)])
        .map_err(|_| "re-create failed")?;
    let _ = stats::delete(again);
    println!(
        "kstat: created tally:0:selftest as KID {kid} (chain id {before} -> {created}), answer {}; deleted (chain id \
            -> {deleted}); read after delete -> errno {}; re-created as KID {again}",
        answer.map_or(String::from("?"), |v| alloc::format!("{v}")),
        gone.map_or_else(|e| e.errno(), |_| 0)
    );
    if kid != before || created != before + 1 || deleted != created + 1 || answer != Some(KstatValue::Uint64(42)) {
        return Err("create/delete did not move the chain id by one each");
    }
    if gone != Err(KstatError::NoSuchKstat) || again <= kid {
        return Err("a deleted kstat is still readable, or its KID was reused");
    }
    if stats::delete(KSTAT_HEADERS_KID).is_ok() || stats::delete(intr.ks_kid).is_ok() {
        return Err("the chain or a kernel kstat could be deleted");
    }

    // 3. The disk.
    disk()?;

    // 4. The run queue.
    runq()?;

    // 5. Every kstat, fresh, printed as `kstat -p` prints it.
    let (_, hs) = headers()?;
    let mut all = Vec::new();
    for h in &hs {
        let (h, data) = read_fresh(h.ks_kid)?;
        all.push((h, data));
    }
    println!("kstat: all {} kstats read, each with a fresh snaptime", all.len());
    all.retain(|(h, _)| print::listed(h));
    all.sort_by_cached_key(|(h, _)| print::sort_key(h));
    let mut n = 0;
    for (h, data) in &all {
        for (stat, value) in print::statistics(h, data) {
            println!("{}", print::line(h, &stat, &value));
            n += 1;
        }
    }
    println!("kstat: kstat -p printed {n} statistics of {} kstats", all.len());
    if all.iter().any(|(h, d)| h.ks_type == KSTAT_TYPE_TIMER && KstatTimer::decode(d).is_none())
        || all.iter().any(|(h, d)| matches!(h.ks_type, KSTAT_TYPE_IO | KSTAT_TYPE_INTR) && d.is_empty())
    {
        return Err("a kstat's data section is empty");
    }
    Ok(())
}

/// Requests through the driver; the io kstat must rise by exactly them.
fn disk() -> Result<(), &'static str> {
    let d = ata::disk(ata::DATA_DISK).ok_or("no data disk (ata1)")?;
    let before = io("ata", ata::DATA_DISK as i32, d.name())?;
    let mut two = vec![0u8; 1024];
    let mut one = vec![0u8; 512];
    d.read(10, &mut two).map_err(|_| "reading sectors 10-11 failed")?;
    d.read(4000, &mut one).map_err(|_| "reading sector 4000 failed")?;
    d.write(4000, &one).map_err(|_| "writing sector 4000 back failed")?;
    let after = io("ata", ata::DATA_DISK as i32, d.name())?;
    let driver = d.stats();
    let delta = (
        after.reads.wrapping_sub(before.reads),
        after.nread.wrapping_sub(before.nread),
        after.writes.wrapping_sub(before.writes),
        after.nwritten.wrapping_sub(before.nwritten),
    );
    println!(
        "kstat: disk {}: 2 reads (1536 bytes) and 1 write (512 bytes) through the driver; io kstat delta: reads {} \
            nread {} writes {} nwritten {}; wcnt {} rcnt {}; rtime {} s",
        d.name(),
        delta.0,
        delta.1,
        delta.2,
        delta.3,
        after.wcnt,
        after.rcnt,
        print::hrtime(after.rtime)
    );
    if delta != (2, 1536, 1, 512) || after.wcnt != 0 || after.rcnt != 0 || after.rtime <= before.rtime {
        return Err("the disk's io kstat does not match the requests made");
    }
    // With both queues empty, the kstat and the driver agree on everything but the
    // lastupdate times (each snapshot moves those to its own time).
    let same = |a: &KstatIo| {
        (a.nread, a.nwritten, a.reads, a.writes, a.wtime, a.wlentime, a.rtime, a.rlentime, a.wcnt, a.rcnt)
    };
    if same(&after) != same(&driver) {
        return Err("the disk's io kstat differs from the driver's statistics");
    }
    println!("kstat: disk {}: the io kstat equals the driver's statistics", d.name());
    Ok(())
}

static STOP: AtomicBool = AtomicBool::new(false);

fn burner(_: u64) {
    while !STOP.load(Ordering::Relaxed) {
        core::hint::spin_loop();
    }
}

/// Two CPU-bound threads for 100 ms: one runs while the other waits, so the run queue's
/// kstat (fed by the scheduler at every runqueue change) integrates a queue of about one
/// waiting task and a busy CPU. Checked: both integrals grew, and neither exceeds what is
/// possible (at most two waiting, busy at most all of the time).
fn runq() -> Result<(), &'static str> {
    let read_before = stats::now();
    let before = io("unix", 0, "runq")?;
    STOP.store(false, Ordering::Relaxed);
    let mut pids = [0; 2];
    for pid in &mut pids {
        *pid = proc::spawn("kstat-burner", SchedParams::Normal(0), burner, 0).map_err(|_| "spawn failed")?;
    }
    sched::sleep_ns(100_000_000);
    STOP.store(true, Ordering::Relaxed);
    for pid in pids {
        proc::wait(Some(pid)).map_err(|_| "wait failed")?;
    }
    let after = io("unix", 0, "runq")?;
    let between_reads = stats::now() - read_before;
    let dt = between_reads.max(1);
    let (dw, dr) = (after.wlentime.wrapping_sub(before.wlentime), after.rtime.wrapping_sub(before.rtime));
    println!(
        "kstat: runq: 2 CPU-bound threads for 100 ms: wlentime +{} (mean run-queue length {}.{:02} between the two \
            reads), rtime +{} s (busy {}%)",
        print::hrtime(dw),
        dw / dt,
        dw % dt * 100 / dt,
        print::hrtime(dr),
        dr * 100 / dt,
    );
    if dw <= 0 || dr <= 0 {
        return Err("the run queue's kstat saw no waiting or no busy time");
    }
    // Busy time cannot exceed elapsed time; at most three tasks (init and the two burners)
    // can wait at once.
    if dr > between_reads || dw > 3 * between_reads {
        return Err("the run queue's kstat integrated more than is possible");
    }
    Ok(())
}
