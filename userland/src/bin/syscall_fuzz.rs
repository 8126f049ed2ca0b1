//! `syscall_fuzz SEED COUNT [-v]` — throws COUNT system calls with hostile arguments at the
//! kernel and prints what came back. The kernel must answer every one with a result or an
//! error, never crash, hang or corrupt anything; the run is reproduced exactly by running
//! it again with the same SEED. `-v` prints each call before making it, so the last line
//! before a kernel crash names the culprit.
//!
//! **Which calls.** The first 521 calls (or COUNT, if smaller) sweep every number from 0 to
//! 520 in order, so each one is tried at least once; after that, half the calls pick one of
//! the numbers Tally serves ([`KNOWN`]: every call in `tally_uapi::syscall` except `exit` and
//! `exit_group`) and half any number in 0..=520. Numbers the kernel lacks must answer
//! `ENOSYS`.
//!
//! **Which arguments.** Six per call, each drawn from values that probe a kernel's checks:
//! 0, 1, small integers, -1 and other small negatives (as unsigned), `u64::MAX`, powers of
//! two, the first non-canonical address (1 << 47) and others above it, addresses in the
//! kernel half, 32-bit boundaries, fully random 64-bit values, and the descriptors the
//! fuzzer holds. None may point into this program's own memory: an argument that would
//! (the image, the heap and 1 GiB above it, the stack) has its top bit flipped, which turns
//! it into a kernel-half address instead. So a correct kernel can only answer `EFAULT`,
//! `EINVAL`, `EBADF`... or succeed harmlessly.
//!
//! **Descriptors to aim at.** Random arguments would almost never create a socket or a pipe
//! (`socket` wants three exact numbers, `pipe2` a valid pointer), so the calls on
//! descriptors would only ever see `EBADF`. Before the first call the fuzzer opens two bus
//! sockets (`AF_NETLINK`/`NETLINK_GENERIC`, one `SOCK_NONBLOCK`) and a pipe, and one
//! argument value in 15 is one of them (see [`Held`]).
//!
//! **What is held back.** A few Linux numbers would end, replace, duplicate, stop or block
//! even a perfectly correct process (`exit`, `exit_group`, `execve`, `fork`, `pause`,
//! `rt_sigreturn`, `seccomp`...; the list is [`SKIP`]): they are skipped and counted. The
//! other calls get their arguments adjusted ([`defuse`]) where a correct kernel would
//! otherwise hurt or stall the fuzzer:
//!
//! * calls taking an address range (`mmap` with `MAP_FIXED`, `munmap`, `mprotect`,
//!   `mremap`, `madvise`...) have a range that touches this program moved to an empty area,
//!   `mmap` loses `MAP_POPULATE`/`MAP_LOCKED` (a random length would fill memory), and
//!   `shmat` loses `SHM_REMAP`;
//! * `read`-like calls never get a descriptor that may be open (the console, the pipe or a
//!   socket with nothing queued would wait for ever), and `write`-like calls only the
//!   console (1, 2) or descriptors that cannot be open (the pipe would fill and block, a
//!   broken one raises SIGPIPE on Linux); `recvfrom` and `sendto` instead get any
//!   descriptor with `MSG_DONTWAIT` (and `MSG_NOSIGNAL`) added to their flags, which keeps
//!   them from waiting — so they reach the sockets;
//! * `close` and `dup2` never get descriptors 0-2 (the summary needs them) or the held ones;
//! * `kill` only ever reaches the fuzzer itself with a signal that is ignored, or a pid
//!   that cannot exist ([`confine_kill`]);
//! * `thread_create` only gets entry points a kernel must refuse (outside the user half).
//!
//! Memory a call manages to add (`mmap`, `mremap`, `shmat`, a higher `brk`) is removed at
//! once ([`undo_mapping`]).
//!
//! Because the numbers below 500 are Linux's, the program also runs on Linux x86_64 as it
//! is — a handy way to see what a mature kernel answers (run it as an unprivileged user).
//!
//! The summary gives the count per errno and the numbers that answered anything but
//! `ENOSYS`. The program exits with 0 after the summary.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::string::String;
use core::fmt::Write;
use tally_rt::process::parse_u64;
use tally_rt::rand::SplitMix64;
use tally_rt::sys::{self, raw};
use tally_rt::uapi::errno::ENOSYS;
use tally_rt::uapi::netlink::{AF_NETLINK, MSG_DONTWAIT, NETLINK_GENERIC, SOCK_NONBLOCK, SOCK_RAW};
use tally_rt::uapi::syscall::*;
use tally_rt::{eprintln, print, println, Errno};

