//! `readv` and `writev`: scatter/gather I/O over an array of `struct iovec`
//! (`tally_uapi::uio`), and the iovec arrays `sendmsg`/`recvmsg` share (`netlink.rs`).
//!
//! musl's stdio reads and writes through these (`printf` is one `writev` of the buffered
//! text and the rest; `fgets` one `readv` into the caller's buffer and stdio's own), so
//! each kind of file does what its `read`/`write` does, once, over all the segments:
//!
//! * a **pipe** reads or writes the whole array in one pass under the pipe's lock, the
//!   bytes copied straight between the segments and the ring (`Reader::read`'s offset is
//!   mapped to a segment): a `writev` of at most `PIPE_BUF` bytes is atomic, as POSIX
//!   requires, and a `readv` takes what is there, like `read`;
//! * a **bus socket** receives one datagram scattered over the segments (the rest of it
//!   lost, as on Linux) and sends the gathered bytes as one request;
//! * the **console** reads what is typed (up to 256 bytes, as `read`) and scatters it;
//! * **files** on `/var` and the ramdisk, the console's output and `/dev/ttyS1` do one
//!   `read`/`write` per segment, in order, and stop at the first short one.
//!
//! Counted as one read or write call, of all the bytes moved (Linux's `do_readv`:
//! one `syscr`). Errors as Linux's `import_iovec`: `iovcnt` above [`IOV_MAX`] or negative,
//! or lengths whose sum overflows `ssize_t`, `EINVAL`; an array not readable `EFAULT`;
//! `iovcnt` 0 returns 0. The total is cut to `MAX_RW_COUNT` (a short transfer). An error
//! after some bytes moved returns the count so far.

use alloc::vec::Vec;
use tally_uapi::errno::{EBADF, EINVAL};
use tally_uapi::uio::{Iovec, IOVEC_SIZE, IOV_MAX, MAX_RW_COUNT};

use super::{int_arg, io, usercopy, Args, SysResult};
use crate::file::{pipe, OpenFile};
use crate::sched;

/// A checked iovec array: its segments (lengths cut so their sum is at most
/// `MAX_RW_COUNT`), and that sum.
pub struct Iov {
    pub segs: Vec<Iovec>,
    pub total: u64,
}

impl Iov {
    /// Read and check `count` iovecs at `addr` (`count` as `int`, as Linux's `iovcnt`).
    pub fn from_user(addr: u64, count: u64) -> Result<Iov, i32> {
        Self::from_user_len(addr, int_arg(count) as i64)
    }

    /// As [`from_user`](Self::from_user), for a count that is a `size_t` (`msg_iovlen`).
    pub fn from_user_len(addr: u64, count: i64) -> Result<Iov, i32> {
        if !(0..=IOV_MAX as i64).contains(&count) {
            return Err(EINVAL);
        }
        let mut raw = alloc::vec![0u8; count as usize * IOVEC_SIZE];
        usercopy::copy_from_user(addr, &mut raw)?;
        let mut segs = Vec::with_capacity(count as usize);
        let mut total: u64 = 0;
        for one in raw.as_chunks::<IOVEC_SIZE>().0 {
            let mut v = Iovec::from_bytes(one);
            if v.len > i64::MAX as u64 {
                return Err(EINVAL); // a negative ssize_t
            }
            v.len = v.len.min(MAX_RW_COUNT - total);
            total += v.len;
            segs.push(v);
        }
        Ok(Iov { segs, total })
    }

