//! System call numbers, the calling convention, and the contracts of Tally's calls.
//!
//! A user program puts the number in `rax` and up to six arguments in `rdi rsi rdx r10 r8
//! r9`, executes `syscall`, and finds the result in `rax`: a value `>= 0` on success, or
//! `-errno` (see [`crate::errno`]) on failure — the Linux x86_64 convention. Where Linux has
//! the call, Tally uses Linux's number, so `strace`-trained eyes recognise them; Tally's own
//! calls (spawn, msa, kstat access, raw disk blocks) are numbered from 500.
//!
//! Arguments that C declares `int` (`pid_t`, `uid_t`, options, `which`) are read from the
//! low 32 bits of their register, as Linux does; sizes, counts and addresses use all 64.
//! Every pointer is checked: one that names memory the caller may not access that way
//! gives `-EFAULT`, never a kernel fault.
//!
//! ## The calls beyond Linux's usual ones (and their deviations)
//!
//! * `read(fd, buf, n)` — on the console (COM1; fds 0–2 of a process the kernel starts):
//!   Blocks (INTERRUPTIBLE_SLEEP) until at least one byte arrived, returns what is there
//!   (at most `n`). `\r` reads as `\n`. End of input is in-band as on a terminal: `^D`
//!   (0x04) ends the read before it; at the start of a read it is consumed and `read`
//!   returns 0 (EOF). QEMU cannot tell a guest that its stdin closed, so a closed stdin
//!   just never sends more. On a pipe: sleeps until bytes or end of file; on a bus socket:
//!   `recv`. `write` works on the console, pipes (`EPIPE` with no reader), sockets (`send`)
//!   and `/dev/ttyS1`. No such descriptor: `EBADF`.
//! * `pipe2(fds, flags)`, `close(fd)`, `open(path, flags, mode)` — pipes of 4096 bytes
//!   (writes up to that size are atomic); `open` knows `/dev/console`, `/dev/ttyS1` (COM2,
//!   `O_WRONLY`; `ENXIO` without one) and files on `/var` (below); elsewhere `EROFS` with
//!   `O_CREAT` or write access, else `ENOENT`. Descriptors are per process, shared by its
//!   threads, inherited by `spawn` — except those marked close-on-exec (`O_CLOEXEC` to
//!   `open`/`pipe2`/`dup3`, `SOCK_CLOEXEC`, `fcntl(F_SETFD, FD_CLOEXEC)`), since `spawn` is
//!   fork + exec; a process's last exit closes them. A pipe's reader sees end of file (0)
//!   once every write end is closed; a write with no reader left fails with `EPIPE` and
//!   raises `SIGPIPE` in the writer, whose default action (Tally has no handlers) ends the
//!   process, as on Linux. `dup2`, `dup3`, `fcntl`: Linux's, see [`SYS_FCNTL`].
//! * **Files on `/var`** (the FAT16 accounting disk, [`crate::fs`]): `open` with
//!   `O_RDONLY`/`O_WRONLY`/`O_RDWR`, `O_CREAT`, `O_EXCL`, `O_TRUNC`, `O_APPEND`, `O_DIRECTORY`
//!   (`O_CLOEXEC` accepted; `mode` ignored: FAT has no permissions); `read`, `write` (at most
//!   64 KiB per call; an `O_APPEND` write up to that size lands whole even with other
//!   appenders), `lseek` (`SEEK_SET`/`CUR`/`END`; `EINVAL` bad origin or a negative
//!   result, `ESPIPE` on a console, pipe or socket; past the end is allowed, and a write
//!   there fills the gap with zeros; a directory only rewinds), `stat`/`fstat` ([`crate::fs::Stat`];
//!   `fstat` also on the console and `/dev/ttyS1` (`S_IFCHR`), pipes (`S_IFIFO`) and
//!   sockets (`S_IFSOCK`)), `mkdir`, `unlink` (a regular file nobody has open: `EBUSY`
//!   while one is, `EISDIR` on a directory), `getdents64` (`linux_dirent64` records, `.` and
//!   `..` left out; `EINVAL` a buffer too small for one record, `ENOTDIR`), `fsync` (`EINVAL`
//!   on other descriptors). Names are 8.3, case-insensitive: a component longer than that,
//!   or paths deeper than [`crate::fs::MAX_DEPTH`], are `ENAMETOOLONG`; a byte FAT refuses
//!   (or a leading dot) is `EINVAL`; `..` above `/var` is `EINVAL`. Errors as on Linux:
//!   `ENOENT`, `ENOTDIR`, `EISDIR` (writing a directory), `EEXIST`, `EBADF` (wrong access
//!   mode), `EFAULT`, `EMFILE` (the process's descriptors), `ENFILE` (32 files open on the
//!   disk at once), `ENOSPC` (a write shrinks to what fits first; the file stays whole and
//!   readable), `EIO`, `ENODEV` (no accounting disk). The caller sleeps UNINTERRUPTIBLE while
//!   the disk works; the bytes count in its read/write characters and calls, the sectors in
//!   its block counts. See `docs/files.md`.
//! * `spawn(path, path_len, argv, argc)` — start the ramdisk program `path` (`path_len`
//!   bytes, no NUL needed; at most [`SPAWN_PATH_MAX`]) as a child process, with `argc`
//!   arguments given as an array of [`SpawnArg`]. Returns the child's pid. `ENOENT` no such
//!   program, `ENOEXEC` not a static x86_64 executable, `E2BIG` more than
//!   [`SPAWN_MAX_ARGS`] arguments or more than 128 KiB of them, `EINVAL` an argument
//!   containing NUL or a bad ELF layout, `ENAMETOOLONG`, `EFAULT`, `EAGAIN` too many tasks,
//!   `ENOMEM`. The child's name (comm) is the program's file name; it inherits uid, nice
//!   and policy. Like `posix_spawn`: there is no fork. The 5th argument is
//!   `posix_spawnattr_setflags`' flags: [`POSIX_SPAWN_SETPGROUP`] puts the child in process
//!   group `a[5]` before it runs (0: a new group it leads; `EPERM` a group of another
//!   session or none, `EINVAL` a negative one), [`POSIX_SPAWN_SETSID`] makes it lead a new
//!   session; [`SPAWN_TCSETPGRP`] then makes the child's group the console's foreground
//!   group, also before it runs (`ENOTTY` if the console is not the caller's controlling
//!   terminal); any other bit is `EINVAL`. The child starts in its parent's group and
//!   session otherwise, with every signal at its default.
//! * `wait4(pid, status, options, rusage)` — Linux's: `pid` -1 any child, > 0 that child,
//!   0 any child in the caller's process group, < -1 any child in group `-pid`.
//!   `options`: `WNOHANG` (returns 0 if no child has ended); `WUNTRACED` also reports a
//!   child that stopped (status `0x7f | sig << 8`), `WCONTINUED` one continued by SIGCONT
//!   (status `0xffff`) — each event once; the `rusage` of such a report is all zeros.
//!   `status` and `rusage` (either may be NULL) are checked *before* a child is reaped, so
//!   a bad pointer cannot lose a child. `rusage` is [`Rusage`], filled from the reaped
//!   child and the children it waited for (Linux's `RUSAGE_BOTH`). `EINTR` if the caller's
//!   process is being killed.
//! * `thread_create(entry, stack_top, arg)` — a new thread in the caller's process, sharing
//!   its memory; it starts at `entry` as if called with `arg` in `rdi` from a return
//!   address of 0: `rsp = stack_top - 8`, and the kernel writes the 0 there (so a 16-byte
//!   aligned `stack_top` gives the System V alignment). Returns its thread id. `EINVAL`
//!   entry or stack outside the user half, `EFAULT` stack not writable, `EAGAIN` too many
//!   threads. The thread ends with `exit` (only itself) or `exit_group` (the whole
//!   process).
//! * `mmap(addr, len, prot, flags, fd, off)` — anonymous private mappings only
//!   (`MAP_PRIVATE | MAP_ANONYMOUS`; `fd` ignored, `off` must be page-aligned): demand-zero
//!   pages. `MAP_SHARED` is `EINVAL`, a file mapping `EBADF`. `MAP_FIXED` may only replace
//!   earlier `mmap` regions (over the program image, heap or stack: `EINVAL`),
//!   `MAP_FIXED_NOREPLACE` fails with `EEXIST` over anything.
//! * `munmap(addr, len)` — removes the `mmap` regions in the range (the image, heap and
//!   stack are left alone: use `brk`). `addr` must be page-aligned, `len > 0`.
//! * `setpriority(PRIO_PROCESS, who, nice)` — the nice value of thread `who` (0: the
//!   caller), clamped to -20..19. Only root (uid 0) may lower a nice value (`EACCES`) or
//!   touch another user's task (`EPERM`). `PRIO_PGRP`/`PRIO_USER`: `EINVAL`.
//! * `sched_setscheduler(pid, policy, param)` — `param` points to an `int` priority.
//!   `SCHED_OTHER`/`SCHED_BATCH` take 0, `SCHED_FIFO`/`SCHED_RR` 1..99 (`EINVAL`
//!   otherwise); real-time policies need uid 0 (`EPERM`).
//! * `setuid(uid)` — uid 0 may become anyone (and is then recorded as having used
//!   privilege, the accounting flag `ASU`); others may only "change" to their own uid
//!   (`EPERM`).
//! * `blk_read/blk_write(lba, buf, sectors)` — whole 512-byte sectors of the data disk (IDE
//!   primary slave); returns `sectors`. At most [`BLK_MAX_SECTORS`] per call. The caller
//!   sleeps UNINTERRUPTIBLE while the drive works. `ENODEV` no data disk, `EINVAL` past its
//!   end, `EIO` the drive failed.
//! * `msa`, `kstat_chain`, `kstat_read` — see [`crate::msa`] and [`crate::kstat`].
//! * `acct(path)` — Linux's process accounting switch ([`SYS_ACCT`]). Root only: any other
//!   uid gets `EPERM`, checked before anything else (the path is not even read). With a
//!   path (a NUL-terminated string), the kernel opens that **existing regular file** on
//!   `/var` for appending and, from then on, appends one 64-byte [`crate::acct::AcctV3`]
//!   record per process, written when the process's last thread exits; a file already in
//!   use is closed first (its records flushed). With `NULL`, accounting turns off (not an
//!   error when it was already off). Errors: `EISDIR` the path names a directory (as on
//!   Linux, whose open for writing refuses it before acct's own check), `EACCES` a file
//!   that cannot be written, `ENOENT` no such file (it is never
//!   created: `accton` creates it first), `ENOTDIR` a component of the path is not a
//!   directory, `ENAMETOOLONG` the path or a component is too long, `EFAULT` the path is
//!   not readable user memory, `EIO` the disk failed; on an error, the previous state
//!   (on with its file, or off) is kept. Records reach the file whole and in exit order.
//! * `job_create(uid)` — SGI CSA jobs (see [`crate::csa`]): the calling process leaves the
//!   job it was in (if any) and becomes the first member of a new job owned by `uid` (the
//!   low 32 bits; `u32::MAX`, i.e. -1, means the caller's uid), as a login does before it
//!   starts a user's shell. Returns the new job id, `jid = JOB_HOST_ID << 32 | pid` with
//!   `pid` the caller's process id ([`crate::csa::JOB_HOST_ID`], [`crate::csa::jid_of`]).
//!   Processes the members `spawn` join the job, threads they create belong to it with
//!   their process; the job ends when its last process exits. Root only (`EPERM`, checked
//!   first); `EBUSY` if that job id is still in use (the caller created it already, or an
//!   earlier process with the same pid did and its job has members left); `EAGAIN` if the
//!   job table is full. A job the caller left and that has no member left ends there.
//! * `job_getjid(pid)` — the job id of process `pid` (0: the caller). `ESRCH` no such
//!   process, `ENODATA` the process is in no job. Anyone may ask about any process.
//! * `csa_ctl(request, arg)` — CSA's control call (CSA's `acctctl`): `request` is one of
//!   `AC_START` … `AC_AUTH` ([`crate::csa`]), `arg` points to the structure that request
//!   reads and writes ([`crate::csa::ctl_arg_size`]: an `actctl`, an `actstat` for
//!   `AC_CHECK`, an `actwra` for `AC_WRACCT`, nothing for `AC_HALT`/`AC_AUTH`). Returns 0.
//!   `EPERM` for a caller other than root asking to START, STOP, HALT, WRACCT or AUTH (where
//!   CSA requires `CAP_SYS_PACCT`; checked first); `EINVAL` an unknown request, an entry
//!   count or index out of range, a path without its NUL, no path where one is needed (START
//!   with no file open, JASTART), a daemon record that is not whole; `EFAULT` `arg` not
//!   readable (or, for the status requests, not writable); `ENODATA` JASTART/JASTOP by a
//!   process in no job, or WRACCT for a job that does not exist; the errors of opening the
//!   file (`ENOENT`, `EISDIR` a directory, …). CHECK, KDSTAT and RCDSTAT fill in
//!   the states (and the system file's path) in `arg`; START and STOP write back the
//!   entries they changed. Semantics: the `tally-csa` crate's `control` module.

