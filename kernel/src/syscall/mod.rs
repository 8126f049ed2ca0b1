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
//! Handlers live one file per concern: `arch_prctl.rs` (a thread's FS base), `io.rs` (read, write, pipe, pipe2, close, dup, dup2, dup3, fcntl:
//! descriptors), `uio.rs` (readv, writev), `libc_calls.rs` (uname, getrandom, getcwd, sysinfo, sched_getaffinity, the group
//! and effective ids), `ioctl.rs` (the console's terminal requests: termios, window size),
//! `files.rs` (files on `/var`: open, lseek, stat, fstat, mkdir, unlink, getdents64, fsync),
//! `netlink.rs` (bus sockets, sendmsg/recvmsg), `process.rs` (ids, uid, exit), `job_calls.rs` (process
//! groups, sessions, the console's foreground group), `signal_calls.rs` (dispositions,
//! masks, `rt_sigtimedwait`, `sigaltstack`, `rt_sigreturn`, `tgkill`), `ioctl.rs` (device
//! requests), `spawn.rs` (spawn,
//! thread_create), `fork_calls.rs` (fork, vfork), `execve.rs` (execve), `wait.rs` (wait4 and its rusage), `scheduling.rs` (yield, sleep, nice,
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
mod arch_prctl;
mod blk;
mod clock_gettime;
mod clone;
mod execve;
mod files;
mod fork_calls;
mod futex_call;
mod io;
mod ioctl;
mod job_calls;
mod kstat_read;
mod libc_calls;
mod mmap;
mod msa;
mod netlink;
mod poll;
mod process;
mod procstat;
mod scheduling;
mod signal_calls;
mod spawn;
mod uio;
pub mod usercopy;
mod wait;

pub use wait::rusage;

use tally_uapi::errno::ENOSYS;
use tally_uapi::syscall::*;

use crate::{proc, sched};
use hal::address_space::USER_END;
pub use hal::syscall_entry::SyscallFrame;

/// The six argument registers, read in place in the saved frame: `a[0]`…`a[5]` are
/// `rdi rsi rdx r10 r8 r9` (ABI order; `UserRegs`' `Index`).
pub type Args = SyscallFrame;
/// A handler's outcome: the value for `rax`, or a (positive) errno.
pub type SysResult = Result<u64, i32>;

/// How a call is handed its arguments: most take the six argument registers; the few that
/// read or replace the caller's whole register set (`fork`, `execve`, `clone`, returning
/// from a signal handler) take the frame itself. A frame handler's `Ok` value still goes to
/// `rax`; one that has set `rax` itself returns `Ok(frame.rax)`.
#[derive(Clone, Copy)]
pub enum Handler {
    Args(fn(&Args) -> SysResult),
    Frame(fn(&mut SyscallFrame) -> SysResult),
}

/// Numbers are below this (Tally's own calls start at 500).
pub const NR_SYSCALLS: usize = 511;

/// A number no call has: `-ENOSYS`.
fn enosys(_: &Args) -> SysResult {
    Err(ENOSYS)
}

