//! `/test/csa_abi [job]` — SGI CSA's three calls from ring 3 (`job_create`, `job_getjid`,
//! `csa_ctl`): the fixture of the `csa_abi` self-test (`kernel/src/selftest/acct_files.rs`),
//! which has created `/var/TMP/CSA` and `/var/TMP/JA` before and reads them back afterwards
//! (`tally_uapi::fixture`).
//!
//! Without an argument (root, in no job): `job_getjid(0)` is ENODATA (1), of nobody ESRCH
//! (2); an unknown request is EINVAL (3); CSA is OFF (4); AC_START without a file is EINVAL
//! (5), with a missing file ENOENT (6), with a directory EISDIR (7); KDSTAT into nothing or
//! into read-only code is EFAULT (8, 9); AC_START switches csa, mem, io, delay and the time
//! threshold (20 ms) on with the system file (10: every entry written back ON), KDSTAT shows
//! the file (11), CHECK the threshold (12); AC_JASTART in no job is ENODATA (13); the wkmg
//! kind goes ON (23), a daemon record of 32 bytes is written (24), 31 of them are EINVAL
//! (25). Then it
//! runs `csa_abi job` (14, below), halts CSA (15: OFF after, 16), becomes uid 1000 (17) and
//! finds START, HALT, AUTH and `job_create` EPERM (18-21) while CHECK still answers (22).
//!
//! `job` (the job's first process, root): `job_create(1000)` makes jid `0x7A11 << 32 | pid`
//! (30), a second one is EBUSY (31), `job_getjid(0)` says so (32); as uid 1000 (33) it
//! starts a ja file for its job (34) and may not START (35); then three children, born into
//! the job: `/bin/spin 100` (36, its jid asked while it runs: 37), `/bin/hello` (38: far
//! below the threshold), `/test/threads exit_group` (39: four threads, one process). Its own
//! exit ends the job. Exit status: the number of the failed check, 0 if none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::fixture::{check, expect_err, expect_ok, positive, run_child};
use tally_rt::process::{exit_code, exited};
use tally_rt::sys;
use tally_rt::sys::probe::BadPtr;
use tally_rt::uapi::csa::*;
use tally_rt::uapi::errno::{EBUSY, EFAULT, EINVAL, EISDIR, ENODATA, ENOENT, EPERM, ESRCH};
use tally_rt::uapi::syscall::SYS_CSA_CTL;
use tally_rt::Errno;

tally_rt::entry!(main);

const SYSTEM_FILE: &[u8] = b"/var/TMP/CSA";
const JA_FILE: &[u8] = b"/var/TMP/JA";
/// The time threshold: 20 ms of CPU, in µs.
const THRESHOLD_US: i64 = 20_000;

/// `csa_ctl(request, addr)` with a raw address: the wrappers only pass buffers they own.
#[allow(unsafe_code)]
fn ctl_at(request: u32, addr: usize) -> Result<usize, Errno> {
    // SAFETY: the addresses passed are unmapped or read-only code: the kernel must refuse
    // to write there (EFAULT) and writes nothing else of this program's memory.
    let r = unsafe { sys::raw::syscall6(SYS_CSA_CTL, request as usize, addr, 0, 0, 0, 0) };
    if r < 0 {
        Err(Errno(-r as i32))
    } else {
        Ok(r as usize)
    }
}

/// An actctl naming `entries` (index, parameter) and `path`.
fn actctl(entries: &[(u32, i64)], path: &[u8]) -> ActCtl {
    let mut c = ActCtl { ac_sttnum: entries.len() as i32, ..ActCtl::default() };
    for (s, &(ind, param)) in c.ac_stat.iter_mut().zip(entries) {
        *s = ActStat { ac_ind: ind, ac_state: ACS_ON, ac_param: param };
    }
    c.set_path(path);
    c
}

fn start(entries: &[(u32, i64)], path: &[u8]) -> Result<usize, Errno> {
    sys::csa_ctl_actctl(AC_START, &mut actctl(entries, path))
}

