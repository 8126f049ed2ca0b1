//! What process accounting and CSA cost the kernel: an exit with each of them on, and how
//! fast records reach the disk. Needs the accounting disk (`/var`); without it the rows are
//! skipped with a message.
//!
//! * `acct_exit`, one user process (`/test/exiter`, which exits at once and prints nothing)
//!   spawned, run, exited and reaped, timed cycle by cycle: param 0 — no accounting (the exit
//!   path asks two atomics); 1 — process accounting on (`acct(2)`: the process's taskstats
//!   record is built, turned into a v3 record and posted to the file's queue); 2 — CSA on,
//!   the process in a job (its base, memory, I/O and delay records to the system file); 3 —
//!   both. The differences to row 0 are what each accounting costs an exit. The disk writes
//!   themselves happen in `fsd`, which runs while this thread waits for the child: their
//!   cost is inside the cycle's wall time too, as it would be on a busy machine.
//! * `acct_records_per_s`, param = records per batch: 64-byte records posted to a record file
//!   and waited for until they are on the disk (`close_and_wait`), per record: 10^9 /
//!   ns_per_op is the records written per second, through fsd, FAT and the IDE driver.

use tally_uapi::csa::{
    ActCtl, ActStat, ACCT_KERN_CSA, ACCT_RCD_DELAY, ACCT_RCD_IO, ACCT_RCD_MEM, ACS_ON, AC_HALT, AC_START,
};
use tally_uapi::fs::{O_CREAT, O_RDWR, O_TRUNC};

use super::Harness;
use crate::fs::{self, Done, Op, RecordFile};
use crate::{acct, proc};

const CYCLES: u64 = 200;

/// Create (or empty) `p` on `/var`.
fn create(p: &[u8]) -> bool {
    let Ok(path) = tally_uapi::fs::path::parse(p) else { return false };
    match fs::call(Op::Open { path, flags: O_CREAT | O_RDWR | O_TRUNC }) {
        Ok(Done::Opened { node, .. }) => fs::call(Op::Close { node }).is_ok(),
        _ => false,
    }
}

/// Ticks of `CYCLES` spawn → exit → reap cycles of `/test/exiter`.
fn exit_cycles() -> Option<u64> {
    let mut ticks = 0u64;
    for _ in 0..CYCLES {
        let t0 = hal::tsc::read();
        let pid = proc::spawn_program("/test/exiter", &[b"exiter"]).ok()?;
        proc::wait(Some(pid)).ok()?;
        ticks += hal::tsc::read() - t0;
    }
    Some(ticks)
}

fn row(h: &mut Harness, param: u64) {
    let _ = exit_cycles(); // warm-up
    match exit_cycles() {
        Some(t) => h.report("acct_exit", param, CYCLES, t),
        None => println!("bench: acct_exit: spawn or wait failed"),
    }
}

/// `csa_ctl` from the kernel, as root.
fn csa_ctl(request: u32, entries: &[u32], path: &[u8]) -> Result<(), i32> {
    let mut c = ActCtl { ac_sttnum: entries.len() as i32, ..ActCtl::default() };
    for (s, &ind) in c.ac_stat.iter_mut().zip(entries) {
        *s = ActStat { ac_ind: ind, ac_state: ACS_ON, ac_param: 0 };
    }
    c.set_path(path);
    let caller = tally_csa::control::Caller { pid: proc::current_pid() as u32, privileged: true };
    acct::csa::control(request, &caller, &mut tally_csa::control::CtlArg::Ctl(c))
}

fn no_error(_: u64, _: i32) {}

pub fn acct_records(h: &mut Harness) {
    const PACCT: &[u8] = b"/var/TMP/BPACCT";
    const CSA: &[u8] = b"/var/TMP/BCSA";
    const RECS: &[u8] = b"/var/TMP/BRECS";
    if !fs::present() || !create(PACCT) || !create(CSA) || !create(RECS) {
        println!("bench: acct: no accounting disk, or its files cannot be made: skipped");
        return;
    }
    row(h, 0);
    if acct::pacct::set_file(Some(PACCT)).is_err() {
        println!("bench: acct_exit: acct cannot open its file");
        return;
    }
    row(h, 1);
    let _ = acct::pacct::set_file(None);
    let kinds = [ACCT_KERN_CSA, ACCT_RCD_MEM, ACCT_RCD_IO, ACCT_RCD_DELAY];
    if csa_ctl(AC_START, &kinds, CSA).is_err() || acct::csa::job_create(u32::MAX).is_err() {
        println!("bench: acct_exit: CSA cannot start");
        return;
    }
    row(h, 2);
    let _ = acct::pacct::set_file(Some(PACCT));
    row(h, 3);
    let _ = acct::pacct::set_file(None);
    let _ = csa_ctl(AC_HALT, &[], b"");
    let (p, c) = (acct::pacct::counters(), acct::csa::counters());
    println!(
        "bench: acct_exit: acct records {} dropped {}; CSA system file records {} refused {}",
        p.records, p.dropped, c.system.records, c.post_failures
    );

    // Records to the disk: batches that fit the file's queue (32 KiB).
    const BATCH: u64 = 256;
    const BATCHES: u64 = 8;
    let record = [0x5au8; 64];
    let mut ticks = 0u64;
    for _ in 0..BATCHES {
        let Ok(f) = RecordFile::open(RECS, no_error) else {
            println!("bench: acct_records_per_s: cannot open the file");
            return;
        };
        let t0 = hal::tsc::read();
        for _ in 0..BATCH {
            let _ = f.post(&record);
        }
        f.close_and_wait();
        ticks += hal::tsc::read() - t0;
    }
    h.report("acct_records_per_s", BATCH, BATCH * BATCHES, ticks);
}
