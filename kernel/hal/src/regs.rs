//! # A user thread's registers, as Linux lays them out: `struct pt_regs`
//!
//! Every entry from ring 3 that may have to hand the thread's registers to someone else —
//! `fork` (the child resumes with a copy), `clone` (a new thread with a new stack),
//! `execve` (a whole new set), a signal handler (the registers saved in the signal frame and
//! restored by `rt_sigreturn`) — needs *all* of them in one place, not just the ones the
//! kernel's Rust code might clobber. [`UserRegs`] is that place: the `syscall` entry stub
//! (`syscall_entry.rs`) pushes every general-purpose register into one on the thread's
//! kernel stack and pops every one of them on the way out, so whatever the kernel writes
//! into it is what user mode gets back.
//!
//! The field order is Linux x86_64's `struct pt_regs` (arch/x86/include/asm/ptrace.h): the
//! callee-saved registers first (lowest address), then the caller-saved ones, `orig_rax`
//! (the system-call number as it came in; `rax` holds the result going out), and the five
//! words of an `iretq` frame. Same layout, same names: a reader who knows Linux's entry code
//! recognises every slot.

use super::address_space::USER_END;
use super::gdt::{USER_CODE_SELECTOR, USER_DATA_SELECTOR};

/// RFLAGS bits a user program may set: the arithmetic flags, TF, DF, NT, AC, ID (NT does
/// nothing in 64-bit mode but fault a ring-3 `iret`; every entry to the kernel clears it).
/// Everything else — IOPL and IF above all — is the kernel's.
pub const USER_RFLAGS_MASK: u64 = 0x0025_4dd5;
/// IF and the always-one bit 1: every return to user mode has interrupts on.
pub const RFLAGS_IF_AND_ONE: u64 = 0x202;

/// The user registers of a thread that entered the kernel from ring 3 (Linux's `pt_regs`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserRegs {
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub rbp: u64,
    pub rbx: u64,
    pub r11: u64,
    pub r10: u64,
    pub r9: u64,
    pub r8: u64,
    /// The result of a system call on the way out.
    pub rax: u64,
    pub rcx: u64,
    pub rdx: u64,
    pub rsi: u64,
    pub rdi: u64,
    /// The system-call number as it came in (`rax` at the `syscall` instruction).
    pub orig_rax: u64,
    /// Where user code resumes.
    pub rip: u64,
    pub cs: u64,
    pub rflags: u64,
    /// The user stack pointer.
    pub rsp: u64,
    pub ss: u64,
}

const _: () = assert!(core::mem::size_of::<UserRegs>() == 21 * 8);

impl UserRegs {
    /// A fresh start at `rip` with stack pointer `rsp` and `rdi = arg`; every other register
    /// zero, as a new program or thread starts.
    pub fn start(rip: u64, rsp: u64, arg: u64) -> UserRegs {
        UserRegs {
            rip,
            rsp,
            rdi: arg,
            cs: USER_CODE_SELECTOR as u64,
            ss: USER_DATA_SELECTOR as u64,
            rflags: RFLAGS_IF_AND_ONE,
            ..UserRegs::default()
        }
    }

    /// The system-call number.
    pub fn number(&self) -> u64 {
        self.orig_rax
    }

    /// Make the frame safe to return to ring 3 whatever the kernel (or a signal frame a
    /// program wrote) put in it: user selectors, RFLAGS limited to what user code may set
    /// plus IF. Returns false if `rip` or `rsp` is not a user address — the caller must then
    /// not return to this frame (the thread is killed instead).
    pub fn sanitize(&mut self) -> bool {
        self.cs = USER_CODE_SELECTOR as u64;
        self.ss = USER_DATA_SELECTOR as u64;
        self.rflags = (self.rflags & USER_RFLAGS_MASK) | RFLAGS_IF_AND_ONE;
        self.rip < USER_END && self.rsp <= USER_END
    }

    /// Whether `sysretq` can return to this frame exactly: it loads `rip` from `rcx` and
    /// RFLAGS from `r11`, so only a frame with `rcx == rip` and `r11 == rflags` (true after
    /// an ordinary system call) comes back whole that way; and `rip` must be in the lower
    /// half (Intel's `sysretq` to a non-canonical address faults in ring 0 on the user's
    /// stack). Any other frame leaves by `iretq`, which restores every register.
    pub fn sysret_safe(&self) -> bool {
        self.rcx == self.rip && self.r11 == self.rflags && self.rip < USER_END
    }
}

/// `regs[i]`: system-call argument `i` (0..6) in ABI order — `rdi rsi rdx r10 r8 r9`, the
/// fourth `r10` because `syscall` overwrites `rcx` — read where the stub saved it: no copy on
/// the hot path, and a constant index compiles to one load. Any other index is a kernel bug.
impl core::ops::Index<usize> for UserRegs {
    type Output = u64;

    // Across the crate boundary only with `#[inline]`: a handler's `a[2]` is then one load.
    #[inline]
    fn index(&self, i: usize) -> &u64 {
        match i {
            0 => &self.rdi,
            1 => &self.rsi,
            2 => &self.rdx,
            3 => &self.r10,
            4 => &self.r8,
            5 => &self.r9,
            _ => panic!("system-call argument {i} does not exist"),
        }
    }
}
