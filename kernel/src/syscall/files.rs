//! Files on `/var`: `open` of a `/var` path, `read`/`write` on such a descriptor, `lseek`,
//! `stat`, `fstat`, `mkdir`, `unlink`, `getdents64`, `fsync`.
//!
//! The handlers check the user's arguments (pointers through `usercopy.rs`, so a bad one is
//! `EFAULT` before anything happens), turn the path into 8.3 components
//! (`tally_uapi::fs::path`: `ENAMETOOLONG` for a component that is not 8.3, `EINVAL` for a
//! byte FAT refuses) and hand one request at a time to the file system's owner thread
//! (`crate::fs::call`), sleeping UNINTERRUPTIBLE until it is served — a disk wait, like
//! `blk_read`'s. The sectors fsd moved are charged to the caller (`inblock`/`oublock`); each
//! `read`/`write` call is counted in `read_char`/`read_syscalls` (`write_*`) as on the
//! console, so taskstats, `wait4`'s rusage and the accounting records see file I/O.
//!
//! Paths elsewhere: `open` of anything outside `/var` with `O_CREAT` or write access is
//! `EROFS` (the ramdisk is read-only); read-only, the two devices (`io.rs`) or what the
//! ramdisk has (`crate::file::ram_file`: `/bin`, `/bin/hello`...; `read`, `lseek`,
//! `getdents64`, `fstat` work on it), else `ENOENT`; `mkdir`/`unlink` outside `/var`:
//! `EROFS`; `stat` outside `/var`: the two devices or a ramdisk path, else `ENOENT`.
//!
//! A read or write moves at most [`MAX_IO`] bytes per call (a short count, as Linux's
//! `MAX_RW_COUNT` is); each piece is one fsd request, so an `O_APPEND` write up to that size
//! lands whole even when another process appends at the same time.

use alloc::vec;
use core::sync::atomic::Ordering;

use tally_uapi::errno::*;
use tally_uapi::fs::path::{self, VarPath};
use tally_uapi::fs::*;

use super::{int_arg, usercopy, Args, SysResult};
use crate::file::{OpenFile, RamFile};
use crate::fs::{self, Done, Op, VarFile};
use crate::{proc, sched};

/// Largest piece of one `read`/`write` (and one fsd request).
pub const MAX_IO: usize = 64 * 1024;

/// The path at user address `addr` (`EFAULT`, `ENAMETOOLONG` beyond `PATH_MAX`).
fn user_path(addr: u64) -> Result<alloc::vec::Vec<u8>, i32> {
    usercopy::str_from_user(addr, PATH_MAX - 1).map_err(|e| if e == E2BIG { ENAMETOOLONG } else { e })
}

fn var_path(name: &[u8]) -> Result<VarPath, i32> {
    path::parse(name).map_err(|e| e.errno())
}

/// `open` of a path `io::open` does not know: a `/var` path, or one on the read-only rest.
pub fn open(name: &[u8], flags: u32) -> SysResult {
    let files = proc::current_files().ok_or(EBADF)?;
    if !path::is_under_var(name) {
        if flags & O_CREAT != 0 || flags & O_ACCMODE != O_RDONLY {
            return Err(EROFS);
        }
        // The ramdisk: its programs and directories, read-only.
        let ram = ram_file(name).ok_or(ENOENT)?;
        if flags & O_DIRECTORY != 0 && !ram.dir {
            return Err(ENOTDIR);
        }
        return Ok(files.install(OpenFile::Ram(ram), flags & O_CLOEXEC != 0)? as u64);
    }
    if flags & O_ACCMODE == O_ACCMODE {
        return Err(EINVAL);
    }
    let file = VarFile::open(var_path(name)?, flags)?;
    // EMFILE: the descriptor is dropped and its close posted to fsd.
    Ok(files.install(OpenFile::Var(file), flags & O_CLOEXEC != 0)? as u64)
}

/// What the ramdisk has at `name` (a program or a directory), as an open file.
fn ram_file(name: &[u8]) -> Option<RamFile> {
    let path = core::str::from_utf8(name).ok()?;
    proc::ramdisk::lookup(path).map(|node| RamFile::new(path, node))
}

/// `read` on a ramdisk descriptor: a program's bytes from the position on.
pub fn read_ram(f: &RamFile, addr: u64, count: u64) -> SysResult {
    if f.dir {
        return Err(EISDIR);
    }
    let pos = f.pos.load(Ordering::Acquire).min(f.data.len() as u64) as usize;
    let n = count.min(MAX_IO as u64).min((f.data.len() - pos) as u64) as usize;
    usercopy::copy_to_user(addr, &f.data[pos..pos + n])?;
    f.pos.store((pos + n) as u64, Ordering::Release);
    sched::account_read(n as u64);
    Ok(n as u64)
}

