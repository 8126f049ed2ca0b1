//! `read`, `write`, `pipe2` and `close`: file descriptors (`crate::file`).
//!
//! There is no file system: a descriptor names the console (0, 1 and 2 of a process the
//! kernel starts), a pipe end, or a bus socket (`read`/`write` on a socket are `recv`/`send`,
//! see `netlink.rs`, and are counted as reads and writes, which `recvfrom`/`sendto` are not).
//!
//! **read(console, buf, count)** takes what has been typed (`drivers::tty`: sleeps until
//! at least one byte is there; `^D` is end of input). The buffer is validated (writable)
//! before the call can sleep, so a bad pointer is `-EFAULT` at once; the bytes are copied
//! out through a small kernel buffer. `count == 0` returns 0 without waiting. On a pipe's read
//! end it sleeps until there are bytes or no writer is left (0: end of file); the bytes go
//! straight from the pipe's buffer to the caller's (`file/pipe.rs`). Each call that
//! returns data or end of input is counted for the task (`read_char`, `read_syscalls`).
//!
//! **write(console or pipe, buf, count)**: the whole
//! buffer is validated first — a bad pointer anywhere in it writes nothing and returns
//! `-EFAULT` — then, for the console, copied in and printed a piece at a time through a
//! small buffer on the kernel stack (so no user-chosen size is ever allocated), and for a
//! pipe copied straight into the pipe's buffer. Bytes that are not UTF-8 are
//! shown as U+FFFD; a character split between two pieces is kept whole. Each call is counted
//! for the task — bytes (`write_char`) and calls (`write_syscalls`) — as process accounting
//! reports them. A pipe with no reader left is `-EPIPE`, and the writer's process gets
//! `SIGPIPE` as on Linux: with no handlers, its default action ends the process (killed by
//! SIGPIPE), which is what makes a broken pipeline or ring of processes end by itself.
//!
//! **pipe2(fds, flags)**: a new pipe; `fds[0]` reads, `fds[1]` writes. `flags` may be 0 or
//! `O_CLOEXEC` (both ends close-on-exec: not inherited by `spawn`); anything else is `-EINVAL`.
//! **close(fd)**: the descriptor is freed; the file closes when nothing refers to it.
//! **dup2(old, new)**, **dup3(old, new, flags)**, **fcntl(fd, cmd, arg)**: Linux's, for the
//! commands in `tally_uapi::fs` (`F_DUPFD[_CLOEXEC]`, `F_GETFD`, `F_SETFD`, `F_GETFL`,
//! `F_SETFL`: `O_NONBLOCK` on pipes and bus sockets). `readv`/`writev`: `uio.rs`.

use alloc::sync::Arc;
use tally_uapi::errno::{EBADF, EFAULT, EINVAL, EPIPE};
use tally_uapi::fs::{
    FD_CLOEXEC, F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_GETFL, F_SETFD, F_SETFL, O_ACCMODE, O_CLOEXEC, O_CREAT,
    O_DIRECTORY, O_EXCL, O_NONBLOCK, O_RDONLY, O_RDWR, O_TRUNC, O_WRONLY,
};

use super::{int_arg, usercopy, Args, SysResult};
use crate::file::{pipe, OpenFile};
use crate::{proc, sched};

/// The open file behind the caller's descriptor `fd`.
pub fn file(fd: i32) -> Result<Arc<OpenFile>, i32> {
    proc::current_file(fd)
}

/// At most this much per `read` call is taken from the console buffer.
pub const READ_PIECE: usize = 256;

/// `read(fd, buf, count)`.
pub fn read(a: &Args) -> SysResult {
    read_fd(int_arg(a[0]), a[1], a[2])
}

/// `read` of `count` bytes at `addr` from descriptor `fd` (also `readv`'s, per segment).
pub fn read_fd(fd: i32, addr: u64, count: u64) -> SysResult {
    let f = file(fd)?;
    if let OpenFile::Socket(sock) = &*f {
        // `read` on a socket is a `read` (Linux's vfs_read counts it): accounted here, not
        // in `recv_into`, which `recvfrom` shares.
        let n = super::netlink::recv_into(sock, addr, count, 0)?;
        sched::account_read(n);
        return Ok(n);
    }
    if let OpenFile::Var(v) = &*f {
        return super::files::read(v, addr, count);
    }
    if let OpenFile::Ram(r) = &*f {
        return super::files::read_ram(r, addr, count);
    }
    if count == 0 {
        return Ok(0);
    }
    if let OpenFile::PipeReader(r) = &*f {
        // Straight from the pipe's buffer into the caller's, under the pipe's lock.
        let want = count.min(pipe::PIPE_BUF_SIZE as u64);
        let n = read_pipe_retrying(
            || usercopy::check(addr, want, true),
            || r.read(want as usize, |at, bytes| usercopy::copy_to_user_direct(addr + at as u64, bytes)),
        )?;
        sched::account_read(n as u64);
        return Ok(n as u64);
    }
    let want = count.min(READ_PIECE as u64) as usize;
    usercopy::check(addr, want as u64, true)?;
    let mut buf = [0u8; READ_PIECE];
    let n = match &*f {
        OpenFile::Console => console_read(&mut buf[..want])?,
        _ => return Err(EBADF),
    };
    // The bytes are out of the console buffer now; if the memory went away meanwhile (another
    // thread unmapped it), they are lost, as Linux loses them in the same case.
    usercopy::copy_to_user(addr, &buf[..n])?;
    sched::account_read(n as u64);
    Ok(n as u64)
}

