//! # System calls: the `syscall` instruction and one wrapper per call
//!
//! The convention is Linux's (and so fixed in `tally_uapi::syscall`): the call number goes
//! in `rax`, arguments in `rdi rsi rdx r10 r8 r9`, and `syscall` switches to the kernel. The
//! CPU saves the return address in `rcx` and the flags in `r11`, so those two are clobbered;
//! everything else comes back intact. The result comes back in `rax`: a value from
//! `-4095` to `-1` is `-errno`, anything else is success. [`raw::syscall6`] is the one
//! place that executes the instruction; the wrappers below turn pointers and lengths into
//! slices and the raw result into `Result<usize, Errno>`.
//!
//! A call the kernel does not implement answers `Err(ENOSYS)`, like any other error.
//!
//! Wrappers that could break the program's own memory if misused (`mmap` with a fixed
//! address, `munmap`, `brk`, `thread_create`) are `unsafe fn`s; the rest are safe: the kernel
//! only ever writes into the buffers the wrappers pass, within their lengths.
//!
//! Two safe faces for what those `unsafe fn`s do: [`Mapping`], anonymous memory a program
//! owns (mapped, looked at, replaced, unmapped), and [`probe`], the same calls with the
//! arguments a contract test needs the kernel to refuse (bad pointers, lying lengths).

use alloc::vec::Vec;
use core::sync::atomic::AtomicU64;

use tally_uapi::csa::{self, ActCtl, ActStat, ActWra};
use tally_uapi::errno::{E2BIG, EINVAL, EIO, ENAMETOOLONG};
use tally_uapi::fs::{Stat, PATH_MAX};
use tally_uapi::kstat::{KidT, KstatReadInfo};
use tally_uapi::msa::ClkT;
use tally_uapi::procstat::ProcStat;
use tally_uapi::syscall::*;

use crate::Errno;

