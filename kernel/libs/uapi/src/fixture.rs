//! # Test fixtures: the ring-3 programs the kernel's self-tests start, and their contract
//!
//! Some self-tests (`kernel/src/selftest/user_proc.rs`, `user_acct.rs`) check a system call's
//! contract from user space: a program makes the calls, with good and bad arguments, and
//! the test judges how it ended and what it reported. These programs are ordinary Rust
//! programs of `userland/` (`userland/src/test/`), but they are *fixtures*, not tools: the
//! build packs them into the ramdisk's [`FIXTURE_DIR`] (`/test/NAME`), not `/bin`, so the
//! shell's users never meet them. The rule (`xtask/src/build.rs`): a program whose Cargo
//! name is `test-NAME` becomes `test/NAME`; every other one `bin/NAME`.
//!
//! **Checks and exit statuses.** Each fixture makes numbered checks; the first that fails
//! ends the process with `exit_group(N)`, N the check's number, and a fixture that passes
//! all of them exits with 0. So `status 0x0` means "every check passed" and `0xN00` names
//! the check that failed (`tally_rt::fixture`).
//!
//! **The result area.** A fixture that must hand values to its test (what `wait4` or `msa()`
//! told it, its threads' ids) maps one page at [`RESULT_AREA`] (`mmap` with
//! `MAP_FIXED_NOREPLACE`, so it can replace nothing), writes its results at the offsets
//! below, sets the *done* word to 1 and sleeps (1 ms at a time) until its test has set the
//! *go* word. The test holds the process's memory map (`Vm`), polls *done*, reads the results
//! and compares them with what the kernel knows — to the nanosecond — while the fixture
//! is asleep, then writes *go*. Every value is a little-endian `u64` at a byte offset from
//! [`RESULT_AREA`]:
//!
//! | offset | who writes | what |
//! |---|---|---|
//! | [`AREA_RUSAGE`] | `waiter` | the `struct rusage` `wait4` returned for its child (`Rusage::to_bytes`, 144 bytes) |
//! | [`AREA_MSA_A`] | `waiter`, `threads report` | 13 timers: `msa(MSA_CHILDREN)` after the reap / `msa(MSA_SELF)` |
//! | [`AREA_MSA_B`] | `threads report` | 13 timers: `msa(MSA_THREAD)` |
//! | [`AREA_CHILD_PID`] | `waiter` | the pid of the child it reaped |
//! | [`AREA_TIDS`] | `threads report` | the thread ids of its [`THREADS_WORKERS`] workers, in start order |
//! | [`AREA_DONE`] | the fixture | 1: the results are in place |
//! | [`AREA_GO`] | the test | 1: go on (and exit) |
//!
//! A fixture that cannot map the area exits with [`AREA_UNMAPPED_STATUS`]. The address is
//! in the `mmap` area, far above where first fit places anything a fixture
//! maps, and the program's initial stack (argv, auxv at its top) is left alone.
//!
//! ## The fixtures
//!
//! Each program, its arguments, and what it checks:
//!
//! * `spawner` (N): `spawn` errors (ENOENT, ENAMETOOLONG, E2BIG, EFAULT), then N ×
//!   (`spawn /bin/hello` + `wait4`);
//! * `waiter` (–): `wait4` errors, `WNOHANG`, EFAULT before reaping, then reaps `/bin/spin 30`
//!   with a rusage and reads `msa(MSA_CHILDREN)`; results in the area;
//! * `threads` (a mode, see below): `thread_create` errors; how a process of several threads
//!   reports and ends;
//! * `msa_abi` ([`MSA_ACCOUNTING`] or [`MSA_NO_ACCOUNTING`]): the `msa()` contract: EINVAL,
//!   EFAULT, partial fills, `int` arguments;
//! * `kstat_abi` (a KID that was deleted): the kstat calls' contract: sizing with ENOMEM,
//!   ENXIO, EFAULT, snaptime, a new KCID after the first disk interrupt;
//! * `mmap_abi` (none, or [`MMAP_PROT_NONE`]): `mmap`/`munmap` contract and demand paging (by
//!   user code and by system calls), a 4 GiB region; then a PROT_NONE touch that must kill it;
//! * `privs` (–): `setpriority`, `sched_setscheduler`, `setuid` as root and as uid 1000; five
//!   sleeps;
//! * `blk_abi` (–): `blk_read`/`blk_write`: errors, a pattern written and read back, a
//!   40-sector read.
//! * `acct_abi` (–): `acct(2)`'s errors, three children under accounting, EPERM as uid 1000;
//! * `csa_abi` (none, or `job`): SGI CSA's calls — errors, a job of four processes with a ja
//!   file and a time threshold, EPERM as uid 1000;
//! * `exiter` (–): exits with 0 at once, silently (the `acct_exit` benchmark's process).
//! * `fds` (–): close-on-exec, `fcntl`, `dup2`/`dup3`, what a spawned child inherits, end of
//!   file and SIGPIPE on pipes; run from the shell by the `descriptors` scenario.
//! * `paging` (–): run from `/var` by `var_exec`: pages of its read-only data paged in first
//!   by a system call's copy (`write` into a pipe), then by user code, each time with the
//!   file's bytes.
//!
//! `threads` modes: [`THREADS_REPORT`] (three workers, then `msa(MSA_SELF)` and
//! `msa(MSA_THREAD)` into the area; exit 0), [`THREADS_EXIT_GROUP`] (`exit_group`
//! ([`THREADS_EXIT_GROUP_STATUS`]) while threads spin, sleep and read the console),
//! [`THREADS_FAULT`] (a thread executes `ud2`: SIGILL), [`THREADS_LEADER_FIRST`] (the leader
//! `exit`s with [`THREADS_LEADER_STATUS`] before its thread exits with
//! [`THREADS_LAST_THREAD_STATUS`]), [`THREADS_THREAD_EXIT_GROUP`] (a thread calls `exit_group`
//! ([`THREADS_THREAD_EXIT_GROUP_STATUS`]) while the leader sleeps).

