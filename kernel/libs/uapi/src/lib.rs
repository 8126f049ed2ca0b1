//! # tally-uapi — the user/kernel ABI
//!
//! Everything that crosses the boundary between the kernel and user programs is defined
//! here, once, in the spirit of Linux's `include/uapi`: system call numbers, errno values,
//! and the layout of every structure a system call or bus message carries. Both the kernel
//! and `userland/` depend on this crate, so a layout can never drift between the two.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

pub mod acct;
pub mod auxv;
pub mod clone;
pub mod csa;
pub mod errno;
pub mod fixture;
pub mod fs;
pub mod futex;
pub mod kstat;
pub mod layout;
pub mod msa;
pub mod netlink;
pub mod poll;
pub mod procstat;
pub mod signal;
pub mod syscall;
pub mod taskstats;
pub mod tty;
pub mod uio;
pub mod utsname;
pub mod wait;
