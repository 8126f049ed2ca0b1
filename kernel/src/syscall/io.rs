//! `write`: the console as file descriptors 1 and 2.
//!
//! There are no files yet; standard output and standard error are the console. The whole
//! buffer is validated first — a bad pointer anywhere in it writes nothing and returns
//! `-EFAULT` — then copied in and printed a piece at a time through a small buffer on the
//! kernel stack (so no user-chosen size is ever allocated). Bytes that are not UTF-8 are
//! shown as U+FFFD; a character split between two pieces is kept whole. Each call is counted
//! for the task — bytes (`write_char`) and calls (`write_syscalls`) — as process accounting
//! reports them.

use tally_uapi::errno::EBADF;

use super::{uaccess, Args, SysResult};
use crate::task;

/// At most this much per call (a short write, as Linux does at `MAX_RW_COUNT`).
const MAX_WRITE: u64 = 0x7fff_f000;
const PIECE: usize = 256;

/// `write(fd, buf, count)`.
pub fn write(a: &Args) -> SysResult {
    let (fd, addr, count) = (a[0], a[1], a[2].min(MAX_WRITE));
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
