//! A process's table of file descriptors, and what a descriptor can refer to.
//!
//! Each slot holds the open file and the one flag POSIX keeps per *descriptor* rather than
//! per open file: close-on-exec (`FD_CLOEXEC`). `fork` copies the whole table
//! ([`FileTable::fork`]) and `execve` closes the close-on-exec descriptors
//! ([`FileTable::close_on_exec`]); `spawn` is `posix_spawn`, i.e. fork + exec in one step:
//! the child's copy of the table ([`FileTable::inherit`]) leaves the close-on-exec
//! descriptors out, exactly as exec would close them. That is how a parent keeps a pipe end
//! to itself (`pipe2(fds, O_CLOEXEC)`, `fcntl(fd, F_SETFD, FD_CLOEXEC)`), so a reader can see
//! end of file once its writers are gone (`docs/files.md`).

use alloc::sync::Arc;
use alloc::vec::Vec;
use spin::Mutex;
use tally_uapi::errno::{EBADF, EINVAL, EMFILE};

pub use crate::base::config::MAX_FDS;

/// What a descriptor refers to.
pub enum OpenFile {
    Console,
    /// `/dev/ttyS1`: the second serial port, write-only, bytes sent unchanged.
    Serial2,
    PipeReader(super::pipe::Reader),
    PipeWriter(super::pipe::Writer),
    Socket(crate::bus::Socket),
    /// A file or directory on `/var` (the accounting disk, `crate::fs`).
    Var(crate::fs::VarFile),
    /// A program or directory of the ramdisk, read-only (`ram_file.rs`).
    Ram(super::RamFile),
}

/// One descriptor: the open file (shared with every other descriptor and process that
/// refers to it) and its close-on-exec flag (this descriptor's own).
#[derive(Clone)]
struct Fd {
    file: Arc<OpenFile>,
    cloexec: bool,
}

/// A process's descriptors.
pub struct FileTable {
    fds: Mutex<Vec<Option<Fd>>>,
}

impl FileTable {
    /// Descriptors 0, 1 and 2 on the console: what the kernel gives the processes it starts.
    pub fn with_console() -> Self {
        let console = Arc::new(OpenFile::Console);
        let fds = (0..3).map(|_| Some(Fd { file: Arc::clone(&console), cloexec: false })).collect();
        FileTable { fds: Mutex::new(fds) }
    }

    /// A copy for a new process (`spawn`): the same open files under the same numbers, less
    /// the close-on-exec descriptors, whose numbers are free in the copy (as after `exec`).
    pub fn inherit(&self) -> Self {
        let fds = hal::cpu::without_interrupts(|| {
            let fds = self.fds.lock();
            let mut copy: Vec<Option<Fd>> = fds.iter().map(|d| d.as_ref().filter(|d| !d.cloexec).cloned()).collect();
            // No trailing free slots: the copy is as short as it can be.
            while copy.last().is_some_and(Option::is_none) {
                copy.pop();
            }
            copy
        });
        FileTable { fds: Mutex::new(fds) }
    }

    /// A copy for a forked child (`fork`, `vfork`, `clone` without `CLONE_FILES`): every
    /// descriptor under the same number, close-on-exec ones included, each referring to the
    /// same open file (so a pipe end now has one more holder, and its reader or writer
    /// count sees the child's copy until the child closes it or exits), with its own
    /// close-on-exec flag copied.
    pub fn fork(&self) -> Self {
        let fds = hal::cpu::without_interrupts(|| self.fds.lock().clone());
        FileTable { fds: Mutex::new(fds) }
    }

    /// `execve`: close every close-on-exec descriptor (outside the table's lock: closing a
    /// pipe end wakes its peers, a socket takes the bus's lock). Returns how many closed.
    pub fn close_on_exec(&self) -> usize {
        let closed: Vec<Fd> = hal::cpu::without_interrupts(|| {
            let mut fds = self.fds.lock();
            let mut closed = Vec::new();
            for slot in fds.iter_mut() {
                if slot.as_ref().is_some_and(|d| d.cloexec) {
                    closed.extend(slot.take());
                }
            }
            while fds.last().is_some_and(Option::is_none) {
                fds.pop();
            }
            closed
        });
        let n = closed.len();
        drop(closed);
        n
    }

    /// The open file behind `fd` (`EBADF` if none). Call with interrupts off: its one
    /// caller, `proc::current_file`, looks the table up under the process table's lock,
    /// which has turned them off already (no second save of the flag on every `read`).
    pub fn get_irqs_off(&self, fd: i32) -> Result<Arc<OpenFile>, i32> {
        let i = usize::try_from(fd).map_err(|_| EBADF)?;
        self.fds.lock().get(i).and_then(|d| d.as_ref().map(|d| Arc::clone(&d.file))).ok_or(EBADF)
    }

