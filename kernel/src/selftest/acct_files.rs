//! Process accounting and SGI CSA end to end: ring-3 fixtures make the calls (`acct`,
//! `job_create`, `job_getjid`, `csa_ctl`) and their children; the kernel then reads the
//! files back from `/var` and judges them with the same parsers the tools use
//! (`tally_pacct::file`, `tally_csa::parse`).
//!
//! * [`pacct`] (`tests/acct_abi.toml`): `/test/acct_abi` — every error of `acct`, then three
//!   children; the file holds exactly their three records, in exit order, with the right
//!   status, flags, terminal and names; uid 1000 is refused.
//! * [`csa`] (`tests/csa_abi.toml`): `/test/csa_abi` — the calls' errors; a job of four
//!   processes (one of four threads) with a ja file and a time threshold; the system file
//!   holds BOOT, ON, ON, a daemon's record (`AC_WRACCT`), the SOJ, the records above the
//!   threshold, the EOJ and OFF, in that order; the ja file every record of the job and its EOJ, whose times are the sums of
//!   the job's base records.
//! * [`disk_full`] (`tests/acct_disk_full.toml`), driven from the kernel (pid 1 makes the
//!   calls): the disk fills up under both accountings, and meets their files one at a time
//!   (process accounting's first, then, once the kernel thread is in a job, CSA's system
//!   file), so the console's order is fixed. Process accounting turns itself off with a
//!   warning and counts what it lost; CSA's system file goes ERROFF with a warning and is
//!   closed, its kstat showing more bytes handed to it than it holds; both files stay whole.
//!   Once there is room again, a ja file works while the system file stays ERROFF, until a
//!   new AC_START.
//! * [`csa_queue_full`] (`tests/csa_queue_full.toml`), driven from the kernel: a burst of
//!   daemon records overflows the system file's queue; the refused ones are counted and the
//!   file stays on (a full queue is not a write error).

use alloc::vec::Vec;
use tally_csa::parse::Record;
use tally_uapi::acct::{ACORE, AFORK, AXSIG, TTY_S0};
use tally_uapi::csa::{AC_CONFCHG_BOOT, AC_CONFCHG_OFF, AC_CONFCHG_ON, JOB_HOST_ID};
use tally_uapi::fs::{O_CREAT, O_RDWR, O_TRUNC};

use super::ring3::{expect_exit, run_fixture};
use crate::acct;
use crate::fs::{self, Done, Op};
use crate::sched;

fn path(p: &[u8]) -> Result<tally_uapi::fs::path::VarPath, &'static str> {
    tally_uapi::fs::path::parse(p).map_err(|_| "bad path")
}

/// Create (or empty) `p` on `/var`.
pub(super) fn create(p: &[u8]) -> Result<(), &'static str> {
    if !fs::present() {
        return Err("no accounting disk (attach a FAT16 image at index=2)");
    }
    let node = match fs::call(Op::Open { path: path(p)?, flags: O_CREAT | O_RDWR | O_TRUNC }) {
        Ok(Done::Opened { node, .. }) => node,
        _ => return Err("cannot create an accounting file"),
    };
    fs::call(Op::Close { node }).map_err(|_| "close failed")?;
    Ok(())
}

/// The whole of `p`.
pub(super) fn read_all(p: &[u8]) -> Result<Vec<u8>, &'static str> {
    let node = match fs::call(Op::Open { path: path(p)?, flags: 0 }) {
        Ok(Done::Opened { node, .. }) => node,
        _ => return Err("cannot open an accounting file to read it"),
    };
    let mut got = Vec::new();
    loop {
        match fs::call(Op::Read { node, pos: got.len() as u64, len: 4096 }) {
            Ok(Done::Data(d)) if !d.is_empty() => got.extend_from_slice(&d),
            _ => break,
        }
    }
    fs::post(Op::Close { node });
    Ok(got)
}

pub(super) fn comm(c: &[u8]) -> &str {
    let n = c.iter().position(|&b| b == 0).unwrap_or(c.len());
    core::str::from_utf8(&c[..n]).unwrap_or("?")
}