tally_rt::entry!(main);

/// Highest number tried.
const MAX_NR: usize = 520;

/// Numbers Tally defines: half of the random phase aims at these.
const KNOWN: &[usize] = &[
    SYS_READ,
    SYS_WRITE,
    SYS_OPEN,
    SYS_CLOSE,
    SYS_PIPE2,
    SYS_SOCKET,
    SYS_SENDTO,
    SYS_RECVFROM,
    SYS_BIND,
    SYS_SETSOCKOPT,
    SYS_GETSOCKOPT,
    SYS_MMAP,
    SYS_MUNMAP,
    SYS_BRK,
    SYS_SCHED_YIELD,
    SYS_NANOSLEEP,
    SYS_GETPID,
    SYS_WAIT4,
    SYS_KILL, // confined by `defuse`: see `confine_kill`
    SYS_GETUID,
    SYS_SETUID,
    SYS_GETPPID,
    SYS_SETPRIORITY,
    SYS_SCHED_SETSCHEDULER,
    SYS_GETTID,
    SYS_CLOCK_GETTIME,
    SYS_SPAWN,
    SYS_THREAD_CREATE,
    SYS_MSA,
    SYS_KSTAT_CHAIN,
    SYS_KSTAT_READ,
    SYS_BLK_READ,
    SYS_BLK_WRITE,
    SYS_PROC_STAT,
    // Files on /var and accounting (issue 13). Paths and buffers never point into this
    // program, so they can only be refused; `acct(NULL)` and `csa_ctl(AC_HALT)` may switch
    // accounting off, `job_create` put the fuzzer in a job: harmless to a correct kernel.
    SYS_STAT,
    SYS_FSTAT,
    SYS_LSEEK,
    SYS_FSYNC,
    SYS_MKDIR,
    SYS_UNLINK,
    SYS_GETDENTS64,
    SYS_ACCT,
    SYS_JOB_CREATE,
    SYS_JOB_GETJID,
    SYS_CSA_CTL,
    // Futexes (issue 17): a wait is given a 1 ms timeout by `defuse`, so it cannot sleep
    // for ever on a word that happens to hold the value (the vvar page's, say).
    SYS_FUTEX,
    // Not here: SYS_EXIT and SYS_EXIT_GROUP, which end even a correct caller (`SKIP`).
];

/// Linux numbers that end, replace, duplicate, stop or block even a correct caller.
const SKIP: &[(usize, &str)] = &[
    (7, "poll"),
    (13, "rt_sigaction"),
    (15, "rt_sigreturn"),
    (23, "select"),
    (34, "pause"),
    (37, "alarm"),
    (38, "setitimer"),
    (56, "clone"),
    (57, "fork"),
    (58, "vfork"),
    (59, "execve"),
    (60, "exit"),
    (65, "semop"), // System V IPC: may wait for ever on an object an earlier call made
    (69, "msgsnd"),
    (70, "msgrcv"),
    (101, "ptrace"),
    (129, "rt_sigqueueinfo"),
    (130, "rt_sigsuspend"),
    (151, "mlockall"), // MCL_FUTURE: every later mapping resident at once (all of memory)
    (157, "prctl"),
    (169, "reboot"),
    (200, "tkill"),
    (220, "semtimedop"),
    (231, "exit_group"),
    (232, "epoll_wait"),
    (234, "tgkill"),
    (270, "pselect6"),
    (271, "ppoll"),
    (281, "epoll_pwait"),
    (297, "rt_tgsigqueueinfo"),
    (317, "seccomp"),
    (322, "execveat"),
    (335, "uretprobe"), // Linux kills callers outside a uprobe trampoline with SIGILL
    (336, "uprobe"),
    (435, "clone3"),
];

