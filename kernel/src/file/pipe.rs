//! # Pipes: a bounded byte channel between two descriptors
//!
//! `pipe2(fds, 0)` makes a [`Pipe`] and two open files: a [`Reader`] and a [`Writer`].
//! The pipe holds at most [`PIPE_BUF_SIZE`] bytes. A reader of an empty pipe sleeps
//! (INTERRUPTIBLE_SLEEP — the time shows up in that microstate) until a writer adds bytes
//! or the last writer closes (then `read` returns 0: end of file); a writer to a full pipe
//! sleeps until a reader makes room. Writing when no reader is left fails with `EPIPE`
//! (Tally delivers no `SIGPIPE`). Writes of at most `PIPE_BUF_SIZE` bytes are atomic, as
//! POSIX requires for `PIPE_BUF`; larger ones may interleave with other writers.
//!
//! The ends count themselves: a `Reader`/`Writer` is one open file description, shared by
//! every descriptor that refers to it, and dropping the last reference to one closes that
//! end (its `Drop` wakes the other side so it can see end-of-file or `EPIPE`).

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use spin::Mutex;
use tally_runqueue::SleepKind;
use tally_uapi::errno::{EINTR, EPIPE};

use crate::sched;
use crate::sync::WaitQueue;

pub use crate::base::config::PIPE_BUF_SIZE;

struct State {
    bytes: VecDeque<u8>,
    readers: usize,
    writers: usize,
}

pub struct Pipe {
    state: Mutex<State>,
    /// Readers waiting for bytes (or for the last writer to go).
    readable: WaitQueue,
    /// Writers waiting for room (or for the last reader to go).
    writable: WaitQueue,
}

/// The read end.
pub struct Reader(Arc<Pipe>);
/// The write end.
pub struct Writer(Arc<Pipe>);

/// A new pipe's two ends.
pub fn new() -> (Reader, Writer) {
    let pipe = Arc::new(Pipe {
        state: Mutex::new(State { bytes: VecDeque::with_capacity(PIPE_BUF_SIZE), readers: 1, writers: 1 }),
        readable: WaitQueue::new(),
        writable: WaitQueue::new(),
    });
    (Reader(Arc::clone(&pipe)), Writer(pipe))
}

impl Pipe {
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        hal::cpu::without_interrupts(|| f(&mut self.state.lock()))
    }
}

impl Reader {
    /// Read up to `buf.len()` (> 0) bytes: sleeps while the pipe is empty and has a writer.
    /// 0 means end of file. `EINTR` if the caller's process is being killed.
    pub fn read(&self, buf: &mut [u8]) -> Result<usize, i32> {
        let p = &self.0;
        loop {
            p.readable.wait_until(SleepKind::Interruptible, None, || {
                p.with(|s| !s.bytes.is_empty() || s.writers == 0) || sched::kill_pending()
            });
            if sched::kill_pending() {
                return Err(EINTR);
            }
            let n = p.with(|s| {
                if s.bytes.is_empty() {
                    return (s.writers == 0).then_some(0);
                }
                let n = buf.len().min(s.bytes.len());
                for (d, b) in buf.iter_mut().zip(s.bytes.drain(..n)) {
                    *d = b;
                }
                Some(n)
            });
            if let Some(n) = n {
                if n > 0 {
                    p.writable.wake_all();
                }
                return Ok(n);
            }
        }
    }
}

impl Writer {
    /// Write all of `buf` (sleeping for room as needed); returns `buf.len()`, or how much
    /// was written before the last reader closed (`EPIPE` if nothing was).
    pub fn write(&self, buf: &[u8]) -> Result<usize, i32> {
        let p = &self.0;
        let mut done = 0;
        while done < buf.len() {
            let rest = &buf[done..];
            // A write that fits in PIPE_BUF waits until it fits whole (atomic).
            let need = if buf.len() <= PIPE_BUF_SIZE { rest.len() } else { 1 };
            p.writable.wait_until(SleepKind::Interruptible, None, || {
                p.with(|s| PIPE_BUF_SIZE - s.bytes.len() >= need || s.readers == 0) || sched::kill_pending()
            });
            if sched::kill_pending() {
                return if done > 0 { Ok(done) } else { Err(EINTR) };
            }
            let wrote = p.with(|s| {
                if s.readers == 0 {
                    return None;
                }
                let n = rest.len().min(PIPE_BUF_SIZE - s.bytes.len());
                s.bytes.extend(&rest[..n]);
                Some(n)
            });
            match wrote {
                None => return if done > 0 { Ok(done) } else { Err(EPIPE) },
                Some(n) => {
                    done += n;
                    if n > 0 {
                        p.readable.wake_all();
                    }
                }
            }
        }
        Ok(done)
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