/// `acct(2)`: errors from ring 3, then the records of three children.
pub fn pacct() -> Result<(), &'static str> {
    const FILE: &[u8] = b"/var/TMP/PACCT";
    create(FILE)?;
    let before = acct::process_acct::counters();
    let r = run_fixture("acct_abi", &[])?;
    println!("acct_abi: status {:#x}", r.status.raw());
    expect_exit(&r, 0)?;
    let bytes = read_all(FILE)?;
    println!("acct_abi: {} holds {} bytes", comm(FILE), bytes.len());
    if bytes.is_empty() || bytes.len() % 64 != 0 {
        return Err("the file is not a whole number of 64-byte records");
    }
    let mut recs = Vec::new();
    for r in tally_pacct::records(&bytes) {
        recs.push(r.map_err(|_| "a record is not a v3 record")?);
    }
    for a in &recs {
        println!(
            "acct_abi: pid {} ppid {} {:<8} status {:#06x} flags {:#04x} tty {:#06x} uid {}",
            a.ac_pid,
            a.ac_ppid,
            comm(&a.ac_comm),
            a.ac_exitcode,
            a.ac_flag,
            a.ac_tty,
            a.ac_uid
        );
    }
    // Only the fixture's children: nothing else runs while it does.
    let mine: Vec<_> = recs.iter().filter(|a| a.ac_ppid == r.pid as u32).collect();
    let want: [(&str, u32, u8); 3] = [("hello", 0, 0), ("crash", 4 | 0x80, AXSIG | ACORE), ("threads", 7 << 8, 0)];
    if mine.len() != 3 || recs.len() != 3 {
        return Err("not exactly one record per child (a process of four threads is one record)");
    }
    for (a, (name, status, flags)) in mine.iter().zip(want) {
        if comm(&a.ac_comm) != name || a.ac_exitcode != status || a.ac_flag != flags {
            return Err("a record's name, status or flags are wrong, or the records are out of exit order");
        }
        if a.ac_version != 3 || a.ac_tty != TTY_S0 || a.ac_uid != 0 || a.ac_flag & AFORK != 0 {
            return Err("a record's version, terminal, uid or AFORK is wrong");
        }
    }
    if recs.iter().any(|a| a.ac_pid == r.pid as u32) {
        return Err("the fixture's own record was written, though accounting was off at its exit");
    }
    let after = acct::process_acct::counters();
    println!(
        "acct_abi: kstat acct:0:pacct records +{} dropped +{} errors +{}, on {}",
        after.records - before.records,
        after.dropped - before.dropped,
        after.errors - before.errors,
        after.on
    );
    if after.records - before.records != 3 || after.dropped != before.dropped || after.on {
        return Err("the counters do not say 3 records, none dropped, accounting off");
    }
    println!("acct_abi: 3 records, whole, in exit order");
    Ok(())
}

/// Wait (up to 3 s) until no ja file is open: `csaclose` has closed the one the job's end
/// closed, so its size on the disk is final.
fn ja_files_closed() -> Result<(), &'static str> {
    for _ in 0..3000 {
        let c = acct::job_acct::counters();
        if c.ja_open == 0 && c.closing == 0 {
            return Ok(());
        }
        sched::sleep_ns(1_000_000);
    }
    Err("the ja file was not closed after its job ended")
}

/// A parsed file, every record whole.
fn csa_records(bytes: &[u8]) -> Result<Vec<Record<'_>>, &'static str> {
    let mut v = Vec::new();
    for r in tally_csa::records(bytes) {
        match r {
            Ok((_, rec)) => v.push(rec),
            Err(e) => {
                println!("  bad CSA record at offset {}: {:?}", e.offset, e.kind);
                return Err("an accounting file does not parse");
            }
        }
    }
    Ok(v)
}