/// Calls that can wait for input on the descriptor in their first argument: read, pread64,
/// readv, accept, recvfrom, recvmsg, mq_timedreceive, accept4, preadv, recvmmsg, preadv2.
const WAITS_ON_FD: &[usize] = &[0, 17, 19, 43, 45, 47, 243, 288, 295, 299, 327];
/// Calls that write to the descriptor in their first argument: write, pwrite64, writev,
/// sendfile, sendto, sendmsg, pwritev, sendmmsg, pwritev2.
const WRITES_TO_FD: &[usize] = &[1, 18, 20, 40, 44, 46, 296, 307, 328];
/// Descriptors below this may be open (the console, or one a fuzzed call created).
const MAY_BE_OPEN: u32 = 1024;
/// Calls that close or replace a file descriptor: `(number, which argument)` — close,
/// dup2, dup3, close_range.
const FD_CLOBBERS: &[(usize, usize)] = &[(3, 0), (33, 1), (292, 1), (436, 0)];
/// Calls taking an address range `(a0, a1)`: mmap, mprotect, munmap, mremap, madvise,
/// pkey_mprotect, mseal.
const RANGES: &[usize] = &[9, 10, 11, 25, 28, 329, 462];
/// `mmap` flags that make the kernel fill the whole mapping at once (`MAP_LOCKED`,
/// `MAP_POPULATE`): with a random length, all of memory.
const MAP_RESIDENT: u64 = 0x2000 | 0x8000;
/// `send`'s flag against SIGPIPE on a broken connection (Linux; Tally sends no SIGPIPE).
const MSG_NOSIGNAL: u64 = 0x4000;
/// `shmat`'s flag to replace whatever is mapped where the segment goes.
const SHM_REMAP: u64 = 0o40000;
const USER_END: u64 = 1 << 47;
/// Where address ranges that would touch this program are moved (in Tally's mmap area).
const FUZZ_ZONE: u64 = 0x2000_0000_0000;

/// The timeout every fuzzed futex wait gets (read by the kernel only).
static FUTEX_TIMEOUT: Timespec = Timespec { tv_sec: 0, tv_nsec: 1_000_000 };

/// The memory this program must keep: `[start, end)` ranges, and its program break.
struct Protected {
    ranges: [(u64, u64); 2],
    brk: u64,
}

impl Protected {
    fn now() -> Self {
        let (img_start, img_end) = tally_rt::start::image_bounds();
        let brk = sys::current_brk().unwrap_or(img_end).max(img_end) as u64;
        let sp = tally_rt::start::initial_stack_pointer() as u64;
        Protected {
            ranges: [
                (img_start as u64, brk + (1 << 30)),
                (sp.saturating_sub(16 << 20), sp.saturating_add(1 << 20).min(USER_END)),
            ],
            brk,
        }
    }

    /// Does `[start, start + len)` (at least one byte) touch protected memory?
    fn touches(&self, start: u64, len: u64) -> bool {
        let end = start.saturating_add(len.max(1));
        self.ranges.iter().any(|&(a, b)| start < b && a < end)
    }
}

/// One hostile argument value.
fn hostile(r: &mut SplitMix64, held: &Held) -> u64 {
    match r.below(15) {
        0 => 0,
        1 => 1,
        2 => r.below(64),
        3 => r.below(4096),
        4 => u64::MAX,
        5 => (-1 - r.below(4095) as i64) as u64,
        6 => USER_END,
        7 => USER_END | (r.below(1 << 20) << 12),
        8 => 0xffff_8000_0000_0000 + r.below(1 << 30),
        9 => 0xffff_ffff_8000_0000 + r.below(1 << 30),
        10 => [0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x1_0000_0000, i32::MIN as i64 as u64][r.below(5) as usize],
        11 => 1 << r.below(64),
        12 => r.below(1 << 16),
        13 => r.next_u64(),
        _ => held.pick(r),
    }
}