pub const SYS_READ: usize = 0;
pub const SYS_WRITE: usize = 1;
pub const SYS_OPEN: usize = 2;
pub const SYS_CLOSE: usize = 3;
/// `stat(path, statbuf)`, `fstat(fd, statbuf)`: a [`crate::fs::Stat`] for a file on `/var`
/// (`fstat` also answers for the console, pipes and sockets).
pub const SYS_STAT: usize = 4;
pub const SYS_FSTAT: usize = 5;
/// `poll(fds, nfds, timeout_ms)`: Linux's, on the console, pipes, bus sockets and files
/// ([`crate::poll`]); waits in POLL_SLEEP.
pub const SYS_POLL: usize = 7;
/// `lseek(fd, offset, whence)` on a file of `/var` (`ESPIPE` elsewhere).
pub const SYS_LSEEK: usize = 8;
pub const SYS_MMAP: usize = 9;
/// `mprotect(addr, len, prot)`: for `mmap`'s regions (see `kernel/src/syscall/mmap.rs`).
pub const SYS_MPROTECT: usize = 10;
pub const SYS_MUNMAP: usize = 11;
pub const SYS_BRK: usize = 12;
/// `rt_sigaction(sig, act, oldact, sigsetsize)`, `rt_sigprocmask(how, set, oldset,
/// sigsetsize)`, `rt_sigreturn()` (the handler's restorer calls it): see [`crate::signal`].
pub const SYS_RT_SIGACTION: usize = 13;
pub const SYS_RT_SIGPROCMASK: usize = 14;
pub const SYS_RT_SIGRETURN: usize = 15;
/// `ioctl(fd, request, arg)`: on the console, the terminal requests of [`crate::tty`]
/// (`TCGETS`, `TCSETS`, `TCSETSW`, `TCSETSF`, `TIOCGWINSZ`, `TIOCSWINSZ`); on a pipe,
/// `FIONREAD`; `ENOTTY` on any other descriptor and for a request the file does not know,
/// as Linux answers.
pub const SYS_IOCTL: usize = 16;
pub const SYS_SCHED_YIELD: usize = 24;
/// `dup(oldfd)`: a copy at the lowest free descriptor.
pub const SYS_DUP: usize = 32;
/// `dup2(oldfd, newfd)`, `dup3(oldfd, newfd, flags)`: `newfd` becomes a copy of `oldfd`
/// (closing what was there); `dup3` takes `O_CLOEXEC` and refuses `oldfd == newfd`.
pub const SYS_DUP2: usize = 33;
/// `pause()`: sleep until a signal's handler has run (`EINTR`).
pub const SYS_PAUSE: usize = 34;
pub const SYS_NANOSLEEP: usize = 35;
pub const SYS_GETPID: usize = 39;
/// Bus sockets: `socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC)`, `sendto`, `recvfrom`,
/// `bind`, `setsockopt`/`getsockopt` (`SOL_SOCKET`, `SO_RCVBUF`) — see [`crate::netlink`].
pub const SYS_SOCKET: usize = 41;
pub const SYS_SENDTO: usize = 44;
pub const SYS_RECVFROM: usize = 45;
pub const SYS_BIND: usize = 49;
pub const SYS_SETSOCKOPT: usize = 54;
pub const SYS_GETSOCKOPT: usize = 55;
/// `clone(flags, stack, parent_tid, child_tid, tls)` (Linux's x86_64 argument order): with
/// `CLONE_THREAD` a thread of the caller's process, as musl's `pthread_create` asks
/// ([`crate::clone`]); otherwise a new process (fork, vfork).
pub const SYS_CLONE: usize = 56;
/// `fork()`: a copy of the caller, memory shared copy-on-write; 0 in the child, its pid in the
/// parent. `EAGAIN` at the task limit, `ENOMEM` without memory for the child.
pub const SYS_FORK: usize = 57;
/// `vfork()`: a child that borrows the caller's memory; the caller sleeps until it execs or
/// exits.
pub const SYS_VFORK: usize = 58;
/// `execve(path, argv, envp)`: NULL-terminated arrays of C strings; Linux's limits
/// ([`EXECVE_ARG_STRLEN`] per string, `E2BIG` beyond the loader's `ARG_MAX` in all).
pub const SYS_EXECVE: usize = 59;
/// The longest single `execve` argument or environment string, with its NUL (Linux's
/// `MAX_ARG_STRLEN`, 32 pages): a longer one is `E2BIG`.
pub const EXECVE_ARG_STRLEN: usize = 32 * 4096;
/// Most `execve` argument plus environment pointers read before `E2BIG` (the loader's
/// 128 KiB `ARG_MAX` holds at most this many 8-byte pointers anyway).
pub const EXECVE_MAX_STRINGS: usize = 128 * 1024 / 8;
pub const SYS_EXIT: usize = 60;
pub const SYS_WAIT4: usize = 61;
/// `kill(pid, sig)`: see [`crate::signal`].
pub const SYS_KILL: usize = 62;
/// `fcntl(fd, cmd, arg)`: `F_DUPFD`, `F_DUPFD_CLOEXEC`, `F_GETFD`, `F_SETFD`, `F_GETFL`,
/// `F_SETFL` ([`crate::fs`]; `F_SETFL` changes `O_NONBLOCK` on pipes and bus sockets, the
/// rest of its flags are ignored: `docs/linux-abi.md`); any other command is `EINVAL`.
pub const SYS_FCNTL: usize = 72;
/// `fsync(fd)`: the file's data and its directory entry (its size) are on the disk.
pub const SYS_FSYNC: usize = 74;
/// `mkdir(path, mode)` (the mode is ignored: FAT has none), `unlink(path)` on `/var`.
pub const SYS_MKDIR: usize = 83;
pub const SYS_UNLINK: usize = 87;
pub const SYS_GETUID: usize = 102;
pub const SYS_SETUID: usize = 105;
/// `setpgid(pid, pgid)`, `getpgrp()`, `setsid()`, `getpgid(pid)`, `getsid(pid)`: process
/// groups and sessions, with Linux's rules and errnos (`docs/job-control.md`).
pub const SYS_SETPGID: usize = 109;
pub const SYS_GETPPID: usize = 110;
pub const SYS_GETPGRP: usize = 111;
pub const SYS_SETSID: usize = 112;
pub const SYS_GETPGID: usize = 121;
pub const SYS_GETSID: usize = 124;
/// `rt_sigpending(set, sigsetsize)`, `rt_sigtimedwait(set, info, timeout, sigsetsize)`,
/// `rt_sigsuspend(mask, sigsetsize)`, `sigaltstack(ss, old_ss)`: see [`crate::signal`].
pub const SYS_RT_SIGPENDING: usize = 127;
pub const SYS_RT_SIGTIMEDWAIT: usize = 128;
pub const SYS_RT_SIGSUSPEND: usize = 130;
pub const SYS_SIGALTSTACK: usize = 131;
/// `tkill(tid, sig)`, `tgkill(tgid, tid, sig)`: a signal to one thread.
pub const SYS_TKILL: usize = 200;
pub const SYS_TGKILL: usize = 234;
pub const SYS_SETPRIORITY: usize = 141;
pub const SYS_SCHED_SETSCHEDULER: usize = 144;
/// `acct(path)`: process accounting to `path` (an existing regular file on `/var`), or off
/// with `NULL`; root only. See the module documentation for the contract.
pub const SYS_ACCT: usize = 163;
/// `arch_prctl(code, addr)`: [`ARCH_SET_FS`] sets the calling thread's FS base to `addr`
/// (`EPERM` outside the user half), [`ARCH_GET_FS`] stores it at `addr` (a `u64`;
/// `EFAULT`). Tally keeps no user GS base and none of Linux's other codes: `EINVAL`.
pub const SYS_ARCH_PRCTL: usize = 158;
pub const ARCH_SET_GS: u64 = 0x1001;
pub const ARCH_SET_FS: u64 = 0x1002;
pub const ARCH_GET_FS: u64 = 0x1003;
pub const ARCH_GET_GS: u64 = 0x1004;
pub const SYS_GETTID: usize = 186;
/// `futex(uaddr, op, val, timeout or val2, uaddr2, val3)`: `FUTEX_WAIT`, `FUTEX_WAKE`,
/// `FUTEX_REQUEUE`, `FUTEX_CMP_REQUEUE`, `FUTEX_WAIT_BITSET`, `FUTEX_WAKE_BITSET`, with or
/// without `FUTEX_PRIVATE_FLAG` ([`crate::futex`]); waits in FUTEX_SLEEP.
pub const SYS_FUTEX: usize = 202;
/// `getdents64(fd, buf, len)`: directory entries of an `O_DIRECTORY` descriptor as
/// [`crate::fs::dirent64`] records; 0 at the end.
pub const SYS_GETDENTS64: usize = 217;
/// `set_tid_address(tidptr)`: remember `tidptr` as the address where the calling thread's
/// tid is cleared (a `u32` 0 written, one futex waiter woken) when it exits; returns the
/// caller's tid. Never fails (the address is checked only when it is used).
pub const SYS_SET_TID_ADDRESS: usize = 218;
pub const SYS_CLOCK_GETTIME: usize = 228;
pub const SYS_EXIT_GROUP: usize = 231;
/// `ppoll(fds, nfds, tmo_p, sigmask, sigsetsize)`: `poll` with a `timespec` timeout
/// (NULL: none) and a signal mask for the wait.
pub const SYS_PPOLL: usize = 271;
pub const SYS_DUP3: usize = 292;
/// `pipe2(fds, flags)`: a pipe; `fds[0]` reads, `fds[1]` writes (`int[2]`); `flags` 0 or
/// `O_CLOEXEC`.
pub const SYS_PIPE2: usize = 293;

