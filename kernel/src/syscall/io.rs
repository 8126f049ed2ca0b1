//! `read` and `write`: the console as file descriptors 0, 1 and 2.
//!
//! There are no files yet; standard input, output and error are the console.
//!
//! **read(0, buf, count)** takes what has been typed (`crate::drivers::tty`: sleeps until
//! at least one byte is there; `^D` is end of input). The buffer is validated (writable)
//! before the call can sleep, so a bad pointer is `-EFAULT` at once; the bytes are copied
//! out through a small kernel buffer. `count == 0` returns 0 without waiting. Other fds are
//! `-EBADF`. Each call that returns data or end of input is counted for the task
//! (`read_char`, `read_syscalls`).
//!
//! **write(1 or 2, buf, count)**: the whole
//! buffer is validated first — a bad pointer anywhere in it writes nothing and returns
//! `-EFAULT` — then copied in and printed a piece at a time through a small buffer on the
//! kernel stack (so no user-chosen size is ever allocated). Bytes that are not UTF-8 are
//! shown as U+FFFD; a character split between two pieces is kept whole. Each call is counted
//! for the task — bytes (`write_char`) and calls (`write_syscalls`) — as process accounting
//! reports them.

use tally_uapi::errno::EBADF;

use super::{int_arg, uaccess, Args, SysResult};
use crate::task;

/// At most this much per `read` call is taken from the console buffer.
const READ_PIECE: usize = 256;

/// `read(fd, buf, count)`.
pub fn read(a: &Args) -> SysResult {
    let (fd, addr, count) = (int_arg(a[0]), a[1], a[2]);
    if fd != 0 {
        return Err(EBADF);
    }
    if count == 0 {
        return Ok(0);
    }
    let want = count.min(READ_PIECE as u64) as usize;
    uaccess::check(addr, want as u64, true)?;
    let mut buf = [0u8; READ_PIECE];
    let n = crate::drivers::tty::read(&mut buf[..want])?;
    // The bytes are out of the console buffer now; if the memory went away meanwhile (another
    // thread unmapped it), they are lost, as Linux loses them in the same case.
    uaccess::copy_to_user(addr, &buf[..n])?;
    task::account_read(n as u64);
    Ok(n as u64)
}

/// At most this much per call (a short write, as Linux does at `MAX_RW_COUNT`).
const MAX_WRITE: u64 = 0x7fff_f000;
const PIECE: usize = 256;

/// `write(fd, buf, count)`.
pub fn write(a: &Args) -> SysResult {
    let (fd, addr, count) = (int_arg(a[0]), a[1], a[2].min(MAX_WRITE));
    if fd != 1 && fd != 2 {
        return Err(EBADF);
    }
    uaccess::check(addr, count, false)?;
    let mut buf = [0u8; PIECE];
    let (mut done, mut kept) = (0u64, 0usize);
    while done < count {
        let n = ((PIECE - kept) as u64).min(count - done) as usize;
        if let Err(e) = uaccess::copy_from_user(addr + done, &mut buf[kept..kept + n]) {
            // Unmapped since the check (another thread): a short write, as far as it got.
            if done == 0 {
                return Err(e);
            }
            break;
        }
        done += n as u64;
        let filled = kept + n;
        let tail = print_utf8(&buf[..filled], done < count);
        buf.copy_within(filled - tail..filled, 0);
        kept = tail;
    }
    task::account_write(done);
    Ok(done)
}

/// Print `bytes` as UTF-8 (U+FFFD for invalid sequences). If `more` follows, an incomplete
/// sequence at the end is not printed; returns its length (at most 3).
fn print_utf8(mut bytes: &[u8], more: bool) -> usize {
    loop {
        match core::str::from_utf8(bytes) {
            Ok(s) => {
                print!("{s}");
                return 0;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                print!("{}", core::str::from_utf8(good).unwrap_or(""));
                match e.error_len() {
                    Some(bad) => {
                        print!("\u{fffd}");
                        bytes = &rest[bad..];
                    }
                    None if more => return rest.len(),
                    None => {
                        print!("\u{fffd}");
                        return 0;
                    }
                }
            }
        }
    }
}