/// Descriptors the fuzzer opened before its first call, so that the calls on descriptors
/// reach a socket or a pipe now and then (see the module documentation). `defuse` keeps
/// them open and keeps reads and writes on them from blocking.
struct Held {
    fds: [u32; 4],
    n: usize,
}

impl Held {
    /// Two bus sockets (blocking and `SOCK_NONBLOCK`) and a pipe's two ends; whatever the
    /// kernel refuses is left out.
    fn open() -> Self {
        let mut h = Held { fds: [0; 4], n: 0 };
        for ty in [SOCK_RAW, SOCK_RAW | SOCK_NONBLOCK] {
            if let Ok(fd) = sys::socket(AF_NETLINK, ty, NETLINK_GENERIC) {
                h.push(fd);
            }
        }
        if let Ok((r, w)) = sys::pipe() {
            h.push(r);
            h.push(w);
        }
        h
    }

    fn push(&mut self, fd: usize) {
        if self.n < self.fds.len() {
            self.fds[self.n] = fd as u32;
            self.n += 1;
        }
    }

    fn fds(&self) -> &[u32] {
        &self.fds[..self.n]
    }

    fn contains(&self, fd: u32) -> bool {
        self.fds().contains(&fd)
    }

    /// One of the held descriptors (a small integer if there are none).
    fn pick(&self, r: &mut SplitMix64) -> u64 {
        match self.n {
            0 => r.below(8),
            n => u64::from(self.fds[r.below(n as u64) as usize]),
        }
    }
}

/// Signals whose default action is to do nothing, on Tally and on Linux alike (0 only checks
/// that the target exists): SIGCHLD, SIGCONT, SIGURG, SIGWINCH. (SIGSTOP and its kin would
/// stop the fuzzer, on Tally as on Linux.)
const HARMLESS_SIGNALS: [i32; 5] = [0, 17, 18, 23, 28];
/// No process has a pid this high: Tally's pids stay below 32768 (`tally_tasktable`'s
/// `PID_MAX_DEFAULT`), Linux's below `pid_max`, at most 4194304 (`PID_MAX_LIMIT`).
const NO_SUCH_PID: u32 = 1 << 22;
/// Highest signal number a kernel may accept (Linux's real-time signals end at 64; Tally's
/// standard ones at 31). Anything else, and anything negative, is `EINVAL` before a target
/// is even looked up, so such calls go out unchanged.
const SIGNAL_MAX: i32 = 64;

/// `kill(pid, sig)` may only ever reach this program with a signal that does nothing, or a
/// pid that does not exist — never another process (the kernel thread that runs the
/// scenario, init, the shell) nor the fuzzer with a fatal signal. Both are `int`s: only the
/// low 32 bits of each register count, and only those are changed.
///
/// * an invalid signal (negative or above 64): unchanged, whatever the pid (`EINVAL`);
/// * `pid <= 0` names process groups (Tally and Linux: the caller's group, group `-pid`, or
///   every process it may signal): the signal becomes 0, which delivers nothing anywhere;
/// * `pid > 0` and a harmless signal: the pid becomes the fuzzer's own (the signal is
///   counted in its SIG, nothing else happens);
/// * `pid > 0` and any other signal: the pid is moved into `NO_SUCH_PID..i32::MAX` (`ESRCH`).
fn confine_kill(a: &mut [u64; 6], own_pid: u32) {
    let (pid, sig) = (a[0] as u32 as i32, a[1] as u32 as i32);
    let low = |v: u64, new: u32| (v & !0xffff_ffff) | u64::from(new);
    if !(0..=SIGNAL_MAX).contains(&sig) {
        return;
    }
    if pid <= 0 {
        a[1] = low(a[1], 0);
    } else if HARMLESS_SIGNALS.contains(&sig) {
        a[0] = low(a[0], own_pid);
    } else {
        a[0] = low(a[0], NO_SUCH_PID + pid as u32 % (i32::MAX as u32 - NO_SUCH_PID));
    }
}

