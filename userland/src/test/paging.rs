//! `/test/paging` — touches pages of its own read-only data first through a system call,
//! then from user code, so that run from `/var` (`var_exec` copies it there) both ways of
//! paging a file page in are exercised: the kernel's copy from user memory reading a page
//! that is not in yet (`syscall/usercopy.rs` → `proc/vm_file.rs`, a major fault in ONCPU_SYS)
//! and a user-mode fault (`trap` → `vm_file.rs`, a major fault in ONCPU_TRAP). The bytes that
//! arrive must be the file's.
//!
//! `PAGES` is four page-aligned pages of `.rodata` holding `pattern(i)`; nothing touches
//! pages 1 to 3 before the checks. Checks (`exit_group(N)` for the first that fails, 0 if
//! all pass): 1 `pipe2`; 2 `write` of 256 bytes of page 1 into the pipe (the copy pages it
//! in); 3 `read` them back; 4 they are `pattern`; 5 a byte of page 2 read by user code; 6
//! `write` of a range that spans pages 2 and 3 (one in, one not); 7 its bytes.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::fixture::{check, positive};
use tally_rt::sys;

tally_rt::entry!(main);

const PAGE: usize = 4096;

/// Byte `i` of `PAGES` (computed, never read from `PAGES`).
const fn pattern(i: usize) -> u8 {
    ((i * 7 + 3) % 251) as u8
}

const fn make() -> [u8; 4 * PAGE] {
    let mut a = [0u8; 4 * PAGE];
    let mut i = 0;
    while i < a.len() {
        a[i] = pattern(i);
        i += 1;
    }
    a
}

#[repr(C, align(4096))]
struct Pages([u8; 4 * PAGE]);

static PAGES: Pages = Pages(make());

/// Write `PAGES[from..from + n]` into the pipe and read it back into `buf`: how many came.
fn through_pipe(w: usize, r: usize, from: usize, buf: &mut [u8], n: i32) -> usize {
    let pages = core::hint::black_box(&PAGES.0);
    let wrote = positive(sys::write(w, &pages[from..from + buf.len()]), n);
    check(wrote == buf.len(), n);
    positive(sys::read(r, buf), n + 1)
}

fn main() -> i32 {
    let (r, w) = match sys::pipe2(0) {
        Ok(p) => p,
        Err(_) => tally_rt::fixture::fail(1),
    };
    let mut buf = [0u8; 256];
    let got = through_pipe(w, r, PAGE, &mut buf, 2);
    check(got == buf.len() && buf.iter().enumerate().all(|(i, &b)| b == pattern(PAGE + i)), 4);
    let at = 2 * PAGE + 5;
    check(core::hint::black_box(&PAGES.0)[at] == pattern(at), 5);
    let from = 3 * PAGE - 128;
    let got = through_pipe(w, r, from, &mut buf, 6);
    check(got == buf.len() && buf.iter().enumerate().all(|(i, &b)| b == pattern(from + i)), 7);
    0
}
