//! `/test/files` — the file system calls on `/var` from ring 3: the fixture of the `files`
//! self-test (`tally_uapi::fixture`). Needs the accounting disk (FAT16 at `-drive index=2`).
//!
//! Modes (argument 1): none — every check below; `keepfull` — the same, but the disk is
//! left full (`/var/TMP/FT/BIG`) for the kernel's test to go on with, and the kernel's
//! record file `/var/TMP/REC2` (open while this runs) is checked to be out of reach; `append C` — a child that appends 50
//! 64-byte records of byte `C` to `/var/TMP/FT/LOG`; `leave` — a child that opens
//! `/var/TMP/FT/LEFT`, writes 4 bytes and exits without closing it.
//!
//! The calls are made through the raw `syscall` instruction (the runtime has no wrappers
//! for them): `open`, `read`, `write`, `lseek`, `close`, `stat`, `fstat`, `mkdir`,
//! `unlink`, `getdents64`, `fsync`, with their successes and errors (ENOENT, ENOTDIR,
//! EISDIR, EEXIST, ENAMETOOLONG, EINVAL, EROFS, EBADF, EFAULT, ESPIPE, EBUSY, EMFILE,
//! ENFILE, ENOSPC). Exit status: the number of the failed check, 0 if none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec;
use alloc::vec::Vec;

use tally_rt::fixture::{check, expect_err, expect_ok, fail, positive};
use tally_rt::sys::{self, probe::BadPtr};
use tally_rt::uapi::errno::*;
use tally_rt::uapi::fs::*;
use tally_rt::uapi::syscall::*;
use tally_rt::{println, Errno};

tally_rt::entry!(main);

/// One system call through the raw primitive.
#[allow(unsafe_code)]
fn sc(n: usize, a0: usize, a1: usize, a2: usize) -> Result<usize, Errno> {
    // SAFETY: every caller passes plain numbers, pointers to its own live buffers with their
    // true lengths, or addresses the kernel must refuse (`BadPtr`): the calls below write
    // only into the buffers they are given.
    sys::decode(unsafe { sys::raw::syscall6(n, a0, a1, a2, 0, 0, 0) })
}

/// A NUL-terminated copy of `path`.
fn c(path: &[u8]) -> Vec<u8> {
    let mut v = path.to_vec();
    v.push(0);
    v
}

fn open(path: &[u8], flags: u32) -> Result<usize, Errno> {
    let p = c(path);
    sc(SYS_OPEN, p.as_ptr() as usize, flags as usize, 0o644)
}
fn read(fd: usize, buf: &mut [u8]) -> Result<usize, Errno> {
    sc(SYS_READ, fd, buf.as_mut_ptr() as usize, buf.len())
}
fn write(fd: usize, buf: &[u8]) -> Result<usize, Errno> {
    sc(SYS_WRITE, fd, buf.as_ptr() as usize, buf.len())
}
fn lseek(fd: usize, off: i64, whence: u32) -> Result<usize, Errno> {
    sc(SYS_LSEEK, fd, off as usize, whence as usize)
}
fn close(fd: usize) -> Result<usize, Errno> {
    sc(SYS_CLOSE, fd, 0, 0)
}
fn stat(path: &[u8]) -> Result<Stat, Errno> {
    let p = c(path);
    let mut b = [0u8; Stat::SIZE];
    sc(SYS_STAT, p.as_ptr() as usize, b.as_mut_ptr() as usize, 0)?;
    Ok(Stat::from_bytes(&b))
}
fn fstat(fd: usize) -> Result<Stat, Errno> {
    let mut b = [0u8; Stat::SIZE];
    sc(SYS_FSTAT, fd, b.as_mut_ptr() as usize, 0)?;
    Ok(Stat::from_bytes(&b))
}
fn mkdir(path: &[u8]) -> Result<usize, Errno> {
    let p = c(path);
    sc(SYS_MKDIR, p.as_ptr() as usize, 0o755, 0)
}
fn unlink(path: &[u8]) -> Result<usize, Errno> {
    let p = c(path);
    sc(SYS_UNLINK, p.as_ptr() as usize, 0, 0)
}
fn getdents(fd: usize, buf: &mut [u8]) -> Result<usize, Errno> {
    sc(SYS_GETDENTS64, fd, buf.as_mut_ptr() as usize, buf.len())
}
fn fsync(fd: usize) -> Result<usize, Errno> {
    sc(SYS_FSYNC, fd, 0, 0)
}

