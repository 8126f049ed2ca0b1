//! `futex(uaddr, op, val, timeout, uaddr2, val3)`: Linux's operations and flags
//! (`<linux/futex.h>`). The rules (which ops Tally serves, the errors, the timeouts) are the
//! `tally-usync` crate's `futex` module; `docs/user-mode.md` (futexes) explains the design.

pub const FUTEX_WAIT: u32 = 0;
pub const FUTEX_WAKE: u32 = 1;
pub const FUTEX_FD: u32 = 2;
pub const FUTEX_REQUEUE: u32 = 3;
pub const FUTEX_CMP_REQUEUE: u32 = 4;
pub const FUTEX_WAKE_OP: u32 = 5;
pub const FUTEX_LOCK_PI: u32 = 6;
pub const FUTEX_UNLOCK_PI: u32 = 7;
pub const FUTEX_TRYLOCK_PI: u32 = 8;
pub const FUTEX_WAIT_BITSET: u32 = 9;
pub const FUTEX_WAKE_BITSET: u32 = 10;
pub const FUTEX_WAIT_REQUEUE_PI: u32 = 11;
pub const FUTEX_CMP_REQUEUE_PI: u32 = 12;
pub const FUTEX_LOCK_PI2: u32 = 13;

/// The futex is not shared with another process: keyed by the address space and address
/// alone (Linux skips the page lookup).
pub const FUTEX_PRIVATE_FLAG: u32 = 128;
/// `FUTEX_WAIT_BITSET`'s absolute timeout is on CLOCK_REALTIME (default: CLOCK_MONOTONIC).
pub const FUTEX_CLOCK_REALTIME: u32 = 256;
/// The operation without its flags.
pub const FUTEX_CMD_MASK: u32 = !(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);

pub const FUTEX_WAIT_PRIVATE: u32 = FUTEX_WAIT | FUTEX_PRIVATE_FLAG;
pub const FUTEX_WAKE_PRIVATE: u32 = FUTEX_WAKE | FUTEX_PRIVATE_FLAG;
pub const FUTEX_REQUEUE_PRIVATE: u32 = FUTEX_REQUEUE | FUTEX_PRIVATE_FLAG;
pub const FUTEX_CMP_REQUEUE_PRIVATE: u32 = FUTEX_CMP_REQUEUE | FUTEX_PRIVATE_FLAG;
pub const FUTEX_WAIT_BITSET_PRIVATE: u32 = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
pub const FUTEX_WAKE_BITSET_PRIVATE: u32 = FUTEX_WAKE_BITSET | FUTEX_PRIVATE_FLAG;

/// A bitset that matches every waiter (what `FUTEX_WAIT`/`FUTEX_WAKE` use).
pub const FUTEX_BITSET_MATCH_ANY: u32 = 0xffff_ffff;
