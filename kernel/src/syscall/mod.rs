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
//! 3. the result (`>= 0`, or `-errno`) goes into `frame.rax`;
//! 4. [`leave`], with interrupts off: a reschedule the call asked for (it woke someone more
//!    important) happens now, then the running microstate becomes ONCPU_USR — the checks
//!    and the switch under one acquisition of the scheduler's lock.
//!
//! Handlers live one file per concern: `io.rs` (read, write, pipe2, close, dup2, dup3, fcntl:
//! descriptors), `ioctl.rs` (the console's terminal requests: termios, window size),
//! `files.rs` (files on `/var`: open, lseek, stat, fstat, mkdir, unlink, getdents64, fsync),
//! `netlink.rs` (bus sockets), `process.rs` (ids, uid, exit), `job_calls.rs` (process
//! groups, sessions, the console's foreground group), `signal_calls.rs` (dispositions,
//! masks, `rt_sigtimedwait`, `sigaltstack`, `rt_sigreturn`, `tgkill`), `ioctl.rs` (device
//! requests), `spawn.rs` (spawn,
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
mod ioctl;
mod job_calls;
mod kstat_read;
mod mmap;
mod msa;
mod netlink;
mod process;
mod procstat;
mod scheduling;
mod signal_calls;
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

/// A number no call has: `-ENOSYS`.
fn enosys(_: &Args) -> SysResult {
    Err(ENOSYS)
}