/// The dispatch table: by number, the call's name (for traces and reports) and handler;
/// `("", enosys)` where there is no call, so a lookup needs no second test. Entries are
/// [`Handler::Args`] unless written `Handler::Frame(..)`: `arg!` keeps the list readable.
pub static TABLE: [(&str, Handler); NR_SYSCALLS] = {
    let mut t: [(&str, Handler); NR_SYSCALLS] = [("", Handler::Args(enosys)); NR_SYSCALLS];
    macro_rules! arg {
        ($name:expr, $f:expr) => {
            ($name, Handler::Args($f))
        };
    }
    t[SYS_READ] = arg!("read", io::read);
    t[SYS_WRITE] = arg!("write", io::write);
    t[SYS_OPEN] = arg!("open", io::open);
    t[SYS_CLOSE] = arg!("close", io::close);
    t[SYS_IOCTL] = arg!("ioctl", ioctl::ioctl);
    t[SYS_PIPE2] = arg!("pipe2", io::pipe2);
    t[SYS_DUP] = arg!("dup", io::dup);
    t[SYS_DUP2] = arg!("dup2", io::dup2);
    t[SYS_DUP3] = arg!("dup3", io::dup3);
    t[SYS_FCNTL] = arg!("fcntl", io::fcntl);
    t[SYS_LSEEK] = arg!("lseek", files::lseek);
    t[SYS_STAT] = arg!("stat", files::stat);
    t[SYS_FSTAT] = arg!("fstat", files::fstat);
    t[SYS_MKDIR] = arg!("mkdir", files::mkdir);
    t[SYS_UNLINK] = arg!("unlink", files::unlink);
    t[SYS_GETDENTS64] = arg!("getdents64", files::getdents64);
    t[SYS_FSYNC] = arg!("fsync", files::fsync);
    t[SYS_SOCKET] = arg!("socket", netlink::socket);
    t[SYS_SENDTO] = arg!("sendto", netlink::sendto);
    t[SYS_RECVFROM] = arg!("recvfrom", netlink::recvfrom);
    t[SYS_BIND] = arg!("bind", netlink::bind);
    t[SYS_SETSOCKOPT] = arg!("setsockopt", netlink::setsockopt);
    t[SYS_GETSOCKOPT] = arg!("getsockopt", netlink::getsockopt);
    t[SYS_MMAP] = arg!("mmap", mmap::mmap);
    t[SYS_MUNMAP] = arg!("munmap", mmap::munmap);
    t[SYS_MPROTECT] = arg!("mprotect", mmap::mprotect);
    t[SYS_BRK] = arg!("brk", mmap::brk);
    t[SYS_SCHED_YIELD] = arg!("sched_yield", scheduling::sched_yield);
    t[SYS_NANOSLEEP] = arg!("nanosleep", scheduling::nanosleep);
    t[SYS_GETPID] = arg!("getpid", process::getpid);
    t[SYS_EXIT] = arg!("exit", process::exit);
    t[SYS_WAIT4] = arg!("wait4", wait::wait4);
    t[SYS_KILL] = arg!("kill", process::kill);
    t[SYS_GETUID] = arg!("getuid", process::getuid);
    t[SYS_SETUID] = arg!("setuid", process::setuid);
    t[SYS_GETPPID] = arg!("getppid", process::getppid);
    t[SYS_SETPRIORITY] = arg!("setpriority", scheduling::setpriority);
    t[SYS_SCHED_SETSCHEDULER] = arg!("sched_setscheduler", scheduling::sched_setscheduler);
    t[SYS_GETTID] = arg!("gettid", process::gettid);
    t[SYS_CLONE] = ("clone", Handler::Frame(clone::clone));
    t[SYS_FUTEX] = arg!("futex", futex_call::futex);
    t[SYS_POLL] = arg!("poll", poll::poll);
    t[SYS_PPOLL] = arg!("ppoll", poll::ppoll);
    t[SYS_CLOCK_GETTIME] = arg!("clock_gettime", clock_gettime::clock_gettime);
    t[SYS_EXIT_GROUP] = arg!("exit_group", process::exit_group);
    t[SYS_SPAWN] = arg!("spawn", spawn::spawn);
    t[SYS_THREAD_CREATE] = arg!("thread_create", spawn::thread_create);
    t[SYS_MSA] = arg!("msa", msa::msa);
    t[SYS_KSTAT_CHAIN] = arg!("kstat_chain", kstat_read::kstat_chain);
    t[SYS_KSTAT_READ] = arg!("kstat_read", kstat_read::kstat_read);
    t[SYS_RT_SIGACTION] = arg!("rt_sigaction", signal_calls::rt_sigaction);
    t[SYS_RT_SIGPROCMASK] = arg!("rt_sigprocmask", signal_calls::rt_sigprocmask);
    t[SYS_RT_SIGRETURN] = ("rt_sigreturn", Handler::Frame(signal_calls::rt_sigreturn));
    t[SYS_RT_SIGPENDING] = arg!("rt_sigpending", signal_calls::rt_sigpending);
    t[SYS_RT_SIGTIMEDWAIT] = arg!("rt_sigtimedwait", signal_calls::rt_sigtimedwait);
    t[SYS_RT_SIGSUSPEND] = arg!("rt_sigsuspend", signal_calls::rt_sigsuspend);
    t[SYS_SIGALTSTACK] = ("sigaltstack", Handler::Frame(signal_calls::sigaltstack));
    t[SYS_PAUSE] = arg!("pause", signal_calls::pause);
    t[SYS_TKILL] = arg!("tkill", signal_calls::tkill);
    t[SYS_TGKILL] = arg!("tgkill", signal_calls::tgkill);
    t[SYS_IOCTL] = arg!("ioctl", ioctl::ioctl);
    t[SYS_SETPGID] = arg!("setpgid", job_calls::setpgid);
    t[SYS_GETPGRP] = arg!("getpgrp", job_calls::getpgrp);
    t[SYS_SETSID] = arg!("setsid", job_calls::setsid);
    t[SYS_GETPGID] = arg!("getpgid", job_calls::getpgid);
    t[SYS_GETSID] = arg!("getsid", job_calls::getsid);
    t[SYS_BLK_READ] = arg!("blk_read", blk::blk_read);
    t[SYS_BLK_WRITE] = arg!("blk_write", blk::blk_write);
    t[SYS_PROC_STAT] = arg!("proc_stat", procstat::sys_proc_stat);
    t[SYS_ACCT] = arg!("acct", acct_calls::acct);
    t[SYS_JOB_CREATE] = arg!("job_create", acct_calls::job_create);
    t[SYS_JOB_GETJID] = arg!("job_getjid", acct_calls::job_getjid);
    t[SYS_CSA_CTL] = arg!("csa_ctl", acct_calls::csa_ctl);
    t[SYS_ARCH_PRCTL] = arg!("arch_prctl", arch_prctl::arch_prctl);
    t[SYS_SET_TID_ADDRESS] = arg!("set_tid_address", process::set_tid_address);
    t[SYS_FORK] = ("fork", Handler::Frame(fork_calls::fork));
    t[SYS_VFORK] = ("vfork", Handler::Frame(fork_calls::vfork));
    t[SYS_EXECVE] = ("execve", Handler::Frame(execve::execve));
    t[SYS_PIPE] = arg!("pipe", io::pipe);
    t[SYS_READV] = arg!("readv", uio::readv);
    t[SYS_WRITEV] = arg!("writev", uio::writev);
    t[SYS_SENDMSG] = arg!("sendmsg", netlink::sendmsg);
    t[SYS_RECVMSG] = arg!("recvmsg", netlink::recvmsg);
    t[SYS_UNAME] = arg!("uname", libc_calls::uname);
    t[SYS_GETCWD] = arg!("getcwd", libc_calls::getcwd);
    t[SYS_GETGID] = arg!("getgid", libc_calls::getgid);
    t[SYS_GETEUID] = arg!("geteuid", libc_calls::geteuid);
    t[SYS_GETEGID] = arg!("getegid", libc_calls::getgid);
    t[SYS_GETRANDOM] = arg!("getrandom", libc_calls::getrandom);
    t[SYS_SYSINFO] = arg!("sysinfo", libc_calls::sysinfo);
    t[SYS_SCHED_GETAFFINITY] = arg!("sched_getaffinity", libc_calls::sched_getaffinity);
    t
};