/// The raw instruction, for the fuzzer and for calls without a wrapper.
pub mod raw {
    /// Executes `syscall` with number `n` and six arguments; returns `rax` as is.
    ///
    /// # Safety
    /// The kernel does whatever the call asks: arbitrary numbers and arguments can unmap or
    /// overwrite this program's memory or end it.
    #[inline(always)]
    pub unsafe fn syscall6(n: usize, a0: usize, a1: usize, a2: usize, a3: usize, a4: usize, a5: usize) -> isize {
        let ret: isize;
        // SAFETY: the caller's; the asm itself only uses the registers it declares.
        unsafe {
            core::arch::asm!(
                "syscall",
                inlateout("rax") n as isize => ret,
                in("rdi") a0, in("rsi") a1, in("rdx") a2,
                in("r10") a3, in("r8") a4, in("r9") a5,
                lateout("rcx") _, lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }
}

/// Decodes a raw result: `-4095..=-1` is `-errno`.
pub const fn decode(ret: isize) -> Result<usize, Errno> {
    if ret < 0 && ret >= -4095 {
        Err(Errno(-ret as i32))
    } else {
        Ok(ret as usize)
    }
}

/// A call whose arguments cannot hurt the program's memory (or only point at buffers the
/// caller handed over with their true lengths).
fn call(n: usize, a: [usize; 6]) -> Result<usize, Errno> {
    // SAFETY: every caller passes either plain numbers or pointer/length pairs taken from
    // live Rust references, so the kernel only touches memory the caller lent it.
    decode(unsafe { raw::syscall6(n, a[0], a[1], a[2], a[3], a[4], a[5]) })
}

/// `read(fd, buf, len)`: bytes read, 0 at end of file.
pub fn read(fd: usize, buf: &mut [u8]) -> Result<usize, Errno> {
    call(SYS_READ, [fd, buf.as_mut_ptr() as usize, buf.len(), 0, 0, 0])
}

/// `write(fd, buf, len)`: bytes written (possibly fewer than `buf.len()`).
pub fn write(fd: usize, buf: &[u8]) -> Result<usize, Errno> {
    call(SYS_WRITE, [fd, buf.as_ptr() as usize, buf.len(), 0, 0, 0])
}

/// Writes all of `buf`, retrying after short writes.
pub fn write_all(fd: usize, mut buf: &[u8]) -> Result<(), Errno> {
    while !buf.is_empty() {
        match write(fd, buf)? {
            0 => return Err(Errno(EIO)),
            n => buf = buf.get(n..).unwrap_or(&[]),
        }
    }
    Ok(())
}

/// `mmap(addr, len, prot, flags, fd, offset)`: the address of the new mapping.
///
/// # Safety
/// With `MAP_FIXED` in `flags` the kernel replaces whatever is mapped at `addr`.
pub unsafe fn mmap(
    addr: usize,
    len: usize,
    prot: usize,
    flags: usize,
    fd: isize,
    offset: usize,
) -> Result<usize, Errno> {
    call(SYS_MMAP, [addr, len, prot, flags, fd as usize, offset])
}

/// An anonymous private read/write mapping of `len` bytes, placed by the kernel.
pub fn mmap_anonymous(len: usize) -> Result<usize, Errno> {
    // SAFETY: no MAP_FIXED: the kernel picks an address that holds nothing.
    unsafe { mmap(0, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) }
}

/// `munmap(addr, len)`.
///
/// # Safety
/// Nothing in `[addr, addr + len)` may be in use any more.
pub unsafe fn munmap(addr: usize, len: usize) -> Result<usize, Errno> {
    call(SYS_MUNMAP, [addr, len, 0, 0, 0, 0])
}

/// `brk(addr)`: sets the program break and returns the new one; `brk(0)` only asks.
/// As on Linux, a refused request returns the *old* break (not an error), so success means
/// "the result is at least what was asked for".
///
/// # Safety
/// Lowering the break frees the memory above it: the heap ([`crate::heap`]) owns it.
pub unsafe fn brk(addr: usize) -> Result<usize, Errno> {
    call(SYS_BRK, [addr, 0, 0, 0, 0, 0])
}

/// The current program break (`brk(0)`).
pub fn current_brk() -> Result<usize, Errno> {
    // SAFETY: brk(0) changes nothing.
    unsafe { brk(0) }
}

/// `sched_yield()`.
pub fn sched_yield() -> Result<usize, Errno> {
    call(SYS_SCHED_YIELD, [0; 6])
}

/// `nanosleep(req, rem)`: sleeps; on interruption `rem` (if given) gets the time left.
pub fn nanosleep(req: &Timespec, rem: Option<&mut Timespec>) -> Result<usize, Errno> {
    let rem = rem.map_or(0, |r| r as *mut Timespec as usize);
    call(SYS_NANOSLEEP, [req as *const Timespec as usize, rem, 0, 0, 0, 0])
}

/// Sleeps `ms` milliseconds.
pub fn sleep_ms(ms: u64) -> Result<usize, Errno> {
    let t = Timespec { tv_sec: (ms / 1000) as i64, tv_nsec: ((ms % 1000) * 1_000_000) as i64 };
    nanosleep(&t, None)
}

/// `getpid()`: the process id.
pub fn getpid() -> Result<usize, Errno> {
    call(SYS_GETPID, [0; 6])
}

/// `exit(code)`: ends the calling thread. Never returns: if the kernel refuses (no such
/// call yet), the thread spins on `sched_yield`.
pub fn exit(code: i32) -> ! {
    let _ = call(SYS_EXIT, [code as usize, 0, 0, 0, 0, 0]);
    loop {
        let _ = sched_yield();
    }
}

/// `wait4(pid, &status, options, &rusage)`: the pid of a child that ended (0 with
/// `WNOHANG` if none has yet). `pid` -1 waits for any child. `status` gets the wait status
/// (decode it with [`crate::process`]), `rusage` the child's resource usage.
pub fn wait4(
    pid: isize,
    status: Option<&mut i32>,
    options: usize,
    rusage: Option<&mut Rusage>,
) -> Result<usize, Errno> {
    let st = status.map_or(0, |s| s as *mut i32 as usize);
    let mut bytes = [0u8; Rusage::SIZE];
    let ru = if rusage.is_some() { bytes.as_mut_ptr() as usize } else { 0 };
    let pid = call(SYS_WAIT4, [pid as usize, st, options, ru, 0, 0])?;
    if let Some(r) = rusage {
        *r = Rusage::from_bytes(&bytes);
    }
    Ok(pid)
}

/// `getuid()`.
pub fn getuid() -> Result<usize, Errno> {
    call(SYS_GETUID, [0; 6])
}

/// `setuid(uid)`.
pub fn setuid(uid: u32) -> Result<usize, Errno> {
    call(SYS_SETUID, [uid as usize, 0, 0, 0, 0, 0])
}

/// `getppid()`: the parent's process id.
pub fn getppid() -> Result<usize, Errno> {
    call(SYS_GETPPID, [0; 6])
}

/// `setpriority(which, who, prio)`: e.g. `setpriority(PRIO_PROCESS, 0, nice)` sets the
/// caller's nice value (-20..19).
pub fn setpriority(which: usize, who: usize, prio: i32) -> Result<usize, Errno> {
    call(SYS_SETPRIORITY, [which, who, prio as isize as usize, 0, 0, 0])
}

/// `sched_setscheduler(pid, policy, &param)` where `param` is Linux's
/// `struct sched_param { int sched_priority; }`, passed here as the one `i32` it holds.
pub fn sched_setscheduler(pid: usize, policy: usize, priority: i32) -> Result<usize, Errno> {
    let param: i32 = priority;
    call(SYS_SCHED_SETSCHEDULER, [pid, policy, &param as *const i32 as usize, 0, 0, 0])
}

/// `gettid()`: the thread id.
pub fn gettid() -> Result<usize, Errno> {
    call(SYS_GETTID, [0; 6])
}

/// `clock_gettime(clock, &ts)`: `CLOCK_MONOTONIC` (since boot) or `CLOCK_REALTIME`.
pub fn clock_gettime(clock: usize) -> Result<Timespec, Errno> {
    let mut ts = Timespec::default();
    call(SYS_CLOCK_GETTIME, [clock, &mut ts as *mut Timespec as usize, 0, 0, 0, 0])?;
    Ok(ts)
}

/// Nanoseconds on `CLOCK_MONOTONIC`.
pub fn monotonic_ns() -> Result<u64, Errno> {
    let t = clock_gettime(CLOCK_MONOTONIC)?;
    Ok((t.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(t.tv_nsec as u64))
}

/// `exit_group(code)`: ends every thread of the process. Falls back to [`exit`] if the
/// kernel does not have it.
pub fn exit_group(code: i32) -> ! {
    let _ = call(SYS_EXIT_GROUP, [code as usize, 0, 0, 0, 0, 0]);
    exit(code)
}

/// `fork()`: a copy of this process, its memory shared copy-on-write; `Ok(0)` in the child,
/// `Ok(child's pid)` in the parent. (Of a multi-threaded program the child is only the
/// calling thread, as on Linux: it should exec or exit soon.)
pub fn fork() -> Result<usize, Errno> {
    call(SYS_FORK, [0; 6])
}

/// The C form of `execve`'s arguments: each string NUL-terminated, and the NULL-terminated
/// pointer arrays to them. Holds the bytes the pointers point into.
pub struct ExecArgs {
    _strings: Vec<Vec<u8>>,
    path: Vec<u8>,
    argv: Vec<usize>,
    envp: Vec<usize>,
}

impl ExecArgs {
    pub fn new(path: &str, argv: &[&str], envp: &[&str]) -> ExecArgs {
        let c = |s: &str| -> Vec<u8> { s.bytes().chain(core::iter::once(0)).collect() };
        let strings: Vec<Vec<u8>> = argv.iter().chain(envp).map(|s| c(s)).collect();
        let ptrs = |r: &[Vec<u8>]| -> Vec<usize> { r.iter().map(|s| s.as_ptr() as usize).chain([0]).collect() };
        let (argv, envp) = (ptrs(&strings[..argv.len()]), ptrs(&strings[argv.len()..]));
        ExecArgs { path: c(path), argv, envp, _strings: strings }
    }

    /// The three registers `execve` takes: path, argv, envp.
    pub fn regs(&self) -> [usize; 3] {
        [self.path.as_ptr() as usize, self.argv.as_ptr() as usize, self.envp.as_ptr() as usize]
    }
}

/// `execve(path, argv, envp)`: replace this program with `path`; returns only on failure,
/// with the error.
pub fn execve(path: &str, argv: &[&str], envp: &[&str]) -> Errno {
    let a = ExecArgs::new(path, argv, envp);
    let [p, v, e] = a.regs();
    match call(SYS_EXECVE, [p, v, e, 0, 0, 0]) {
        Err(e) => e,
        Ok(_) => Errno(0), // cannot happen: a successful execve does not return
    }
}

/// `vfork()` then, in the child, `execve(args)` (or `exit_group(127)` if it fails), the way
/// a C library's `posix_spawn` does: the child borrows this process's memory and stack, so
/// it runs no Rust code at all — the three instructions between the calls are in one
/// `asm!` block. Returns the child's pid once the child has exec'd or exited.
pub fn vfork_execve(args: &ExecArgs) -> Result<usize, Errno> {
    let [p, v, e] = args.regs();
    let ret: isize;
    // SAFETY: the child runs only the instructions below, touching no memory (its registers
    // are the parent's: rdi, rsi, rdx still hold execve's arguments), and ends in execve or
    // exit_group; the parent resumes after the first `syscall` with the child's pid or
    // -errno in rax, its other registers as the kernel keeps them (rcx, r11 clobbered).
    unsafe {
        core::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "mov eax, {execve}",
            "syscall",
            "mov edi, 127",
            "mov eax, {exit_group}",
            "syscall",
            "2:",
            execve = const SYS_EXECVE,
            exit_group = const SYS_EXIT_GROUP,
            inlateout("rax") SYS_VFORK as isize => ret,
            inout("rdi") p => _, inout("rsi") v => _, inout("rdx") e => _,
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    decode(ret)
}

/// `spawn(path, path_len, argv, argc)`: starts the ramdisk program at `path` as a child
/// with arguments `argv` (`argv[0]` is, by convention, the program's name); returns the
/// child's pid. `argv` travels as an array of `argc` `SpawnArg { addr, len }`.
pub fn spawn(path: &str, argv: &[&str]) -> Result<usize, Errno> {
    if argv.len() > SPAWN_MAX_ARGS {
        return Err(Errno(E2BIG));
    }
    let args: Vec<SpawnArg> = argv.iter().map(|a| SpawnArg { addr: a.as_ptr() as u64, len: a.len() as u64 }).collect();
    call(SYS_SPAWN, [path.as_ptr() as usize, path.len(), args.as_ptr() as usize, args.len(), 0, 0])
}

/// `thread_create(entry, stack_top, arg)`: a new thread of this process running
/// `entry(arg)` on the stack below `stack_top` (the kernel pushes a 0 return address, so a
/// 16-byte aligned `stack_top` gives the ABI's alignment); returns its thread id.
///
/// # Safety
/// `stack_top` must be the top of memory nothing else uses, large enough for `entry`, and
/// `entry` must end with [`exit`] (never return).
pub unsafe fn thread_create(entry: extern "C" fn(usize) -> !, stack_top: usize, arg: usize) -> Result<usize, Errno> {
    call(SYS_THREAD_CREATE, [entry as usize, stack_top, arg, 0, 0, 0])
}

/// `msa(ntimers, which, timers)`: fills `timers` with microstate times in nanoseconds,
/// indexed by `tally_uapi::msa::MicroState` (`which`: `MSA_SELF`, `MSA_CHILDREN`,
/// `MSA_THREAD`).
pub fn msa(which: u32, timers: &mut [ClkT]) -> Result<usize, Errno> {
    call(SYS_MSA, [timers.len(), which as usize, timers.as_mut_ptr() as usize, 0, 0, 0])
}

/// `kstat_chain(buf, len, &needed)`: copies the chain's headers (`KstatHeader` records)
/// into `buf` and returns the chain id (KCID); `needed` gets the bytes the list takes
/// (`ENOMEM` when `buf` is shorter). See `tally_uapi::kstat::KstatReadInfo` for the contract.
pub fn kstat_chain(buf: &mut [u8], needed: Option<&mut u64>) -> Result<usize, Errno> {
    let needed = needed.map_or(0, |n| n as *mut u64 as usize);
    call(SYS_KSTAT_CHAIN, [buf.as_mut_ptr() as usize, buf.len(), needed, 0, 0, 0])
}

/// `kstat_read(kid, buf, len, &info)`: kstat `kid`'s data section into `buf` (decode with
/// `tally_uapi::kstat::records`); returns its length. `info` gets the KCID and the kstat's
/// header as of the read.
pub fn kstat_read(kid: KidT, buf: &mut [u8], info: Option<&mut KstatReadInfo>) -> Result<usize, Errno> {
    let mut bytes = [0u8; KstatReadInfo::SIZE];
    let ip = if info.is_some() { bytes.as_mut_ptr() as usize } else { 0 };
    let r = call(SYS_KSTAT_READ, [kid as usize, buf.as_mut_ptr() as usize, buf.len(), ip, 0, 0]);
    // The header comes back on success and on ENOMEM (it then says how big `buf` must be).
    if let (Some(i), Ok(_) | Err(Errno(tally_uapi::errno::ENOMEM))) = (info, &r) {
        *i = KstatReadInfo::from_bytes(&bytes);
    }
    r
}

/// `blk_read(lba, buf, sectors)` on the data disk; `buf.len()` must be a multiple of
/// `BLK_SECTOR_SIZE` (`EINVAL` otherwise, without asking the kernel).
pub fn blk_read(lba: u64, buf: &mut [u8]) -> Result<usize, Errno> {
    if !buf.len().is_multiple_of(BLK_SECTOR_SIZE) {
        return Err(Errno(EINVAL));
    }
    call(SYS_BLK_READ, [lba as usize, buf.as_mut_ptr() as usize, buf.len() / BLK_SECTOR_SIZE, 0, 0, 0])
}

/// `blk_write(lba, buf, sectors)` on the data disk; as [`blk_read`].
pub fn blk_write(lba: u64, buf: &[u8]) -> Result<usize, Errno> {
    if !buf.len().is_multiple_of(BLK_SECTOR_SIZE) {
        return Err(Errno(EINVAL));
    }
    call(SYS_BLK_WRITE, [lba as usize, buf.as_ptr() as usize, buf.len() / BLK_SECTOR_SIZE, 0, 0, 0])
}

/// `proc_stat(buf, max)`: one `ProcStat` record per live thread (zombies included) into
/// `buf`, at most `buf.len()`; returns how many were written. With an empty `buf` the
/// kernel writes nothing and returns how many threads exist, so a reader sizes its buffer
/// first — and retries with a bigger one if the answer filled it (threads come and go).
pub fn proc_stat(buf: &mut [ProcStat]) -> Result<usize, Errno> {
    // `ProcStat` is `#[repr(C)]`, integers only and without padding (its size is asserted
    // in tally_uapi), so the kernel may fill it byte for byte: any bytes are a valid value.
    call(SYS_PROC_STAT, [buf.as_mut_ptr() as usize, buf.len(), 0, 0, 0, 0])
}

/// Every thread's [`ProcStat`], all read by the kernel at one instant. The buffer is sized
/// by asking first (`max` = 0); if the answer fills it, threads appeared meanwhile: try
/// again with more room.
pub fn proc_stat_all() -> Result<Vec<ProcStat>, Errno> {
    let mut cap = proc_stat(&mut [])?.saturating_add(8);
    loop {
        let mut buf = alloc::vec![ProcStat::zeroed(); cap];
        let n = proc_stat(&mut buf)?;
        if n < cap {
            buf.truncate(n);
            return Ok(buf);
        }
        cap = cap.saturating_mul(2);
    }
}

/// `close(fd)`.
pub fn close(fd: usize) -> Result<usize, Errno> {
    call(SYS_CLOSE, [fd, 0, 0, 0, 0, 0])
}

/// `pipe2(fds, 0)`: a new pipe as `(read end, write end)`.
pub fn pipe() -> Result<(usize, usize), Errno> {
    let mut fds = [0i32; 2];
    call(SYS_PIPE2, [fds.as_mut_ptr() as usize, 0, 0, 0, 0, 0])?;
    Ok((fds[0] as usize, fds[1] as usize))
}

/// `socket(domain, type, protocol)`: a new socket's descriptor.
pub fn socket(domain: u32, ty: u32, protocol: u32) -> Result<usize, Errno> {
    call(SYS_SOCKET, [domain as usize, ty as usize, protocol as usize, 0, 0, 0])
}

/// `bind(fd, &sockaddr_nl, 12)`.
pub fn bind_netlink(fd: usize, portid: u32) -> Result<usize, Errno> {
    let sa = tally_uapi::netlink::SockaddrNl {
        nl_family: tally_uapi::netlink::AF_NETLINK as u16,
        nl_pid: portid,
        ..Default::default()
    }
    .to_bytes();
    call(SYS_BIND, [fd, sa.as_ptr() as usize, sa.len(), 0, 0, 0])
}

/// `sendto(fd, buf, len, 0, NULL, 0)`: hand the kernel one or more netlink messages.
pub fn send(fd: usize, buf: &[u8]) -> Result<usize, Errno> {
    call(SYS_SENDTO, [fd, buf.as_ptr() as usize, buf.len(), 0, 0, 0])
}

/// `recvfrom(fd, buf, len, flags, NULL, NULL)`: one datagram (its length; with `MSG_TRUNC`
/// in `flags` its full length even if `buf` was shorter).
pub fn recv(fd: usize, buf: &mut [u8], flags: u32) -> Result<usize, Errno> {
    call(SYS_RECVFROM, [fd, buf.as_mut_ptr() as usize, buf.len(), flags as usize, 0, 0])
}

/// `setsockopt(fd, level, name, &value, 4)` for an `int` option.
pub fn setsockopt_int(fd: usize, level: u32, name: u32, value: i32) -> Result<usize, Errno> {
    let v = value;
    call(SYS_SETSOCKOPT, [fd, level as usize, name as usize, &v as *const i32 as usize, 4, 0])
}

/// `getsockopt(fd, level, name, &value, &len)` for an `int` option.
pub fn getsockopt_int(fd: usize, level: u32, name: u32) -> Result<i32, Errno> {
    let mut v = 0i32;
    let mut len = 4i32;
    call(
        SYS_GETSOCKOPT,
        [fd, level as usize, name as usize, &mut v as *mut i32 as usize, &mut len as *mut i32 as usize, 0],
    )?;
    Ok(v)
}

/// `kill(pid, sig)`: see `tally_uapi::signal`.
pub fn kill(pid: isize, sig: i32) -> Result<usize, Errno> {
    call(SYS_KILL, [pid as usize, sig as isize as usize, 0, 0, 0, 0])
}

/// A copy of `path` with the NUL a C string needs; a path containing NUL is `EINVAL`
/// (the kernel would read it as a shorter path), one longer than `PATH_MAX` is
/// `ENAMETOOLONG`, both without asking the kernel.
fn c_path(path: &str) -> Result<Vec<u8>, Errno> {
    if path.as_bytes().contains(&0) {
        return Err(Errno(EINVAL));
    }
    if path.len() >= PATH_MAX {
        return Err(Errno(ENAMETOOLONG));
    }
    let mut c = Vec::with_capacity(path.len() + 1);
    c.extend_from_slice(path.as_bytes());
    c.push(0);
    Ok(c)
}

/// `open(path, flags, mode)`: a descriptor for `path`. Files live on `/var` (the FAT
/// accounting disk); `flags` are `tally_uapi::fs::O_*` (`O_RDONLY`, `O_WRONLY | O_CREAT |
/// O_APPEND`, ...), `mode` is what a new file would get on Linux (FAT keeps none: pass
/// 0o644). Besides `/var`, the kernel opens the device paths it knows (`/dev/ttyS1`).
pub fn open(path: &str, flags: u32, mode: u32) -> Result<usize, Errno> {
    let c = c_path(path)?;
    call(SYS_OPEN, [c.as_ptr() as usize, flags as usize, mode as usize, 0, 0, 0])
}

/// `lseek(fd, offset, whence)`: the new offset from the start of the file (`whence` is
/// `SEEK_SET`, `SEEK_CUR` or `SEEK_END`).
pub fn lseek(fd: usize, offset: i64, whence: u32) -> Result<u64, Errno> {
    call(SYS_LSEEK, [fd, offset as usize, whence as usize, 0, 0, 0]).map(|n| n as u64)
}

/// `fstat(fd, &statbuf)`.
pub fn fstat(fd: usize) -> Result<Stat, Errno> {
    let mut b = [0u8; Stat::SIZE];
    call(SYS_FSTAT, [fd, b.as_mut_ptr() as usize, 0, 0, 0, 0])?;
    Ok(Stat::from_bytes(&b))
}

/// `stat(path, &statbuf)`.
pub fn stat(path: &str) -> Result<Stat, Errno> {
    let c = c_path(path)?;
    let mut b = [0u8; Stat::SIZE];
    call(SYS_STAT, [c.as_ptr() as usize, b.as_mut_ptr() as usize, 0, 0, 0, 0])?;
    Ok(Stat::from_bytes(&b))
}

/// `fsync(fd)`: the file's data and size are on the disk when it returns.
pub fn fsync(fd: usize) -> Result<usize, Errno> {
    call(SYS_FSYNC, [fd, 0, 0, 0, 0, 0])
}

/// `mkdir(path, mode)` (FAT keeps no mode; Linux's default 0o755 is what to pass).
pub fn mkdir(path: &str, mode: u32) -> Result<usize, Errno> {
    let c = c_path(path)?;
    call(SYS_MKDIR, [c.as_ptr() as usize, mode as usize, 0, 0, 0, 0])
}

/// `unlink(path)`: removes a file (a directory is `EISDIR`).
pub fn unlink(path: &str) -> Result<usize, Errno> {
    let c = c_path(path)?;
    call(SYS_UNLINK, [c.as_ptr() as usize, 0, 0, 0, 0, 0])
}

/// `getdents64(fd, buf, len)`: directory entries of an `O_DIRECTORY` descriptor packed into
/// `buf` as `linux_dirent64` records (decode with `tally_uapi::fs::dirent64::decode`, or use
/// [`crate::fs::read_dir`]); the bytes used, 0 at the end of the directory.
pub fn getdents64(fd: usize, buf: &mut [u8]) -> Result<usize, Errno> {
    call(SYS_GETDENTS64, [fd, buf.as_mut_ptr() as usize, buf.len(), 0, 0, 0])
}

/// `acct(path)`: Linux process accounting to the existing file `path` on `/var`, or off
/// with `None` (`acct(NULL)`). Root only.
pub fn acct(path: Option<&str>) -> Result<usize, Errno> {
    match path {
        Some(p) => {
            let c = c_path(p)?;
            call(SYS_ACCT, [c.as_ptr() as usize, 0, 0, 0, 0, 0])
        }
        None => call(SYS_ACCT, [0; 6]),
    }
}

/// `job_create(uid)`: the caller leaves its job and starts a new CSA job owned by `uid`
/// (`u32::MAX`: the caller's uid); the new job id. Root only.
pub fn job_create(uid: u32) -> Result<u64, Errno> {
    call(SYS_JOB_CREATE, [uid as usize, 0, 0, 0, 0, 0]).map(|j| j as u64)
}

/// `job_getjid(pid)`: the job id of process `pid` (0: the caller); `ENODATA` if it is in
/// no job, `ESRCH` if there is no such process.
pub fn job_getjid(pid: u32) -> Result<u64, Errno> {
    call(SYS_JOB_GETJID, [pid as usize, 0, 0, 0, 0, 0]).map(|j| j as u64)
}

/// `csa_ctl(request, arg)` with the argument's bytes: `arg` must be exactly the size
/// `tally_uapi::csa::ctl_arg_size(request)` names (empty for `AC_HALT`/`AC_AUTH`), else
/// `EINVAL` without asking the kernel. The kernel writes its answer back into `arg` for
/// the requests that have one. The typed faces below are easier to use.
pub fn csa_ctl(request: u32, arg: &mut [u8]) -> Result<usize, Errno> {
    match csa::ctl_arg_size(request) {
        Some(n) if n == arg.len() => {}
        _ => return Err(Errno(EINVAL)),
    }
    let p = if arg.is_empty() { 0 } else { arg.as_mut_ptr() as usize };
    call(SYS_CSA_CTL, [request as usize, p, 0, 0, 0, 0])
}

/// `csa_ctl` with an `actctl` (`AC_START`, `AC_STOP`, `AC_KDSTAT`, `AC_RCDSTAT`,
/// `AC_JASTART`, `AC_JASTOP`): `ctl` is updated with what the kernel wrote back.
pub fn csa_ctl_actctl(request: u32, ctl: &mut ActCtl) -> Result<usize, Errno> {
    if csa::ctl_arg_size(request) != Some(ActCtl::SIZE) {
        return Err(Errno(EINVAL));
    }
    let mut b = ctl.to_bytes();
    let r = csa_ctl(request, &mut b)?;
    *ctl = ActCtl::from_bytes(&b);
    Ok(r)
}

/// `csa_ctl(AC_KDSTAT or AC_RCDSTAT, &actctl)` asking for every entry: the kinds' (or the
/// record kinds' and thresholds') states, and the system file's path (empty: none open).
pub fn csa_status(request: u32) -> Result<ActCtl, Errno> {
    if !matches!(request, csa::AC_KDSTAT | csa::AC_RCDSTAT) {
        return Err(Errno(EINVAL));
    }
    let mut c = ActCtl { ac_sttnum: csa::NUM_KDRCDS as i32, ..ActCtl::default() };
    csa_ctl_actctl(request, &mut c)?;
    Ok(c)
}

/// `csa_ctl(AC_CHECK, &actstat)`: the state (and parameter) of entry `ind`.
pub fn csa_check(ind: u32) -> Result<ActStat, Errno> {
    let mut b = ActStat { ac_ind: ind, ..ActStat::default() }.to_bytes();
    csa_ctl(csa::AC_CHECK, &mut b)?;
    Ok(ActStat::from_bytes(&b))
}

/// `csa_ctl(AC_WRACCT, &actwra)`: a daemon's record(s) into the accounting files.
pub fn csa_wracct(wra: &ActWra) -> Result<usize, Errno> {
    let mut b = wra.to_bytes();
    csa_ctl(csa::AC_WRACCT, &mut b)
}

/// `csa_ctl(AC_HALT)` or `csa_ctl(AC_AUTH)`: the requests without an argument.
pub fn csa_ctl_noarg(request: u32) -> Result<usize, Errno> {
    csa_ctl(request, &mut [])
}

// ---- The terminal: termios and the window size (ioctl) -------------------------------

/// `ioctl(fd, TCGETS, &termios)`: the terminal's settings (`ENOTTY` if `fd` is not one).
pub fn tcgetattr(fd: usize) -> Result<tally_uapi::tty::Termios, Errno> {
    use tally_uapi::tty::{Termios, TCGETS};
    let mut b = [0u8; Termios::SIZE];
    call(SYS_IOCTL, [fd, TCGETS as usize, b.as_mut_ptr() as usize, 0, 0, 0])?;
    Ok(Termios::from_bytes(&b))
}

/// When [`tcsetattr`]'s change takes effect (POSIX's `TCSANOW`, `TCSADRAIN`, `TCSAFLUSH`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// At once (`TCSETS`).
    Now,
    /// Once output has drained (`TCSETSW`).
    Drain,
    /// After discarding input not yet read (`TCSETSF`).
    Flush,
}

/// `ioctl(fd, TCSETS/TCSETSW/TCSETSF, &termios)`.
pub fn tcsetattr(fd: usize, when: When, t: &tally_uapi::tty::Termios) -> Result<usize, Errno> {
    use tally_uapi::tty::{TCSETS, TCSETSF, TCSETSW};
    let request = match when {
        When::Now => TCSETS,
        When::Drain => TCSETSW,
        When::Flush => TCSETSF,
    };
    let b = t.to_bytes();
    call(SYS_IOCTL, [fd, request as usize, b.as_ptr() as usize, 0, 0, 0])
}

/// `ioctl(fd, TIOCGWINSZ, &winsize)`: the terminal's size.
pub fn window_size(fd: usize) -> Result<tally_uapi::tty::Winsize, Errno> {
    use tally_uapi::tty::{Winsize, TIOCGWINSZ};
    let mut b = [0u8; Winsize::SIZE];
    call(SYS_IOCTL, [fd, TIOCGWINSZ as usize, b.as_mut_ptr() as usize, 0, 0, 0])?;
    Ok(Winsize::from_bytes(&b))
}

/// Is `fd` a terminal (`isatty`: `TCGETS` succeeds)?
pub fn isatty(fd: usize) -> bool {
    tcgetattr(fd).is_ok()
}

// ---- Descriptors: close-on-exec and copies (issue 16, part 4) ---------------------------

/// `pipe2(fds, flags)` (`flags`: 0 or `O_CLOEXEC`): a new pipe as `(read end, write end)`.
pub fn pipe2(flags: u32) -> Result<(usize, usize), Errno> {
    let mut fds = [0i32; 2];
    call(SYS_PIPE2, [fds.as_mut_ptr() as usize, flags as usize, 0, 0, 0, 0])?;
    Ok((fds[0] as usize, fds[1] as usize))
}

/// `fcntl(fd, cmd, arg)` (the commands of `tally_uapi::fs`: `F_GETFD`, `F_SETFD`, ...).
pub fn fcntl(fd: usize, cmd: u32, arg: usize) -> Result<usize, Errno> {
    call(SYS_FCNTL, [fd, cmd as usize, arg, 0, 0, 0])
}

/// Sets or clears descriptor `fd`'s close-on-exec flag (`fcntl(F_SETFD)`): a close-on-exec
/// descriptor is not inherited by the programs this one `spawn`s.
pub fn set_cloexec(fd: usize, on: bool) -> Result<(), Errno> {
    let flag = if on { tally_uapi::fs::FD_CLOEXEC as usize } else { 0 };
    fcntl(fd, tally_uapi::fs::F_SETFD, flag).map(|_| ())
}

/// A [`Mapping`] with `MAP_NORESERVE`: not checked against the machine's memory, as a
/// sparse reservation larger than the machine must be (the kernel refuses a plain writable
/// mapping that large with `ENOMEM`: Linux's overcommit guess).
pub fn mapping_noreserve(len: usize, prot: usize) -> Result<Mapping, Errno> {
    // SAFETY: no MAP_FIXED: the kernel only uses a gap, so nothing is replaced.
    let addr = unsafe { mmap(0, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) }?;
    Ok(Mapping { addr, len, prot })
}

/// `dup2(old, new)`: `new` becomes a copy of `old` (what was at `new` is closed first).
pub fn dup2(old: usize, new: usize) -> Result<usize, Errno> {
    call(SYS_DUP2, [old, new, 0, 0, 0, 0])
}

/// `dup3(old, new, flags)`: `dup2` with `O_CLOEXEC` allowed in `flags`.
pub fn dup3(old: usize, new: usize, flags: u32) -> Result<usize, Errno> {
    call(SYS_DUP3, [old, new, flags as usize, 0, 0, 0])
}

// ---- Memory a program owns: anonymous mappings ----------------------------------------

const PAGE: usize = 4096;

/// An anonymous private mapping that this program owns, unmapped when dropped: the safe face
/// of `mmap`/`munmap` for memory a program wants to look at. [`Mapping::words`] shows it as
/// 64-bit atomics, since the kernel may change it under the program (a system call that
/// was given its address, a test that writes a process's memory, [`Mapping::replace`]);
/// [`Mapping::bytes_mut`] as plain bytes while nothing else is borrowed.
#[derive(Debug)]
pub struct Mapping {
    addr: usize,
    len: usize,
    prot: usize,
}

impl Mapping {
    /// `mmap(0, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)`: fresh demand-zero pages
    /// wherever the kernel finds room.
    pub fn new(len: usize, prot: usize) -> Result<Mapping, Errno> {
        // SAFETY: no MAP_FIXED: the kernel only uses a gap, so nothing is replaced.
        let addr = unsafe { mmap(0, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) }?;
        Ok(Mapping { addr, len, prot })
    }

    /// The same at exactly `addr`, with `MAP_FIXED_NOREPLACE`: `EEXIST` if anything is mapped
    /// there, so nothing is ever replaced.
    pub fn fixed(addr: usize, len: usize, prot: usize) -> Result<Mapping, Errno> {
        // SAFETY: MAP_FIXED_NOREPLACE fails rather than replace anything.
        let got = unsafe { mmap(addr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) }?;
        let m = Mapping { addr: got, len, prot };
        if got != addr {
            // A kernel that took the address as a hint: not what was asked (dropping unmaps it).
            return Err(Errno(tally_uapi::errno::EEXIST));
        }
        Ok(m)
    }

    /// Its first address.
    pub fn addr(&self) -> usize {
        self.addr
    }

    /// Its length in bytes, as asked (the kernel maps whole pages).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true: `mmap` refuses a length of 0.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn assert_read_write(&self) {
        assert!(
            self.prot & (PROT_READ | PROT_WRITE) == PROT_READ | PROT_WRITE,
            "the mapping is not readable and writable"
        );
    }

    /// The memory as 64-bit words (the first `len / 8`). Panics unless it is mapped
    /// `PROT_READ | PROT_WRITE`.
    pub fn words(&self) -> &[AtomicU64] {
        self.assert_read_write();
        // SAFETY: [addr, addr + len) is mapped read/write, page-aligned, for as long as `self`
        // lives (only `unmap`, `leak` and `drop` end that, and they take `self`); any bits are
        // a valid `AtomicU64`. An atomic is an `UnsafeCell`, so the kernel changing the memory
        // while this borrow lives (a system call given its address, `replace`) is allowed.
        unsafe { core::slice::from_raw_parts(self.addr as *const AtomicU64, self.len / 8) }
    }

    /// The memory as bytes, borrowed exclusively. Panics unless it is mapped
    /// `PROT_READ | PROT_WRITE`.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.assert_read_write();
        // SAFETY: as in `words`; `&mut self` guarantees no other borrow of the memory exists.
        unsafe { core::slice::from_raw_parts_mut(self.addr as *mut u8, self.len) }
    }

    /// `mprotect` over `[addr + offset, addr + offset + len)`, which must lie in this mapping:
    /// those pages take `prot`. The whole mapping's protection is then `prot` if the range
    /// covered all of it, else none that [`words`](Self::words) accepts (it panics).
    pub fn protect(&mut self, offset: usize, len: usize, prot: usize) -> Result<usize, Errno> {
        assert!(offset.checked_add(len).is_some_and(|e| e <= self.len), "protect: outside the mapping");
        let r = call(SYS_MPROTECT, [self.addr + offset, len, prot, 0, 0, 0])?;
        self.prot = if offset == 0 && len >= self.len { prot } else { 0 };
        Ok(r)
    }

    /// `MAP_FIXED` over `[addr + offset, addr + offset + len)`, which must lie in this mapping
    /// and start on a page: the kernel replaces those pages with fresh zero pages of the same
    /// protection. Returns the address the kernel answered.
    pub fn replace(&self, offset: usize, len: usize) -> Result<usize, Errno> {
        assert!(offset.is_multiple_of(PAGE) && len > 0 && offset.checked_add(len).is_some_and(|e| e <= self.len));
        // SAFETY: the range stays mapped (its pages become zero pages); the program reaches
        // this memory only through `words` (atomics: a change by the kernel is allowed) or
        // `bytes_mut`, which needs `&mut self` and so cannot be borrowed now.
        unsafe { mmap(self.addr + offset, len, self.prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) }
    }

    /// Reads the word at `offset` with a plain load instruction, whatever the protection: on
    /// memory mapped `PROT_NONE` the CPU faults and the kernel ends the process (SIGSEGV) —
    /// how a program shows that `PROT_NONE` is enforced.
    pub fn load(&self, offset: usize) -> u64 {
        assert!(offset.is_multiple_of(8) && offset.checked_add(8).is_some_and(|e| e <= self.len));
        let v: u64;
        // SAFETY: the address lies in this mapping, a region of the process's memory map for
        // as long as `self` lives, so no other data of the program is there; the instruction
        // only reads 8 bytes. If the protection forbids that, the process ends at the fault.
        unsafe {
            core::arch::asm!(
                "mov {v}, qword ptr [{p}]",
                v = lateout(reg) v, p = in(reg) self.addr + offset,
                options(nostack, readonly, preserves_flags),
            );
        }
        v
    }

    /// Gives the memory up for good (it is never unmapped), e.g. as threads' stacks. Panics
    /// unless it is mapped `PROT_READ | PROT_WRITE`.
    pub fn leak(self) -> &'static mut [u8] {
        self.assert_read_write();
        let m = core::mem::ManuallyDrop::new(self);
        // SAFETY: as in `bytes_mut`; the mapping is never unmapped now (no drop), and the
        // `Mapping` is gone, so this is the only way to the memory.
        unsafe { core::slice::from_raw_parts_mut(m.addr as *mut u8, m.len) }
    }

