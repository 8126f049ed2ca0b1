//! # Files on `/var`: whole-file reads, directory listings, an owned descriptor
//!
//! The system calls for files are in [`crate::sys`] (`open`, `read`, `write`, `lseek`,
//! `fstat`, `getdents64`, ...); this module is the little a C library adds on top, so
//! that `cat`, `ls` and the accounting tools read like their Linux counterparts:
//!
//! * [`File`]: a descriptor closed when dropped (an early `return` cannot leak it — the
//!   kernel's table per process is small);
//! * [`read_file`]: a whole file into a `Vec` (accounting files are read whole, then
//!   decoded with `tally-pacct` / `tally-csa`);
//! * [`read_dir`]: the entries of a directory, from `getdents64`'s `linux_dirent64`
//!   records;
//! * [`write_file`]: create/append and write all.
#![forbid(unsafe_code)]

use alloc::string::String;
use alloc::vec::Vec;

use tally_uapi::fs::{dirent64, Stat, O_DIRECTORY, O_RDONLY};

use crate::sys;
use crate::Errno;

/// An open file descriptor, closed on drop.
#[derive(Debug)]
pub struct File {
    fd: usize,
}

impl File {
    /// `open(path, flags, mode)`.
    pub fn open(path: &str, flags: u32, mode: u32) -> Result<File, Errno> {
        sys::open(path, flags, mode).map(|fd| File { fd })
    }

    /// The descriptor number.
    pub fn fd(&self) -> usize {
        self.fd
    }

    /// `read` into `buf`: bytes read, 0 at the end.
    pub fn read(&mut self, buf: &mut [u8]) -> Result<usize, Errno> {
        sys::read(self.fd, buf)
    }

    /// Writes all of `buf`.
    pub fn write_all(&mut self, buf: &[u8]) -> Result<(), Errno> {
        sys::write_all(self.fd, buf)
    }

    /// `fstat`.
    pub fn stat(&self) -> Result<Stat, Errno> {
        sys::fstat(self.fd)
    }

    /// `fsync`.
    pub fn sync(&self) -> Result<(), Errno> {
        sys::fsync(self.fd).map(|_| ())
    }

    /// Everything from the current offset to the end of the file.
    pub fn read_to_end(&mut self) -> Result<Vec<u8>, Errno> {
        let mut out = Vec::new();
        let mut chunk = alloc::vec![0u8; 4096];
        loop {
            match self.read(&mut chunk)? {
                0 => return Ok(out),
                n => out.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// `close`, reporting its error (dropping closes too, but ignores it).
    pub fn close(self) -> Result<(), Errno> {
        let fd = self.fd;
        core::mem::forget(self);
        sys::close(fd).map(|_| ())
    }
}

impl Drop for File {
    fn drop(&mut self) {
        let _ = sys::close(self.fd);
    }
}

/// The whole file at `path`.
pub fn read_file(path: &str) -> Result<Vec<u8>, Errno> {
    File::open(path, O_RDONLY, 0)?.read_to_end()
}

/// Opens `path` with `flags` (e.g. `O_WRONLY | O_CREAT | O_APPEND`), writes all of `data`
/// and closes it (a close error, which can be the disk's, is reported).
pub fn write_file(path: &str, flags: u32, data: &[u8]) -> Result<(), Errno> {
    let mut f = File::open(path, flags, 0o644)?;
    f.write_all(data)?;
    f.close()
}

/// One directory entry, as `getdents64` reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub ino: u64,
    /// `DT_DIR`, `DT_REG` or `DT_UNKNOWN` (`tally_uapi::fs`).
    pub d_type: u8,
    pub name: String,
}

/// The entries of directory `path` in the order the kernel gives them (`.` and `..`
/// included where the file system has them: FAT subdirectories do, its root does not).
pub fn read_dir(path: &str) -> Result<Vec<DirEntry>, Errno> {
    let dir = File::open(path, O_RDONLY | O_DIRECTORY, 0)?;
    let mut out = Vec::new();
    let mut buf = alloc::vec![0u8; 2048];
    loop {
        let n = sys::getdents64(dir.fd(), &mut buf)?;
        if n == 0 {
            return Ok(out);
        }
        let mut rest = buf.get(..n).unwrap_or(&[]);
        while let Some(((ino, _off, d_type, name), len)) = dirent64::decode(rest) {
            out.push(DirEntry { ino, d_type, name: String::from_utf8_lossy(name).into_owned() });
            rest = rest.get(len..).unwrap_or(&[]);
        }
    }
}