// Issue #17's small calls (Linux's numbers; contracts in `docs/linux-abi.md`).
/// `pipe(fds)`: `pipe2(fds, 0)` (musl's `pipe()` calls this one).
pub const SYS_PIPE: usize = 22;
/// `readv(fd, iov, iovcnt)`, `writev(fd, iov, iovcnt)`: [`crate::uio`].
pub const SYS_READV: usize = 19;
pub const SYS_WRITEV: usize = 20;
/// `sendmsg(fd, msg, flags)`, `recvmsg(fd, msg, flags)` on bus sockets: [`crate::netlink::MsgHdr`].
pub const SYS_SENDMSG: usize = 46;
pub const SYS_RECVMSG: usize = 47;
/// `uname(buf)`: [`crate::utsname`].
pub const SYS_UNAME: usize = 63;
/// `getcwd(buf, size)`: always `/` (Tally has no `chdir`); returns the length with the NUL.
pub const SYS_GETCWD: usize = 79;
pub const SYS_GETGID: usize = 104;
pub const SYS_GETEUID: usize = 107;
pub const SYS_GETEGID: usize = 108;
/// `sysinfo(info)`: [`crate::utsname::Sysinfo`] (no load averages: 0).
pub const SYS_SYSINFO: usize = 99;
/// `sched_getaffinity(pid, len, mask)`: CPU 0 only; returns the 8 bytes written.
pub const SYS_SCHED_GETAFFINITY: usize = 204;
/// `getrandom(buf, len, flags)`: bytes of the kernel's ChaCha20 generator ([`crate::uio::GRND_NONBLOCK`]).
pub const SYS_GETRANDOM: usize = 318;

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
/// `proc_stat(buf, max)`: up to `max` [`crate::procstat::ProcStat`] records, one per live
/// thread; returns how many were written (or how many exist, if `max` is 0).
pub const SYS_PROC_STAT: usize = 507;
/// `job_create(uid)`: put the caller in a new CSA job; returns its job id.
pub const SYS_JOB_CREATE: usize = 508;
/// `job_getjid(pid)`: the job id of a process (0: the caller).
pub const SYS_JOB_GETJID: usize = 509;
/// `csa_ctl(request, arg)`: switch CSA accounting, ask its state, write daemon records.
pub const SYS_CSA_CTL: usize = 510;