/// `read` on a `/var` descriptor.
pub fn read(v: &VarFile, addr: u64, count: u64) -> SysResult {
    if v.dir {
        return Err(EISDIR);
    }
    if v.flags & O_ACCMODE == O_WRONLY {
        return Err(EBADF);
    }
    let want = count.min(MAX_IO as u64) as usize;
    if want == 0 {
        sched::account_read(0);
        return Ok(0);
    }
    usercopy::check(addr, want as u64, true)?;
    let pos = v.pos.load(Ordering::Acquire);
    let data = match fs::call(Op::Read { node: v.node, pos, len: want })? {
        Done::Data(d) => d,
        _ => return Err(EIO),
    };
    usercopy::copy_to_user(addr, &data)?;
    v.pos.store(pos + data.len() as u64, Ordering::Release);
    sched::account_read(data.len() as u64);
    Ok(data.len() as u64)
}

/// `write` on a `/var` descriptor.
pub fn write(v: &VarFile, addr: u64, count: u64) -> SysResult {
    // A directory is open O_RDONLY: EBADF, as Linux says for it too.
    if v.flags & O_ACCMODE == O_RDONLY {
        return Err(EBADF);
    }
    if v.dir {
        return Err(EISDIR);
    }
    let n = count.min(MAX_IO as u64) as usize;
    usercopy::check(addr, n as u64, false)?;
    if n == 0 {
        sched::account_write(0);
        return Ok(0);
    }
    let mut data = vec![0u8; n];
    usercopy::copy_from_user(addr, &mut data)?;
    let append = v.flags & O_APPEND != 0;
    let pos = (!append).then(|| v.pos.load(Ordering::Acquire));
    let (written, end) = match fs::call(Op::Write { node: v.node, pos, data })? {
        Done::Wrote { n, end } => (n, end),
        _ => return Err(EIO),
    };
    v.pos.store(end, Ordering::Release);
    sched::account_write(written);
    Ok(written)
}

/// `lseek(fd, offset, whence)`.
pub fn lseek(a: &Args) -> SysResult {
    let (fd, off, whence) = (int_arg(a[0]), a[1] as i64, int_arg(a[2]) as u32);
    let f = super::io::file(fd)?;
    if let OpenFile::Ram(r) = &*f {
        return lseek_ram(r, off, whence);
    }
    let OpenFile::Var(v) = &*f else { return Err(ESPIPE) };
    if v.dir {
        // A directory's position is getdents64's cookie: only a rewind makes sense.
        if whence == SEEK_SET && off == 0 {
            v.pos.store(0, Ordering::Release);
            return Ok(0);
        }
        return Err(EINVAL);
    }
    let base = match whence {
        SEEK_SET => 0,
        SEEK_CUR => v.pos.load(Ordering::Acquire) as i64,
        SEEK_END => match fs::call(Op::Fstat { node: v.node })? {
            Done::Stat(s) => s.st_size,
            _ => return Err(EIO),
        },
        _ => return Err(EINVAL),
    };
    let new = base.checked_add(off).filter(|&p| p >= 0).ok_or(EINVAL)?;
    // FAT files end at 4 GiB.
    if new > i64::from(u32::MAX) {
        return Err(EINVAL);
    }
    v.pos.store(new as u64, Ordering::Release);
    Ok(new as u64)
}

/// `lseek` on a ramdisk descriptor: a program's position; a directory only rewinds.
fn lseek_ram(r: &RamFile, off: i64, whence: u32) -> SysResult {
    let base = match whence {
        _ if r.dir => {
            return if whence == SEEK_SET && off == 0 {
                r.pos.store(0, Ordering::Release);
                Ok(0)
            } else {
                Err(EINVAL)
            }
        }
        SEEK_SET => 0,
        SEEK_CUR => r.pos.load(Ordering::Acquire) as i64,
        SEEK_END => r.data.len() as i64,
        _ => return Err(EINVAL),
    };
    let new = base.checked_add(off).filter(|&p| p >= 0).ok_or(EINVAL)?;
    r.pos.store(new as u64, Ordering::Release);
    Ok(new as u64)
}

/// The `struct stat` of a device: a character device, read/write for its owner.
fn device_stat(rdev: u64) -> Stat {
    Stat { st_mode: S_IFCHR | 0o620, st_nlink: 1, st_rdev: rdev, st_blksize: 1024, ..Stat::default() }
}

fn put_stat(addr: u64, s: &Stat) -> SysResult {
    usercopy::copy_to_user(addr, &s.to_bytes())?;
    Ok(0)
}

/// `stat(path, buf)`.
pub fn stat(a: &Args) -> SysResult {
    let (path_addr, buf) = (a[0], a[1]);
    let name = user_path(path_addr)?;
    usercopy::check(buf, Stat::SIZE as u64, true)?;
    let s = match name.as_slice() {
        b"/dev/console" => device_stat(0x0501),
        b"/dev/ttyS1" => device_stat(0x0441),
        n if path::is_under_var(n) => match fs::call(Op::Stat { path: var_path(n)? })? {
            Done::Stat(s) => s,
            _ => return Err(EIO),
        },
        n => ram_file(n).ok_or(ENOENT)?.stat(),
    };
    put_stat(buf, &s)
}