/// A pipe read into user memory faulted in by `check`: the bytes go straight from the
/// pipe's buffer by the direct copy, which cannot fault a page in. If the copy fails the
/// bytes stay in the pipe (`EFAULT` from `read`), and the memory is checked again and the
/// read retried: while the reader slept, another thread may have made its buffer's page
/// read-only (a `fork` shares it copy-on-write), which the check copies. A buffer the
/// process cannot write fails the check: `EFAULT`, the bytes still in the pipe.
pub(super) fn read_pipe_retrying(
    check: impl Fn() -> Result<(), i32>,
    read: impl Fn() -> Result<usize, i32>,
) -> Result<usize, i32> {
    // Each retry follows a page made read-only during one sleep; a few are plenty.
    for _ in 0..4 {
        check()?;
        match read() {
            Err(EFAULT) => continue,
            other => return other,
        }
    }
    Err(EFAULT)
}

/// Read what the console has into `buf` (sleeping until there is something). Job control
/// first: a background process may not read the console (SIGTTIN); asked again whenever the
/// foreground group changes while this reader waits.
pub fn console_read(buf: &mut [u8]) -> Result<usize, i32> {
    loop {
        let epoch = crate::drivers::tty::job_epoch();
        proc::console_read_check()?;
        if let Some(n) = crate::drivers::tty::read(buf, epoch)? {
            return Ok(n);
        }
    }
}

/// At most this much per call (a short write, as Linux does at `MAX_RW_COUNT`).
const MAX_WRITE: u64 = 0x7fff_f000;
const PIECE: usize = 256;

/// `write(fd, buf, count)`.
pub fn write(a: &Args) -> SysResult {
    write_fd(int_arg(a[0]), a[1], a[2])
}

/// `write` of `count` bytes at `addr` to descriptor `fd` (also `writev`'s, per segment).
pub fn write_fd(fd: i32, addr: u64, count: u64) -> SysResult {
    let count = count.min(MAX_WRITE);
    let f = file(fd)?;
    match &*f {
        OpenFile::Console => {}
        OpenFile::Serial2 => return write_serial2(addr, count),
        OpenFile::PipeWriter(w) => {
            usercopy::check(addr, count, false)?;
            return write_pipe(w, count as usize, |at, into| usercopy::copy_from_user_direct(addr + at as u64, into));
        }
        OpenFile::Socket(sock) => {
            // Counted as a `write` (Linux's vfs_write), unlike `sendto` on the same socket.
            let n = super::netlink::send_from(sock, addr, count)?;
            sched::account_write(n);
            return Ok(n);
        }
        OpenFile::Var(v) => return super::files::write(v, addr, count),
        _ => return Err(EBADF),
    }
    usercopy::check(addr, count, false)?;
    let mut buf = [0u8; PIECE];
    let (mut done, mut kept) = (0u64, 0usize);
    while done < count {
        let n = ((PIECE - kept) as u64).min(count - done) as usize;
        if let Err(e) = usercopy::copy_from_user(addr + done, &mut buf[kept..kept + n]) {
            // Unmapped since the check (another thread): a short write, as far as it got.
            if done == 0 {
                return Err(e);
            }
            break;
        }
        done += n as u64;
        let filled = kept + n;
        let tail = print_utf8(&buf[..filled], done < count);
        buf.copy_within(filled - tail..filled, 0);
        kept = tail;
    }
    sched::account_write(done);
    Ok(done)
}

/// `write` (and `writev`) on a pipe: `count` bytes straight from the caller's buffers into
/// the pipe's by `copy_in` (the direct user copy), under the pipe's lock (a write that fits
/// in `PIPE_BUF` goes in whole, atomically).
pub fn write_pipe(w: &pipe::Writer, count: usize, copy_in: impl FnMut(usize, &mut [u8]) -> bool) -> SysResult {
    let done = w.write(count, copy_in).inspect_err(|&e| {
        if e == EPIPE {
            // Linux's pipe_write: no reader left → SIGPIPE to the writer (and EPIPE, seen
            // only by a process that survives it: init).
            proc::raise(tally_uapi::signal::SIGPIPE);
        }
    })?;
    sched::account_write(done as u64);
    Ok(done as u64)
}