/// `clock_gettime` clock ids (Linux's).
pub const CLOCK_REALTIME: usize = 0;
pub const CLOCK_MONOTONIC: usize = 1;

/// `mmap` protections and flags (Linux's values; only anonymous private mappings exist).
pub const PROT_READ: usize = 0x1;
pub const PROT_WRITE: usize = 0x2;
pub const PROT_EXEC: usize = 0x4;
pub const PROT_NONE: usize = 0x0;
pub const MAP_SHARED: usize = 0x01;
pub const MAP_PRIVATE: usize = 0x02;
pub const MAP_FIXED: usize = 0x10;
pub const MAP_ANONYMOUS: usize = 0x20;
/// Do not check the mapping against the machine's memory (Linux's overcommit guess).
pub const MAP_NORESERVE: usize = 0x4000;
pub const MAP_FIXED_NOREPLACE: usize = 0x10_0000;

/// `wait4` options.
pub const WNOHANG: usize = 1;
pub const WUNTRACED: usize = 2;
pub const WCONTINUED: usize = 8;

/// `setpriority` `which`: a task (Linux: one thread).
pub const PRIO_PROCESS: usize = 0;
pub const PRIO_PGRP: usize = 1;
pub const PRIO_USER: usize = 2;

/// `sched_setscheduler` policies (Linux's numbers).
pub const SCHED_OTHER: usize = 0;
pub const SCHED_FIFO: usize = 1;
pub const SCHED_RR: usize = 2;
pub const SCHED_BATCH: usize = 3;

