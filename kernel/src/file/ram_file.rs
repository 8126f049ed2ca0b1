//! # Ramdisk files: the programs and their directories, read-only
//!
//! The ramdisk (`proc::ramdisk`) is where programs come from; it is also readable through
//! descriptors, so `ls /bin` lists the programs (the shell's `help` does) and `cat` could
//! read one: `open` of a path outside `/var` and `/dev` that the ramdisk has, read-only,
//! gives a [`RamFile`]. A directory (`/`, `/bin`, `/test`: every prefix of a program's path)
//! answers `getdents64` from the archive's listing; a program answers `read` from its bytes
//! where they lie. `stat` reports mode 0555 (a directory: `S_IFDIR`; a program: `S_IFREG`,
//! its size), uid 0 and time 0 (the archive records none). Writing or creating is `EROFS`.
//! See `docs/files.md` §7.

use alloc::string::String;
use core::sync::atomic::AtomicU64;

use tally_loader::cpio::Node;
use tally_uapi::fs::{Stat, S_IFDIR, S_IFREG};

/// An open file or directory of the ramdisk.
pub struct RamFile {
    /// The path as opened, normalized (`bin`, or empty for the root): a directory's key.
    pub path: String,
    /// A program's bytes (empty for a directory).
    pub data: &'static [u8],
    pub dir: bool,
    /// The read position (a directory: the index of the next entry, getdents64's cookie).
    pub pos: AtomicU64,
}

impl RamFile {
    /// An open file for `node`, what the ramdisk has at `path` (`proc::ramdisk::lookup`: the
    /// system call looks it up, this floor only keeps it).
    pub fn new(path: &str, node: Node<'static>) -> RamFile {
        let path = String::from(tally_loader::cpio::normalize(path).trim_end_matches('/'));
        match node {
            Node::File(e) => RamFile { path, data: e.data, dir: false, pos: AtomicU64::new(0) },
            Node::Dir => RamFile { path, data: &[], dir: true, pos: AtomicU64::new(0) },
        }
    }

    /// Its `struct stat`.
    pub fn stat(&self) -> Stat {
        let mode = if self.dir { S_IFDIR | 0o555 } else { S_IFREG | 0o555 };
        let size = self.data.len() as i64;
        Stat {
            st_mode: mode,
            st_nlink: 1,
            st_size: size,
            st_blksize: 4096,
            st_blocks: (size + 511) / 512,
            ..Stat::default()
        }
    }
}