/// `fstat(fd, buf)`: files on `/var`, and the other kinds of descriptor by type.
pub fn fstat(a: &Args) -> SysResult {
    let (fd, buf) = (int_arg(a[0]), a[1]);
    let f = super::io::file(fd)?;
    usercopy::check(buf, Stat::SIZE as u64, true)?;
    let s = match &*f {
        OpenFile::Var(v) => match fs::call(Op::Fstat { node: v.node })? {
            Done::Stat(s) => s,
            _ => return Err(EIO),
        },
        OpenFile::Console => device_stat(0x0501),
        OpenFile::Serial2 => device_stat(0x0441),
        OpenFile::PipeReader(_) | OpenFile::PipeWriter(_) => {
            Stat { st_mode: S_IFIFO | 0o600, st_nlink: 1, st_blksize: 4096, ..Stat::default() }
        }
        OpenFile::Socket(_) => Stat { st_mode: S_IFSOCK | 0o777, st_nlink: 1, st_blksize: 4096, ..Stat::default() },
        OpenFile::Ram(r) => r.stat(),
    };
    put_stat(buf, &s)
}

/// `mkdir(path, mode)` (`mode` ignored: FAT has no permissions).
pub fn mkdir(a: &Args) -> SysResult {
    let name = user_path(a[0])?;
    if !path::is_under_var(&name) {
        return Err(EROFS);
    }
    fs::call(Op::Mkdir { path: var_path(&name)? })?;
    Ok(0)
}

/// `unlink(path)`: a regular file that nobody has open (`EBUSY` otherwise; see docs/files.md).
pub fn unlink(a: &Args) -> SysResult {
    let name = user_path(a[0])?;
    if !path::is_under_var(&name) {
        return Err(EROFS);
    }
    fs::call(Op::Unlink { path: var_path(&name)? })?;
    Ok(0)
}

/// `getdents64(fd, buf, count)`: `linux_dirent64` records; 0 at the end.
pub fn getdents64(a: &Args) -> SysResult {
    let (fd, buf, count) = (int_arg(a[0]), a[1], a[2]);
    let f = super::io::file(fd)?;
    let max = count.min(MAX_IO as u64) as usize;
    if let OpenFile::Ram(r) = &*f {
        return getdents_ram(r, buf, max);
    }
    let OpenFile::Var(v) = &*f else { return Err(ENOTDIR) };
    if !v.dir {
        return Err(ENOTDIR);
    }
    if max < dirent64::reclen(1) {
        return Err(EINVAL);
    }
    usercopy::check(buf, max as u64, true)?;
    let cookie = v.pos.load(Ordering::Acquire);
    let (records, next) = match fs::call(Op::Dents { node: v.node, cookie, max })? {
        Done::Dents(r, next) => (r, next),
        _ => return Err(EIO),
    };
    usercopy::copy_to_user(buf, &records)?;
    v.pos.store(next, Ordering::Release);
    Ok(records.len() as u64)
}

/// `getdents64` on a ramdisk directory: the entries from index `pos` on, as many as fit in
/// `max` bytes (`EINVAL` if not even the next one does). Inode numbers are the entries'
/// places in the listing, from 1.
fn getdents_ram(r: &RamFile, buf: u64, max: usize) -> SysResult {
    if !r.dir {
        return Err(ENOTDIR);
    }
    let names = crate::proc::ramdisk::list(&r.path);
    let start = r.pos.load(Ordering::Acquire) as usize;
    let mut out = vec![0u8; max.min(names.len().saturating_sub(start) * dirent64::reclen(255))];
    let (mut used, mut next) = (0usize, start);
    for (i, &(name, dir)) in names.iter().enumerate().skip(start) {
        let d_type = if dir { DT_DIR } else { DT_REG };
        match dirent64::encode(&mut out[used..], i as u64 + 1, i as i64 + 1, d_type, name.as_bytes()) {
            Some(len) => used += len,
            None => break,
        }
        next = i + 1;
    }
    if used == 0 && next < names.len() {
        return Err(EINVAL);
    }
    usercopy::copy_to_user(buf, &out[..used])?;
    r.pos.store(next as u64, Ordering::Release);
    Ok(used as u64)
}

/// `fsync(fd)`: the file's directory entry and the drive's cache are on the disk.
pub fn fsync(a: &Args) -> SysResult {
    let f = super::io::file(int_arg(a[0]))?;
    let OpenFile::Var(v) = &*f else { return Err(EINVAL) };
    fs::call(Op::Fsync { node: v.node })?;
    Ok(0)
}