/// The names in directory `fd` (from its start).
fn list(fd: usize) -> Vec<Vec<u8>> {
    let mut names = Vec::new();
    expect_ok(lseek(fd, 0, SEEK_SET), 0, 90);
    let mut buf = [0u8; 100];
    loop {
        let n = positive_or_zero(getdents(fd, &mut buf), 91);
        if n == 0 {
            return names;
        }
        let mut at = 0;
        while at < n {
            let Some(((_ino, _off, _t, name), len)) = dirent64::decode(&buf[at..n]) else { fail(92) };
            names.push(name.to_vec());
            at += len;
        }
    }
}

fn positive_or_zero(r: Result<usize, Errno>, n: i32) -> usize {
    match r {
        Ok(v) => v,
        Err(_) => fail(n),
    }
}

const DIR: &[u8] = b"/var/TMP/FT";
const A: &[u8] = b"/var/TMP/FT/A.TXT";
const LOG: &[u8] = b"/var/TMP/FT/LOG";
const LEFT: &[u8] = b"/var/TMP/FT/LEFT";
const BIG: &[u8] = b"/var/TMP/FT/BIG";
const T0: &[u8] = b"/var/TMP/FT/T0";
const T1: &[u8] = b"/var/TMP/FT/T1";
const RECORD: usize = 64;
const RECORDS: usize = 50;

fn main() -> i32 {
    match tally_rt::arg(1) {
        Some("append") => return append(tally_rt::arg(2).map_or(b'?', |s| s.as_bytes()[0])),
        Some("leave") => {
            let fd = positive_or_zero(open(LEFT, O_CREAT | O_WRONLY | O_TRUNC), 200);
            expect_ok(write(fd, b"left"), 4, 201);
            return 0; // the descriptor stays open: the exit closes it
        }
        _ => {}
    }
    setup();
    if tally_rt::arg(1) == Some("keepfull") {
        held_by_kernel();
    }
    errors();
    data();
    directories();
    unlink_and_trunc();
    descriptors_limit();
    appenders();
    left_open();
    full_disk(tally_rt::arg(1) == Some("keepfull"));
    println!("files: all checks passed");
    0
}

/// A clean `/var/TMP/FT`.
fn setup() {
    let _ = mkdir(b"/var/TMP");
    match mkdir(DIR) {
        Ok(_) | Err(Errno(EEXIST)) => {}
        Err(_) => fail(1),
    }
    for f in [A, LOG, LEFT, BIG, T0, T1, b"/var/TMP/FT/B"] {
        let _ = unlink(f);
    }
    for i in 0..40 {
        let _ = unlink(alloc::format!("/var/TMP/FT/F{i}").as_bytes());
    }
    expect_err(mkdir(DIR), EEXIST, 2);
}

/// `/var/TMP/REC2`, which a kernel record file appends to: nobody (root included) opens it
/// to write or truncate (EACCES) or unlinks it (EBUSY); reading is fine, and it holds whole
/// 96-byte records.
fn held_by_kernel() {
    const REC2: &[u8] = b"/var/TMP/REC2";
    for flags in [O_WRONLY | O_APPEND, O_RDWR, O_RDONLY | O_TRUNC, O_WRONLY | O_CREAT | O_TRUNC] {
        expect_err(open(REC2, flags), EACCES, 5);
    }
    expect_err(unlink(REC2), EBUSY, 6);
    let fd = positive_or_zero(open(REC2, O_RDONLY), 7);
    let Ok(s) = fstat(fd) else { fail(7) };
    check(s.st_size > 0 && s.st_size % 96 == 0, 8);
    expect_ok(close(fd), 0, 9);
}

