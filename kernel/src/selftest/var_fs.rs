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
        (&b"/var/TMP"[..], EISDIR),
        (&b"/var"[..], EISDIR),
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
    // The file table full of descriptors' files: a record file still opens (slots are kept
    // for record files, so no user can make acct(2) or CSA fail with ENFILE).
    let mut held = alloc::vec::Vec::new();
    let mut names = alloc::vec::Vec::new();
    for i in 0..40 {
        let name = alloc::format!("/var/TMP/RSV{i}");
        match fs::call(Op::Open { path: path(name.as_bytes())?, flags: O_CREAT | O_RDWR }) {
            Ok(Done::Opened { node, .. }) => held.push(node),
            Err(ENFILE) => break,
            _ => return Err("cannot open the files that fill the table"),
        }
        names.push(name);
    }
    let reserved = RecordFile::open(p, on_error);
    if let Ok(r) = &reserved {
        r.close_and_wait();
    }
    for node in held {
        fs::call(Op::Close { node }).map_err(|_| "close failed")?;
    }
    for name in names {
        fs::call(Op::Unlink { path: path(name.as_bytes())? }).map_err(|_| "unlink failed")?;
    }
    if reserved.is_err() {
        return Err("a record file could not open with the table full of descriptors' files");
    }
    held_file(p)?;
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
    fs::call(Op::Unlink { path: path(p)? }).map_err(|_| "unlink failed")?;
    cost()
}

/// A file a record file appends to is the kernel's: no descriptor writes or truncates it
/// (`EACCES`), a record file does not open while a descriptor may write it or another
/// owner's record file appends to it (`EBUSY`), one of the same owner does (`acct(2)`
/// re-pointed at its own file); a user's record file opens only under `/var/TMP`.
fn held_file(p: &[u8]) -> Result<(), &'static str> {
    use tally_uapi::errno::*;
    use tally_uapi::fs::{O_APPEND, O_RDONLY, O_WRONLY};
    let open = |flags: u32| match fs::call(Op::Open { path: path(p)?, flags }) {
        Ok(Done::Opened { node, .. }) => Ok(Ok(node)),
        Ok(_) => Err("open answered something else"),
        Err(e) => Ok(Err(e)),
    };
    // A descriptor open for writing: no record file.
    let w = open(O_WRONLY)?.map_err(|_| "cannot open the test file")?;
    let busy = RecordFile::open(p, on_error).map(|r| r.close_and_wait());
    fs::call(Op::Close { node: w }).map_err(|_| "close failed")?;
    if busy != Err(EBUSY) {
        return Err("a record file opened on a file open for writing");
    }
    // A read-only descriptor is no obstacle.
    let r = open(O_RDONLY)?.map_err(|_| "cannot open the test file")?;
    let rf = RecordFile::open(p, on_error);
    fs::call(Op::Close { node: r }).map_err(|_| "close failed")?;
    let rf = rf.map_err(|_| "a read-only descriptor kept a record file out")?;
    let mut result = Ok(());
    for flags in [O_WRONLY | O_APPEND, O_RDWR, O_RDONLY | O_TRUNC, O_WRONLY | O_TRUNC] {
        match open(flags)? {
            Err(EACCES) => {}
            Ok(node) => {
                let _ = fs::call(Op::Close { node });
                result = Err("a descriptor opened a record file for writing or truncation");
            }
            Err(_) => result = Err("a write open of a record file: not EACCES"),
        }
    }
    match open(O_RDONLY)? {
        Ok(node) => fs::call(Op::Close { node }).map(|_| ()).map_err(|_| "close failed")?,
        Err(_) => result = Err("a record file could not be opened read-only"),
    }
    // The same owner again (acct(2) at the file it has): yes; another owner: EBUSY.
    match RecordFile::open(p, on_error) {
        Ok(again) => again.close_and_wait(),
        Err(_) => result = Err("root could not reopen its own record file"),
    }
    match RecordFile::open_as(p, on_error, 1000) {
        Err(EBUSY) => {}
        Ok(other) => {
            other.close_and_wait();
            result = Err("a user's record file opened on root's");
        }
        Err(_) => result = Err("a user's record file on root's: not EBUSY"),
    }
    rf.close_and_wait();
    result?;
    // Once closed, a user may (it is under /var/TMP); outside /var/TMP a user may not.
    RecordFile::open_as(p, on_error, 1000)
        .map_err(|_| "a user's record file under /var/TMP was refused")?
        .close_and_wait();
    let outside = b"/var/RECOUT";
    match fs::call(Op::Open { path: path(outside)?, flags: O_CREAT | O_RDWR }) {
        Ok(Done::Opened { node, .. }) => fs::call(Op::Close { node }).map_err(|_| "close failed")?,
        _ => return Err("cannot create /var/RECOUT"),
    };
    let refused = RecordFile::open_as(outside, on_error, 1000).map(|r| r.close_and_wait());
    let root = RecordFile::open(outside, on_error).map(|r| r.close_and_wait());
    fs::call(Op::Unlink { path: path(outside)? }).map_err(|_| "unlink failed")?;
    if refused != Err(EACCES) || root.is_err() {
        return Err("a user's record file outside /var/TMP: not EACCES (or root's refused)");
    }
    println!("files: a record file's file is the kernel's: writes EACCES, other owners EBUSY");
    Ok(())
}