fn main() -> i32 {
    if tally_rt::args().nth(1) == Some("job") {
        return job();
    }
    expect_err(sys::job_getjid(0).map(|j| j as usize), ENODATA, 1);
    expect_err(sys::job_getjid(30_000).map(|j| j as usize), ESRCH, 2);
    expect_err(ctl_at(AC_MREQ + 7, 0), EINVAL, 3);
    check(sys::csa_check(ACCT_KERN_CSA).is_ok_and(|s| s.ac_state == ACS_OFF), 4);
    expect_err(start(&[(ACCT_KERN_CSA, 0)], b""), EINVAL, 5);
    expect_err(start(&[(ACCT_KERN_CSA, 0)], b"/var/TMP/NOSUCH"), ENOENT, 6);
    expect_err(start(&[(ACCT_KERN_CSA, 0)], b"/var/TMP"), EISDIR, 7);
    expect_err(ctl_at(AC_KDSTAT, BadPtr::UNMAPPED.addr()), EFAULT, 8);
    expect_err(ctl_at(AC_KDSTAT, BadPtr::code().addr()), EFAULT, 9);
    let on =
        [(ACCT_KERN_CSA, 0), (ACCT_RCD_MEM, 0), (ACCT_RCD_IO, 0), (ACCT_RCD_DELAY, 0), (ACCT_THD_TIME, THRESHOLD_US)];
    let mut c = actctl(&on, SYSTEM_FILE);
    expect_ok(sys::csa_ctl_actctl(AC_START, &mut c), 0, 10);
    check(c.ac_stat[..on.len()].iter().all(|s| s.ac_state == ACS_ON), 10);
    let kd = sys::csa_status(AC_KDSTAT);
    check(kd.is_ok_and(|k| k.path() == Some(SYSTEM_FILE) && k.ac_stat[0].ac_state == ACS_ON), 11);
    check(sys::csa_check(ACCT_THD_TIME).is_ok_and(|s| s.ac_state == ACS_ON && s.ac_param == THRESHOLD_US), 12);
    expect_err(sys::csa_ctl_actctl(AC_JASTART, &mut actctl(&[], JA_FILE)), ENODATA, 13);
    // A workload manager's record (type 040, 32 bytes) once its kind is ON; a buffer that is
    // not whole records is refused.
    expect_ok(start(&[(ACCT_DMD_WKMG, 0)], b""), 0, 23);
    let mut wra = ActWra { ac_did: ACCT_DMD_WKMG as i32, ac_len: 32, ac_jid: 0, ..ActWra::default() };
    wra.ac_buf[..8].copy_from_slice(&[0x4a, 0x31, 0, 0, 0o40, 0, 32, 0]);
    wra.ac_buf[8..32].copy_from_slice(b"tally workload mgr rec!!");
    expect_ok(sys::csa_wracct(&wra), 0, 24);
    wra.ac_len = 31;
    expect_err(sys::csa_wracct(&wra), EINVAL, 25);
    let s = run_child("/test/csa_abi", &["csa_abi", "job"], 14);
    check(exited(s) && exit_code(s) == 0, 14);
    expect_ok(sys::csa_ctl_noarg(AC_HALT), 0, 15);
    check(sys::csa_check(ACCT_KERN_CSA).is_ok_and(|s| s.ac_state == ACS_OFF), 16);
    expect_ok(sys::setuid(1000), 0, 17);
    expect_err(start(&[(ACCT_KERN_CSA, 0)], SYSTEM_FILE), EPERM, 18);
    expect_err(sys::csa_ctl_noarg(AC_HALT), EPERM, 19);
    expect_err(sys::csa_ctl_noarg(AC_AUTH), EPERM, 20);
    expect_err(sys::job_create(1000).map(|j| j as usize), EPERM, 21);
    check(sys::csa_check(ACCT_KERN_CSA).is_ok(), 22);
    0
}

/// The job's first process (see the module documentation).
fn job() -> i32 {
    let pid = positive(sys::getpid(), 30) as u64;
    let jid = JOB_HOST_ID as u64 * (1 << 32) + pid;
    expect_ok(sys::job_create(1000).map(|j| j as usize), jid as usize, 30);
    expect_err(sys::job_create(1000).map(|j| j as usize), EBUSY, 31);
    expect_ok(sys::job_getjid(0).map(|j| j as usize), jid as usize, 32);
    expect_ok(sys::setuid(1000), 0, 33);
    expect_ok(sys::csa_ctl_actctl(AC_JASTART, &mut actctl(&[], JA_FILE)), 0, 34);
    expect_err(start(&[(ACCT_KERN_CSA, 0)], SYSTEM_FILE), EPERM, 35);
    let spin = positive(sys::spawn("/bin/spin", &["spin", "100"]), 36);
    expect_ok(sys::job_getjid(spin as u32).map(|j| j as usize), jid as usize, 37);
    let mut status = 0;
    expect_ok(sys::wait4(spin as isize, Some(&mut status), 0, None), spin, 36);
    check(exited(status) && exit_code(status) == 0, 36);
    let s = run_child("/bin/hello", &["hello", "job"], 38);
    check(exited(s) && exit_code(s) == 0, 38);
    let s = run_child("/test/threads", &["threads", "exit_group"], 39);
    check(exited(s) && exit_code(s) == 7, 39);
    0
}
