//! Signal numbers, dispositions and the signal frame, as Linux x86_64 has them.
//!
//! A signal takes its *default action* — the process ends ("terminate", or "terminate with
//! the core flag" for the signals that dump core on Unix), it stops or continues (job
//! control), or nothing happens ("ignore") — unless the process ignores it (`SIG_IGN`) or
//! catches it with a handler (`rt_sigaction`, [`KernelSigaction`]): the kernel then runs the
//! handler in user mode on a Linux `rt_sigframe` ([`SigInfo`], [`UContext`], [`SigContext`],
//! [`RT_SIGFRAME_SIZE`]) and the handler returns through `sa_restorer`, which calls
//! `rt_sigreturn` (15). Every signal a process receives is counted for its receiving thread
//! (prstat's SIG column, `ProcStat::signals`). Signals arrive four ways: an exception in user
//! mode (SIGSEGV, SIGFPE, SIGILL, SIGTRAP, SIGBUS), `kill(pid, sig)`/`tgkill`/`tkill`, the
//! console's ISIG characters (^C SIGINT, ^\ SIGQUIT, ^Z SIGTSTP, to the console's foreground
//! process group) and the kernel's job control (SIGTTIN to a background reader of the
//! console; SIGCHLD to a parent whenever one of its child processes ends, stops or continues).
//!
//! `kill(pid, sig)` (`SYS_KILL` = 62), as Linux: `pid > 0` names a process, `pid == 0` every
//! process of the caller's process group, `pid < -1` every process of group `-pid`, and
//! `pid == -1` every process the caller may signal except init and itself (`ESRCH` if none;
//! a group with no member is `ESRCH` too). `sig` 0 checks that the process exists and may
//! be signalled; 1..=64 are delivered; anything else is `EINVAL`. A caller whose uid is not
//! 0 may only signal processes of its own uid (`EPERM`; for a group, `EPERM` only if it may
//! signal none of them). Job control (`docs/job-control.md`): SIGSTOP, SIGTSTP, SIGTTIN and
//! SIGTTOU stop every thread of the process unless caught (the STOPPED microstate;
//! SIGTSTP/SIGTTIN/SIGTTOU are discarded for a process in an orphaned group, as POSIX says),
//! SIGCONT continues it (even if ignored or caught), SIGKILL ends it stopped or not.
//!
//! `rt_sigaction(sig, act, oldact, sigsetsize)` (13): `act`/`oldact` point to Linux's
//! `struct kernel_sigaction` ([`KernelSigaction`], 32 bytes: handler, flags, restorer,
//! mask); either may be NULL. `EINVAL` for a `sigsetsize` other than 8, signal numbers
//! outside 1..=64, and a new action for SIGKILL or SIGSTOP. Flags kept: [`SA_SIGINFO`],
//! [`SA_RESTORER`], [`SA_ONSTACK`], [`SA_RESTART`], [`SA_NODEFER`], [`SA_RESETHAND`],
//! [`SA_NOCLDSTOP`]; a handler without `SA_RESTORER` cannot return (x86_64 Linux then kills
//! the process with SIGSEGV at delivery, and so does Tally). A spawned child starts with
//! every signal at `SIG_DFL`; a forked one inherits the actions and the mask; `execve` resets
//! caught signals to `SIG_DFL`, keeps ignored ones and the mask.
//!
//! `rt_sigprocmask(how, set, oldset, sigsetsize)` (14): [`SIG_BLOCK`], [`SIG_UNBLOCK`],
//! [`SIG_SETMASK`], per thread; SIGKILL and SIGSTOP are silently never blocked.
//! `rt_sigtimedwait(set, info, timeout, sigsetsize)` (128): the signal number, `EAGAIN` at
//! the timeout, `EINTR` if a signal outside `set` was delivered meanwhile. `sigaltstack`
//! (131) with [`StackT`]: `EINVAL` bad flags, `ENOMEM` smaller than [`MINSIGSTKSZ`], `EPERM`
//! while running on it. `rt_sigsuspend` (130), `pause` (34), `tkill` (200), `tgkill` (234).
//! Standard signals (1..=31) are pending at most once; real-time signals (32..=64) are not
//! queued either in Tally (a second one while one is pending is merged: a documented
//! deviation).

/// `sa_handler` values Tally knows.
pub const SIG_DFL: u64 = 0;
pub const SIG_IGN: u64 = 1;