fn errors() {
    expect_err(open(b"/var/TMP/FT/NOPE", O_RDONLY), ENOENT, 10);
    expect_err(open(b"/var/NODIR/X", O_RDONLY | O_CREAT), ENOENT, 11);
    expect_err(open(DIR, O_WRONLY), EISDIR, 12);
    // As Linux: O_CREAT on a directory is EISDIR, even read-only; O_CREAT|O_DIRECTORY is
    // EINVAL (since 6.4), the path existing or not.
    expect_err(open(DIR, O_RDONLY | O_CREAT), EISDIR, 12);
    expect_err(open(b"/var", O_RDONLY | O_CREAT), EISDIR, 12);
    expect_err(open(b"/var/TMP/FT/NEWD", O_CREAT | O_DIRECTORY), EINVAL, 12);
    expect_err(open(DIR, O_CREAT | O_DIRECTORY), EINVAL, 12);
    expect_err(stat(b"/var/TMP/FT/NEWD").map(|_| 0), ENOENT, 12);
    expect_err(open(b"/var/TMP/FT/waytoolongname", O_RDONLY), ENAMETOOLONG, 13);
    expect_err(open(b"/var/TMP/FT/ABC.DEFG", O_RDONLY | O_CREAT), ENAMETOOLONG, 14);
    expect_err(open(b"/var/a*b", O_RDONLY), EINVAL, 15);
    expect_err(open(b"/var/\x01\xff", O_RDONLY | O_CREAT), EINVAL, 16);
    expect_err(open(b"/var/.hidden", O_RDONLY | O_CREAT), EINVAL, 17);
    expect_err(open(b"/bin/x", O_CREAT | O_WRONLY), EROFS, 18);
    expect_err(open(b"/etc/passwd", O_RDONLY), ENOENT, 19);
    expect_err(mkdir(b"/newdir"), EROFS, 20);
    expect_err(mkdir(b"/var"), EEXIST, 21);
    expect_err(sc(SYS_OPEN, BadPtr::UNMAPPED.addr(), 0, 0), EFAULT, 22);
    expect_err(sc(SYS_STAT, BadPtr::KERNEL.addr(), 0, 0), EFAULT, 23);
    let p = c(b"/var");
    expect_err(sc(SYS_STAT, p.as_ptr() as usize, BadPtr::UNMAPPED.addr(), 0), EFAULT, 24);
    expect_err(sc(SYS_MKDIR, BadPtr::NULL.addr(), 0, 0), EFAULT, 25);
    expect_err(sc(SYS_UNLINK, BadPtr::NON_CANONICAL.addr(), 0, 0), EFAULT, 26);
    let mut deep = Vec::new();
    for _ in 0..9 {
        deep.extend_from_slice(b"/D");
    }
    let mut path = b"/var".to_vec();
    path.extend_from_slice(&deep);
    expect_err(open(&path, O_RDONLY), ENAMETOOLONG, 27);
    expect_err(open(&[b'/'; 5000], O_RDONLY), ENAMETOOLONG, 28);
    expect_err(close(999), EBADF, 29);
    expect_err(fstat(999).map(|_| 0), EBADF, 30);
    expect_err(lseek(0, 0, SEEK_SET), ESPIPE, 31);
    expect_err(fsync(0), EINVAL, 32);
    // fstat of the other kinds of descriptor.
    let Ok(s) = fstat(0) else { fail(33) };
    check(s.st_mode & S_IFMT == S_IFCHR, 34);
    let Ok((r, w)) = sys::pipe() else { fail(35) };
    let Ok(s) = fstat(r) else { fail(36) };
    check(s.st_mode & S_IFMT == S_IFIFO, 37);
    let _ = (close(r), close(w));
    expect_err(getdents(0, &mut [0u8; 64]), ENOTDIR, 38);
}