    /// `munmap` of the whole mapping; the call's answer.
    pub fn unmap(self) -> Result<usize, Errno> {
        let m = core::mem::ManuallyDrop::new(self);
        // SAFETY: the `Mapping` is consumed, so no borrow of its memory is left.
        unsafe { munmap(m.addr, m.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `&mut self` in `drop`: no borrow of the memory is left.
        let _ = unsafe { munmap(self.addr, self.len) };
    }
}

/// # Contract probes: calls with arguments the kernel must refuse
///
/// The wrappers above pass only what Rust references describe, so they cannot say "this
/// buffer is in the kernel" or "`ntimers` is -1". A contract test needs exactly that: the
/// test fixtures (`userland/src/test/`, see `tally_uapi::fixture`) ask each call with bad
/// pointers, lying lengths and out-of-range integers, and check the answer. The probes
/// here make those calls without `unsafe` in the program, and stay sound because of what
/// each argument can be:
///
/// * memory the call only *reads* (`spawn`'s path and arguments, `blk_write`'s buffer, a
///   `nanosleep` request, a `sched_setscheduler` parameter) is a plain address: reading
///   anything changes nothing;
/// * memory the call may *write* is an [`Out`]: a buffer of the program lent with its true
///   length (the probe checks that the call cannot write more), or a [`BadPtr`], an address
///   where the program keeps nothing (NULL, unmapped, the kernel half, non-canonical) or
///   that is read-only (its code), which the kernel must refuse to write;
/// * calls that would change the memory map (`mmap` with `MAP_FIXED`, `munmap`,
///   `thread_create`) take only arguments the documented contract refuses (a range over the
///   image or the stack's guard page, an unaligned address, a bad entry or stack), and
///   check that locally first.
///
/// So the soundness of a probe rests on the kernel keeping the contracts in
/// `tally_uapi::syscall`, as every wrapper's does.
pub mod probe {
    use core::marker::PhantomData;

    use tally_uapi::kstat::KstatReadInfo;
    use tally_uapi::layout::{USER_END, USER_HEAP_MAX, USER_IMAGE_BASE, USER_MMAP_BASE, USER_STACK_GUARD};
    use tally_uapi::msa::NR_MICROSTATES;
    use tally_uapi::syscall::*;

    use super::{call, PAGE};
    use crate::Errno;

    /// An address where this program keeps nothing it could lose to a write, for the
    /// pointer arguments the kernel must refuse.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct BadPtr(usize);

    /// `BadPtr::UNMAPPED`: in the user half, below the `mmap` area and beyond anywhere `brk`
    /// can take the heap (the image is a few pages at `USER_IMAGE_BASE`), so nothing is ever
    /// mapped there unless a program asks for it with `MAP_FIXED`.
    const UNMAPPED: usize = 0xdead_0000;
    const _: () = assert!(USER_IMAGE_BASE + 2 * USER_HEAP_MAX <= UNMAPPED as u64 && (UNMAPPED as u64) < USER_MMAP_BASE);

    impl BadPtr {
        /// Address 0: never mapped (`USER_MIN_ADDR`).
        pub const NULL: BadPtr = BadPtr(0);
        /// `0xdead0000`: in the user half, in no region.
        pub const UNMAPPED: BadPtr = BadPtr(UNMAPPED);
        /// The first address of the kernel half.
        pub const KERNEL: BadPtr = BadPtr(0xffff_8000_0000_0000);
        /// The first non-canonical address (`USER_END`).
        pub const NON_CANONICAL: BadPtr = BadPtr(USER_END as usize);

        /// Any address at or above `USER_END` (non-canonical or the kernel half).
        pub const fn above_user(addr: usize) -> Option<BadPtr> {
            if addr as u64 >= USER_END {
                Some(BadPtr(addr))
            } else {
                None
            }
        }

        /// The program's first code byte: mapped, but read and execute only.
        pub fn code() -> BadPtr {
            BadPtr(crate::start::image_bounds().0)
        }

        /// An address one byte past `addr`: not page-aligned (for calls that refuse that).
        pub const fn unaligned(addr: usize) -> BadPtr {
            BadPtr(addr | 1)
        }

        /// The address itself.
        pub const fn addr(self) -> usize {
            self.0
        }
    }

    /// A pointer argument the kernel may write through: a buffer of the program with its
    /// true length, or a [`BadPtr`] (which the kernel must refuse to write).
    #[derive(Debug)]
    pub struct Out<'a> {
        addr: usize,
        room: usize,
        _buf: PhantomData<&'a mut [u8]>,
    }

    impl Out<'_> {
        /// The address for a call that may write `need` bytes there.
        fn arg(&self, need: usize) -> usize {
            assert!(need <= self.room, "probe: the call may write more than the buffer holds");
            self.addr
        }
    }