/// Linux x86_64's `struct kernel_sigaction` as `rt_sigaction` reads and writes it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelSigaction {
    pub sa_handler: u64,
    pub sa_flags: u64,
    pub sa_restorer: u64,
    pub sa_mask: u64,
}
const _: () = assert!(core::mem::size_of::<KernelSigaction>() == 32);

impl KernelSigaction {
    pub const SIZE: usize = 32;

    /// The little-endian bytes user space sees.
    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        for (i, w) in [self.sa_handler, self.sa_flags, self.sa_restorer, self.sa_mask].iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        let w = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        KernelSigaction { sa_handler: w(0), sa_flags: w(1), sa_restorer: w(2), sa_mask: w(3) }
    }
}

pub const SIGHUP: u8 = 1;
pub const SIGINT: u8 = 2;
pub const SIGQUIT: u8 = 3;
pub const SIGILL: u8 = 4;
pub const SIGTRAP: u8 = 5;
pub const SIGABRT: u8 = 6;
pub const SIGBUS: u8 = 7;
pub const SIGFPE: u8 = 8;
pub const SIGKILL: u8 = 9;
pub const SIGUSR1: u8 = 10;
pub const SIGSEGV: u8 = 11;
pub const SIGUSR2: u8 = 12;
pub const SIGPIPE: u8 = 13;
pub const SIGALRM: u8 = 14;
pub const SIGTERM: u8 = 15;
pub const SIGSTKFLT: u8 = 16;
pub const SIGCHLD: u8 = 17;
pub const SIGCONT: u8 = 18;
pub const SIGSTOP: u8 = 19;
pub const SIGTSTP: u8 = 20;
pub const SIGTTIN: u8 = 21;
pub const SIGTTOU: u8 = 22;
pub const SIGURG: u8 = 23;
pub const SIGXCPU: u8 = 24;
pub const SIGXFSZ: u8 = 25;
pub const SIGVTALRM: u8 = 26;
pub const SIGPROF: u8 = 27;
pub const SIGWINCH: u8 = 28;
pub const SIGIO: u8 = 29;
pub const SIGPWR: u8 = 30;
pub const SIGSYS: u8 = 31;
/// Highest standard signal number.
pub const NSIG_STD: u8 = 31;
/// Highest signal number (Linux's `_NSIG`): 32..=64 are the real-time signals.
pub const NSIG: u8 = 64;
pub const SIGRTMIN: u8 = 32;

/// What a signal does when nobody handles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultAction {
    /// The process ends, killed by the signal.
    Terminate,
    /// The process ends, killed by the signal, with the core flag (ACORE) — no core file.
    Core,
    /// The process stops (job control: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU).
    Stop,
    /// A stopped process continues (SIGCONT; nothing if it runs).
    Continue,
    /// Nothing (counted only).
    Ignore,
}

/// The default action of signal `sig` (1..=64), as signal(7) lists it (real-time signals
/// terminate).
pub const fn default_action(sig: u8) -> DefaultAction {
    match sig {
        SIGQUIT | SIGILL | SIGTRAP | SIGABRT | SIGBUS | SIGFPE | SIGSEGV | SIGSYS | SIGXCPU | SIGXFSZ => {
            DefaultAction::Core
        }
        SIGSTOP | SIGTSTP | SIGTTIN | SIGTTOU => DefaultAction::Stop,
        SIGCONT => DefaultAction::Continue,
        SIGCHLD | SIGURG | SIGWINCH => DefaultAction::Ignore,
        _ => DefaultAction::Terminate,
    }
}

// ---------------------------------------------------------------------------------------
// rt_sigaction flags, rt_sigprocmask's `how`, sigaltstack, siginfo codes
// ---------------------------------------------------------------------------------------

pub const SA_NOCLDSTOP: u64 = 0x0000_0001;
pub const SA_NOCLDWAIT: u64 = 0x0000_0002;
pub const SA_SIGINFO: u64 = 0x0000_0004;
pub const SA_RESTORER: u64 = 0x0400_0000;
pub const SA_ONSTACK: u64 = 0x0800_0000;
pub const SA_RESTART: u64 = 0x1000_0000;
pub const SA_NODEFER: u64 = 0x4000_0000;
pub const SA_RESETHAND: u64 = 0x8000_0000;

pub const SIG_BLOCK: u64 = 0;
pub const SIG_UNBLOCK: u64 = 1;
pub const SIG_SETMASK: u64 = 2;

/// `stack_t.ss_flags`.
pub const SS_ONSTACK: i32 = 1;
pub const SS_DISABLE: i32 = 2;
pub const SS_AUTODISARM: i32 = 1 << 31;
/// The smallest alternate stack `sigaltstack` accepts, and the suggested size.
pub const MINSIGSTKSZ: u64 = 2048;
pub const SIGSTKSZ: u64 = 8192;

