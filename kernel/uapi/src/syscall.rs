//! System call numbers and the calling convention.
//!
//! A user program puts the number in `rax` and up to six arguments in `rdi rsi rdx r10 r8
//! r9`, executes `syscall`, and finds the result in `rax`: a value `>= 0` on success, or
//! `-errno` (see [`crate::errno`]) on failure — the Linux x86_64 convention. Where Linux has
//! the call, Tally uses Linux's number, so `strace`-trained eyes recognise them; Tally's own
//! calls (spawn, msa, kstat access, raw disk blocks) are numbered from 500.

pub const SYS_READ: usize = 0;
pub const SYS_WRITE: usize = 1;
pub const SYS_MMAP: usize = 9;
pub const SYS_MUNMAP: usize = 11;
pub const SYS_BRK: usize = 12;
pub const SYS_SCHED_YIELD: usize = 24;
pub const SYS_NANOSLEEP: usize = 35;
pub const SYS_GETPID: usize = 39;
pub const SYS_EXIT: usize = 60;
pub const SYS_WAIT4: usize = 61;
pub const SYS_GETUID: usize = 102;
pub const SYS_SETUID: usize = 105;
pub const SYS_GETPPID: usize = 110;
pub const SYS_SETPRIORITY: usize = 141;
pub const SYS_SCHED_SETSCHEDULER: usize = 144;
pub const SYS_GETTID: usize = 186;
pub const SYS_CLOCK_GETTIME: usize = 228;
pub const SYS_EXIT_GROUP: usize = 231;

/// `spawn(path, path_len, argv, argc)`: start a program from the ramdisk as a child process.
pub const SYS_SPAWN: usize = 500;
/// `thread_create(entry, stack_top, arg)`: a new thread in the caller's process.
pub const SYS_THREAD_CREATE: usize = 501;
/// `msa(ntimers, which, timers)`: microstate times in ns (see [`crate::msa`]).
pub const SYS_MSA: usize = 502;
/// `kstat_chain(buf, len)`: the kstat chain headers; returns the chain id.
pub const SYS_KSTAT_CHAIN: usize = 503;
/// `kstat_read(kid, buf, len)`: one kstat's data with a fresh snapshot time.
pub const SYS_KSTAT_READ: usize = 504;
/// `blk_read(lba, buf, sectors)` / `blk_write(lba, buf, sectors)` on the data disk.
pub const SYS_BLK_READ: usize = 505;
pub const SYS_BLK_WRITE: usize = 506;

/// `clock_gettime` clock ids (Linux's).
pub const CLOCK_REALTIME: usize = 0;
pub const CLOCK_MONOTONIC: usize = 1;

/// `mmap` protections and flags (Linux's values; only anonymous private mappings exist).
pub const PROT_READ: usize = 0x1;
pub const PROT_WRITE: usize = 0x2;
pub const PROT_EXEC: usize = 0x4;
pub const MAP_PRIVATE: usize = 0x02;
pub const MAP_ANONYMOUS: usize = 0x20;

/// `wait4` options.
pub const WNOHANG: usize = 1;

/// `struct timespec` as Linux x86_64 lays it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timespec {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

const _: () = assert!(core::mem::size_of::<Timespec>() == 16);
