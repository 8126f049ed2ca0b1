//! # Pipes: a bounded byte channel between two descriptors
//!
//! `pipe2(fds, 0)` makes a [`Pipe`] and two open files: a [`Reader`] and a [`Writer`].
//! The pipe holds at most [`PIPE_BUF_SIZE`] bytes. A reader of an empty pipe sleeps
//! (INTERRUPTIBLE_SLEEP — the time shows up in that microstate) until a writer adds bytes
//! or the last writer closes (then `read` returns 0: end of file); a writer to a full pipe
//! sleeps until a reader makes room. Writing when no reader is left fails with `EPIPE`
//! (and the system call raises `SIGPIPE` in the writer, `syscall/io.rs`). Writes of at most `PIPE_BUF_SIZE` bytes are atomic, as
//! POSIX requires for `PIPE_BUF`; larger ones may interleave with other writers.
//!
//! The bytes are copied between the caller's memory and the pipe's ring buffer directly, under
//! the pipe's lock, by a copy the caller passes in (the system call's direct user copy, which
//! never sleeps): no bounce buffer in between, and the check, the copy and the decision to
//! sleep are one critical section ([`WaitQueue::wait_for`]). So handing a one-byte token to a
//! sleeping reader — LMbench's `lat_ctx` — is one lock round on each side.
//!
//! Each end has its own `O_NONBLOCK` (`fcntl(F_SETFL)`, `syscall/io.rs`): instead of
//! sleeping, a non-blocking read of an empty pipe fails with `EAGAIN`, and a non-blocking
//! write writes what fits (a write of at most `PIPE_BUF_SIZE` bytes: all or nothing) and fails
//! with `EAGAIN` if that is nothing, as on Linux.
//!
//! **poll**: the read end is ready (POLLIN) when bytes wait and hung up (POLLHUP) when no
//! writer is left; the write end is ready (POLLOUT) while there is room and in error
//! (POLLERR) when no reader is left, as Linux's `pipe_poll` (`Reader::poll_ready`,
//! `Writer::poll_ready`). A write of more than the room left may still wait for the rest,
//! as on Linux.
//!
//! The ends count themselves: a `Reader`/`Writer` is one open file description, shared by
//! every descriptor that refers to it, and dropping the last reference to one closes that
//! end (its `Drop` wakes the other side so it can see end-of-file or `EPIPE`).

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};
use spin::Mutex;
use tally_sig::ERESTARTSYS;
use tally_uapi::errno::{EAGAIN, EFAULT, EPIPE};

use tally_uapi::poll::{POLLERR, POLLHUP, POLLIN, POLLOUT, POLLRDNORM, POLLWRNORM};

use crate::sync::{WaitQueue, WaitSet};

pub use crate::base::config::PIPE_BUF_SIZE;

/// A pipe's bytes and ends. The bytes sit in a ring of `PIPE_BUF_SIZE`: `len` of them from
/// `head` on, wrapping round the end.
struct State {
    ring: Box<[u8]>,
    head: usize,
    len: usize,
    readers: usize,
    writers: usize,
    /// A writer found no room and went to sleep on `writable` since the last reader's
    /// wake-up: only then must a read take the wait queue's lock to wake it (a `lat_ctx`
    /// reader never has one to wake).
    writer_waits: bool,
}

impl State {
    /// The oldest `n` (at most `len`) bytes, in one or two pieces (the second is empty
    /// unless they wrap round the end of the ring).
    fn held(&self, n: usize) -> (&[u8], &[u8]) {
        let first = n.min(PIPE_BUF_SIZE - self.head);
        (&self.ring[self.head..self.head + first], &self.ring[..n - first])
    }

    /// The oldest `n` bytes are read: drop them.
    fn consume(&mut self, n: usize) {
        self.head = (self.head + n) % PIPE_BUF_SIZE;
        self.len -= n;
    }