/// What a small append costs: 32 appends of 64 bytes through `Op::Write` (what `write()`
/// on an `O_APPEND` descriptor asks): sectors and on-CPU time per append, the caller's and
/// fsd's (guest instructions under `--icount`); then 32 records posted at once to a
/// `RecordFile`: sectors in all.
fn cost() -> Result<(), &'static str> {
    const N: u64 = 32;
    let p = b"/var/TMP/COST";
    let node = match fs::call(Op::Open { path: path(p)?, flags: O_CREAT | O_RDWR | O_TRUNC }) {
        Ok(Done::Opened { node, .. }) => node,
        _ => return Err("cannot create the cost file"),
    };
    // On-CPU time of this thread and of fsd (TSC ticks; under --icount, instructions):
    // the work, without the waits for the disk.
    let cpu = || {
        let me = crate::proc::on_cpu(&crate::sched::current_msa());
        let fsd = crate::acct::msa_breakdown(fs::fsd_pid()).map_or(0, |c| crate::proc::on_cpu(&c.total));
        (me, fsd)
    };
    let (s0, c0) = (fs::sectors(), cpu());
    for _ in 0..N {
        fs::call(Op::Write { node, pos: None, data: alloc::vec![7u8; 64] }).map_err(|_| "append failed")?;
    }
    let (s1, c1) = (fs::sectors(), cpu());
    fs::call(Op::Close { node }).map_err(|_| "close failed")?;
    let ns = |ticks: u64| crate::base::time::clock().ticks_to_ns(ticks) / N;
    println!(
        "files: cost of a 64-byte append: {} sectors read, {} written; on CPU {} ns in the caller, {} ns in fsd, each",
        (s1.0 - s0.0) as f64 / N as f64,
        (s1.1 - s0.1) as f64 / N as f64,
        ns(c1.0 - c0.0),
        ns(c1.1 - c0.1)
    );
    // A burst, as many exits at once give: fsd writes the queue in one batch.
    let rf = RecordFile::open(p, on_error).map_err(|_| "RecordFile::open failed")?;
    let s0 = fs::sectors();
    for _ in 0..N {
        rf.post(&[9u8; 64]).map_err(|_| "post failed")?;
    }
    if !until(|| rf.counters().0 == N) {
        return Err("the records were not written");
    }
    let s1 = fs::sectors();
    rf.close_and_wait();
    println!(
        "files: cost of {N} 64-byte records posted at once: {} sectors read, {} written in all",
        s1.0 - s0.0,
        s1.1 - s0.1
    );
    fs::call(Op::Unlink { path: path(p)? }).map_err(|_| "unlink failed")?;
    Ok(())
}