/// `si_code` values (Linux's `asm-generic/siginfo.h`).
pub const SI_USER: i32 = 0;
pub const SI_KERNEL: i32 = 0x80;
pub const SI_TKILL: i32 = -6;
pub const ILL_ILLOPN: i32 = 2;
pub const FPE_INTDIV: i32 = 1;
pub const SEGV_MAPERR: i32 = 1;
pub const SEGV_ACCERR: i32 = 2;
pub const BUS_ADRALN: i32 = 1;
pub const TRAP_BRKPT: i32 = 1;
pub const CLD_EXITED: i32 = 1;
pub const CLD_KILLED: i32 = 2;
pub const CLD_DUMPED: i32 = 3;
pub const CLD_STOPPED: i32 = 5;
pub const CLD_CONTINUED: i32 = 6;

/// `ucontext.uc_flags` as Linux x86_64 sets them (no `UC_FP_XSTATE`: Tally saves the FPU
/// with `fxsave`, so `fpstate` is the legacy 512-byte area).
pub const UC_SIGCONTEXT_SS: u64 = 0x2;
pub const UC_STRICT_RESTORE_SS: u64 = 0x4;

/// Little-endian words in and out of a byte image (the layouts below are all 8-byte words
/// but for a few `u16`/`i32` fields).
fn put(b: &mut [u8], off: usize, v: &[u8]) {
    b[off..off + v.len()].copy_from_slice(v);
}
fn get8(b: &[u8], off: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(w)
}
fn get4(b: &[u8], off: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[off..off + 4]);
    u32::from_le_bytes(w)
}
fn get2(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

/// Linux's `siginfo_t` (128 bytes), the fields Tally fills: `si_signo`, `si_errno`,
/// `si_code` at 0/4/8, then the union at 16 — `si_pid`/`si_uid` (kill, SIGCHLD), `si_status`
/// at 24 (SIGCHLD), `si_utime`/`si_stime` at 32/40 (SIGCHLD, in clock ticks), or `si_addr`
/// at 16 (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SigInfo {
    pub signo: i32,
    pub errno: i32,
    pub code: i32,
    pub pid: i32,
    pub uid: u32,
    pub status: i32,
    pub utime: u64,
    pub stime: u64,
    /// The faulting address (fault signals only; then `pid`/`uid` are not written).
    pub addr: Option<u64>,
}

impl SigInfo {
    pub const SIZE: usize = 128;

    /// A signal sent by process `pid` of user `uid` (`kill`: `SI_USER`; `tkill`: `SI_TKILL`).
    pub fn from_process(sig: u8, code: i32, pid: i32, uid: u32) -> Self {
        SigInfo { signo: sig as i32, code, pid, uid, ..Default::default() }
    }

    /// A signal the kernel sends itself (`SI_KERNEL`: ISIG characters, SIGTTIN, SIGPIPE).
    pub fn kernel(sig: u8) -> Self {
        SigInfo { signo: sig as i32, code: SI_KERNEL, ..Default::default() }
    }

    /// A fault at `addr`.
    pub fn fault(sig: u8, code: i32, addr: u64) -> Self {
        SigInfo { signo: sig as i32, code, addr: Some(addr), ..Default::default() }
    }

    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        put(&mut b, 0, &self.signo.to_le_bytes());
        put(&mut b, 4, &self.errno.to_le_bytes());
        put(&mut b, 8, &self.code.to_le_bytes());
        match self.addr {
            Some(a) => put(&mut b, 16, &a.to_le_bytes()),
            None => {
                put(&mut b, 16, &self.pid.to_le_bytes());
                put(&mut b, 20, &self.uid.to_le_bytes());
                put(&mut b, 24, &self.status.to_le_bytes());
                put(&mut b, 32, &self.utime.to_le_bytes());
                put(&mut b, 40, &self.stime.to_le_bytes());
            }
        }
        b
    }

    /// Read back the process form (not the fault form: user space never hands one in).
    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        SigInfo {
            signo: get4(b, 0) as i32,
            errno: get4(b, 4) as i32,
            code: get4(b, 8) as i32,
            pid: get4(b, 16) as i32,
            uid: get4(b, 20),
            status: get4(b, 24) as i32,
            utime: get8(b, 32),
            stime: get8(b, 40),
            addr: None,
        }
    }
}