    /// Free space for `n` (at most `PIPE_BUF_SIZE - len`) more bytes after the ones held, in
    /// one or two pieces.
    fn room(&mut self, n: usize) -> (&mut [u8], &mut [u8]) {
        let tail = (self.head + self.len) % PIPE_BUF_SIZE;
        let first = n.min(PIPE_BUF_SIZE - tail);
        let (front, back) = self.ring.split_at_mut(tail);
        (&mut back[..first], &mut front[..n - first])
    }
}

pub struct Pipe {
    state: Mutex<State>,
    /// Readers waiting for bytes (or for the last writer to go).
    readable: WaitQueue,
    /// Writers waiting for room (or for the last reader to go).
    writable: WaitQueue,
}

/// The read end, and its `O_NONBLOCK` status flag (`fcntl(F_SETFL)`; one open file
/// description's own, as on Linux).
pub struct Reader(Arc<Pipe>, AtomicBool);
/// The write end, and its `O_NONBLOCK`.
pub struct Writer(Arc<Pipe>, AtomicBool);

/// A new pipe's two ends.
pub fn new() -> (Reader, Writer) {
    let ring = alloc::vec![0u8; PIPE_BUF_SIZE].into_boxed_slice();
    let pipe = Arc::new(Pipe {
        state: Mutex::new(State { ring, head: 0, len: 0, readers: 1, writers: 1, writer_waits: false }),
        readable: WaitQueue::new(),
        writable: WaitQueue::new(),
    });
    (Reader(Arc::clone(&pipe), AtomicBool::new(false)), Writer(pipe, AtomicBool::new(false)))
}

impl Pipe {
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        hal::cpu::without_interrupts(|| f(&mut self.state.lock()))
    }

    /// Bytes in the pipe now (`FIONREAD`).
    fn available(&self) -> usize {
        self.with(|s| s.len)
    }
}

impl Reader {
    /// Bytes waiting to be read (`ioctl(FIONREAD)`).
    pub fn available(&self) -> usize {
        self.0.available()
    }

    /// `O_NONBLOCK`: a read of an empty pipe with a writer fails with `EAGAIN`.
    pub fn nonblock(&self) -> bool {
        self.1.load(Ordering::Relaxed)
    }

    pub fn set_nonblock(&self, on: bool) {
        self.1.store(on, Ordering::Relaxed);
    }

    /// Read up to `want` (> 0) bytes: sleeps while the pipe is empty and has a writer.
    /// `copy_out(at, bytes)` puts `bytes` at offset `at` of the caller's buffer (false: that
    /// memory cannot be written now); it runs under the pipe's lock, so it must not sleep.
    /// 0 means end of file; `ERESTARTSYS` if the caller's process is being killed or a signal
    /// came (checked when it would sleep: `EINTR`, or a restart with `SA_RESTART`); `EFAULT` if `copy_out` fails, and then the bytes stay in the pipe.
    pub fn read(&self, want: usize, mut copy_out: impl FnMut(usize, &[u8]) -> bool) -> Result<usize, i32> {
        let p = &self.0;
        let n = p.readable.wait_for(|| {
            let mut s = p.state.lock();
            if s.len == 0 {
                // End of file, or sleep until a writer wakes us (`None` if killed meanwhile);
                // with O_NONBLOCK, EAGAIN instead of the sleep.
                if s.writers > 0 && self.nonblock() {
                    return Some(Err(EAGAIN));
                }
                return (s.writers == 0).then_some(Ok((0, false)));
            }
            let n = want.min(s.len);
            let (first, second) = s.held(n);
            if !copy_out(0, first) || !(second.is_empty() || copy_out(first.len(), second)) {
                return Some(Err(EFAULT));
            }
            s.consume(n);
            Some(Ok((n, core::mem::take(&mut s.writer_waits))))
        });
        let (n, wake_writers) = n.unwrap_or(Err(ERESTARTSYS))?;
        if wake_writers {
            p.writable.wake_all();
        }
        Ok(n)
    }
}

impl Writer {
    /// Bytes in the pipe, not yet read (`ioctl(FIONREAD)` on the write end, as Linux answers).
    pub fn available(&self) -> usize {
        self.0.available()
    }

