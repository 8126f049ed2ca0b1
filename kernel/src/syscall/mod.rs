//! # System calls: from the `syscall` instruction to a handler and back
//!
//! The machine half is `hal::syscall_entry`: the `syscall` instruction lands in its
//! stub, which switches to the thread's kernel stack, saves the user registers in a
//! [`SyscallFrame`] and calls [`entry`]; when `entry` returns, the stub disables interrupts,
//! calls [`leave`], and restores the registers with `sysretq`. This module is the policy:
//!
//! 1. [`entry`]: the task's running microstate becomes ONCPU_SYS (the time since the
//!    `syscall` instruction is now the kernel's on its behalf), interrupts go back on — a
//!    system call may sleep, and may be preempted like any kernel code —
//! 2. [`dispatch`] looks the number up in [`TABLE`] (Linux's numbers, `tally_uapi::syscall`)
//!    and calls the handler with the six argument registers; unknown numbers get `-ENOSYS`;
//! 3. the result (`>= 0`, or `-errno`) goes into `frame.rax`; a reschedule the call asked
//!    for (it woke someone more important) happens now, before returning to user mode;
//! 4. [`leave`], with interrupts off: the running microstate becomes ONCPU_USR.
//!
//! Handlers live one file per concern: `io.rs` (read, write, pipe2, close: descriptors),
//! `files.rs` (files on `/var`: open, lseek, stat, fstat, mkdir, unlink, getdents64, fsync),
//! `netlink.rs` (bus sockets), `process.rs` (ids, uid, exit), `spawn.rs` (spawn,
//! thread_create), `wait.rs` (wait4 and its rusage), `scheduling.rs` (yield, sleep, nice,
//! policy), `clock_gettime.rs` (clocks), `mmap.rs` (brk, mmap, munmap), `msa.rs`
//! (microstate times), `kstat_read.rs` (the kstat chain), `blk.rs` (raw disk sectors),
//! `procstat.rs` (every thread's accounting at once, for `prstat`), `acct_calls.rs` (process
//! accounting's switch, `acct`, and SGI CSA's calls: `job_create`, `job_getjid`, `csa_ctl`),
//! `files.rs` (the file system calls on `/var`). Every handler validates
//! its arguments and reaches user memory only through `usercopy.rs`: nothing a
//! user program passes can make the kernel fault or panic — at worst the call fails with
//! `-errno`. The contracts are documented for user space in `tally_uapi::syscall`, `::msa`,
//! `::kstat` and `::procstat`.
//!
//! One more thing happens on the way out of every call: if another thread of the process
//! called `exit_group` (or died of a signal) meanwhile, this thread exits instead of
//! returning (`proc::return_to_user`, see `proc/exit.rs`).
//!
//! The path from `syscall` to a handler and back, and every call: `docs/user-mode.md`.

mod acct_calls;
mod blk;
mod clock_gettime;
mod files;
mod io;
mod kstat_read;
mod mmap;
mod msa;
mod netlink;
mod process;
mod procstat;
mod scheduling;
mod spawn;
pub mod usercopy;
mod wait;

pub use wait::rusage;

use tally_uapi::errno::ENOSYS;
use tally_uapi::syscall::*;

use crate::{proc, sched};
use hal::address_space::USER_END;
pub use hal::syscall_entry::SyscallFrame;

/// The six argument registers, in ABI order (`rdi rsi rdx r10 r8 r9`).
pub type Args = [u64; 6];
/// A handler's outcome: the value for `rax`, or a (positive) errno.
pub type SysResult = Result<u64, i32>;
type Handler = fn(&Args) -> SysResult;

/// Numbers are below this (Tally's own calls start at 500).
pub const NR_SYSCALLS: usize = 511;