/// The ramdisk directory of the fixtures: `/test/NAME`.
pub const FIXTURE_DIR: &str = "test";

/// Where a fixture maps its result area (one page, read and write).
pub const RESULT_AREA: u64 = 0x0000_7000_0000_0000;
/// Size of the result area.
pub const RESULT_AREA_SIZE: u64 = 4096;
/// `waiter`: the child's `struct rusage` (144 bytes).
pub const AREA_RUSAGE: u64 = 0x000;
/// 13 microstate timers (ns): `waiter` MSA_CHILDREN, `threads` MSA_SELF.
pub const AREA_MSA_A: u64 = 0x100;
/// 13 microstate timers (ns): `threads` MSA_THREAD.
pub const AREA_MSA_B: u64 = 0x200;
/// `waiter`: the reaped child's pid.
pub const AREA_CHILD_PID: u64 = 0x308;
/// `threads`: the workers' thread ids, one word each.
pub const AREA_TIDS: u64 = 0x810;
/// Set to 1 by the fixture when its results are in place.
pub const AREA_DONE: u64 = 0xf00;
/// Set to 1 by the test to let the fixture go on.
pub const AREA_GO: u64 = 0xf08;
/// The exit status of a fixture that could not map its result area.
pub const AREA_UNMAPPED_STATUS: i32 = 90;
/// The exit status of a fixture given arguments it does not know (a panic is 101).
pub const USAGE_STATUS: i32 = 100;

/// `threads` mode: workers, MSA_SELF/MSA_THREAD in the area, handshake, exit 0.
pub const THREADS_REPORT: &str = "report";
/// `threads` mode: `exit_group` while threads spin, sleep 100 s and read the console.
pub const THREADS_EXIT_GROUP: &str = "exit_group";
/// `threads` mode: a thread executes `ud2` while the others sleep.
pub const THREADS_FAULT: &str = "fault";
/// `threads` mode: the leader exits before its thread.
pub const THREADS_LEADER_FIRST: &str = "leader_first";
/// `threads` mode: a thread calls `exit_group` while the leader sleeps.
pub const THREADS_THREAD_EXIT_GROUP: &str = "thread_exit_group";
/// How many workers `threads report` starts.
pub const THREADS_WORKERS: usize = 3;
/// The status `threads exit_group` ends with.
pub const THREADS_EXIT_GROUP_STATUS: i32 = 7;
/// `threads leader_first`: the leader's `exit` code, which the process ends with.
pub const THREADS_LEADER_STATUS: i32 = 5;
/// `threads leader_first`: the last thread's `exit` code (not the process's).
pub const THREADS_LAST_THREAD_STATUS: i32 = 9;
/// The status a thread of `threads thread_exit_group` ends the process with.
pub const THREADS_THREAD_EXIT_GROUP_STATUS: i32 = 3;

/// `msa_abi`'s argument when the kernel keeps microstate clocks (user and system time
/// must then be non-zero).
pub const MSA_ACCOUNTING: &str = "accounting";
/// `msa_abi`'s argument when accounting is compiled out (every timer reads 0).
pub const MSA_NO_ACCOUNTING: &str = "no-accounting";

/// `mmap_abi`'s argument to end by touching a PROT_NONE page (it must die of SIGSEGV).
pub const MMAP_PROT_NONE: &str = "prot_none";

const _: () = assert!(AREA_GO + 8 <= RESULT_AREA_SIZE && AREA_TIDS + 8 * THREADS_WORKERS as u64 <= AREA_DONE);
const _: () = {
    use crate::layout::{USER_MMAP_BASE, USER_STACK_GUARD};
    assert!(USER_MMAP_BASE <= RESULT_AREA && RESULT_AREA + RESULT_AREA_SIZE <= USER_STACK_GUARD);
};
