//! # tally-usync — what user threads need of a kernel, as plain logic
//!
//! Three pieces of Linux's thread support that need no hardware, kept here so every rule is
//! tested on the host (`cargo test -p tally-usync`); the kernel (`kernel/src/proc/futex.rs`,
//! `kernel/src/syscall/{clone,futex_call,poll}.rs`) gives them memory, tasks and sleeps:
//!
//! * [`clone`]: which `clone` flag combinations Linux accepts, and what the kernel must do
//!   for each (a thread, a process, TLS, the tid words);
//! * [`futex`]: the wait queues behind `futex(2)`, keyed by (address space, address), with
//!   Linux's bitsets, wake counts, requeueing, and the decoding of `op` and timeouts;
//! * [`poll`]: `poll`'s rules: `revents` from what a file is ready for, the count returned,
//!   and the timeouts of `poll` (milliseconds) and `ppoll` (a `timespec`).
//!
//! How the kernel uses them, and why: `docs/user-mode.md` (threads, futexes, poll).
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod clone;
pub mod futex;
pub mod poll;

/// A wait's time limit, as the system calls give it, before the kernel turns it into a TSC
/// deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timeout {
    /// Wait until woken.
    Never,
    /// Wait at most this many nanoseconds from now (0: do not wait at all).
    After(u64),
    /// Wait until CLOCK_MONOTONIC reaches this many nanoseconds.
    AtMonotonic(u64),
    /// Wait until CLOCK_REALTIME reaches this many nanoseconds since 1970.
    AtRealtime(u64),
}

/// A `timespec`'s nanoseconds, if it is valid (Linux's `timespec64_valid`: `tv_sec >= 0`,
/// `0 <= tv_nsec < 10^9`); saturating at `u64::MAX`.
pub fn timespec_ns(tv_sec: i64, tv_nsec: i64) -> Option<u64> {
    if tv_sec < 0 || !(0..1_000_000_000).contains(&tv_nsec) {
        return None;
    }
    Some((tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(tv_nsec as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespecs() {
        assert_eq!(timespec_ns(0, 0), Some(0));
        assert_eq!(timespec_ns(1, 5), Some(1_000_000_005));
        assert_eq!(timespec_ns(-1, 0), None);
        assert_eq!(timespec_ns(0, -1), None);
        assert_eq!(timespec_ns(0, 1_000_000_000), None);
        assert_eq!(timespec_ns(i64::MAX, 999_999_999), Some(u64::MAX));
    }
}