    impl From<BadPtr> for Out<'_> {
        fn from(p: BadPtr) -> Self {
            Out { addr: p.0, room: usize::MAX, _buf: PhantomData }
        }
    }

    macro_rules! out_from {
        ($($t:ty),*) => {$(
            impl<'a> From<&'a mut [$t]> for Out<'a> {
                fn from(b: &'a mut [$t]) -> Self {
                    Out { addr: b.as_mut_ptr() as usize, room: core::mem::size_of_val(b), _buf: PhantomData }
                }
            }
            impl<'a> From<&'a mut $t> for Out<'a> {
                fn from(b: &'a mut $t) -> Self {
                    Out { addr: b as *mut $t as usize, room: core::mem::size_of::<$t>(), _buf: PhantomData }
                }
            }
        )*};
    }
    // Integers: any bytes the kernel writes are a valid value.
    out_from!(u8, i32, u64);

    /// `spawn(path, path_len, argv, argc)` with the raw numbers. `spawn` only reads the
    /// caller's memory.
    pub fn spawn(path: usize, path_len: usize, argv: usize, argc: usize) -> Result<usize, Errno> {
        call(SYS_SPAWN, [path, path_len, argv, argc, 0, 0])
    }

    /// `execve(path, argv, envp)` with raw addresses (the contract refuses bad ones with
    /// `EFAULT` before changing anything; a good call would replace the program).
    pub fn execve(path: usize, argv: usize, envp: usize) -> Result<usize, Errno> {
        call(SYS_EXECVE, [path, argv, envp, 0, 0, 0])
    }

    /// `wait4(pid, status, options, rusage)`; `BadPtr::NULL` is "none", as in C.
    pub fn wait4(pid: isize, status: Out, options: usize, rusage: Out) -> Result<usize, Errno> {
        call(SYS_WAIT4, [pid as usize, status.arg(4), options, rusage.arg(Rusage::SIZE), 0, 0])
    }

    /// `msa(ntimers, which, timers)` with the raw registers. A buffer must hold all 13
    /// timers: the kernel refuses more (`EINVAL`) and reads only the low 32 bits of `ntimers`.
    pub fn msa(ntimers: usize, which: usize, timers: Out) -> Result<usize, Errno> {
        call(SYS_MSA, [ntimers, which, timers.arg(8 * NR_MICROSTATES), 0, 0, 0])
    }

    /// `kstat_chain(buf, len, needed)`; `len` may not exceed a buffer's length.
    pub fn kstat_chain(buf: Out, len: usize, needed: Out) -> Result<usize, Errno> {
        call(SYS_KSTAT_CHAIN, [buf.arg(len), len, needed.arg(8), 0, 0, 0])
    }

    /// `kstat_read(kid, buf, len, info)`; `len` may not exceed a buffer's length.
    pub fn kstat_read(kid: usize, buf: Out, len: usize, info: Out) -> Result<usize, Errno> {
        call(SYS_KSTAT_READ, [kid, buf.arg(len), len, info.arg(KstatReadInfo::SIZE), 0, 0])
    }

    /// `blk_read(lba, buf, sectors)`. A buffer must hold the sectors, unless there are more
    /// than `BLK_MAX_SECTORS`, which the kernel refuses (`EINVAL`) without writing.
    pub fn blk_read(lba: usize, buf: Out, sectors: usize) -> Result<usize, Errno> {
        let need = if sectors > BLK_MAX_SECTORS { 0 } else { sectors * BLK_SECTOR_SIZE };
        call(SYS_BLK_READ, [lba, buf.arg(need), sectors, 0, 0, 0])
    }

    /// `blk_write(lba, buf, sectors)` with the raw numbers: it only reads the caller's memory.
    pub fn blk_write(lba: usize, buf: usize, sectors: usize) -> Result<usize, Errno> {
        call(SYS_BLK_WRITE, [lba, buf, sectors, 0, 0, 0])
    }

    /// `setpriority(which, who, prio)` with the raw registers (no memory involved).
    pub fn setpriority(which: usize, who: usize, prio: usize) -> Result<usize, Errno> {
        call(SYS_SETPRIORITY, [which, who, prio, 0, 0, 0])
    }

    /// `sched_setscheduler(pid, policy, param)` with `param` a raw address: it is only read.
    pub fn sched_setscheduler(pid: usize, policy: usize, param: usize) -> Result<usize, Errno> {
        call(SYS_SCHED_SETSCHEDULER, [pid, policy, param, 0, 0, 0])
    }

    /// `clock_gettime(clock, ts)` into any 16 bytes.
    pub fn clock_gettime(clock: usize, ts: Out) -> Result<usize, Errno> {
        call(SYS_CLOCK_GETTIME, [clock, ts.arg(16), 0, 0, 0, 0])
    }

    /// `nanosleep(req, rem)` with `req` a raw address (it is only read).
    pub fn nanosleep(req: usize, rem: Out) -> Result<usize, Errno> {
        call(SYS_NANOSLEEP, [req, rem.arg(16), 0, 0, 0, 0])
    }

    /// `mmap(addr, len, prot, flags, fd, offset)` with the raw numbers, never `MAP_FIXED`
    /// (panics): the kernel then only maps into a gap, or refuses. A mapping made is the
    /// program's for good.
    pub fn mmap(addr: usize, len: usize, prot: usize, flags: usize, fd: isize, offset: usize) -> Result<usize, Errno> {
        assert!(flags & MAP_FIXED == 0, "probe::mmap: MAP_FIXED could replace memory");
        call(SYS_MMAP, [addr, len, prot, flags, fd as usize, offset])
    }

    /// `mmap(addr, len, prot, flags | MAP_FIXED, -1, 0)` over a range the kernel must refuse
    /// (`EINVAL`): one overlapping the program's image or the stack's guard page (panics
    /// otherwise).
    pub fn mmap_fixed_refused(addr: usize, len: usize, prot: usize, flags: usize) -> Result<usize, Errno> {
        let end = addr.saturating_add(len);
        let overlaps = |s: usize, e: usize| addr < e && end > s;
        let (image_start, image_end) = crate::start::image_bounds();
        let guard = USER_STACK_GUARD as usize;
        assert!(
            overlaps(image_start, image_end) || overlaps(guard, guard + PAGE),
            "probe::mmap_fixed_refused: the range may be mapped"
        );
        call(SYS_MMAP, [addr, len, prot, flags | MAP_FIXED, usize::MAX, 0])
    }

    /// `munmap(addr, len)` with arguments the kernel must refuse (`EINVAL`): an unaligned
    /// address or a length of 0 (panics otherwise).
    pub fn munmap_refused(addr: usize, len: usize) -> Result<usize, Errno> {
        assert!(!addr.is_multiple_of(PAGE) || len == 0, "probe::munmap_refused: the range may be unmapped");
        call(SYS_MUNMAP, [addr, len, 0, 0, 0, 0])
    }

    /// `thread_create(entry, top of stack, arg)` with an entry outside the user half, which
    /// the kernel must refuse (`EINVAL`; panics for an entry in the user half). Had it taken
    /// it, the new thread would fault on its first instruction; `stack` (at least 32 bytes)
    /// is lent for the return address the kernel writes below its top.
    pub fn thread_create_bad_entry(entry: BadPtr, stack: &mut [u8], arg: usize) -> Result<usize, Errno> {
        assert!(entry.0 as u64 >= USER_END && stack.len() >= 32, "probe::thread_create_bad_entry: it could run");
        let top = (stack.as_mut_ptr() as usize + stack.len()) & !15;
        call(SYS_THREAD_CREATE, [entry.0, top, arg, 0, 0, 0])
    }

    /// `thread_create(entry, stack_top, arg)` with a stack top the kernel must refuse:
    /// `EFAULT` where it cannot write the return address, `EINVAL` outside the user half.
    /// Had it taken it, the new thread would fault on its first use of the stack.
    pub fn thread_create_bad_stack(
        entry: extern "C" fn(usize) -> !,
        stack_top: BadPtr,
        arg: usize,
    ) -> Result<usize, Errno> {
        call(SYS_THREAD_CREATE, [entry as usize, stack_top.0, arg, 0, 0, 0])
    }

    /// `futex(uaddr, op, val, timeout, uaddr2, val3)` with any address: a futex call only
    /// reads user memory (the word, the timeout), so a bad address can only be refused.
    pub fn futex(uaddr: usize, op: u32, val: u32, timeout: usize, uaddr2: usize, val3: u32) -> Result<usize, Errno> {
        call(SYS_FUTEX, [uaddr, op as usize, val as usize, timeout, uaddr2, val3 as usize])
    }

    /// `clone(flags, stack, 0, 0, 0)` with flags the kernel must refuse (`EINVAL`). Had it
    /// taken them, the child would start on a non-canonical stack and never run user code
    /// (the kernel refuses such a start), so nothing of this program's memory is at risk.
    pub fn clone_refused(flags: u64) -> Result<usize, Errno> {
        call(SYS_CLONE, [flags as usize, USER_END as usize, 0, 0, 0, 0])
    }

    /// `mprotect(addr, len, prot)` on an address the kernel must refuse (unaligned, or
    /// unmapped): nothing of this program changes protection.
    pub fn mprotect_refused(addr: BadPtr, len: usize, prot: usize) -> Result<usize, Errno> {
        call(SYS_MPROTECT, [addr.0, len, prot, 0, 0, 0])
    }

    /// `poll(fds, nfds, timeout)` with raw numbers: the kernel writes `8 × nfds` bytes at
    /// `fds` only after reading them all, so a bad `fds` is refused (`EFAULT`) or, with a
    /// true array, `nfds` above its length must be refused first (`EINVAL`, above 1024).
    pub fn poll(fds: BadPtr, nfds: usize, timeout: i32) -> Result<usize, Errno> {
        call(SYS_POLL, [fds.0, nfds, timeout as isize as usize, 0, 0, 0])
    }

    /// `poll` on a true array with an `nfds` the kernel must refuse (above 1024: `EINVAL`).
    pub fn poll_too_many(fds: &mut [tally_uapi::poll::PollFd], nfds: usize) -> Result<usize, Errno> {
        assert!(nfds > 1024, "probe::poll_too_many: the kernel would write beyond the array");
        call(SYS_POLL, [fds.as_mut_ptr() as usize, nfds, 0, 0, 0, 0])
    }

    /// `ppoll(fds, nfds, tmo, sigmask, sigsetsize)` with raw pointers for the timeout and the
    /// mask (read only), on a true array.
    pub fn ppoll(
        fds: &mut [tally_uapi::poll::PollFd],
        tmo: usize,
        sigmask: usize,
        sigsetsize: usize,
    ) -> Result<usize, Errno> {
        call(SYS_PPOLL, [fds.as_mut_ptr() as usize, fds.len(), tmo, sigmask, sigsetsize, 0])
    }
}

