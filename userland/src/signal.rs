//! # Signals: actions with handlers, masks, waiting, the alternate stack, the restorer
//!
//! The calls of Linux's signal API with the kernel's own layouts (`tally_uapi::signal`):
//! [`sigaction`] (a `struct kernel_sigaction`: handler, flags, restorer, mask),
//! [`sigprocmask`], [`sigpending`], [`sigtimedwait`], [`sigsuspend`], [`sigaltstack`],
//! [`tgkill`]. A handler returns through a *restorer*, code that calls `rt_sigreturn`
//! with the stack pointer at the frame's `ucontext` — Linux x86_64 requires one
//! (`SA_RESTORER`), as a C library passes its own; [`handler_action`] fills in this
//! runtime's [`restorer`]. A handler is an `extern "C" fn(sig, info, uc)` as in C; reading
//! `info`/`uc` is the only `unsafe` a program then needs, and [`Recorder`] spares even
//! that for tests: its handler copies both into statics a program reads safely.
//!
//! `unsafe` here: the restorer and the recorder are assembly (`global_asm!`), and the
//! system calls pass pointers to live locals.

use core::sync::atomic::{AtomicU64, Ordering};

use tally_uapi::signal::{KernelSigaction, SigInfo, StackT, UContext, SA_RESTORER, SA_SIGINFO};
use tally_uapi::syscall::*;

use crate::sys::{decode, raw};
use crate::Errno;

fn call(n: usize, a: [usize; 6]) -> Result<usize, Errno> {
    // SAFETY: every caller passes plain numbers or pointers to live locals of the right size.
    decode(unsafe { raw::syscall6(n, a[0], a[1], a[2], a[3], a[4], a[5]) })
}

core::arch::global_asm!(
    ".global tally_rt_sigrestorer",
    "tally_rt_sigrestorer:",
    "mov eax, {nr}",
    "syscall",
    "ud2",
    nr = const SYS_RT_SIGRETURN,
);

unsafe extern "C" {
    fn tally_rt_sigrestorer();
}

/// The address of the runtime's restorer (`mov eax, 15; syscall`), for `sa_restorer`.
pub fn restorer() -> u64 {
    tally_rt_sigrestorer as *const () as usize as u64
}

/// A handler's type: `handler(sig, info, uc)` (with `SA_SIGINFO`; without, only `sig`
/// matters).
pub type Handler = extern "C" fn(i32, usize, usize);

/// The action for `handler` with `flags` (`SA_RESTORER` and the runtime's restorer added)
/// and `mask` blocked while it runs.
pub fn handler_action(handler: u64, flags: u64, mask: u64) -> KernelSigaction {
    KernelSigaction { sa_handler: handler, sa_flags: flags | SA_RESTORER, sa_restorer: restorer(), sa_mask: mask }
}

/// `rt_sigaction(sig, act, oldact, 8)`: the old action.
pub fn sigaction(sig: u8, act: Option<&KernelSigaction>) -> Result<KernelSigaction, Errno> {
    let new = act.map(|a| a.to_bytes());
    let mut old = [0u8; KernelSigaction::SIZE];
    let p = new.as_ref().map_or(0, |b| b.as_ptr() as usize);
    call(SYS_RT_SIGACTION, [sig as usize, p, old.as_mut_ptr() as usize, 8, 0, 0])?;
    Ok(KernelSigaction::from_bytes(&old))
}

/// `rt_sigprocmask(how, set, oldset, 8)`: the old mask.
pub fn sigprocmask(how: u64, set: Option<u64>) -> Result<u64, Errno> {
    let s = set.unwrap_or(0);
    let mut old = 0u64;
    let sp = if set.is_some() { &s as *const u64 as usize } else { 0 };
    call(SYS_RT_SIGPROCMASK, [how as usize, sp, &mut old as *mut u64 as usize, 8, 0, 0])?;
    Ok(old)
}

/// `rt_sigpending(set, 8)`.
pub fn sigpending() -> Result<u64, Errno> {
    let mut set = 0u64;
    call(SYS_RT_SIGPENDING, [&mut set as *mut u64 as usize, 8, 0, 0, 0, 0])?;
    Ok(set)
}

/// `rt_sigtimedwait(set, info, timeout, 8)`: the signal taken and its `siginfo`.
pub fn sigtimedwait(set: u64, timeout: Option<&Timespec>) -> Result<SigInfo, Errno> {
    let mut info = [0u8; SigInfo::SIZE];
    let t = timeout.map_or(0, |t| t as *const Timespec as usize);
    call(SYS_RT_SIGTIMEDWAIT, [&set as *const u64 as usize, info.as_mut_ptr() as usize, t, 8, 0, 0])?;
    Ok(SigInfo::from_bytes(&info))
}

