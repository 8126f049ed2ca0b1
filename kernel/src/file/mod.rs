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
//! * a **file or directory on `/var`** (`open("/var/...")`, [`crate::fs`]): the FAT16
//!   accounting disk, served by the fsd thread; closing the last descriptor posts the close
//!   to fsd without waiting, so a process's exit never waits for the disk,
//! * a **ramdisk file or directory** (`open("/bin", O_DIRECTORY)`, [`ram_file`]): the
//!   programs, read-only, so `ls /bin` lists them,
//! * a **bus socket** (`socket(AF_NETLINK, ...)`, `crate::bus`) — how programs talk to the
//!   kernel's generic-netlink families (taskstats).
//!
//! Threads share their process's table (one `Arc`); a process started with `spawn`
//! inherits a copy of its parent's table, as `posix_spawn` without file actions does, so a
//! parent can hand its children pipe ends — less the descriptors marked close-on-exec
//! (`O_CLOEXEC`, `FD_CLOEXEC`), since `spawn` is fork + exec: that is how a parent keeps the
//! ends a child must not hold, so that readers see end of file (`table.rs`). A process's files are closed when its last
//! thread exits ([`FileTable::close_all`], called outside the table's lock because closing a
//! pipe end wakes its peers and closing a socket takes the bus lock).
//!
//! What each kind is ready for, for `poll`: `readiness.rs` (`OpenFile::poll_ready`).
//!
//! See `docs/user-mode.md` (descriptors from user space; poll) and `docs/architecture.md`.

pub mod pipe;
pub mod ram_file;
mod readiness;
mod table;

pub use ram_file::RamFile;
pub use table::{FileTable, OpenFile};