fn show(file: &str, recs: &[Record<'_>]) {
    for r in recs {
        match r {
            Record::Process(p) => println!(
                "csa_abi: {file}: process {:<8} pid {} jid {:#x} uid {} utime {} us stime {} us{}{}{}",
                comm(&p.base.comm),
                p.base.pid,
                p.base.jid,
                p.base.uid,
                p.base.utime,
                p.base.stime,
                if p.mem.is_some() { " +mem" } else { "" },
                if p.io.is_some() { " +io" } else { "" },
                if p.delay.is_some() { " +delay" } else { "" },
            ),
            Record::Soj(s) => println!("csa_abi: {file}: SOJ jid {:#x} uid {}", s.jid, s.uid),
            Record::Eoj(e) => println!(
                "csa_abi: {file}: EOJ jid {:#x} uid {} utime {} us stime {} us corehimem {} KB",
                e.jid, e.uid, e.utime, e.stime, e.corehimem
            ),
            Record::Cfg(c) => {
                println!("csa_abi: {file}: CFG event {} kdmask {:#x} rmask {:#x}", c.event, c.kdmask, c.rmask)
            }
            Record::Other { header, .. } => println!("csa_abi: {file}: type {:#o}", header.ah_type),
        }
    }
}

/// SGI CSA: a job of four processes, its records in the system file (thresholds) and the ja
/// file (everything), and the end-of-job sums.
pub fn csa() -> Result<(), &'static str> {
    const SYSTEM: &[u8] = b"/var/TMP/CSA";
    const JA: &[u8] = b"/var/TMP/JA";
    create(SYSTEM)?;
    create(JA)?;
    let r = run_fixture("csa_abi", &[])?;
    println!("csa_abi: status {:#x}", r.status.raw());
    expect_exit(&r, 0)?;
    ja_files_closed()?;
    let (sys_bytes, ja_bytes) = (read_all(SYSTEM)?, read_all(JA)?);
    let (sys, ja) = (csa_records(&sys_bytes)?, csa_records(&ja_bytes)?);
    show("system", &sys);
    show("ja", &ja);
    // The job: its EOJ in the ja file names it.
    let Some(Record::Eoj(eoj)) = ja.last() else { return Err("the ja file does not end with the EOJ") };
    let leader = (eoj.jid & 0xffff_ffff) as u32;
    if eoj.jid >> 32 != JOB_HOST_ID as u64 || eoj.uid != 1000 {
        return Err("the EOJ's jid or owner is wrong");
    }
    let procs = |recs: &[Record<'_>]| -> Vec<tally_csa::ProcessRecord> {
        recs.iter()
            .filter_map(|r| match r {
                Record::Process(p) if p.base.jid == eoj.jid => Some(*p),
                _ => None,
            })
            .collect()
    };
    let (sys_procs, ja_procs) = (procs(&sys), procs(&ja));
    // The ja file: ON first, then every process of the job in full, the EOJ last.
    if !matches!(ja.first(), Some(Record::Cfg(c)) if c.event == AC_CONFCHG_ON) {
        return Err("the ja file does not start with an ON configuration record");
    }
    let names: Vec<&str> = ja_procs.iter().map(|p| comm(&p.base.comm)).collect();
    if names != ["spin", "hello", "threads", "csa_abi"] {
        return Err("the ja file does not hold the job's four processes in exit order");
    }
    if ja_procs.iter().any(|p| p.mem.is_none() || p.io.is_none() || p.delay.is_none() || p.base.uid != 1000) {
        return Err("a ja record lacks a continuation record, or has the wrong uid");
    }
    if ja_procs.last().map(|p| p.base.pid) != Some(leader) {
        return Err("the job's last process is not its creator");
    }
    let (ut, st) = ja_procs.iter().fold((0, 0), |(u, s), p| (u + p.base.utime, s + p.base.stime));
    let core = ja_procs.iter().filter_map(|p| p.mem.map(|m| m.core.himem)).max().unwrap_or(0);
    println!("csa_abi: ja: the job's processes sum to utime {ut} us, stime {st} us; largest core high-water {core} KB");
    if (eoj.utime, eoj.stime, eoj.corehimem) != (ut, st, core) {
        return Err("the EOJ's times are not the sums of the job's records (or its high-water not the largest)");
    }
    // The system file: BOOT, ON, SOJ, records above the 20 ms threshold, EOJ, OFF.
    let events: Vec<u8> =
        sys.iter().filter_map(|r| if let Record::Cfg(c) = r { Some(c.event) } else { None }).collect();
    if events != [AC_CONFCHG_BOOT, AC_CONFCHG_ON, AC_CONFCHG_ON, AC_CONFCHG_OFF]
        || !matches!(sys.last(), Some(Record::Cfg(_)))
    {
        return Err("the system file's configuration records are not BOOT, ON, ON (wkmg) ... OFF");
    }
    let at = |f: &dyn Fn(&Record<'_>) -> bool| sys.iter().position(f);
    let daemon = at(&|r| matches!(r, Record::Other { header, bytes } if header.ah_type == 0o40 && bytes.len() == 32));
    if daemon.is_none() {
        return Err("the daemon record (AC_WRACCT) is not in the system file");
    }
    let soj = at(&|r| matches!(r, Record::Soj(s) if s.jid == eoj.jid && s.uid == 1000)).ok_or("no SOJ")?;
    let end = at(&|r| matches!(r, Record::Eoj(e) if e.jid == eoj.jid)).ok_or("no EOJ in the system file")?;
    let first = at(&|r| matches!(r, Record::Process(p) if p.base.jid == eoj.jid)).ok_or("no process record")?;
    let last = sys.iter().rposition(|r| matches!(r, Record::Process(p) if p.base.jid == eoj.jid)).unwrap_or(0);
    if !(soj < first && last < end) {
        return Err("the system file's job records are not SOJ, processes, EOJ in that order");
    }
    if !sys_procs.iter().any(|p| comm(&p.base.comm) == "spin")
        || sys_procs.iter().any(|p| comm(&p.base.comm) == "hello")
    {
        return Err("the time threshold did not keep hello (and only what was below it) out of the system file");
    }
    if sys_procs.iter().any(|p| p.base.utime + p.base.stime < 20_000) {
        return Err("a record below the threshold is in the system file");
    }
    let c = acct::job_acct::counters();
    println!(
        "csa_abi: kstat csa:0:pacct records {} bytes {} dropped_threshold {} errors {}; csa:0:ja records {} errors {}",
        c.system.records, c.system.bytes, c.system.dropped_below_threshold, c.system.errors, c.ja.records, c.ja.errors
    );
    let below = ja_procs.len() - sys_procs.len();
    if c.system.dropped_below_threshold != below as u64 || c.system.errors != 0 || c.ja.errors != 0 {
        return Err("the kstat's dropped-below-threshold count is not what the files show");
    }
    if c.system.bytes != sys_bytes.len() as u64 || c.ja.bytes != ja_bytes.len() as u64 {
        return Err("the kstats' bytes are not the files' sizes");
    }
    println!(
        "csa_abi: job {:#x}: SOJ, {} of {} process records past the threshold, EOJ; ja: all {} and the EOJ; sums \
         right",
        eoj.jid,
        sys_procs.len(),
        ja_procs.len(),
        ja_procs.len()
    );
    Ok(())
}

/// Fill `/var` with a file until it is full (ENOSPC): 64 KiB writes, then 4 KiB, then 512 bytes.
fn fill_disk(p: &[u8]) -> Result<u64, &'static str> {
    let node = match fs::call(Op::Open { path: path(p)?, flags: O_CREAT | O_RDWR | O_TRUNC }) {
        Ok(Done::Opened { node, .. }) => node,
        _ => return Err("cannot create the filler"),
    };
    let mut total = 0u64;
    for chunk in [65536usize, 4096, 512] {
        loop {
            match fs::call(Op::Write { node, pos: None, data: alloc::vec![0x55; chunk] }) {
                Ok(Done::Wrote { n, .. }) if n > 0 => total += n,
                Err(tally_uapi::errno::ENOSPC) | Ok(_) => break,
                Err(_) => return Err("the filler's write failed with something other than ENOSPC"),
            }
        }
    }
    fs::call(Op::Close { node }).map_err(|_| "close failed")?;
    Ok(total)
}