/// `write` on `/dev/ttyS1`: the bytes go out on COM2 unchanged.
fn write_serial2(addr: u64, count: u64) -> SysResult {
    usercopy::check(addr, count, false)?;
    let mut buf = [0u8; 256];
    let mut done = 0u64;
    while done < count {
        let n = (count - done).min(buf.len() as u64) as usize;
        usercopy::copy_from_user(addr + done, &mut buf[..n])?;
        hal::serial::com2_write(&buf[..n]);
        done += n as u64;
    }
    sched::account_write(done);
    Ok(done)
}

/// `open(path, flags, mode)`: two device paths — `/dev/console` (the console, any access
/// mode) and `/dev/ttyS1` (COM2, `O_WRONLY` only: `EACCES` otherwise; `ENXIO` if the machine
/// has no COM2) — files on `/var` and, read-only, the ramdisk's programs and directories
/// (`files.rs`); elsewhere `EROFS` to create or write, else `ENOENT`. `O_CLOEXEC` marks the
/// new descriptor close-on-exec. `mode` is ignored (FAT has no permissions).
pub fn open(a: &Args) -> SysResult {
    let (path, flags) = (a[0], int_arg(a[1]) as u32);
    let name = usercopy::str_from_user(path, tally_uapi::fs::PATH_MAX - 1).map_err(|e| {
        if e == tally_uapi::errno::E2BIG {
            tally_uapi::errno::ENAMETOOLONG
        } else {
            e
        }
    })?;
    let file = match name.as_slice() {
        b"/dev/console" => OpenFile::Console,
        b"/dev/ttyS1" if flags & O_ACCMODE != O_WRONLY => return Err(tally_uapi::errno::EACCES),
        b"/dev/ttyS1" if !hal::serial::com2_present() => return Err(tally_uapi::errno::ENXIO),
        b"/dev/ttyS1" => OpenFile::Serial2,
        _ => return super::files::open(&name, flags),
    };
    let cloexec = flags & O_CLOEXEC != 0;
    Ok(proc::current_files().ok_or(EBADF)?.install(file, cloexec)? as u64)
}

/// `pipe2(fds, flags)`.
pub fn pipe2(a: &Args) -> SysResult {
    make_pipe(a[0], int_arg(a[1]) as u32)
}

/// A pipe, its two descriptors written at `addr`.
fn make_pipe(addr: u64, flags: u32) -> SysResult {
    if flags & !O_CLOEXEC != 0 {
        return Err(EINVAL);
    }
    let cloexec = flags & O_CLOEXEC != 0;
    let files = proc::current_files().ok_or(EBADF)?;
    usercopy::check(addr, 8, true)?;
    let (r, w) = pipe::new();
    let rfd = files.install(OpenFile::PipeReader(r), cloexec)?;
    let wfd = match files.install(OpenFile::PipeWriter(w), cloexec) {
        Ok(fd) => fd,
        Err(e) => {
            let _ = files.close(rfd);
            return Err(e);
        }
    };
    let mut out = [0u8; 8];
    out[..4].copy_from_slice(&rfd.to_le_bytes());
    out[4..].copy_from_slice(&wfd.to_le_bytes());
    if let Err(e) = usercopy::copy_to_user(addr, &out) {
        let _ = files.close(rfd);
        let _ = files.close(wfd);
        return Err(e);
    }
    Ok(0)
}

/// `pipe(fds)`: `pipe2(fds, 0)`.
pub fn pipe(a: &Args) -> SysResult {
    make_pipe(a[0], 0)
}

/// `close(fd)`.
pub fn close(a: &Args) -> SysResult {
    proc::current_files().ok_or(EBADF)?.close(int_arg(a[0]))?;
    Ok(0)
}

/// `dup(old)`: a copy of `old` at the lowest free descriptor, not close-on-exec (`EBADF` if
/// `old` is not open, `EMFILE` if none is free): `fcntl(old, F_DUPFD, 0)`.
pub fn dup(a: &Args) -> SysResult {
    let files = proc::current_files().ok_or(EBADF)?;
    Ok(files.dup_from(int_arg(a[0]), 0, false)? as u64)
}