    /// The user memory of bytes `at..at + n` of the array, segment by segment: `(address,
    /// offset in those n bytes, length)`.
    fn pieces(&self, mut at: u64, n: usize) -> impl Iterator<Item = (u64, usize, usize)> + '_ {
        let mut left = n;
        let mut done = 0usize;
        self.segs.iter().filter_map(move |s| {
            if left == 0 {
                return None;
            }
            if at >= s.len {
                at -= s.len;
                return None;
            }
            let k = ((s.len - at) as usize).min(left);
            let piece = (s.base + at, done, k);
            at = 0;
            left -= k;
            done += k;
            Some(piece)
        })
    }

    /// Copy `bytes` to offset `at` of the array with the direct copy (under a lock: never
    /// sleeps); false if some of that memory cannot be written now.
    pub fn scatter_direct(&self, at: usize, bytes: &[u8]) -> bool {
        self.pieces(at as u64, bytes.len())
            .all(|(addr, off, k)| usercopy::copy_to_user_direct(addr, &bytes[off..off + k]))
    }

    /// Fill `into` from offset `at` of the array with the direct copy.
    pub fn gather_direct(&self, at: usize, into: &mut [u8]) -> bool {
        self.pieces(at as u64, into.len())
            .all(|(addr, off, k)| usercopy::copy_from_user_direct(addr, &mut into[off..off + k]))
    }

    /// Copy `bytes` to the start of the array (may fault pages in).
    pub fn scatter(&self, bytes: &[u8]) -> Result<(), i32> {
        for (addr, off, k) in self.pieces(0, bytes.len()) {
            usercopy::copy_to_user(addr, &bytes[off..off + k])?;
        }
        Ok(())
    }

    /// The first `n` bytes of the array, copied in.
    pub fn gather(&self, n: usize) -> Result<Vec<u8>, i32> {
        let mut out = alloc::vec![0u8; n];
        for (addr, off, k) in self.pieces(0, n) {
            usercopy::copy_from_user(addr, &mut out[off..off + k])?;
        }
        Ok(out)
    }

    /// Every segment writable (`write` true) or readable: checked before a call sleeps.
    pub fn check(&self, write: bool) -> Result<(), i32> {
        self.segs.iter().try_for_each(|s| usercopy::check(s.base, s.len, write))
    }
}

/// `readv(fd, iov, iovcnt)`.
pub fn readv(a: &Args) -> SysResult {
    let f = io::file(int_arg(a[0]))?;
    // A descriptor that cannot be read is EBADF before the array is looked at, as Linux.
    if matches!(&*f, OpenFile::PipeWriter(_) | OpenFile::Serial2) {
        return Err(EBADF);
    }
    let iov = Iov::from_user(a[1], a[2])?;
    if iov.total == 0 {
        return Ok(0);
    }
    match &*f {
        OpenFile::PipeReader(r) => {
            let want = iov.total.min(pipe::PIPE_BUF_SIZE as u64) as usize;
            let n =
                io::read_pipe_retrying(|| iov.check(true), || r.read(want, |at, bytes| iov.scatter_direct(at, bytes)))?;
            sched::account_read(n as u64);
            Ok(n as u64)
        }
        OpenFile::Socket(s) => {
            let (n, _full) = super::netlink::recv_iov(s, &iov, 0)?;
            sched::account_read(n);
            Ok(n)
        }
        OpenFile::Console => {
            iov.check(true)?;
            let mut buf = [0u8; io::READ_PIECE];
            let want = iov.total.min(buf.len() as u64) as usize;
            let n = io::console_read(&mut buf[..want])?;
            iov.scatter(&buf[..n])?;
            sched::account_read(n as u64);
            Ok(n as u64)
        }
        OpenFile::Var(_) | OpenFile::Ram(_) => per_segment(&iov, int_arg(a[0]), false),
        _ => Err(EBADF),
    }
}

/// `writev(fd, iov, iovcnt)`.
pub fn writev(a: &Args) -> SysResult {
    let f = io::file(int_arg(a[0]))?;
    if matches!(&*f, OpenFile::PipeReader(_) | OpenFile::Ram(_)) {
        return Err(EBADF);
    }
    let iov = Iov::from_user(a[1], a[2])?;
    if iov.total == 0 {
        return Ok(0);
    }
    match &*f {
        OpenFile::PipeWriter(w) => {
            iov.check(false)?;
            io::write_pipe(w, iov.total as usize, |at, into| iov.gather_direct(at, into))
        }
        OpenFile::Socket(s) => {
            let n = super::netlink::send_iov(s, &iov)?;
            sched::account_write(n);
            Ok(n)
        }
        OpenFile::Console | OpenFile::Serial2 | OpenFile::Var(_) => per_segment(&iov, int_arg(a[0]), true),
        _ => Err(EBADF),
    }
}

/// One `read` or `write` per non-empty segment, stopping at the first short one; the calls'
/// counts merged into one.
fn per_segment(iov: &Iov, fd: i32, write: bool) -> SysResult {
    let (mut done, mut calls) = (0u64, 0u64);
    for s in iov.segs.iter().filter(|s| s.len > 0) {
        let r = if write { io::write_fd(fd, s.base, s.len) } else { io::read_fd(fd, s.base, s.len) };
        calls += u64::from(r.is_ok());
        match r {
            Ok(n) => {
                done += n;
                if n < s.len {
                    break;
                }
            }
            Err(e) if done == 0 => {
                sched::merge_io_calls(write, calls);
                return Err(e);
            }
            Err(_) => break,
        }
    }
    sched::merge_io_calls(write, calls);
    Ok(done)
}