    /// Put `file` in the lowest free descriptor, with close-on-exec set or not (`EMFILE` if
    /// there is none).
    pub fn install(&self, file: OpenFile, cloexec: bool) -> Result<i32, i32> {
        let file = Arc::new(file);
        let placed = hal::cpu::without_interrupts(|| {
            let mut fds = self.fds.lock();
            let fd = Fd { file: file.clone(), cloexec };
            if let Some(i) = fds.iter().position(Option::is_none) {
                fds[i] = Some(fd);
                return Some(i);
            }
            (fds.len() < MAX_FDS).then(|| {
                fds.push(Some(fd));
                fds.len() - 1
            })
        });
        // On failure `file` is dropped here, outside the table lock.
        placed.map(|i| i as i32).ok_or(EMFILE)
    }

    /// Free descriptors `fd`: the file closes when no descriptor refers to it any more.
    pub fn close(&self, fd: i32) -> Result<(), i32> {
        let i = usize::try_from(fd).map_err(|_| EBADF)?;
        let file = hal::cpu::without_interrupts(|| self.fds.lock().get_mut(i).and_then(Option::take)).ok_or(EBADF)?;
        drop(file); // outside the table lock
        Ok(())
    }

    /// Descriptor `fd`'s close-on-exec flag (`EBADF` if `fd` is not open).
    pub fn cloexec(&self, fd: i32) -> Result<bool, i32> {
        self.with_fd(fd, |d| d.cloexec)
    }

    /// Set or clear descriptor `fd`'s close-on-exec flag (`EBADF` if `fd` is not open).
    pub fn set_cloexec(&self, fd: i32, on: bool) -> Result<(), i32> {
        self.with_fd(fd, |d| d.cloexec = on)
    }

    /// `dup2`/`dup3`: descriptor `new` refers to `old`'s open file, with close-on-exec
    /// `cloexec`; what `new` referred to is closed (outside the lock). `EBADF` if `old` is not
    /// open or `new` is outside `0..MAX_FDS`. (`old == new` is the caller's business.)
    pub fn dup_to(&self, old: i32, new: i32, cloexec: bool) -> Result<i32, i32> {
        let (o, n) = (usize::try_from(old).map_err(|_| EBADF)?, usize::try_from(new).map_err(|_| EBADF)?);
        if n >= MAX_FDS {
            return Err(EBADF);
        }
        let replaced = hal::cpu::without_interrupts(|| {
            let mut fds = self.fds.lock();
            let file = fds.get(o).and_then(|d| d.as_ref().map(|d| Arc::clone(&d.file))).ok_or(EBADF)?;
            if fds.len() <= n {
                fds.resize(n + 1, None);
            }
            Ok::<_, i32>(fds[n].replace(Fd { file, cloexec }))
        })?;
        drop(replaced); // outside the table lock
        Ok(new)
    }

    /// `F_DUPFD`/`F_DUPFD_CLOEXEC`: the lowest free descriptor at or above `min` becomes a
    /// copy of `old` (`EBADF` if `old` is not open, `EINVAL` if `min` is out of range,
    /// `EMFILE` if every descriptor from `min` on is taken).
    pub fn dup_from(&self, old: i32, min: i32, cloexec: bool) -> Result<i32, i32> {
        let o = usize::try_from(old).map_err(|_| EBADF)?;
        let min = usize::try_from(min).ok().filter(|&m| m < MAX_FDS).ok_or(EINVAL)?;
        hal::cpu::without_interrupts(|| {
            let mut fds = self.fds.lock();
            let file = fds.get(o).and_then(|d| d.as_ref().map(|d| Arc::clone(&d.file))).ok_or(EBADF)?;
            let i = (min..MAX_FDS).find(|&i| fds.get(i).is_none_or(Option::is_none)).ok_or(EMFILE)?;
            if fds.len() <= i {
                fds.resize(i + 1, None);
            }
            fds[i] = Some(Fd { file, cloexec });
            Ok(i as i32)
        })
    }

    fn with_fd<R>(&self, fd: i32, f: impl FnOnce(&mut Fd) -> R) -> Result<R, i32> {
        let i = usize::try_from(fd).map_err(|_| EBADF)?;
        hal::cpu::without_interrupts(|| self.fds.lock().get_mut(i).and_then(Option::as_mut).map(f)).ok_or(EBADF)
    }

    /// Close every descriptor (the process's last thread is exiting).
    pub fn close_all(&self) {
        let all = hal::cpu::without_interrupts(|| core::mem::take(&mut *self.fds.lock()));
        drop(all);
    }

    /// How many descriptors are open.
    #[allow(dead_code)]
    pub fn open_count(&self) -> usize {
        hal::cpu::without_interrupts(|| self.fds.lock().iter().filter(|f| f.is_some()).count())
    }
}