/// Linux's `stack_t` (24 bytes): `ss_sp`, `ss_flags` (an `int`, then 4 bytes of padding),
/// `ss_size`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StackT {
    pub sp: u64,
    pub flags: i32,
    pub size: u64,
}

impl StackT {
    pub const SIZE: usize = 24;

    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        put(&mut b, 0, &self.sp.to_le_bytes());
        put(&mut b, 8, &self.flags.to_le_bytes());
        put(&mut b, 16, &self.size.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        StackT { sp: get8(b, 0), flags: get4(b, 8) as i32, size: get8(b, 16) }
    }
}

/// Linux x86_64's `struct sigcontext` (256 bytes; glibc's `mcontext_t`: `gregs[23]`, then
/// `fpregs`, then 8 reserved words): every general register, `rip`, `eflags`, the segment
/// selectors `cs gs fs ss` (16 bits each), `err`, `trapno`, `oldmask`, `cr2`, and `fpstate`,
/// the user address of the saved FPU state (0: none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SigContext {
    pub r8: u64,
    pub r9: u64,
    pub r10: u64,
    pub r11: u64,
    pub r12: u64,
    pub r13: u64,
    pub r14: u64,
    pub r15: u64,
    pub rdi: u64,
    pub rsi: u64,
    pub rbp: u64,
    pub rbx: u64,
    pub rdx: u64,
    pub rax: u64,
    pub rcx: u64,
    pub rsp: u64,
    pub rip: u64,
    pub eflags: u64,
    pub cs: u16,
    pub gs: u16,
    pub fs: u16,
    pub ss: u16,
    pub err: u64,
    pub trapno: u64,
    pub oldmask: u64,
    pub cr2: u64,
    pub fpstate: u64,
}

impl SigContext {
    pub const SIZE: usize = 256;

    fn words(&self) -> [u64; 18] {
        [
            self.r8,
            self.r9,
            self.r10,
            self.r11,
            self.r12,
            self.r13,
            self.r14,
            self.r15,
            self.rdi,
            self.rsi,
            self.rbp,
            self.rbx,
            self.rdx,
            self.rax,
            self.rcx,
            self.rsp,
            self.rip,
            self.eflags,
        ]
    }

    pub fn write(&self, b: &mut [u8]) {
        for (i, w) in self.words().iter().enumerate() {
            put(b, i * 8, &w.to_le_bytes());
        }
        for (i, s) in [self.cs, self.gs, self.fs, self.ss].iter().enumerate() {
            put(b, 144 + i * 2, &s.to_le_bytes());
        }
        for (i, w) in [self.err, self.trapno, self.oldmask, self.cr2, self.fpstate].iter().enumerate() {
            put(b, 152 + i * 8, &w.to_le_bytes());
        }
        b[192..256].fill(0);
    }

    pub fn read(b: &[u8]) -> Self {
        let w = |i: usize| get8(b, i * 8);
        SigContext {
            r8: w(0),
            r9: w(1),
            r10: w(2),
            r11: w(3),
            r12: w(4),
            r13: w(5),
            r14: w(6),
            r15: w(7),
            rdi: w(8),
            rsi: w(9),
            rbp: w(10),
            rbx: w(11),
            rdx: w(12),
            rax: w(13),
            rcx: w(14),
            rsp: w(15),
            rip: w(16),
            eflags: w(17),
            cs: get2(b, 144),
            gs: get2(b, 146),
            fs: get2(b, 148),
            ss: get2(b, 150),
            err: w(19),
            trapno: w(20),
            oldmask: w(21),
            cr2: w(22),
            fpstate: w(23),
        }
    }
}

/// Linux's `struct ucontext` as the kernel writes it into a signal frame (304 bytes):
/// `uc_flags`, `uc_link`, `uc_stack` ([`StackT`]), `uc_mcontext` ([`SigContext`]) at 40,
/// `uc_sigmask` (the 8-byte kernel sigset: the mask to restore) at 296.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UContext {
    pub flags: u64,
    pub link: u64,
    pub stack: StackT,
    pub mcontext: SigContext,
    pub sigmask: u64,
}

impl UContext {
    pub const SIZE: usize = 304;
    pub const MCONTEXT_OFFSET: usize = 40;
    pub const SIGMASK_OFFSET: usize = 296;

    pub fn write(&self, b: &mut [u8]) {
        put(b, 0, &self.flags.to_le_bytes());
        put(b, 8, &self.link.to_le_bytes());
        put(b, 16, &self.stack.to_bytes());
        self.mcontext.write(&mut b[Self::MCONTEXT_OFFSET..Self::MCONTEXT_OFFSET + SigContext::SIZE]);
        put(b, Self::SIGMASK_OFFSET, &self.sigmask.to_le_bytes());
    }

