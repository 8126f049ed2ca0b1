//! # Open files: each process's table of file descriptors
//!
//! A file descriptor is an index into the calling process's [`FileTable`]; the slot holds
//! an [`OpenFile`] shared by every descriptor (and every process) that refers to it — the
//! "open file description" of POSIX. Tally has no file system: what a descriptor can name is
//!
//! * the **console** (descriptors 0, 1 and 2 of every process started by the kernel),
//! * one end of a **pipe** (`pipe2`, [`pipe`]) — the blocking channel LMbench's `lat_ctx`
//!   passes its token through,
//! * the **second serial port** (`open("/dev/ttyS1", O_WRONLY)`): raw bytes to the host,
//!   which `cargo xtask run --capture FILE` writes to a file (`getdelays -w`),
//! * a **bus socket** (`socket(AF_NETLINK, ...)`, `crate::bus`) — how programs talk to the
//!   kernel's generic-netlink families (taskstats).
//!
//! Threads share their process's table (one `Arc`); a process started with `spawn`
//! inherits a copy of its parent's table, as `posix_spawn` without file actions does, so a
//! parent can hand its children pipe ends. A process's files are closed when its last
//! thread exits ([`FileTable::close_all`], called outside the kernel lock because closing a
//! pipe end wakes its peers and closing a socket takes the bus lock).

pub mod pipe;

use alloc::sync::Arc;
use alloc::vec::Vec;
use spin::Mutex;
use tally_uapi::errno::{EBADF, EMFILE};


/// Most descriptors a process may have open (Linux's default `RLIMIT_NOFILE` soft limit).
pub const MAX_FDS: usize = 1024;

/// What a descriptor refers to.
pub enum OpenFile {
    Console,
    /// `/dev/ttyS1`: the second serial port, write-only, bytes sent unchanged.
    Serial2,
    PipeReader(pipe::Reader),
    PipeWriter(pipe::Writer),
    Socket(crate::bus::Socket),
}

/// A process's descriptors.
pub struct FileTable {
    fds: Mutex<Vec<Option<Arc<OpenFile>>>>,
}

impl FileTable {
    /// Descriptors 0, 1 and 2 on the console: what the kernel gives the processes it starts.
    pub fn with_console() -> Self {
        let console = Arc::new(OpenFile::Console);
        let fds = (0..3).map(|_| Some(Arc::clone(&console))).collect();
        FileTable { fds: Mutex::new(fds) }
    }

    /// A copy for a new process: the same open files under the same numbers.
    pub fn inherit(&self) -> Self {
        let fds = hal::cpu::without_interrupts(|| self.fds.lock().clone());
        FileTable { fds: Mutex::new(fds) }
    }

    /// The open file behind `fd` (`EBADF` if none).
    pub fn get(&self, fd: i32) -> Result<Arc<OpenFile>, i32> {
        let i = usize::try_from(fd).map_err(|_| EBADF)?;
        hal::cpu::without_interrupts(|| self.fds.lock().get(i).cloned().flatten()).ok_or(EBADF)
    }

    /// Put `file` in the lowest free descriptor (`EMFILE` if there is none).
    pub fn install(&self, file: OpenFile) -> Result<i32, i32> {
        let file = Arc::new(file);
        let placed = hal::cpu::without_interrupts(|| {
            let mut fds = self.fds.lock();
            if let Some(i) = fds.iter().position(Option::is_none) {
                fds[i] = Some(file.clone());
                return Some(i);
            }
            (fds.len() < MAX_FDS).then(|| {
                fds.push(Some(file.clone()));
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