/// `rt_sigsuspend(mask, 8)`: always an error (`EINTR` once a handler has run).
pub fn sigsuspend(mask: u64) -> Errno {
    call(SYS_RT_SIGSUSPEND, [&mask as *const u64 as usize, 8, 0, 0, 0, 0]).err().unwrap_or(Errno(0))
}

/// `sigaltstack(ss, old_ss)`: the old stack.
pub fn sigaltstack(ss: Option<&StackT>) -> Result<StackT, Errno> {
    let new = ss.map(|s| s.to_bytes());
    let mut old = [0u8; StackT::SIZE];
    let p = new.as_ref().map_or(0, |b| b.as_ptr() as usize);
    call(SYS_SIGALTSTACK, [p, old.as_mut_ptr() as usize, 0, 0, 0, 0])?;
    Ok(StackT::from_bytes(&old))
}

/// `tgkill(tgid, tid, sig)`.
pub fn tgkill(tgid: usize, tid: usize, sig: u8) -> Result<usize, Errno> {
    call(SYS_TGKILL, [tgid, tid, sig as usize, 0, 0, 0])
}

/// `pause()`.
pub fn pause() -> Errno {
    call(SYS_PAUSE, [0; 6]).err().unwrap_or(Errno(0))
}

/// What the recording handler saw, in statics (written by its assembly, read with atomics).
pub struct Recorder;

/// Handler runs so far.
pub static RECORDED: AtomicU64 = AtomicU64::new(0);
/// `rdi`, `rsp` at the handler's first instruction.
pub static RECORDED_SIG: AtomicU64 = AtomicU64::new(0);
pub static RECORDED_RSP: AtomicU64 = AtomicU64::new(0);
/// The `siginfo` and `ucontext` of the last run, copied word by word.
pub static RECORDED_INFO: [AtomicU64; SigInfo::SIZE / 8] = [const { AtomicU64::new(0) }; SigInfo::SIZE / 8];
pub static RECORDED_UC: [AtomicU64; UContext::SIZE / 8] = [const { AtomicU64::new(0) }; UContext::SIZE / 8];
/// If not 0: the handler makes the interrupted code resume there (`uc_mcontext.rip`), as
/// `siglongjmp` out of a SIGSEGV handler would.
pub static RESUME_AT: AtomicU64 = AtomicU64::new(0);
/// If not 0: the handler writes this into `uc_mcontext.rip` and `rsp` (a forged frame).
pub static FORGE_RIP: AtomicU64 = AtomicU64::new(0);

core::arch::global_asm!(
    ".global tally_rt_record_handler",
    "tally_rt_record_handler:",
    "mov [rip + {sig}], rdi",
    "mov [rip + {rsp}], rsp",
    // Copy the siginfo (rsi) and the ucontext (rdx).
    "push rsi",
    "push rdx",
    "lea rdi, [rip + {info}]",
    "mov ecx, {info_len}",
    "rep movsb",
    "mov rsi, [rsp]",
    "lea rdi, [rip + {uc}]",
    "mov ecx, {uc_len}",
    "rep movsb",
    "pop rdx",
    "pop rsi",
    // Redirect the return, or forge it.
    "mov rax, [rip + {resume}]",
    "test rax, rax",
    "jz 2f",
    "mov [rdx + {rip_off}], rax",
    "2:",
    "mov rax, [rip + {forge}]",
    "test rax, rax",
    "jz 3f",
    "mov [rdx + {rip_off}], rax",
    "mov [rdx + {rsp_off}], rax",
    "3:",
    "lock inc qword ptr [rip + {count}]",
    // Clobber every register a handler may (and some it may not): rt_sigreturn restores them.
    "mov rax, -1",
    "mov rbx, -1",
    "mov rcx, -1",
    "mov rdx, -1",
    "mov rsi, -1",
    "mov rdi, -1",
    "mov rbp, -1",
    "mov r8, -1",
    "mov r9, -1",
    "mov r10, -1",
    "mov r11, -1",
    "mov r12, -1",
    "mov r13, -1",
    "mov r14, -1",
    "mov r15, -1",
    "pcmpeqd xmm0, xmm0",
    "pcmpeqd xmm6, xmm6",
    "ret",
    sig = sym RECORDED_SIG,
    rsp = sym RECORDED_RSP,
    info = sym RECORDED_INFO,
    uc = sym RECORDED_UC,
    info_len = const SigInfo::SIZE,
    uc_len = const UContext::SIZE,
    resume = sym RESUME_AT,
    forge = sym FORGE_RIP,
    rip_off = const UContext::MCONTEXT_OFFSET + 16 * 8,
    rsp_off = const UContext::MCONTEXT_OFFSET + 15 * 8,
    count = sym RECORDED,
);

unsafe extern "C" {
    fn tally_rt_record_handler();
}

impl Recorder {
    /// The recording handler's address.
    pub fn handler() -> u64 {
        tally_rt_record_handler as *const () as usize as u64
    }