    pub fn read(b: &[u8]) -> Self {
        let mut st = [0u8; StackT::SIZE];
        st.copy_from_slice(&b[16..40]);
        UContext {
            flags: get8(b, 0),
            link: get8(b, 8),
            stack: StackT::from_bytes(&st),
            mcontext: SigContext::read(&b[Self::MCONTEXT_OFFSET..Self::MCONTEXT_OFFSET + SigContext::SIZE]),
            sigmask: get8(b, Self::SIGMASK_OFFSET),
        }
    }
}

/// Linux x86_64's `struct rt_sigframe`, what a handler finds at its stack pointer:
/// `pretcode` (the return address: `sa_restorer`) at 0, the [`UContext`] at
/// [`RT_SIGFRAME_UC`], the [`SigInfo`] at [`RT_SIGFRAME_INFO`]; the FPU state (the 512-byte
/// `fxsave` area, [`FPSTATE_SIZE`]) lies above the frame, 64-byte aligned, and
/// `uc_mcontext.fpstate` points at it.
pub const RT_SIGFRAME_UC: usize = 8;
pub const RT_SIGFRAME_INFO: usize = RT_SIGFRAME_UC + UContext::SIZE;
pub const RT_SIGFRAME_SIZE: usize = RT_SIGFRAME_INFO + SigInfo::SIZE;
/// The legacy FPU/SSE state (`struct _fpstate_64`, the `fxsave` image).
pub const FPSTATE_SIZE: usize = 512;
/// The stack below a user's `rsp` the frame must not touch (the x86_64 ABI's red zone).
pub const RED_ZONE: u64 = 128;

const _: () = assert!(RT_SIGFRAME_INFO == 312 && RT_SIGFRAME_SIZE == 440);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigaction_round_trips() {
        let a = KernelSigaction { sa_handler: SIG_IGN, sa_flags: 2, sa_restorer: 3, sa_mask: 4 };
        assert_eq!(KernelSigaction::from_bytes(&a.to_bytes()), a);
    }

    #[test]
    fn frame_layouts_round_trip() {
        let mc = SigContext {
            r8: 1,
            r15: 8,
            rdi: 9,
            rip: 17,
            eflags: 0x246,
            cs: 0x33,
            ss: 0x2b,
            cr2: 5,
            fpstate: 77,
            ..Default::default()
        };
        let uc = UContext {
            flags: 6,
            link: 0,
            stack: StackT { sp: 0x1000, flags: SS_DISABLE, size: 4096 },
            mcontext: mc,
            sigmask: 1 << 9,
        };
        let mut b = [0u8; UContext::SIZE];
        uc.write(&mut b);
        assert_eq!(UContext::read(&b), uc);
        // glibc's gregs order: REG_RIP is greg 16, REG_EFL 17, REG_CSGSFS 18, REG_CR2 22.
        assert_eq!(b[40 + 16 * 8], 17);
        assert_eq!(b[40 + 18 * 8], 0x33);
        assert_eq!(b[40 + 22 * 8], 5);
        assert_eq!(b[40 + 23 * 8], 77);
        let i = SigInfo { signo: 17, code: CLD_EXITED, pid: 42, uid: 7, status: 3, ..Default::default() };
        assert_eq!(SigInfo::from_bytes(&i.to_bytes()), i);
        let f = SigInfo::fault(SIGSEGV, SEGV_MAPERR, 0xdead_0000).to_bytes();
        assert_eq!(u64::from_le_bytes(f[16..24].try_into().unwrap()), 0xdead_0000);
        let s = StackT { sp: 9, flags: SS_ONSTACK, size: 8192 };
        assert_eq!(StackT::from_bytes(&s.to_bytes()), s);
    }

    #[test]
    fn default_actions_follow_signal7() {
        assert_eq!(default_action(SIGSEGV), DefaultAction::Core);
        assert_eq!(default_action(SIGTERM), DefaultAction::Terminate);
        assert_eq!(default_action(SIGKILL), DefaultAction::Terminate);
        assert_eq!(default_action(SIGCHLD), DefaultAction::Ignore);
        assert_eq!(default_action(SIGSTOP), DefaultAction::Stop);
        assert_eq!(default_action(SIGTSTP), DefaultAction::Stop);
        assert_eq!(default_action(SIGCONT), DefaultAction::Continue);
        assert_eq!(default_action(SIGWINCH), DefaultAction::Ignore);
    }
}