/// The dispatch table: by number, the call's name (for traces and reports) and handler.
pub static TABLE: [Option<(&str, Handler)>; NR_SYSCALLS] = {
    let mut t: [Option<(&str, Handler)>; NR_SYSCALLS] = [None; NR_SYSCALLS];
    t[SYS_READ] = Some(("read", io::read));
    t[SYS_WRITE] = Some(("write", io::write));
    t[SYS_OPEN] = Some(("open", io::open));
    t[SYS_CLOSE] = Some(("close", io::close));
    t[SYS_PIPE2] = Some(("pipe2", io::pipe2));
    t[SYS_LSEEK] = Some(("lseek", files::lseek));
    t[SYS_STAT] = Some(("stat", files::stat));
    t[SYS_FSTAT] = Some(("fstat", files::fstat));
    t[SYS_MKDIR] = Some(("mkdir", files::mkdir));
    t[SYS_UNLINK] = Some(("unlink", files::unlink));
    t[SYS_GETDENTS64] = Some(("getdents64", files::getdents64));
    t[SYS_FSYNC] = Some(("fsync", files::fsync));
    t[SYS_SOCKET] = Some(("socket", netlink::socket));
    t[SYS_SENDTO] = Some(("sendto", netlink::sendto));
    t[SYS_RECVFROM] = Some(("recvfrom", netlink::recvfrom));
    t[SYS_BIND] = Some(("bind", netlink::bind));
    t[SYS_SETSOCKOPT] = Some(("setsockopt", netlink::setsockopt));
    t[SYS_GETSOCKOPT] = Some(("getsockopt", netlink::getsockopt));
    t[SYS_MMAP] = Some(("mmap", mmap::mmap));
    t[SYS_MUNMAP] = Some(("munmap", mmap::munmap));
    t[SYS_BRK] = Some(("brk", mmap::brk));
    t[SYS_SCHED_YIELD] = Some(("sched_yield", scheduling::sched_yield));
    t[SYS_NANOSLEEP] = Some(("nanosleep", scheduling::nanosleep));
    t[SYS_GETPID] = Some(("getpid", process::getpid));
    t[SYS_EXIT] = Some(("exit", process::exit));
    t[SYS_WAIT4] = Some(("wait4", wait::wait4));
    t[SYS_KILL] = Some(("kill", process::kill));
    t[SYS_GETUID] = Some(("getuid", process::getuid));
    t[SYS_SETUID] = Some(("setuid", process::setuid));
    t[SYS_GETPPID] = Some(("getppid", process::getppid));
    t[SYS_SETPRIORITY] = Some(("setpriority", scheduling::setpriority));
    t[SYS_SCHED_SETSCHEDULER] = Some(("sched_setscheduler", scheduling::sched_setscheduler));
    t[SYS_GETTID] = Some(("gettid", process::gettid));
    t[SYS_CLOCK_GETTIME] = Some(("clock_gettime", clock_gettime::clock_gettime));
    t[SYS_EXIT_GROUP] = Some(("exit_group", process::exit_group));
    t[SYS_SPAWN] = Some(("spawn", spawn::spawn));
    t[SYS_THREAD_CREATE] = Some(("thread_create", spawn::thread_create));
    t[SYS_MSA] = Some(("msa", msa::msa));
    t[SYS_KSTAT_CHAIN] = Some(("kstat_chain", kstat_read::kstat_chain));
    t[SYS_KSTAT_READ] = Some(("kstat_read", kstat_read::kstat_read));
    t[SYS_BLK_READ] = Some(("blk_read", blk::blk_read));
    t[SYS_BLK_WRITE] = Some(("blk_write", blk::blk_write));
    t[SYS_PROC_STAT] = Some(("proc_stat", procstat::sys_proc_stat));
    t[SYS_ACCT] = Some(("acct", acct_calls::acct));
    t[SYS_JOB_CREATE] = Some(("job_create", acct_calls::job_create));
    t[SYS_JOB_GETJID] = Some(("job_getjid", acct_calls::job_getjid));
    t[SYS_CSA_CTL] = Some(("csa_ctl", acct_calls::csa_ctl));
    t
};

/// The low 32 bits of an argument register, for parameters C declares `int` (`pid_t`,
/// `uid_t`, flags): Linux ignores the upper half of such registers too.
pub fn int_arg(v: u64) -> i32 {
    v as u32 as i32
}

/// RFLAGS bits a user program may set (Linux's `FLAG_MASK` for sigreturn): the arithmetic
/// flags, TF, DF, AC, ID. Everything else — IOPL above all — is the kernel's.
const USER_RFLAGS_MASK: u64 = 0x0025_4dd5;
const RFLAGS_IF_AND_ONE: u64 = 0x202;

/// Run the system call in `frame` (steps 1–3 of the module comment). Returns with
/// interrupts enabled; the stub then disables them and calls [`leave`].
pub fn entry(frame: &mut SyscallFrame) {
    sched::syscall_entered();
    hal::cpu::enable_interrupts();
    frame.rax = dispatch(frame) as u64;
    sched::preempt_if_needed();
    // What sysretq will load must be a user context: a handler that rewrote the frame
    // (exec, signals — later) must not send the CPU anywhere else.
    if frame.rip >= USER_END {
        log::warn!("syscall return to non-user rip {:#x}: killing the task", frame.rip);
        proc::exit_signaled(crate::trap::SIGSEGV);
    }
    frame.rflags = (frame.rflags & USER_RFLAGS_MASK) | RFLAGS_IF_AND_ONE;
}

/// Step 4, with interrupts off, just before `sysretq`: back to ONCPU_USR — unless the
/// process is being killed, in which case the thread exits here. (Checked with interrupts
/// off, so no `exit_group` can slip in between the check and the return to user mode.)
pub fn leave(_frame: &mut SyscallFrame) {
    proc::return_to_user();
}

/// Call the handler for `frame`'s number with its arguments; `-errno` on failure.
pub fn dispatch(frame: &mut SyscallFrame) -> i64 {
    let nr = frame.number();
    let handler = usize::try_from(nr).ok().and_then(|n| TABLE.get(n).copied().flatten());
    let result = match handler {
        Some((_, h)) => h(&frame.args()),
        None => Err(ENOSYS),
    };
    match result {
        Ok(v) => v as i64,
        Err(e) => -(e as i64),
    }
}
