//! # What the test fixtures share: numbered checks and the result area
//!
//! The programs in `userland/src/test/` are the kernel self-tests' ring-3 halves (packed as
//! `/test/NAME`; the contract is `tally_uapi::fixture`). Each is a list of numbered checks
//! of system calls: [`check`], [`expect_ok`] and [`expect_err`] end the process with
//! `exit_group(N)` at the first check N that fails (after a line on stderr), so the exit
//! status the test sees names it; 0 means every check passed. [`raw`] gives a call's answer
//! as the kernel put it in `rax` (a value, or `-errno`), for checks on its sign, and
//! [`positive`] checks that it is above 0 (a pid, an address).
//!
//! [`Area`] is the result area: a fixture writes what it saw there, and [`Area::handshake`]
//! waits until its test, which reads the area through the process's memory map, lets it go.
#![forbid(unsafe_code)]

use core::sync::atomic::{AtomicU64, Ordering};

use tally_uapi::fixture::{AREA_DONE, AREA_GO, AREA_UNMAPPED_STATUS, RESULT_AREA, RESULT_AREA_SIZE, USAGE_STATUS};
use tally_uapi::syscall::{Timespec, PROT_READ, PROT_WRITE};

use crate::sys::{self, Mapping};
use crate::{eprintln, Errno};

/// Check `n` failed: say so and end the process with status `n`.
pub fn fail(n: i32) -> ! {
    eprintln!("{}: check {n} failed", crate::program_name());
    sys::exit_group(n)
}

/// Check `n`: `ok` must hold.
pub fn check(ok: bool, n: i32) {
    if !ok {
        fail(n);
    }
}

/// A call's answer as the kernel left it in `rax`: the value, or `-errno`.
pub fn raw(r: Result<usize, Errno>) -> isize {
    match r {
        Ok(v) => v as isize,
        Err(Errno(e)) => -(e as isize),
    }
}

/// Check `n`: the call answered exactly `value`.
pub fn expect_ok(r: Result<usize, Errno>, value: usize, n: i32) {
    check(r == Ok(value), n);
}

/// Check `n`: the call failed with exactly `errno`.
pub fn expect_err(r: Result<usize, Errno>, errno: i32, n: i32) {
    check(r == Err(Errno(errno)), n);
}

/// Check `n`: the call answered a positive value (a pid, a tid, an address); that value.
pub fn positive(r: Result<usize, Errno>, n: i32) -> usize {
    check(raw(r) > 0, n);
    raw(r) as usize
}

/// Checks `n`: spawn `path` with `argv`, wait for it; its wait status.
pub fn run_child(path: &str, argv: &[&str], n: i32) -> i32 {
    let pid = positive(sys::spawn(path, argv), n);
    let mut status = 0;
    expect_ok(sys::wait4(pid as isize, Some(&mut status), 0, None), pid, n);
    status
}

/// A fixture's arguments were not what its test passes: say so, end with `USAGE_STATUS`.
pub fn usage(text: &str) -> ! {
    eprintln!("usage: {} {text}", crate::program_name());
    sys::exit_group(USAGE_STATUS)
}

/// The result area: one page at `RESULT_AREA`, read and written by the test through the
/// process's memory map.
pub struct Area(Mapping);

impl Area {
    /// Maps the area (`MAP_FIXED_NOREPLACE`), or ends the process with
    /// `AREA_UNMAPPED_STATUS`.
    pub fn map() -> Area {
        match Mapping::fixed(RESULT_AREA as usize, RESULT_AREA_SIZE as usize, PROT_READ | PROT_WRITE) {
            Ok(m) => Area(m),
            Err(e) => {
                eprintln!("{}: cannot map the result area: {e}", crate::program_name());
                sys::exit_group(AREA_UNMAPPED_STATUS)
            }
        }
    }

    fn word(&self, offset: u64) -> &AtomicU64 {
        &self.0.words()[(offset / 8) as usize]
    }

    /// Stores `v` at byte `offset` of the area.
    pub fn put(&self, offset: u64, v: u64) {
        self.word(offset).store(v, Ordering::Relaxed);
    }

    /// Stores `words` from byte `offset` on.
    pub fn put_words(&self, offset: u64, words: &[u64]) {
        for (i, &w) in words.iter().enumerate() {
            self.put(offset + 8 * i as u64, w);
        }
    }

    /// Stores `bytes` (a multiple of 8 long, little-endian words) from byte `offset` on.
    pub fn put_bytes(&self, offset: u64, bytes: &[u8]) {
        assert!(bytes.len().is_multiple_of(8));
        for (i, w) in bytes.as_chunks::<8>().0.iter().enumerate() {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            self.put(offset + 8 * i as u64, u64::from_le_bytes(word));
        }
    }

    /// Sets the *done* word, then sleeps 1 ms at a time until the test sets *go*.
    pub fn handshake(&self) {
        self.word(AREA_DONE).store(1, Ordering::Release);
        let ms = Timespec { tv_sec: 0, tv_nsec: 1_000_000 };
        while self.word(AREA_GO).load(Ordering::Acquire) == 0 {
            let _ = sys::nanosleep(&ms, None);
        }
    }
}