fn data() {
    let fd = positive_or_zero(open(A, O_CREAT | O_EXCL | O_RDWR), 40);
    expect_err(open(A, O_CREAT | O_EXCL | O_RDWR), EEXIST, 41);
    expect_err(open(b"/var/TMP/FT/A.TXT/X", O_RDONLY), ENOTDIR, 42);
    expect_err(open(A, O_RDONLY | O_DIRECTORY), ENOTDIR, 43);
    expect_ok(write(fd, b"hello world\n"), 12, 44);
    expect_ok(lseek(fd, 0, SEEK_CUR), 12, 45);
    expect_ok(lseek(fd, 0, SEEK_SET), 0, 46);
    let mut buf = [0u8; 64];
    expect_ok(read(fd, &mut buf), 12, 47);
    check(&buf[..12] == b"hello world\n", 48);
    expect_ok(read(fd, &mut buf), 0, 49); // end of file
    expect_err(lseek(fd, -1, SEEK_SET), EINVAL, 50);
    expect_err(lseek(fd, 0, 7), EINVAL, 51);
    expect_ok(lseek(fd, -6, SEEK_END), 6, 52);
    expect_ok(read(fd, &mut buf), 6, 53);
    check(&buf[..6] == b"world\n", 54);
    // Writing past the end: the gap reads as zeros.
    expect_ok(lseek(fd, 20, SEEK_SET), 20, 55);
    expect_ok(write(fd, b"Z"), 1, 56);
    let Ok(s) = fstat(fd) else { fail(57) };
    check(s.st_size == 21 && s.st_mode & S_IFMT == S_IFREG, 58);
    expect_ok(lseek(fd, 12, SEEK_SET), 12, 59);
    expect_ok(read(fd, &mut buf), 9, 60);
    check(buf[..8].iter().all(|&b| b == 0) && buf[8] == b'Z', 61);
    // Bad buffers.
    expect_err(sc(SYS_READ, fd, BadPtr::code().addr(), 4), EFAULT, 62);
    expect_err(sc(SYS_WRITE, fd, BadPtr::UNMAPPED.addr(), 4), EFAULT, 63);
    expect_err(sc(SYS_FSTAT, fd, BadPtr::KERNEL.addr(), 0), EFAULT, 64);
    // Flushed and visible with the right size.
    expect_ok(fsync(fd), 0, 65);
    let Ok(s) = stat(b"/var/tmp/ft/a.txt") else { fail(66) }; // any case
    check(s.st_size == 21, 67);
    expect_ok(close(fd), 0, 68);
    // Access modes.
    let ro = positive_or_zero(open(A, O_RDONLY), 69);
    expect_err(write(ro, b"x"), EBADF, 70);
    let wo = positive_or_zero(open(A, O_WRONLY), 71);
    expect_err(read(wo, &mut buf), EBADF, 72);
    // Both share the one open file; each has its own position.
    expect_ok(read(ro, &mut buf[..5]), 5, 73);
    expect_ok(write(wo, b"HELLO"), 5, 74);
    expect_ok(lseek(ro, 0, SEEK_SET), 0, 75);
    expect_ok(read(ro, &mut buf[..5]), 5, 76);
    check(&buf[..5] == b"HELLO", 77);
    let _ = (close(ro), close(wo));
}

fn directories() {
    let d = positive_or_zero(open(DIR, O_RDONLY | O_DIRECTORY), 80);
    let mut buf = [0u8; 64];
    expect_err(read(d, &mut buf), EISDIR, 81);
    expect_err(write(d, b"x"), EBADF, 82);
    expect_err(getdents(d, &mut buf[..10]), EINVAL, 83);
    expect_err(sc(SYS_GETDENTS64, d, BadPtr::UNMAPPED.addr(), 64), EFAULT, 84);
    let names = list(d);
    check(names == [b"A.TXT".to_vec()], 85);
    let Ok(s) = fstat(d) else { fail(86) };
    check(s.is_dir(), 87);
    let Ok(s) = stat(b"/var") else { fail(88) };
    check(s.is_dir(), 89);
    let f = positive_or_zero(open(A, O_RDONLY), 93);
    expect_err(getdents(f, &mut buf), ENOTDIR, 94);
    let _ = (close(f), close(d));
    let root = positive_or_zero(open(b"/var", O_RDONLY), 95);
    check(list(root).iter().any(|n| n == b"TMP"), 96);
    let _ = close(root);
}

fn unlink_and_trunc() {
    expect_err(unlink(DIR), EISDIR, 100);
    expect_err(unlink(b"/var/TMP/FT/NOPE"), ENOENT, 101);
    let b = positive_or_zero(open(b"/var/TMP/FT/B", O_CREAT | O_WRONLY), 102);
    expect_ok(write(b, &[7u8; 1500]), 1500, 103);
    expect_err(unlink(b"/var/TMP/FT/B"), EBUSY, 104);
    expect_ok(close(b), 0, 105);
    let b = positive_or_zero(open(b"/var/TMP/FT/B", O_TRUNC | O_WRONLY), 106);
    let Ok(s) = fstat(b) else { fail(107) };
    check(s.st_size == 0, 108);
    expect_ok(write(b, b"again"), 5, 109);
    expect_ok(close(b), 0, 110);
    let Ok(s) = stat(b"/var/TMP/FT/B") else { fail(111) };
    check(s.st_size == 5, 112);
    expect_ok(unlink(b"/var/TMP/FT/B"), 0, 113);
    expect_err(stat(b"/var/TMP/FT/B").map(|_| 0), ENOENT, 114);
    expect_err(unlink(b"/bin/sh"), EROFS, 115);
    // O_TRUNC and no write: the files stay on the disk, which `fsck.fat -n` checks after
    // the scenario (a truncated file must not keep a cluster). T0 is closed when truncated,
    // T1 is open on another descriptor and truncated by an O_RDONLY open (Linux truncates
    // a regular file whatever the access mode).
    for (t, shared, how) in [(T0, false, O_WRONLY), (T1, true, O_RDONLY)] {
        let fd = positive_or_zero(open(t, O_CREAT | O_RDWR), 116);
        expect_ok(write(fd, &[3u8; 1500]), 1500, 117);
        if !shared {
            expect_ok(close(fd), 0, 118);
        }
        let tr = positive_or_zero(open(t, how | O_TRUNC), 119);
        let Ok(s) = fstat(tr) else { fail(119) };
        check(s.st_size == 0, 119);
        expect_ok(close(tr), 0, 119);
        if shared {
            // The other descriptor still works, on the truncated file.
            let Ok(s) = fstat(fd) else { fail(119) };
            check(s.st_size == 0, 119);
            expect_ok(close(fd), 0, 119);
        }
        let Ok(s) = stat(t) else { fail(119) };
        check(s.st_size == 0, 119);
    }
}

