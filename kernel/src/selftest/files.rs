//! Files on `/var` from the kernel side: the record-file API the accounting uses, and the
//! ring-3 fixture `/test/files` that checks every file system call (`tests/files.toml`).

use core::sync::atomic::{AtomicI32, Ordering};

use tally_uapi::fs::{O_CREAT, O_RDWR, O_TRUNC};

use crate::fs::{self, Done, Op, RecordFile};

static LAST_ERROR: AtomicI32 = AtomicI32::new(0);

fn on_error(_id: u64, errno: i32) {
    LAST_ERROR.store(errno, Ordering::Relaxed);
}

fn path(p: &[u8]) -> Result<tally_uapi::fs::path::VarPath, &'static str> {
    tally_uapi::fs::path::parse(p).map_err(|_| "bad path")
}

/// Size of `p` on disk, as `stat` reports it.
fn size_of(p: &[u8]) -> Result<i64, &'static str> {
    match fs::call(Op::Stat { path: path(p)? }) {
        Ok(Done::Stat(s)) => Ok(s.st_size),
        _ => Err("stat failed"),
    }
}

/// `RecordFile`: open refuses what it must, records of several sizes reach the file whole
/// and in order, the counters say so, and posts after the close fail.
pub fn record_file() -> Result<(), &'static str> {
    if !fs::present() {
        return Err("no accounting disk (attach a FAT16 image at index=2)");
    }
    let p = b"/var/TMP/RECTEST";
    if fs::call(Op::Mkdir { path: path(b"/var/TMP")? }).is_err() {
        // It may exist already (the template has it).
    }
    let node = match fs::call(Op::Open { path: path(p)?, flags: O_CREAT | O_RDWR | O_TRUNC }) {
        Ok(Done::Opened { node, .. }) => node,
        _ => return Err("cannot create the test file"),
    };
    fs::call(Op::Close { node }).map_err(|_| "close failed")?;
    use tally_uapi::errno::*;
    let refused = [
        (&b"/var/TMP/NOSUCH"[..], ENOENT),
        (&b"/var/TMP"[..], EACCES),
        (&b"/var"[..], EACCES),
        (&b"/var/TMP/RECTEST/X"[..], ENOTDIR),
        (&b"/var/TMP/muchtoolongname"[..], ENAMETOOLONG),
        (&b"/etc/passwd"[..], EINVAL),
    ];
    for (bad, want) in refused {
        match RecordFile::open(bad, on_error) {
            Err(e) if e == want => {}
            Err(_) => return Err("RecordFile::open gave the wrong errno"),
            Ok(_) => return Err("RecordFile::open accepted a bad path"),
        }
    }
    let rf = RecordFile::open(p, on_error).map_err(|_| "RecordFile::open failed")?;
    let mut expect = alloc::vec::Vec::new();
    for i in 0..100u32 {
        let len = 1 + (i as usize * 37) % 512;
        let rec: alloc::vec::Vec<u8> = (0..len).map(|k| (i as usize + k) as u8).collect();
        // Posted with interrupts off, as an exit observer does.
        hal::cpu::without_interrupts(|| rf.post(&rec)).map_err(|_| "post failed")?;
        expect.extend_from_slice(&rec);
    }
    if rf.post(&[]) != Err(EINVAL) || rf.post(&[0u8; 513]) != Err(EINVAL) {
        return Err("a record of 0 or 513 bytes was accepted");
    }
    rf.close_and_wait();
    let (records, bytes, errors) = rf.counters();
    println!("files: record file {}: {records} records, {bytes} bytes, {errors} errors", rf.id());
    if (records, bytes, errors) != (100, expect.len() as u64, 0) {
        return Err("wrong counters");
    }
    if size_of(p)? != expect.len() as i64 {
        return Err("the file's size is not the records' sum");
    }
    let node = match fs::call(Op::Open { path: path(p)?, flags: 0 }) {
        Ok(Done::Opened { node, .. }) => node,
        _ => return Err("cannot reopen the file"),
    };
    let mut got = alloc::vec::Vec::new();
    while got.len() < expect.len() {
        match fs::call(Op::Read { node, pos: got.len() as u64, len: 4096 }) {
            Ok(Done::Data(d)) if !d.is_empty() => got.extend_from_slice(&d),
            _ => break,
        }
    }
    fs::post(Op::Close { node });
    if got != expect {
        return Err("the file does not hold the records in order");
    }
    if rf.post(b"late") != Err(EIO) {
        return Err("a post after the close was accepted");
    }
    println!("files: records whole and in order; size {}", expect.len());
    Ok(())
}

/// The ring-3 fixture `/test/files`: every file system call's successes and errors, two
/// appending processes, a file left open at exit, a full disk. Its file I/O must show in its
/// accounting: characters and calls, sectors, and disk waits as UNINTERRUPTIBLE_SLEEP.
pub fn fixture() -> Result<(), &'static str> {
    if !fs::present() {
        return Err("no accounting disk (attach a FAT16 image at index=2)");
    }
    let r = super::ring3::run_fixture("files", &[])?;
    let c = &r.totals.counters;
    let sleep = super::ring3::t(&r.totals.msa, tally_microstate::MicroState::UninterruptibleSleep);
    println!(
        "files: fixture status {:#x}; rchar>0 {}, wchar>0 {}, inblock>0 {}, oublock>0 {}, disk waits {}",
        r.status.raw(),
        c.read_char > 0,
        c.write_char > 0,
        c.inblock > 0,
        c.oublock > 0,
        sleep > 0 || !tally_microstate::ACCOUNTING_ENABLED
    );
    if r.status.raw() != 0 {
        return Err("the fixture failed a check (its number is the exit status)");
    }
    if c.read_char == 0 || c.write_char == 0 || c.read_syscalls == 0 || c.write_syscalls == 0 {
        return Err("file reads and writes were not counted");
    }
    if c.inblock == 0 || c.oublock == 0 {
        return Err("the sectors fsd moved were not charged to the caller");
    }
    if tally_microstate::ACCOUNTING_ENABLED && sleep == 0 {
        return Err("waiting for fsd did not show as UNINTERRUPTIBLE_SLEEP");
    }
    Ok(())
}
