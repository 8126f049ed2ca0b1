//! A process's table of file descriptors, and what a descriptor can refer to.

use alloc::sync::Arc;
use alloc::vec::Vec;
use spin::Mutex;
use tally_uapi::errno::{EBADF, EMFILE};

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

    /// The open file behind `fd` (`EBADF` if none). Call with interrupts off: its one
    /// caller, `proc::current_file`, looks the table up under the process table's lock,
    /// which has turned them off already (no second save of the flag on every `read`).
    pub fn get_irqs_off(&self, fd: i32) -> Result<Arc<OpenFile>, i32> {
        let i = usize::try_from(fd).map_err(|_| EBADF)?;
        self.fds.lock().get(i).cloned().flatten().ok_or(EBADF)
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