/// `spawn`'s 5th argument, flags (glibc's `posix_spawnattr_setflags` values): put the child
/// in process group `a[5]` (0: a new group it leads), or make it lead a new session.
pub const POSIX_SPAWN_SETPGROUP: usize = 0x02;
pub const POSIX_SPAWN_SETSID: usize = 0x80;
/// `spawn` flag, Tally's: the child's process group becomes the console's foreground group
/// before the child runs (glibc's `posix_spawn_file_actions_addtcsetpgrp_np` on the
/// console); `ENOTTY` if the console is not the caller's controlling terminal.
pub const SPAWN_TCSETPGRP: usize = 0x1_0000;
/// Most arguments `spawn` accepts: 8192, so that the argument array itself (16 bytes an
/// argument) is at most 128 KiB, the bound on the arguments' bytes (`ARG_MAX`). Linux has no
/// count of its own worth the name (`MAX_ARG_STRINGS` is 2³¹ − 1): its bound is the bytes
/// and pointers on the new stack, which is what this keeps (the loader's pointer block fits
/// 16 Ki words). A shell line of 4 KiB has at most 2048 words, so `kill` with a thousand
/// pids works; the old limit of 256 refused it with `E2BIG`.
pub const SPAWN_MAX_ARGS: usize = 8192;
/// Longest path `spawn` accepts (Linux's `PATH_MAX`, NUL included there).
pub const SPAWN_PATH_MAX: usize = 4096;
/// Most sectors one `blk_read`/`blk_write` moves (1 MiB).
pub const BLK_MAX_SECTORS: usize = 2048;
/// Bytes per sector of `blk_read`/`blk_write`.
pub const BLK_SECTOR_SIZE: usize = 512;