/// The low 32 bits of an argument register, for parameters C declares `int` (`pid_t`,
/// `uid_t`, flags): Linux ignores the upper half of such registers too.
pub fn int_arg(v: u64) -> i32 {
    v as u32 as i32
}

/// Run the system call in `frame` (steps 1–3 of the module comment). Called with
/// interrupts off (the `syscall` instruction cleared IF); returns with them enabled; the
/// stub then disables them and calls [`leave`].
pub fn entry(frame: &mut SyscallFrame) {
    sched::syscall_entered();
    hal::cpu::enable_interrupts();
    frame.rax = dispatch(frame) as u64;
    // What sysretq or iretq will load must be a user context: a `syscall` in the last bytes
    // of the user half returns to a non-canonical address, which `iretq` would fault on in
    // ring 0, and a frame handler's bad frame is refused here too.
    if frame.rip >= USER_END {
        log::warn!("syscall return to non-user rip {:#x}: killing the task", frame.rip);
        proc::exit_signaled(crate::trap::SIGSEGV);
    }
}

/// Step 4, with interrupts off, just before `sysretq`: back to ONCPU_USR — unless the
/// process is being killed, in which case the thread exits here, or the scheduler wants the
/// CPU for another task (the call woke someone more important, or the tick ended the
/// slice), which it gets first. (Checked with interrupts off, so no `exit_group` and no
/// wake-up can slip in between the checks and the return to user mode.) A pending signal
/// is delivered here too: its handler's frame rewrites `frame`, and a call it interrupted
/// (`ERESTARTSYS`) fails with `EINTR` or is restarted (`proc/sigdeliver.rs`).
pub fn leave(frame: &mut SyscallFrame) {
    proc::return_to_user(frame, true);
}

/// Call the handler for `frame`'s number with its arguments; `-errno` on failure.
pub fn dispatch(frame: &mut SyscallFrame) -> i64 {
    let nr = frame.number();
    let result = match usize::try_from(nr).ok().and_then(|n| TABLE.get(n)) {
        Some((_, Handler::Args(handler))) => handler(frame),
        Some((_, Handler::Frame(handler))) => {
            // The handler may have rewritten the frame (execve, rt_sigreturn): make it one
            // ring 3 can take (user selectors and RFLAGS; else the task dies below).
            let r = handler(frame);
            if !frame.sanitize() {
                frame.rip = USER_END; // refused below
            }
            r
        }
        None => Err(ENOSYS),
    };
    match result {
        Ok(v) => v as i64,
        Err(e) => -(e as i64),
    }
}
