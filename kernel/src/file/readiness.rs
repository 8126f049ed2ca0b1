//! What an open file is ready for: the question `poll` asks each descriptor.
//!
//! [`OpenFile::poll_ready`] answers with the `POLL*` bits that hold *now* — data to read
//! (POLLIN), room to write (POLLOUT), hung up (POLLHUP), in error (POLLERR) — and adds the
//! wait queue whose wake-up would change the answer to the caller's [`WaitSet`], so `poll`
//! can sleep on all its descriptors at once (`sync/waitset.rs`). Each kind answers as Linux's
//! `f_op->poll` does:
//!
//! | open file | ready for | wakes on |
//! |---|---|---|
//! | the console | POLLIN once a read would not wait (a line, end of input, `VMIN` bytes); POLLOUT always | every byte received, every `TCSETS` |
//! | a pipe's read end | POLLIN when bytes wait; POLLHUP when no writer is left | writes, the last writer's close |
//! | a pipe's write end | POLLOUT while there is room; POLLERR when no reader is left | reads that make room, the last reader's close |
//! | a bus socket | POLLIN when a datagram (or `ENOBUFS`) waits; POLLOUT always | every delivery and reply |
//! | `/dev/ttyS1` (write-only) | POLLOUT always | — |
//! | a file on `/var`, a ramdisk file | everything, always (Linux's `DEFAULT_POLLMASK`: they never block) | — |
//!
//! Called with interrupts off: the caller's critical section spans every file's answer and
//! the sleep, so no wake-up falls between them.

use tally_uapi::poll::{POLLOUT, POLLWRNORM};
use tally_usync::poll::{Ready, ALWAYS_READY};

use super::OpenFile;
use crate::sync::WaitSet;

impl OpenFile {
    /// What the file is ready for now (see the module documentation); its wait queue joins
    /// `set`.
    pub fn poll_ready<'a>(&'a self, set: &mut WaitSet<'a>) -> Ready {
        match self {
            OpenFile::Console => crate::drivers::tty::poll_ready(set),
            OpenFile::Serial2 => POLLOUT | POLLWRNORM,
            OpenFile::PipeReader(r) => r.poll_ready(set),
            OpenFile::PipeWriter(w) => w.poll_ready(set),
            OpenFile::Socket(s) => s.poll_ready(set),
            OpenFile::Var(_) | OpenFile::Ram(_) => ALWAYS_READY,
        }
    }
}