/// Wait (up to 2 s) until `f` holds.
fn until(f: impl Fn() -> bool) -> bool {
    for _ in 0..200 {
        if f() {
            return true;
        }
        crate::sched::sleep_ns(10_000_000);
    }
    f()
}

/// The ring-3 fixture `/test/files`: every file system call's successes and errors, two
/// appending processes, a file left open at exit, a full disk. Its file I/O must show in its
/// accounting: characters and calls, sectors, and disk waits as UNINTERRUPTIBLE_SLEEP.
///
/// Around it, a record file on the full disk the fixture leaves (one fill of the disk
/// serves both: filling 7 MiB through PIO is most of the scenario's time): 7 records are
/// written before, 50 posted after; the 3 that fit are written whole, then
/// `on_error(ENOSPC)`. Then the fixture's big file is removed and the space comes back.
pub fn fixture() -> Result<(), &'static str> {
    use tally_uapi::errno::{EIO, ENOSPC};
    const REC: usize = 96;
    if !fs::present() {
        return Err("no accounting disk (attach a FAT16 image at index=2)");
    }
    let p = b"/var/TMP/REC2";
    let _ = fs::call(Op::Mkdir { path: path(b"/var/TMP")? });
    let _ = fs::call(Op::Unlink { path: path(p)? });
    match fs::call(Op::Open { path: path(p)?, flags: O_CREAT | O_RDWR | O_TRUNC }) {
        Ok(Done::Opened { node, .. }) => fs::post(Op::Close { node }),
        _ => return Err("cannot create the record file"),
    }
    LAST_ERROR.store(0, Ordering::Relaxed);
    let rf = RecordFile::open(p, on_error).map_err(|_| "RecordFile::open failed")?;
    for i in 0..7u8 {
        rf.post(&[i; REC]).map_err(|_| "post failed")?;
    }
    if !until(|| rf.counters().0 == 7) {
        return Err("7 records were not written");
    }

    let r = super::ring3::run_fixture("files", &["keepfull"])?;
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

    // The disk is full now. 7 records are 672 bytes in two 512-byte clusters: room for 3
    // more, not 50.
    for i in 0..50u8 {
        rf.post(&[100 + i; REC]).map_err(|_| "post failed")?;
    }
    if !until(|| rf.counters().2 == 1) {
        return Err("the full disk was not reported");
    }
    let (records, bytes, errors) = rf.counters();
    let size = size_of(p)?;
    println!(
        "files: record file on the full disk: {records} records, {bytes} bytes, {errors} error (errno {}), size {size}",
        LAST_ERROR.load(Ordering::Relaxed)
    );
    if LAST_ERROR.load(Ordering::Relaxed) != ENOSPC {
        return Err("on_error was not told ENOSPC");
    }
    if records != 10 || size != (10 * REC) as i64 || bytes != (10 * REC) as u64 {
        return Err("the file does not end on the last whole record that fitted");
    }
    if rf.post(&[1; REC]) != Err(EIO) {
        return Err("a post after the error was accepted");
    }
    rf.close_and_wait();
    // The space comes back.
    for f in [&p[..], &b"/var/TMP/FT/BIG"[..]] {
        fs::call(Op::Unlink { path: path(f)? }).map_err(|_| "unlink failed")?;
    }
    let node = match fs::call(Op::Open { path: path(p)?, flags: O_CREAT | O_RDWR }) {
        Ok(Done::Opened { node, .. }) => node,
        _ => return Err("no room for a new file after the unlink"),
    };
    let wrote = fs::call(Op::Write { node, pos: None, data: alloc::vec![1u8; 64 * 1024] });
    fs::call(Op::Close { node }).map_err(|_| "close failed")?;
    if !matches!(wrote, Ok(Done::Wrote { n: 65536, .. })) {
        return Err("the space did not come back");
    }
    fs::call(Op::Unlink { path: path(p)? }).map_err(|_| "unlink failed")?;
    Ok(())
}