    /// Install it for `sig` with `flags` (`SA_SIGINFO` and the restorer added) and `mask`.
    pub fn install(sig: u8, flags: u64, mask: u64) -> Result<KernelSigaction, Errno> {
        sigaction(sig, Some(&handler_action(Self::handler(), flags | SA_SIGINFO, mask)))
    }

    pub fn count() -> u64 {
        RECORDED.load(Ordering::SeqCst)
    }

    /// The last run's `siginfo` and `ucontext`.
    pub fn info() -> SigInfo {
        let mut b = [0u8; SigInfo::SIZE];
        for (i, w) in RECORDED_INFO.iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&w.load(Ordering::SeqCst).to_le_bytes());
        }
        SigInfo::from_bytes(&b)
    }

    pub fn ucontext() -> UContext {
        let mut b = [0u8; UContext::SIZE];
        for (i, w) in RECORDED_UC.iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&w.load(Ordering::SeqCst).to_le_bytes());
        }
        UContext::read(&b)
    }

    /// Word `i` (0-based) of the last `siginfo` (`si_addr` is word 2).
    pub fn info_word(i: usize) -> u64 {
        RECORDED_INFO[i].load(Ordering::SeqCst)
    }
}

/// `kill(pid, sig)` issued with every register a system call preserves set to a pattern
/// (`rbx rbp r12-r15`, `rdi rsi rdx r8 r9 r10`, `xmm6`): the call's result, and whether
/// every one of them came back (a handler run on the way out must not disturb any).
pub fn kill_preserving(pid: usize, sig: u8) -> (Result<usize, Errno>, bool) {
    let ret: isize;
    let diff: u64;
    // SAFETY: rbx and rbp (which the compiler reserves) are saved and restored around the
    // block; every other register it writes is declared; `kill` touches no memory.
    unsafe {
        core::arch::asm!(
            "push rbx",
            "push rbp",
            "push rdi",
            "push rsi",
            "mov rbx, 0x11111111",
            "mov rbp, 0x22222222",
            "mov r12, 0x33333333",
            "mov r13, 0x44444444",
            "mov r14, 0x55555555",
            "mov r15, 0x66666666",
            "mov rdx, 0x77777777",
            "mov r8, 0x18888888",
            "mov r9, 0x19999999",
            "mov r10, 0x1aaaaaaa",
            "mov rax, 0x1bbbbbbb",
            "movq xmm6, rax",
            "mov eax, {nr}",
            "syscall",
            "mov rcx, rbx", "xor rcx, 0x11111111",
            "mov r11, rbp", "xor r11, 0x22222222", "or rcx, r11",
            "mov r11, r12", "xor r11, 0x33333333", "or rcx, r11",
            "mov r11, r13", "xor r11, 0x44444444", "or rcx, r11",
            "mov r11, r14", "xor r11, 0x55555555", "or rcx, r11",
            "mov r11, r15", "xor r11, 0x66666666", "or rcx, r11",
            "mov r11, rdx", "xor r11, 0x77777777", "or rcx, r11",
            "mov r11, r8", "xor r11, 0x18888888", "or rcx, r11",
            "mov r11, r9", "xor r11, 0x19999999", "or rcx, r11",
            "mov r11, r10", "xor r11, 0x1aaaaaaa", "or rcx, r11",
            "movq r11, xmm6", "xor r11, 0x1bbbbbbb", "or rcx, r11",
            "mov r11, rdi", "xor r11, [rsp + 8]", "or rcx, r11",
            "mov r11, rsi", "xor r11, [rsp]", "or rcx, r11",
            "add rsp, 16",
            "pop rbp",
            "pop rbx",
            nr = const SYS_KILL,
            in("rdi") pid,
            in("rsi") sig as usize,
            out("rax") ret,
            out("rcx") diff,
            out("rdx") _, out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            out("r12") _, out("r13") _, out("r14") _, out("r15") _, out("xmm6") _,
        );
    }
    (decode(ret), diff == 0)
}

/// Read the 8 bytes at `addr` with the [`Recorder`]'s resume point set just after the read:
/// if it faults and the recorder handles the signal, the program goes on here (as a
/// `siglongjmp` out of a SIGSEGV handler). Returns whether the read completed (false: it
/// faulted and the handler moved the program on).
pub fn read_or_resume(addr: usize) -> bool {
    let done: u64;
    // SAFETY: the read at `addr` may fault; the recorder's handler then resumes at label 2
    // with the registers of the faulting instruction (rax still 0: not done). Only rax and
    // the RESUME_AT static are written.
    unsafe {
        core::arch::asm!(
            "lea rax, [rip + 2f]",
            "mov [rip + {resume}], rax",
            "xor eax, eax",
            "mov rcx, [{addr}]",
            "mov eax, 1",
            "2:",
            "mov qword ptr [rip + {resume}], 0",
            addr = in(reg) addr,
            resume = sym RESUME_AT,
            out("rax") done,
            out("rcx") _,
        );
    }
    done == 1
}