/// The dispatch table: by number, the call's name (for traces and reports) and handler;
/// `("", enosys)` where there is no call, so a lookup needs no second test.
pub static TABLE: [(&str, Handler); NR_SYSCALLS] = {
    let mut t: [(&str, Handler); NR_SYSCALLS] = [("", enosys); NR_SYSCALLS];
    t[SYS_READ] = ("read", io::read);
    t[SYS_WRITE] = ("write", io::write);
    t[SYS_OPEN] = ("open", io::open);
    t[SYS_CLOSE] = ("close", io::close);
    t[SYS_IOCTL] = ("ioctl", ioctl::ioctl);
    t[SYS_PIPE2] = ("pipe2", io::pipe2);
    t[SYS_DUP2] = ("dup2", io::dup2);
    t[SYS_DUP3] = ("dup3", io::dup3);
    t[SYS_FCNTL] = ("fcntl", io::fcntl);
    t[SYS_LSEEK] = ("lseek", files::lseek);
    t[SYS_STAT] = ("stat", files::stat);
    t[SYS_FSTAT] = ("fstat", files::fstat);
    t[SYS_MKDIR] = ("mkdir", files::mkdir);
    t[SYS_UNLINK] = ("unlink", files::unlink);
    t[SYS_GETDENTS64] = ("getdents64", files::getdents64);
    t[SYS_FSYNC] = ("fsync", files::fsync);
    t[SYS_SOCKET] = ("socket", netlink::socket);
    t[SYS_SENDTO] = ("sendto", netlink::sendto);
    t[SYS_RECVFROM] = ("recvfrom", netlink::recvfrom);
    t[SYS_BIND] = ("bind", netlink::bind);
    t[SYS_SETSOCKOPT] = ("setsockopt", netlink::setsockopt);
    t[SYS_GETSOCKOPT] = ("getsockopt", netlink::getsockopt);
    t[SYS_MMAP] = ("mmap", mmap::mmap);
    t[SYS_MUNMAP] = ("munmap", mmap::munmap);
    t[SYS_BRK] = ("brk", mmap::brk);
    t[SYS_SCHED_YIELD] = ("sched_yield", scheduling::sched_yield);
    t[SYS_NANOSLEEP] = ("nanosleep", scheduling::nanosleep);
    t[SYS_GETPID] = ("getpid", process::getpid);
    t[SYS_EXIT] = ("exit", process::exit);
    t[SYS_WAIT4] = ("wait4", wait::wait4);
    t[SYS_KILL] = ("kill", process::kill);
    t[SYS_GETUID] = ("getuid", process::getuid);
    t[SYS_SETUID] = ("setuid", process::setuid);
    t[SYS_GETPPID] = ("getppid", process::getppid);
    t[SYS_SETPRIORITY] = ("setpriority", scheduling::setpriority);
    t[SYS_SCHED_SETSCHEDULER] = ("sched_setscheduler", scheduling::sched_setscheduler);
    t[SYS_GETTID] = ("gettid", process::gettid);
    t[SYS_CLOCK_GETTIME] = ("clock_gettime", clock_gettime::clock_gettime);
    t[SYS_EXIT_GROUP] = ("exit_group", process::exit_group);
    t[SYS_SPAWN] = ("spawn", spawn::spawn);
    t[SYS_THREAD_CREATE] = ("thread_create", spawn::thread_create);
    t[SYS_MSA] = ("msa", msa::msa);
    t[SYS_KSTAT_CHAIN] = ("kstat_chain", kstat_read::kstat_chain);
    t[SYS_KSTAT_READ] = ("kstat_read", kstat_read::kstat_read);
    t[SYS_RT_SIGACTION] = ("rt_sigaction", signal_calls::rt_sigaction);
    t[SYS_RT_SIGPROCMASK] = ("rt_sigprocmask", signal_calls::rt_sigprocmask);
    t[SYS_RT_SIGPENDING] = ("rt_sigpending", signal_calls::rt_sigpending);
    t[SYS_RT_SIGTIMEDWAIT] = ("rt_sigtimedwait", signal_calls::rt_sigtimedwait);
    t[SYS_RT_SIGSUSPEND] = ("rt_sigsuspend", signal_calls::rt_sigsuspend);
    t[SYS_PAUSE] = ("pause", signal_calls::pause);
    t[SYS_TKILL] = ("tkill", signal_calls::tkill);
    t[SYS_TGKILL] = ("tgkill", signal_calls::tgkill);
    t[SYS_IOCTL] = ("ioctl", ioctl::ioctl);
    t[SYS_SETPGID] = ("setpgid", job_calls::setpgid);
    t[SYS_GETPGRP] = ("getpgrp", job_calls::getpgrp);
    t[SYS_SETSID] = ("setsid", job_calls::setsid);
    t[SYS_GETPGID] = ("getpgid", job_calls::getpgid);
    t[SYS_GETSID] = ("getsid", job_calls::getsid);
    t[SYS_BLK_READ] = ("blk_read", blk::blk_read);
    t[SYS_BLK_WRITE] = ("blk_write", blk::blk_write);
    t[SYS_PROC_STAT] = ("proc_stat", procstat::sys_proc_stat);
    t[SYS_ACCT] = ("acct", acct_calls::acct);
    t[SYS_JOB_CREATE] = ("job_create", acct_calls::job_create);
    t[SYS_JOB_GETJID] = ("job_getjid", acct_calls::job_getjid);
    t[SYS_CSA_CTL] = ("csa_ctl", acct_calls::csa_ctl);
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

/// Run the system call in `frame` (steps 1–3 of the module comment). Called with
/// interrupts off (the `syscall` instruction cleared IF); returns with them enabled; the
/// stub then disables them and calls [`leave`].
pub fn entry(frame: &mut SyscallFrame) {
    sched::syscall_entered();
    hal::cpu::enable_interrupts();
    frame.rax = dispatch(frame) as u64;
    // What sysretq will load must be a user context: a handler that rewrote the frame
    // (exec, signals — later) must not send the CPU anywhere else.
    if frame.rip >= USER_END {
        log::warn!("syscall return to non-user rip {:#x}: killing the task", frame.rip);
        proc::exit_signaled(crate::trap::SIGSEGV);
    }
    frame.rflags = (frame.rflags & USER_RFLAGS_MASK) | RFLAGS_IF_AND_ONE;
}

/// Step 4, with interrupts off, just before `sysretq`: back to ONCPU_USR — unless the
/// process is being killed, in which case the thread exits here, or the scheduler wants the
/// CPU for another task (the call woke someone more important, or the tick ended the
/// slice), which it gets first. (Checked with interrupts off, so no `exit_group` and no
/// wake-up can slip in between the checks and the return to user mode.)
pub fn leave(_frame: &mut SyscallFrame) {
    proc::return_to_user();
}

/// Call the handler for `frame`'s number with its arguments; `-errno` on failure.
pub fn dispatch(frame: &mut SyscallFrame) -> i64 {
    let nr = frame.number();
    let result = match usize::try_from(nr).ok().and_then(|n| TABLE.get(n)) {
        Some((_, handler)) => handler(frame.args()),
        None => Err(ENOSYS),
    };
    match result {
        Ok(v) => v as i64,
        Err(e) => -(e as i64),
    }
}