/// EMFILE: one file opened until the process has no descriptor left (they share one open
/// file in the kernel); ENFILE: more distinct files open than the file system holds.
fn descriptors_limit() {
    let mut fds = Vec::new();
    loop {
        match open(A, O_RDONLY) {
            Ok(fd) => fds.push(fd),
            Err(Errno(EMFILE)) => break,
            Err(_) => fail(120),
        }
        check(fds.len() <= 2000, 121);
    }
    check(fds.len() > 100, 122);
    for fd in fds.drain(..) {
        expect_ok(close(fd), 0, 123);
    }
    // Open directories hold nothing in the file table: as many files open with three
    // directories open as without.
    let alone = fill_table(&mut fds);
    for fd in fds.drain(..) {
        expect_ok(close(fd), 0, 126);
    }
    let dirs = [b"/var".as_slice(), b"/var/TMP", DIR].map(|d| positive_or_zero(open(d, O_RDONLY), 129));
    let with_dirs = fill_table(&mut fds);
    if with_dirs != alone {
        println!("files: {alone} files open alone, {with_dirs} beside 3 directories");
    }
    check(with_dirs == alone, 129);
    // O_TRUNC of an open file with the table full: its own slot is reused, and the
    // descriptor already open on it keeps working.
    expect_ok(write(fds[0], b"data"), 4, 129);
    let t = positive_or_zero(open(b"/var/TMP/FT/F0", O_WRONLY | O_TRUNC), 129);
    let Ok(s) = fstat(fds[0]) else { fail(129) };
    check(s.st_size == 0, 129);
    expect_ok(lseek(fds[0], 0, SEEK_SET), 0, 129);
    expect_ok(write(fds[0], b"more"), 4, 129);
    expect_ok(close(t), 0, 129);
    for fd in fds.drain(..).chain(dirs) {
        expect_ok(close(fd), 0, 126);
    }
    for i in 0..40 {
        let _ = unlink(alloc::format!("/var/TMP/FT/F{i}").as_bytes());
    }
    // The table is free again.
    let fd = positive_or_zero(open(b"/var/TMP/FT/F0", O_CREAT | O_RDWR), 127);
    let _ = close(fd);
    expect_ok(unlink(b"/var/TMP/FT/F0"), 0, 128);
}

/// Open (creating them) `/var/TMP/FT/F0`, `F1`, … until `ENFILE`; their descriptors go in
/// `fds`. Returns how many opened.
fn fill_table(fds: &mut Vec<usize>) -> usize {
    for i in 0..40 {
        match open(alloc::format!("/var/TMP/FT/F{i}").as_bytes(), O_CREAT | O_RDWR) {
            Ok(fd) => fds.push(fd),
            Err(Errno(ENFILE)) => return i,
            Err(_) => fail(124),
        }
    }
    fail(125)
}

/// A child of `append`: 50 records of 64 bytes of byte `c`, each one `write` with O_APPEND.
fn append(c: u8) -> i32 {
    let fd = positive_or_zero(open(LOG, O_CREAT | O_WRONLY | O_APPEND), 210);
    let rec = [c; RECORD];
    for _ in 0..RECORDS {
        expect_ok(write(fd, &rec), RECORD, 211);
        let _ = sys::sched_yield();
    }
    expect_ok(close(fd), 0, 212);
    0
}