// ---- job control (process groups, sessions, the console's foreground group) ------------

/// `setpgid(pid, pgid)`: `pid` 0 is the caller, `pgid` 0 the target's own pid.
pub fn setpgid(pid: usize, pgid: usize) -> Result<usize, Errno> {
    call(SYS_SETPGID, [pid, pgid, 0, 0, 0, 0])
}

/// `getpgid(pid)` (0: the caller).
pub fn getpgid(pid: usize) -> Result<usize, Errno> {
    call(SYS_GETPGID, [pid, 0, 0, 0, 0, 0])
}

/// `getpgrp()`: the caller's process group.
pub fn getpgrp() -> Result<usize, Errno> {
    call(SYS_GETPGRP, [0; 6])
}

/// `setsid()`: the caller leads a new session; returns its id.
pub fn setsid() -> Result<usize, Errno> {
    call(SYS_SETSID, [0; 6])
}

/// `getsid(pid)` (0: the caller).
pub fn getsid(pid: usize) -> Result<usize, Errno> {
    call(SYS_GETSID, [pid, 0, 0, 0, 0, 0])
}

/// `tcgetpgrp(fd)`: the foreground process group of the terminal `fd` (`ioctl TIOCGPGRP`).
pub fn tcgetpgrp(fd: usize) -> Result<usize, Errno> {
    let mut pgrp: i32 = 0;
    call(SYS_IOCTL, [fd, tally_uapi::tty::TIOCGPGRP as usize, &mut pgrp as *mut i32 as usize, 0, 0, 0])?;
    Ok(pgrp as usize)
}