/// Makes the arguments of call `nr` harmless to this program (see the module documentation).
fn defuse(nr: usize, a: &mut [u64; 6], p: &Protected, held: &Held, own_pid: u32, r: &mut SplitMix64) {
    for v in a.iter_mut() {
        if p.touches(*v, 1 << 20) {
            *v ^= 1 << 63;
        }
    }
    if nr == SYS_RECVFROM {
        a[3] |= u64::from(MSG_DONTWAIT); // never waits: any descriptor will do
    } else if nr == SYS_SENDTO {
        a[3] |= u64::from(MSG_DONTWAIT) | MSG_NOSIGNAL; // never waits, no SIGPIPE (Linux)
    } else if WAITS_ON_FD.contains(&nr) && (a[0] as u32) < MAY_BE_OPEN {
        // A file descriptor is an `int`: only the low 32 bits count.
        a[0] |= 0x4000_0000;
    } else if WRITES_TO_FD.contains(&nr) && (a[0] as u32) < MAY_BE_OPEN && !matches!(a[0] as u32, 1 | 2) {
        // Writing to the pipe would block once it is full, and to a broken pipe or socket
        // raises SIGPIPE on Linux: only the console (1, 2) or descriptors that cannot be open.
        a[0] |= 0x4000_0000;
    }
    for &(n, i) in FD_CLOBBERS {
        if n == nr && (a[i] as u32 <= 2 || held.contains(a[i] as u32)) {
            a[i] = 0x7fff_fff0;
        }
    }
    if nr == SYS_KILL {
        confine_kill(a, own_pid);
    }
    if nr == SYS_MMAP {
        a[3] &= !MAP_RESIDENT;
    }
    let fixed_mmap = nr == SYS_MMAP && a[3] as usize & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0;
    if (fixed_mmap || (RANGES.contains(&nr) && nr != SYS_MMAP)) && p.touches(a[0], a[1]) {
        a[0] = FUZZ_ZONE + (r.below(1 << 24) << 12);
        a[1] = a[1].min(1 << 30);
    }
    if nr == 25 && p.touches(a[4], a[2]) {
        a[4] = FUZZ_ZONE + (r.below(1 << 24) << 12); // mremap's new address
    }
    if nr == 30 {
        a[2] &= !SHM_REMAP; // the segment's size is unknown here: never let it replace memory
    }
    if nr == SYS_FUTEX {
        // FUTEX_WAIT and FUTEX_WAIT_BITSET: at most 1 ms (a relative timeout for WAIT; for
        // WAIT_BITSET an absolute one of 1 ms after boot, long past).
        if matches!(a[1] as u32 & tally_rt::uapi::futex::FUTEX_CMD_MASK, 0 | 9) {
            a[3] = &FUTEX_TIMEOUT as *const Timespec as u64;
        }
    }
    if nr == SYS_THREAD_CREATE && a[0] < USER_END {
        a[0] ^= 1 << 63;
    }
}

/// Memory the fuzzer managed to add is removed at once: left in place, it would make later
/// "hostile" pointers valid (a `mmap` hint is honoured when the address is free; `brk` may
/// grow the heap up to one), and a later call could then block on what an earlier one wrote
/// there (a `nanosleep` reading a time that `clock_gettime` stored).
fn undo_mapping(nr: usize, addr: usize, a: &[u64; 6], p: &Protected) {
    let len = match nr {
        SYS_BRK => {
            if addr as u64 != p.brk {
                // SAFETY: the heap has not been used since `p.brk` was read (the fuzzing loop
                // does not allocate), so nothing lives above that break.
                let _ = unsafe { sys::brk(p.brk as usize) };
            }
            return;
        }
        SYS_MMAP => a[1],
        25 => a[2], // mremap: the new length
        30 => {
            // shmat: detach with shmdt(addr)
            // SAFETY: the segment was attached by the call just made, at an address `defuse`
            // kept away from this program's memory; nothing refers to it.
            let _ = unsafe { raw::syscall6(67, addr, 0, 0, 0, 0, 0) };
            return;
        }
        _ => return,
    };
    // SAFETY: as above: the kernel just created this mapping for the fuzzer's call, away from
    // the program's own memory, and nothing uses it.
    let _ = unsafe { sys::munmap(addr, len as usize) };
}