/// `dup2(old, new)`: `new` becomes a copy of `old` (what was at `new` is closed). `old ==
/// new` only checks `old`. The copy is not close-on-exec.
pub fn dup2(a: &Args) -> SysResult {
    let (old, new) = (int_arg(a[0]), int_arg(a[1]));
    let files = proc::current_files().ok_or(EBADF)?;
    if old == new {
        files.cloexec(old)?;
        return Ok(new as u64);
    }
    Ok(files.dup_to(old, new, false)? as u64)
}

/// `dup3(old, new, flags)`: `dup2` with `O_CLOEXEC` allowed in `flags`; `old == new` is
/// `EINVAL`, as other flags are.
pub fn dup3(a: &Args) -> SysResult {
    let (old, new, flags) = (int_arg(a[0]), int_arg(a[1]), int_arg(a[2]) as u32);
    if old == new || flags & !O_CLOEXEC != 0 {
        return Err(EINVAL);
    }
    let files = proc::current_files().ok_or(EBADF)?;
    Ok(files.dup_to(old, new, flags & O_CLOEXEC != 0)? as u64)
}

/// `fcntl(fd, cmd, arg)`: the commands of `tally_uapi::fs`; others `EINVAL` (see
/// `tally_uapi::syscall::SYS_FCNTL`).
pub fn fcntl(a: &Args) -> SysResult {
    let (fd, cmd, arg) = (int_arg(a[0]), int_arg(a[1]) as u32, a[2]);
    let files = proc::current_files().ok_or(EBADF)?;
    // A descriptor that is not open is EBADF whatever the command, as on Linux.
    files.cloexec(fd)?;
    match cmd {
        F_DUPFD | F_DUPFD_CLOEXEC => Ok(files.dup_from(fd, int_arg(arg), cmd == F_DUPFD_CLOEXEC)? as u64),
        F_GETFD => Ok(if files.cloexec(fd)? { u64::from(FD_CLOEXEC) } else { 0 }),
        F_SETFD => files.set_cloexec(fd, arg & u64::from(FD_CLOEXEC) != 0).map(|()| 0),
        F_GETFL => Ok(u64::from(status_flags(&*file(fd)?))),
        F_SETFL => {
            set_status_flags(&*file(fd)?, int_arg(arg) as u32);
            Ok(0)
        }
        _ => Err(EINVAL),
    }
}

/// `F_SETFL`: of the flags Linux lets a program change (`O_APPEND`, `O_ASYNC`, `O_DIRECT`,
/// `O_NOATIME`, `O_NONBLOCK`), Tally has `O_NONBLOCK` on pipes and bus sockets; the rest are
/// ignored, as Linux ignores the access mode and creation flags given to `F_SETFL`. On the
/// console `O_NONBLOCK` is not kept (its reads always wait: `docs/linux-abi.md`), so
/// `F_GETFL` does not report it there.
fn set_status_flags(f: &OpenFile, flags: u32) {
    let on = flags & O_NONBLOCK != 0;
    match f {
        OpenFile::PipeReader(r) => r.set_nonblock(on),
        OpenFile::PipeWriter(w) => w.set_nonblock(on),
        OpenFile::Socket(s) => s.set_nonblock(on),
        _ => {}
    }
}

/// `F_GETFL`: the open file's access mode and status flags (Linux's `f_flags` without the
/// creation flags and `O_CLOEXEC`, which open does not keep).
fn status_flags(f: &OpenFile) -> u32 {
    let nonblock = |on: bool| if on { O_NONBLOCK } else { 0 };
    match f {
        OpenFile::Console => O_RDWR,
        OpenFile::Socket(s) => O_RDWR | nonblock(s.nonblock()),
        OpenFile::Serial2 => O_WRONLY,
        OpenFile::PipeWriter(w) => O_WRONLY | nonblock(w.nonblock()),
        OpenFile::PipeReader(r) => O_RDONLY | nonblock(r.nonblock()),
        OpenFile::Ram(r) => O_RDONLY | if r.dir { O_DIRECTORY } else { 0 },
        OpenFile::Var(v) => v.flags & !(O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC),
    }
}

/// Print `bytes` as UTF-8 (U+FFFD for invalid sequences). If `more` follows, an incomplete
/// sequence at the end is not printed; returns its length (at most 3).
fn print_utf8(mut bytes: &[u8], more: bool) -> usize {
    loop {
        match core::str::from_utf8(bytes) {
            Ok(s) => {
                print!("{s}");
                return 0;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                print!("{}", core::str::from_utf8(good).unwrap_or(""));
                match e.error_len() {
                    Some(bad) => {
                        print!("\u{fffd}");
                        bytes = &rest[bad..];
                    }
                    None if more => return rest.len(),
                    None => {
                        print!("\u{fffd}");
                        return 0;
                    }
                }
            }
        }
    }
}