fn wait_ok(pid: usize, n: i32) -> Rusage {
    let mut status = 0;
    let mut ru = Rusage::default();
    check(sys::wait4(pid as isize, Some(&mut status), 0, Some(&mut ru)) == Ok(pid), n);
    check(status == 0, n);
    ru
}

/// Two processes append at once: every record whole, 50 of each.
fn appenders() {
    let fd = positive_or_zero(open(LOG, O_CREAT | O_WRONLY | O_TRUNC), 130);
    let _ = close(fd);
    let x = positive(sys::spawn("/test/files", &["files", "append", "X"]), 131);
    let y = positive(sys::spawn("/test/files", &["files", "append", "Y"]), 132);
    let rx = wait_ok(x, 133);
    let _ = wait_ok(y, 134);
    // The child's writes were charged to it: sectors written, in its rusage.
    check(rx.ru_oublock >= 1, 135);
    let Ok(s) = stat(LOG) else { fail(136) };
    check(s.st_size == (2 * RECORDS * RECORD) as i64, 137);
    let fd = positive_or_zero(open(LOG, O_RDONLY), 138);
    let mut all = vec![0u8; 2 * RECORDS * RECORD];
    let mut got = 0;
    while got < all.len() {
        let n = positive_or_zero(read(fd, &mut all[got..]), 139);
        check(n > 0, 139);
        got += n;
    }
    let _ = close(fd);
    let (mut nx, mut ny) = (0, 0);
    for rec in all.chunks(RECORD) {
        if rec.iter().all(|&b| b == b'X') {
            nx += 1;
        } else if rec.iter().all(|&b| b == b'Y') {
            ny += 1;
        } else {
            fail(140);
        }
    }
    check(nx == RECORDS && ny == RECORDS, 141);
    expect_ok(unlink(LOG), 0, 142);
}

/// A child exits with a file open: the exit closes it (unlink would say EBUSY otherwise).
fn left_open() {
    let pid = positive(sys::spawn("/test/files", &["files", "leave"]), 150);
    let _ = wait_ok(pid, 151);
    let Ok(s) = stat(LEFT) else { fail(152) };
    check(s.st_size == 4, 153);
    expect_ok(unlink(LEFT), 0, 154);
}

/// Fill the disk: writes shrink to what fits, then ENOSPC; the file stays readable and
/// the space comes back with unlink. `keep`: leave the disk full (the kernel's test goes on
/// with it, then removes BIG).
fn full_disk(keep: bool) {
    let fd = positive_or_zero(open(BIG, O_CREAT | O_RDWR | O_TRUNC), 160);
    let chunk = vec![0xA5u8; 64 * 1024];
    let mut total = 0usize;
    loop {
        match write(fd, &chunk) {
            Ok(n) if n == chunk.len() => total += n,
            Ok(n) => {
                total += n;
                break;
            }
            Err(Errno(ENOSPC)) => break,
            Err(_) => fail(161),
        }
        check(total < 64 * 1024 * 1024, 162);
    }
    let more = write(fd, b"more");
    if more != Err(Errno(ENOSPC)) {
        match more {
            Ok(n) => println!("files: after {total} bytes, one more write wrote {n} bytes, not ENOSPC"),
            Err(e) => println!("files: after {total} bytes, one more write: {e}, not ENOSPC"),
        }
    }
    expect_err(more, ENOSPC, 163);
    let Ok(s) = fstat(fd) else { fail(164) };
    check(s.st_size == total as i64, 165);
    // Still readable: its last bytes.
    expect_ok(lseek(fd, -(1000i64), SEEK_END), total - 1000, 166);
    let mut buf = [0u8; 1000];
    expect_ok(read(fd, &mut buf), 1000, 167);
    check(buf.iter().all(|&b| b == 0xA5), 168);
    expect_err(open(b"/var/TMP/FT/NEW", O_CREAT | O_WRONLY), ENOSPC, 169);
    expect_ok(close(fd), 0, 170);
    println!("files: disk full after {total} bytes");
    if keep {
        return;
    }
    expect_ok(unlink(BIG), 0, 171);
    let fd = positive_or_zero(open(BIG, O_CREAT | O_RDWR), 172);
    expect_ok(write(fd, &chunk), chunk.len(), 173);
    let _ = close(fd);
    expect_ok(unlink(BIG), 0, 174);
}
