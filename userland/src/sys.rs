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

use alloc::vec::Vec;

use tally_uapi::errno::{E2BIG, EINVAL, EIO};
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
    if ret < 0 && ret >= -4095 { Err(Errno(-ret as i32)) } else { Ok(ret as usize) }
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
pub unsafe fn mmap(addr: usize, len: usize, prot: usize, flags: usize, fd: isize, offset: usize) -> Result<usize, Errno> {
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
pub fn wait4(pid: isize, status: Option<&mut i32>, options: usize, rusage: Option<&mut Rusage>) -> Result<usize, Errno> {
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
    if buf.len() % BLK_SECTOR_SIZE != 0 {
        return Err(Errno(EINVAL));
    }
    call(SYS_BLK_READ, [lba as usize, buf.as_mut_ptr() as usize, buf.len() / BLK_SECTOR_SIZE, 0, 0, 0])
}

/// `blk_write(lba, buf, sectors)` on the data disk; as [`blk_read`].
pub fn blk_write(lba: u64, buf: &[u8]) -> Result<usize, Errno> {
    if buf.len() % BLK_SECTOR_SIZE != 0 {
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
    let sa = tally_uapi::netlink::SockaddrNl { nl_family: tally_uapi::netlink::AF_NETLINK as u16, nl_pid: portid, ..Default::default() }.to_bytes();
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
    call(SYS_GETSOCKOPT, [fd, level as usize, name as usize, &mut v as *mut i32 as usize, &mut len as *mut i32 as usize, 0])?;
    Ok(v)
}

/// `kill(pid, sig)`: see `tally_uapi::signal`.
pub fn kill(pid: isize, sig: i32) -> Result<usize, Errno> {
    call(SYS_KILL, [pid as usize, sig as i32 as isize as usize, 0, 0, 0, 0])
}

/// `open(path, flags, 0)`: a descriptor for `path` (Linux's call: the path travels
/// NUL-terminated, so a copy with the NUL is made; a path containing NUL is `EINVAL`
/// without asking the kernel). Tally has no file system: the kernel opens only the few
/// device paths it knows (`/dev/ttyS1`, the second serial port, `O_WRONLY`).
pub fn open(path: &str, flags: usize) -> Result<usize, Errno> {
    if path.as_bytes().contains(&0) {
        return Err(Errno(EINVAL));
    }
    let mut c_path = Vec::with_capacity(path.len() + 1);
    c_path.extend_from_slice(path.as_bytes());
    c_path.push(0);
    call(SYS_OPEN, [c_path.as_ptr() as usize, flags, 0, 0, 0, 0])
}