/// Run `/bin/hello` as a child of the current task and wait for it.
fn hello() -> Result<(), &'static str> {
    let pid = crate::proc::spawn_program("/bin/hello", &[b"hello", b"full"]).map_err(|_| "cannot spawn hello")?;
    crate::proc::wait(Some(pid)).map_err(|_| "wait failed")?;
    Ok(())
}

/// `csa_ctl` from the kernel as root (the calling task is the caller).
fn ctl(request: u32, entries: &[(u32, i64)], path: &[u8]) -> Result<(), i32> {
    use tally_uapi::csa::{ActCtl, ActStat, ACS_ON};
    let mut c = ActCtl { ac_sttnum: entries.len() as i32, ..ActCtl::default() };
    for (s, &(ind, param)) in c.ac_stat.iter_mut().zip(entries) {
        *s = ActStat { ac_ind: ind, ac_state: ACS_ON, ac_param: param };
    }
    c.set_path(path);
    let mut arg = tally_csa::control::CtlArg::Ctl(c);
    let caller = tally_csa::control::Caller { pid: crate::proc::current_pid() as u32, privileged: true };
    acct::job_acct::control(request, &caller, &mut arg)
}

fn csa_state() -> u32 {
    use tally_uapi::csa::{ActStat, ACCT_KERN_CSA, AC_CHECK};
    let mut arg = tally_csa::control::CtlArg::Stat(ActStat { ac_ind: ACCT_KERN_CSA, ..ActStat::default() });
    let caller = tally_csa::control::Caller { pid: crate::proc::current_pid() as u32, privileged: true };
    match (acct::job_acct::control(AC_CHECK, &caller, &mut arg), arg) {
        (Ok(()), tally_csa::control::CtlArg::Stat(s)) => s.ac_state,
        _ => u32::MAX,
    }
}