/// One argument string as `spawn` receives it: address and length in bytes (no NUL).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpawnArg {
    pub addr: u64,
    pub len: u64,
}

const _: () = assert!(core::mem::size_of::<SpawnArg>() == 16);

/// `struct timeval` as Linux x86_64 lays it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timeval {
    pub tv_sec: i64,
    pub tv_usec: i64,
}

/// `struct rusage` exactly as Linux x86_64 lays it out (144 bytes), as `wait4` fills it:
///
/// | field | Tally's source |
/// |---|---|
/// | `ru_utime` | microstate ONCPU_USR |
/// | `ru_stime` | ONCPU_SYS + ONCPU_TRAP (system calls and exceptions) |
/// | `ru_maxrss` | high-water resident set size, KiB |
/// | `ru_minflt` / `ru_majflt` | faults served without I/O / faults that waited for a disk (a page of a program on `/var`) |
/// | `ru_inblock` / `ru_oublock` | 512-byte sectors read / written with `blk_read` / `blk_write`, and by the file system for the process's requests on `/var` |
/// | `ru_nvcsw` / `ru_nivcsw` | switches away while blocking or yielding / while preempted |
/// | `ru_ixrss`, `ru_idrss`, `ru_isrss`, `ru_nswap`, `ru_msgsnd`, `ru_msgrcv`, `ru_nsignals` | 0, as on Linux |
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rusage {
    pub ru_utime: Timeval,
    pub ru_stime: Timeval,
    pub ru_maxrss: i64,
    pub ru_ixrss: i64,
    pub ru_idrss: i64,
    pub ru_isrss: i64,
    pub ru_minflt: i64,
    pub ru_majflt: i64,
    pub ru_nswap: i64,
    pub ru_inblock: i64,
    pub ru_oublock: i64,
    pub ru_msgsnd: i64,
    pub ru_msgrcv: i64,
    pub ru_nsignals: i64,
    pub ru_nvcsw: i64,
    pub ru_nivcsw: i64,
}