/// `tcsetpgrp(fd, pgrp)`: make `pgrp` the terminal's foreground group (`ioctl TIOCSPGRP`).
pub fn tcsetpgrp(fd: usize, pgrp: usize) -> Result<usize, Errno> {
    let p: i32 = pgrp as i32;
    call(SYS_IOCTL, [fd, tally_uapi::tty::TIOCSPGRP as usize, &p as *const i32 as usize, 0, 0, 0])
}

/// `ioctl(fd, TIOCSCTTY, steal)`: a session leader takes the terminal as its controlling one.
pub fn set_controlling_tty(fd: usize, steal: bool) -> Result<usize, Errno> {
    call(SYS_IOCTL, [fd, tally_uapi::tty::TIOCSCTTY as usize, steal as usize, 0, 0, 0])
}

/// `signal(sig, SIG_IGN or SIG_DFL)` through `rt_sigaction`; returns whether it was ignored.
pub fn ignore_signal(sig: u8, ignore: bool) -> Result<bool, Errno> {
    use tally_uapi::signal::{SIG_DFL, SIG_IGN};
    Ok(sigaction_handler(sig, if ignore { SIG_IGN } else { SIG_DFL })? == SIG_IGN)
}

/// `rt_sigaction(sig, {sa_handler: handler}, &old, 8)` with any handler value (Tally takes
/// only `SIG_DFL` and `SIG_IGN`: no handler code ever runs); the old handler.
pub fn sigaction_handler(sig: u8, handler: u64) -> Result<u64, Errno> {
    use tally_uapi::signal::KernelSigaction;
    let act = KernelSigaction { sa_handler: handler, ..Default::default() }.to_bytes();
    let mut old = [0u8; KernelSigaction::SIZE];
    call(SYS_RT_SIGACTION, [sig as usize, act.as_ptr() as usize, old.as_mut_ptr() as usize, 8, 0, 0])?;
    Ok(KernelSigaction::from_bytes(&old).sa_handler)
}