/// A full disk under process accounting and CSA (see the module documentation).
pub fn disk_full() -> Result<(), &'static str> {
    use tally_uapi::csa::{
        ACCT_KERN_CSA, ACCT_RCD_DELAY, ACCT_RCD_IO, ACCT_RCD_MEM, ACS_ERROFF, ACS_ON, AC_HALT, AC_JASTART, AC_JASTOP,
        AC_START,
    };
    const PACCT: &[u8] = b"/var/TMP/PACCT";
    const SYSTEM: &[u8] = b"/var/TMP/CSA";
    const JA: &[u8] = b"/var/TMP/JA";
    const FILL: &[u8] = b"/var/TMP/FILL";
    for f in [PACCT, SYSTEM, JA] {
        create(f)?;
    }
    acct::process_acct::set_file(Some(PACCT)).map_err(|_| "acct could not open its file")?;
    let on = [(ACCT_KERN_CSA, 0), (ACCT_RCD_MEM, 0), (ACCT_RCD_IO, 0), (ACCT_RCD_DELAY, 0)];
    ctl(AC_START, &on, SYSTEM).map_err(|_| "AC_START failed")?;
    // A first record, so that the file has its first cluster: 7 more fit in it.
    hello()?;
    let filled = fill_disk(FILL)?;
    println!("disk_full: /var is full after {filled} more bytes");
    // The full disk meets one file at a time, process accounting's first, so that what the
    // console shows comes in one order (run together, either file could meet it first).
    // The kernel thread is in no job yet: its children's exits go to process accounting only.
    let before = acct::process_acct::counters();
    for _ in 0..16 {
        if !acct::process_acct::counters().on {
            break;
        }
        hello()?;
    }
    // The owner thread appends after the exits: wait for its verdict. Accounting says off
    // only after it has counted the losses and printed its warning.
    for _ in 0..3000 {
        if !acct::process_acct::counters().on {
            break;
        }
        sched::sleep_ns(1_000_000);
    }
    let after = acct::process_acct::counters();
    println!(
        "disk_full: acct on {}, records +{}, dropped +{}, errors +{}",
        after.on,
        after.records - before.records,
        after.dropped - before.dropped,
        after.errors - before.errors
    );
    // A record that did not fit is what failed: at least one is lost.
    if after.on || after.errors != before.errors + 1 || after.dropped == before.dropped {
        return Err("process accounting did not turn itself off, or counted nothing lost");
    }
    let pacct = read_all(PACCT)?;
    let whole = pacct.len() % 64 == 0 && tally_pacct::records(&pacct).all(|r| r.is_ok());
    println!(
        "disk_full: PACCT {} bytes, whole: {whole}; {} records posted to it, {} lost",
        pacct.len(),
        1 + after.records - before.records,
        after.dropped - before.dropped
    );
    if !whole || pacct.is_empty() {
        return Err("the process accounting file is not whole records");
    }
    if (pacct.len() / 64) as u64 + after.dropped - before.dropped != 1 + after.records - before.records {
        return Err("the records in the file and those counted lost are not the records posted");
    }
    // Now CSA. The system file has BOOT and ON (432 bytes) in its first 512-byte cluster:
    // the SOJ (40) still fits there, the first process chain (376) does not.
    acct::job_acct::job_create(u32::MAX).map_err(|_| "job_create failed")?;
    for _ in 0..4 {
        if csa_state() == ACS_ERROFF {
            break;
        }
        hello()?;
    }
    // ERROFF is set only after the warning is printed.
    for _ in 0..3000 {
        if csa_state() == ACS_ERROFF {
            break;
        }
        sched::sleep_ns(1_000_000);
    }
    let c = acct::job_acct::counters();
    println!(
        "disk_full: csa state {} (2 ON, 1 ERROFF), system file open {}, errors {}",
        csa_state(),
        c.system_open,
        c.system.errors
    );
    if csa_state() != ACS_ERROFF || c.system.errors != 1 {
        return Err("the system file's write error did not turn CSA ERROFF");
    }
    let sys = read_all(SYSTEM)?;
    let sys_recs = csa_records(&sys)?.len();
    // The kstat's bytes are what was handed to the file: more than it holds, by what was lost.
    println!(
        "disk_full: CSA {} bytes, {sys_recs} whole records; {} bytes handed to it, {} lost",
        sys.len(),
        c.system.bytes,
        c.system.bytes.saturating_sub(sys.len() as u64)
    );
    if c.system.bytes <= sys.len() as u64 {
        return Err("the system file's kstat does not show the records it lost");
    }
    // Room again: a ja file works; the system file stays closed and ERROFF.
    fs::call(Op::Unlink { path: path(FILL)? }).map_err(|_| "cannot remove the filler")?;
    ctl(AC_JASTART, &[], JA).map_err(|_| "AC_JASTART failed")?;
    hello()?;
    ctl(AC_JASTOP, &[], b"").map_err(|_| "AC_JASTOP failed")?;
    let ja = read_all(JA)?;
    let ja_recs = csa_records(&ja)?;
    show("ja", &ja_recs);
    let procs = ja_recs.iter().filter(|r| matches!(r, Record::Process(p) if comm(&p.base.comm) == "hello")).count();
    if procs != 1 || read_all(SYSTEM)?.len() != sys.len() || csa_state() != ACS_ERROFF {
        return Err("after the error, the ja file did not work on its own, or the system file changed");
    }
    let c = acct::job_acct::counters();
    println!(
        "disk_full: kstat csa:0:pacct errors {}, open {}; csa:0:ja records {}",
        c.system.errors, c.system_open, c.ja.records
    );
    ctl(AC_START, &on, SYSTEM).map_err(|_| "a new AC_START failed")?;
    if csa_state() != ACS_ON {
        return Err("a new AC_START did not bring CSA back ON");
    }
    ctl(AC_HALT, &[], b"").map_err(|_| "AC_HALT failed")?;
    println!("disk_full: off with a warning, files whole, ja on its own, ON again after AC_START");
    Ok(())
}