    /// `O_NONBLOCK`: a write that would wait for room writes what fits (a write of at most
    /// `PIPE_BUF_SIZE` bytes: all or nothing) and fails with `EAGAIN` if that is nothing.
    pub fn nonblock(&self) -> bool {
        self.1.load(Ordering::Relaxed)
    }

    pub fn set_nonblock(&self, on: bool) {
        self.1.store(on, Ordering::Relaxed);
    }

    /// Write `len` bytes (sleeping for room as needed). `copy_in(at, into)` fills `into` from
    /// offset `at` of the caller's buffer (false: that memory cannot be read now); it runs
    /// under the pipe's lock, so it must not sleep. Returns `len`, or how much was written
    /// before the last reader closed (`EPIPE` if nothing was), the process was killed or a
    /// signal came (`ERESTARTSYS` if nothing was written, checked when it would sleep) or `copy_in` failed (`EFAULT`).
    pub fn write(&self, len: usize, mut copy_in: impl FnMut(usize, &mut [u8]) -> bool) -> Result<usize, i32> {
        let p = &self.0;
        let mut done = 0;
        while done < len {
            let rest = len - done;
            // A write that fits in PIPE_BUF waits until it fits whole (atomic).
            let need = if len <= PIPE_BUF_SIZE { rest } else { 1 };
            let wrote = p.writable.wait_for(|| {
                let mut s = p.state.lock();
                if s.readers == 0 {
                    return Some(Err(EPIPE));
                }
                let free = PIPE_BUF_SIZE - s.len;
                if free < need && self.nonblock() {
                    return Some(Err(EAGAIN));
                }
                if free < need {
                    // Sleep until a reader makes room (`None` if killed meanwhile). The
                    // flag is set in the critical section that puts us on `writable`, so
                    // the reader that makes room sees it.
                    s.writer_waits = true;
                    return None;
                }
                let n = rest.min(free);
                let (first, second) = s.room(n);
                let at = done + first.len();
                if !copy_in(done, first) || !(second.is_empty() || copy_in(at, second)) {
                    return Some(Err(EFAULT));
                }
                s.len += n;
                Some(Ok(n))
            });
            match wrote.unwrap_or(Err(ERESTARTSYS)) {
                Ok(n) => {
                    done += n;
                    p.readable.wake_all();
                }
                Err(e) => return if done > 0 { Ok(done) } else { Err(e) },
            }
        }
        Ok(done)
    }
}

impl Reader {
    /// `poll` on the read end: POLLIN when bytes wait, POLLHUP once no writer is left (as
    /// Linux's `pipe_poll`); the readers' queue joins `set`. Interrupts off (the caller's
    /// critical section spans the check and the sleep).
    pub fn poll_ready<'a>(&'a self, set: &mut WaitSet<'a>) -> i16 {
        let p = &self.0;
        let (len, writers) = {
            let s = p.state.lock();
            (s.len, s.writers)
        };
        set.add(&p.readable);
        let data = if len > 0 { POLLIN | POLLRDNORM } else { 0 };
        let hup = if writers == 0 { POLLHUP } else { 0 };
        data | hup
    }
}

impl Writer {
    /// `poll` on the write end: POLLOUT while there is room, POLLERR once no reader is left
    /// (Linux's `pipe_poll`); the writers' queue joins `set`. A full pipe also sets
    /// `writer_waits`, in this critical section, so the reader that makes room wakes the
    /// poller as it would a sleeping writer.
    pub fn poll_ready<'a>(&'a self, set: &mut WaitSet<'a>) -> i16 {
        let p = &self.0;
        let (room, readers) = {
            let mut s = p.state.lock();
            let room = s.len < PIPE_BUF_SIZE;
            if !room {
                s.writer_waits = true;
            }
            (room, s.readers)
        };
        set.add(&p.writable);
        let out = if room { POLLOUT | POLLWRNORM } else { 0 };
        let err = if readers == 0 { POLLERR } else { 0 };
        out | err
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.0.with(|s| s.readers -= 1);
        self.0.writable.wake_all();
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.0.with(|s| s.writers -= 1);
        self.0.readable.wake_all();
    }
}