/// `ioctl(fd, request, &arg)` for a request that reads or writes one `int`.
pub fn ioctl_int(fd: usize, request: u32, arg: &mut i32) -> Result<usize, Errno> {
    call(SYS_IOCTL, [fd, request as usize, arg as *mut i32 as usize, 0, 0, 0])
}

/// `spawn` with `posix_spawn`'s process-group attribute: `flags` `POSIX_SPAWN_SETPGROUP`
/// (the child joins group `pgroup`, 0: a new one it leads) or `POSIX_SPAWN_SETSID`.
pub fn spawn_attr(path: &str, argv: &[&str], flags: usize, pgroup: usize) -> Result<usize, Errno> {
    if argv.len() > SPAWN_MAX_ARGS {
        return Err(Errno(E2BIG));
    }
    let args: Vec<SpawnArg> = argv.iter().map(|a| SpawnArg { addr: a.as_ptr() as u64, len: a.len() as u64 }).collect();
    call(SYS_SPAWN, [path.as_ptr() as usize, path.len(), args.as_ptr() as usize, args.len(), flags, pgroup])
}

// ---- threads as Linux makes them: clone, futexes; poll ----------------------------------

/// `clone(flags, stack, parent_tid, child_tid, tls)` starting `entry(arg)` on `stack` in the
/// child, as musl's `__clone` does: `entry` and `arg` are stored at the top of the child's
/// stack, and the child pops them after the `syscall` and calls `entry` with a clean frame.
/// Returns the child's tid (the child never returns from here).
///
/// # Safety
/// `stack` is the top of memory the child owns for good (at least 32 bytes below it);
/// `parent_tid`/`child_tid` must stay valid for as long as the kernel may write them (the
/// child's exit, with `CLONE_CHILD_CLEARTID`); `entry` must end the thread with `exit`.
/// With `CLONE_VM` the child shares this program's memory and runs concurrently with it.
pub unsafe fn clone(
    flags: u64,
    stack: usize,
    parent_tid: usize,
    child_tid: usize,
    tls: usize,
    entry: extern "C" fn(usize) -> !,
    arg: usize,
) -> Result<usize, Errno> {
    let sp = (stack & !15) - 16;
    // SAFETY: the caller gives the child `stack`; the two words below its top are the
    // child's to pop.
    unsafe {
        core::ptr::write(sp as *mut usize, entry as usize);
        core::ptr::write((sp + 8) as *mut usize, arg);
    }
    let ret: isize;
    // SAFETY: the caller's contract. In the parent the asm is one `syscall`; the child
    // leaves it through `call` and never comes back (entry is `-> !`; `ud2` if it did).
    unsafe {
        core::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "pop rax",
            "pop rdi",
            "xor ebp, ebp",
            "call rax",
            "ud2",
            "2:",
            inlateout("rax") SYS_CLONE as isize => ret,
            in("rdi") flags, in("rsi") sp, in("rdx") parent_tid,
            in("r10") child_tid, in("r8") tls,
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    decode(ret)
}

/// `futex(uaddr, FUTEX_WAIT_PRIVATE, val, timeout)`: sleep while `*word == val`, until a
/// wake (Ok), `timeout` (`ETIMEDOUT`); `EAGAIN` if the word holds another value.
pub fn futex_wait(word: &core::sync::atomic::AtomicU32, val: u32, timeout: Option<&Timespec>) -> Result<usize, Errno> {
    let t = timeout.map_or(0, |t| t as *const Timespec as usize);
    call(SYS_FUTEX, [word.as_ptr() as usize, tally_uapi::futex::FUTEX_WAIT_PRIVATE as usize, val as usize, t, 0, 0])
}

/// `futex(uaddr, FUTEX_WAKE_PRIVATE, n)`: wake up to `n` sleepers on `word`; how many.
pub fn futex_wake(word: &core::sync::atomic::AtomicU32, n: u32) -> Result<usize, Errno> {
    call(SYS_FUTEX, [word.as_ptr() as usize, tally_uapi::futex::FUTEX_WAKE_PRIVATE as usize, n as usize, 0, 0, 0])
}

/// `futex` with any operation on `word` (the kernel only reads user memory for a futex).
pub fn futex(
    word: &core::sync::atomic::AtomicU32,
    op: u32,
    val: u32,
    timeout_or_val2: usize,
    word2: Option<&core::sync::atomic::AtomicU32>,
    val3: u32,
) -> Result<usize, Errno> {
    let w2 = word2.map_or(0, |w| w.as_ptr() as usize);
    call(SYS_FUTEX, [word.as_ptr() as usize, op as usize, val as usize, timeout_or_val2, w2, val3 as usize])
}

/// `poll(fds, nfds, timeout_ms)`: how many entries have events (in their `revents`).
pub fn poll(fds: &mut [tally_uapi::poll::PollFd], timeout_ms: i32) -> Result<usize, Errno> {
    call(SYS_POLL, [fds.as_mut_ptr() as usize, fds.len(), timeout_ms as isize as usize, 0, 0, 0])
}

/// `ppoll(fds, nfds, timeout, sigmask, 8)`: `timeout` `None` waits for ever; the time left
/// is written back into it.
pub fn ppoll(
    fds: &mut [tally_uapi::poll::PollFd],
    timeout: Option<&mut Timespec>,
    sigmask: Option<&u64>,
) -> Result<usize, Errno> {
    let t = timeout.map_or(0, |t| t as *mut Timespec as usize);
    let m = sigmask.map_or(0, |m| m as *const u64 as usize);
    call(SYS_PPOLL, [fds.as_mut_ptr() as usize, fds.len(), t, m, 8, 0])
}

/// `arch_prctl(ARCH_GET_FS, &out)`: the calling thread's FS base (its TLS pointer).
pub fn fs_base() -> Result<u64, Errno> {
    let mut v = 0u64;
    call(SYS_ARCH_PRCTL, [ARCH_GET_FS as usize, &mut v as *mut u64 as usize, 0, 0, 0, 0])?;
    Ok(v)
}