/// `csa_ctl(AC_WRACCT)` from the kernel as root: `n` workload-manager daemon records of
/// `size` bytes (type 040, CSA's header), their bodies `fill`, for the system file.
fn wracct(n: usize, size: usize, fill: u8) -> Result<(), i32> {
    use tally_uapi::csa::{ActWra, ACCT_DMD_WKMG, AC_WRACCT};
    let mut w = ActWra { ac_did: ACCT_DMD_WKMG as i32, ac_len: (n * size) as i32, ..ActWra::default() };
    for r in w.ac_buf[..n * size].chunks_mut(size) {
        r[..8].copy_from_slice(&[0x4a, 0x31, 0, 0, 0o40, 0, size as u8, (size >> 8) as u8]);
        r[8..].fill(fill);
    }
    let mut arg = tally_csa::control::CtlArg::Wra(w);
    let caller = tally_csa::control::Caller { pid: crate::proc::current_pid() as u32, privileged: true };
    acct::job_acct::control(AC_WRACCT, &caller, &mut arg)
}

/// The size of `p` on `/var` now.
fn size_of(p: &[u8]) -> Result<u64, &'static str> {
    match fs::call(Op::Stat { path: path(p)? }) {
        Ok(Done::Stat(s)) => Ok(s.st_size as u64),
        _ => Err("cannot stat an accounting file"),
    }
}