const _: () = assert!(core::mem::size_of::<Rusage>() == 144);

impl Rusage {
    pub const SIZE: usize = 144;

    /// The little-endian bytes user space sees.
    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let words: [i64; 18] = [
            self.ru_utime.tv_sec,
            self.ru_utime.tv_usec,
            self.ru_stime.tv_sec,
            self.ru_stime.tv_usec,
            self.ru_maxrss,
            self.ru_ixrss,
            self.ru_idrss,
            self.ru_isrss,
            self.ru_minflt,
            self.ru_majflt,
            self.ru_nswap,
            self.ru_inblock,
            self.ru_oublock,
            self.ru_msgsnd,
            self.ru_msgrcv,
            self.ru_nsignals,
            self.ru_nvcsw,
            self.ru_nivcsw,
        ];
        let mut out = [0u8; Self::SIZE];
        for (chunk, w) in out.as_chunks_mut::<8>().0.iter_mut().zip(words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// Decode the bytes of [`Rusage::to_bytes`].
    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        let w = |i: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[i * 8..i * 8 + 8]);
            i64::from_le_bytes(x)
        };
        Rusage {
            ru_utime: Timeval { tv_sec: w(0), tv_usec: w(1) },
            ru_stime: Timeval { tv_sec: w(2), tv_usec: w(3) },
            ru_maxrss: w(4),
            ru_ixrss: w(5),
            ru_idrss: w(6),
            ru_isrss: w(7),
            ru_minflt: w(8),
            ru_majflt: w(9),
            ru_nswap: w(10),
            ru_inblock: w(11),
            ru_oublock: w(12),
            ru_msgsnd: w(13),
            ru_msgrcv: w(14),
            ru_nsignals: w(15),
            ru_nvcsw: w(16),
            ru_nivcsw: w(17),
        }
    }
}

/// `struct timespec` as Linux x86_64 lays it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timespec {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

const _: () = assert!(core::mem::size_of::<Timespec>() == 16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rusage_is_linux_sized_and_round_trips() {
        assert_eq!(core::mem::size_of::<Rusage>(), 144);
        let r =
            Rusage { ru_utime: Timeval { tv_sec: 1, tv_usec: 2 }, ru_maxrss: 3, ru_nivcsw: -4, ..Default::default() };
        let b = r.to_bytes();
        assert_eq!(&b[0..8], &1i64.to_le_bytes());
        assert_eq!(&b[32..40], &3i64.to_le_bytes(), "ru_maxrss follows the two timevals");
        assert_eq!(&b[136..144], &(-4i64).to_le_bytes(), "ru_nivcsw is last");
        assert_eq!(Rusage::from_bytes(&b), r);
    }
}