fn main() -> i32 {
    let (Some(seed), Some(count)) = (tally_rt::arg(1).and_then(parse_u64), tally_rt::arg(2).and_then(parse_u64)) else {
        eprintln!("usage: syscall_fuzz SEED COUNT [-v]");
        return 2;
    };
    let verbose = tally_rt::arg(3) == Some("-v");
    let mut r = SplitMix64::new(seed);
    // Everything the summary needs is on the stack: no allocation while calls are flying.
    let mut answered = [false; MAX_NR + 1]; // answered other than ENOSYS
    let mut errnos = [0u64; 134]; // count per errno 1..=133
    let (mut ok, mut failed, mut other_errno, mut skipped) = (0u64, 0u64, 0u64, 0u64);
    let held = Held::open();
    let own_pid = sys::getpid().unwrap_or(0) as u32;
    let protected = Protected::now();
    println!("syscall_fuzz: seed {seed}, {count} calls, numbers 0..={MAX_NR}, 6 hostile arguments each");
    print!("syscall_fuzz: descriptors held:");
    for fd in held.fds() {
        print!(" {fd}");
    }
    println!();

    for i in 0..count {
        let nr = if i <= MAX_NR as u64 {
            i as usize
        } else if r.one_in(2) {
            KNOWN[r.below(KNOWN.len() as u64) as usize]
        } else {
            r.below(MAX_NR as u64 + 1) as usize
        };
        let mut a = [0u64; 6];
        for v in a.iter_mut() {
            *v = hostile(&mut r, &held);
        }
        if SKIP.iter().any(|&(n, _)| n == nr) {
            skipped += 1;
            continue;
        }
        defuse(nr, &mut a, &protected, &held, own_pid, &mut r);
        if verbose {
            println!(
                "syscall_fuzz: #{i} {nr}({:#x}, {:#x}, {:#x}, {:#x}, {:#x}, {:#x})",
                a[0], a[1], a[2], a[3], a[4], a[5]
            );
        }
        // SAFETY: `defuse` keeps every argument and address range off this program's memory
        // and `kill` off every process but this one (and off it but for harmless signals);
        // the calls that could end or replace the process are in SKIP.
        let ret = unsafe {
            raw::syscall6(nr, a[0] as usize, a[1] as usize, a[2] as usize, a[3] as usize, a[4] as usize, a[5] as usize)
        };
        match sys::decode(ret) {
            Ok(v) => {
                ok += 1;
                answered[nr] = true;
                undo_mapping(nr, v, &a, &protected);
            }
            Err(Errno(e)) => {
                failed += 1;
                match errnos.get_mut(e as usize) {
                    Some(c) => *c += 1,
                    None => other_errno += 1,
                }
                if e != ENOSYS {
                    answered[nr] = true;
                }
            }
        }
    }

    println!("syscall_fuzz: {} calls made: {ok} succeeded, {failed} failed; {skipped} skipped", ok + failed);
    for (e, &n) in errnos.iter().enumerate().filter(|(_, n)| **n > 0) {
        let err = Errno(e as i32);
        match err.name() {
            Some(name) => println!("syscall_fuzz:   {name:<8} {n:>8}  {}", err.description()),
            None => println!("syscall_fuzz:   errno {e:<3} {n:>6}"),
        }
    }
    if other_errno > 0 {
        println!("syscall_fuzz:   errno > 133: {other_errno}");
    }
    let mut list = String::new();
    for (nr, _) in answered.iter().enumerate().filter(|(_, a)| **a) {
        let _ = write!(list, " {nr}");
    }
    println!("syscall_fuzz: answered other than ENOSYS:{list}");
    println!("syscall_fuzz: done");
    0
}