/// CSA's system file when its queue is full (`tests/csa_queue_full.toml`): a burst of daemon
/// records posted while fsd cannot run (interrupts off on the one CPU, as when many
/// processes exit before fsd is scheduled) overflows the file's 32 KiB queue. The records
/// refused are lost and counted (`refused` of `csa:0:pacct`); the file stays open and CSA
/// ON; once fsd has caught up, the next record reaches the file after every accepted one.
pub fn csa_queue_full() -> Result<(), &'static str> {
    use tally_uapi::csa::{ACCT_DMD_WKMG, ACCT_KERN_CSA, ACS_ON, AC_HALT, AC_START};
    const SYSTEM: &[u8] = b"/var/TMP/CSA";
    const CALLS: usize = 40; // two 512-byte records each: 80 records, 40 KiB
    create(SYSTEM)?;
    ctl(AC_START, &[(ACCT_KERN_CSA, 0), (ACCT_DMD_WKMG, 0)], SYSTEM).map_err(|_| "AC_START failed")?;
    let before = acct::job_acct::counters();
    let burst: Result<(), i32> = hal::cpu::without_interrupts(|| (0..CALLS).try_for_each(|_| wracct(2, 512, 0x5a)));
    burst.map_err(|_| "AC_WRACCT failed")?;
    let after = acct::job_acct::counters();
    let refused = after.post_failures - before.post_failures;
    let accepted = (2 * CALLS) as u64 - refused;
    println!(
        "queue_full: {} records posted while fsd could not run: {accepted} queued, {refused} refused; csa state {} \
         (2 ON), system file open {}, errors {}",
        2 * CALLS,
        csa_state(),
        after.system_open,
        after.system.errors
    );
    if refused == 0 || accepted == 0 {
        return Err("the burst did not overflow the queue (or nothing was queued)");
    }
    if csa_state() != ACS_ON || !after.system_open || after.system.errors != before.system.errors {
        return Err("a full queue switched the system file off (ERROFF) or counted a write error");
    }
    // BOOT and ON (432 bytes), then the accepted records: wait until fsd has written them.
    let want = 432 + 512 * accepted;
    let mut waited = 0;
    while size_of(SYSTEM)? < want && waited < 3000 {
        sched::sleep_ns(1_000_000);
        waited += 1;
    }
    let size = size_of(SYSTEM)?;
    println!("queue_full: the system file holds {size} bytes ({want} expected) after {waited} ms");
    if size != want {
        return Err("the system file does not hold BOOT, ON and exactly the accepted records");
    }
    // The file is still on: one more record goes in, after all the others.
    wracct(1, 64, 0xa5).map_err(|_| "AC_WRACCT failed")?;
    if acct::job_acct::counters().post_failures != after.post_failures {
        return Err("a record posted after fsd caught up was refused");
    }
    ctl(AC_HALT, &[], b"").map_err(|_| "AC_HALT failed")?;
    let bytes = read_all(SYSTEM)?;
    let recs = csa_records(&bytes)?;
    let daemon = |fill: u8, len: usize| move |r: &Record<'_>| matches!(r, Record::Other { header, bytes } if header.ah_type == 0o40 && bytes.len() == len && bytes[8..].iter().all(|&b| b == fill));
    let burst_recs = recs.iter().filter(|r| daemon(0x5a, 512)(r)).count() as u64;
    let last = recs.iter().rposition(|r| daemon(0x5a, 512)(r));
    let late = recs.iter().position(|r| daemon(0xa5, 64)(r));
    println!(
        "queue_full: after AC_HALT, {} records: {burst_recs} of the burst, the late one at {:?}, OFF last: {}",
        recs.len(),
        late,
        matches!(recs.last(), Some(Record::Cfg(c)) if c.event == tally_uapi::csa::AC_CONFCHG_OFF)
    );
    if burst_recs != accepted || !matches!((last, late), (Some(l), Some(p)) if p > l) {
        return Err("the file does not hold the accepted records, then the late one");
    }
    println!("queue_full: refused records counted, the file stayed on and took the next record");
    Ok(())
}
