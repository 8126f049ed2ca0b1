//! # The system-call entry: `syscall` in, `sysretq` out
//!
//! A user program asks the kernel for something by loading a number into `rax`, up to six
//! arguments into `rdi rsi rdx r10 r8 r9`, and executing `syscall` (the ABI is in
//! `tally_uapi::syscall`). The instruction does very little by itself:
//!
//! ```text
//!   rcx    ← rip (the instruction after syscall)      CS ← STAR[47:32]     (kernel code)
//!   r11    ← rflags                                   SS ← STAR[47:32] + 8 (kernel data)
//!   rflags ← rflags & ~SFMASK  (IF, DF, TF, AC, NT cleared: interrupts are off)
//!   rip    ← LSTAR              (our entry stub below)
//! ```
//!
//! It does **not** switch stacks: `rsp` is still the user's. So the first thing the stub does,
//! with interrupts still off, is park the user `rsp` in a scratch word and load the current
//! thread's kernel stack top — a static that `context::switch` updates for every thread it
//! switches to (one CPU; an SMP kernel would keep both words in a per-CPU area reached with
//! `swapgs`). It then pushes *every* user register into a [`SyscallFrame`] — Linux's
//! `struct pt_regs` (`regs.rs`): the `iretq` words, the number (`orig_rax`), the
//! caller-saved registers and the callee-saved ones — and calls the kernel's
//! [`SyscallHandlers::entry`] (its `syscall` floor, safe Rust: microstates, interrupts on,
//! dispatch) with the frame, then, with interrupts off again, [`SyscallHandlers::leave`]
//! (preemption, back to user mode's microstate). Every register comes back from the frame,
//! so the result is whatever the dispatcher left in `frame.rax`, and a call that replaces
//! the whole user context (`execve`, `rt_sigreturn`, a signal handler's start) only has to
//! write the frame.
//!
//! The way out is `sysretq`: `rip ← rcx`, `rflags ← r11`, CS/SS ← the user selectors derived
//! from `STAR[63:48]` (+16 and +8: the GDT's user code and data, `gdt.rs`). It can give back
//! only a frame whose `rcx` and `r11` equal its `rip` and `rflags` — true after any ordinary
//! call, since `syscall` put them there. A frame the kernel rewrote (a new program, a signal
//! handler, a return from one) leaves by `iretq` instead, which restores every register, as
//! Linux does. So does one whose return address is not in the lower half: on Intel CPUs
//! `sysretq` to a *non-canonical* `rcx` raises #GP in ring 0 with the user's `rsp` already
//! loaded — a classic privilege-escalation hole ([`crate::regs::UserRegs::sysret_safe`]).

use core::sync::atomic::{AtomicU64, Ordering};
use x86_64::registers::model_specific::{Efer, EferFlags, LStar, SFMask, Star};
use x86_64::registers::rflags::RFlags;
use x86_64::structures::gdt::SegmentSelector;
use x86_64::VirtAddr;

use super::gdt::{KERNEL_CODE_SELECTOR, KERNEL_DATA_SELECTOR, USER_CODE_SELECTOR, USER_DATA_SELECTOR};

/// What the stub saves: every user register, in Linux's `struct pt_regs` layout
/// ([`crate::regs::UserRegs`]), so that `fork`, `execve`, `clone` and signal delivery can
/// read and replace any of them.
pub type SyscallFrame = crate::regs::UserRegs;

/// Top of the running thread's kernel stack: where the stub puts the frame.
static mut KERNEL_STACK_TOP: u64 = 0;
/// The user `rsp`, parked between `syscall` and the push onto the kernel stack.
static mut USER_RSP_SCRATCH: u64 = 0;

/// Record the kernel stack the next `syscall` should run on (called by `context::switch`).
pub(super) fn set_kernel_stack(top: u64) {
    // SAFETY: called with interrupts disabled on the only CPU; the stub reads the word only
    // at a `syscall`, which cannot happen while the kernel is running.
    unsafe {
        let word = &raw mut KERNEL_STACK_TOP;
        *word = top;
    }
}

/// What the kernel runs for a system call: it implements this trait on a type of its own and
/// hands the type to [`init`]. The HAL's half of the entry is generic over it, so a system
/// call reaches the kernel's handler by a direct call (the stub itself calls through one
/// word set at `init`).
pub trait SyscallHandlers {
    /// Runs the call in `frame` (interrupts off on entry; it may enable them), leaving the
    /// result in `frame.rax`.
    fn entry(frame: &mut SyscallFrame);
    /// The last step before `sysretq`, with interrupts off (it must not enable them).
    fn leave(frame: &mut SyscallFrame);
}

/// Where the stub calls: `syscall_from_stub::<T>` for the kernel's handlers `T`, stored by
/// [`init`] before `syscall` is enabled (0 until then; `syscall` cannot run before).
static HANDLER: AtomicU64 = AtomicU64::new(0);

/// Called by the stub with the frame it built. Returns 0 to leave by `sysretq`, 1 by
/// `iretq` (see the module documentation).
extern "C" fn syscall_from_stub<T: SyscallHandlers>(frame: &mut SyscallFrame) -> u64 {
    T::entry(frame);
    // Interrupts stay off from here until sysretq/iretq restores the user's RFLAGS.
    x86_64::instructions::interrupts::disable();
    T::leave(frame);
    !frame.sysret_safe() as u64
}

core::arch::global_asm!(
    ".global tally_syscall_entry",
    "tally_syscall_entry:",
    // Interrupts are off (SFMASK). Switch to this thread's kernel stack.
    "mov [rip + {scratch}], rsp",
    "mov rsp, [rip + {kstack}]",
    // struct pt_regs, from its top: the iretq words ss, rsp, rflags, cs, rip ...
    "push {user_ss}",
    "push qword ptr [rip + {scratch}]",
    "push r11",
    "push {user_cs}",
    "push rcx",
    // ... orig_rax (the number), then rdi rsi rdx rcx rax r8 r9 r10 r11 rbx rbp r12-r15.
    "push rax",
    "push rdi",
    "push rsi",
    "push rdx",
    "push rcx",
    "push rax",
    "push r8",
    "push r9",
    "push r10",
    "push r11",
    "push rbx",
    "push rbp",
    "push r12",
    "push r13",
    "push r14",
    "push r15",
    // 21 words below a 16-byte-aligned top: one more keeps the call aligned.
    "mov rdi, rsp",
    "sub rsp, 8",
    "call qword ptr [rip + {handler}]",
    "add rsp, 8",
    // Every register back from the frame (pop and lea leave the flags of this test alone).
    "test rax, rax",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbp",
    "pop rbx",
    "pop r11",
    "pop r10",
    "pop r9",
    "pop r8",
    "pop rax",
    "pop rcx",
    "pop rdx",
    "pop rsi",
    "pop rdi",
    "lea rsp, [rsp + 8]", // orig_rax
    "jnz 2f",
    // sysretq: rcx == rip and r11 == rflags already (the handler checked).
    "add rsp, 24",        // rip, cs, rflags
    "pop rsp",            // user rsp: from here on we are on the user stack, interrupts off
    "sysretq",
    "2:",
    "iretq",
    scratch = sym USER_RSP_SCRATCH,
    kstack = sym KERNEL_STACK_TOP,
    user_ss = const USER_DATA_SELECTOR as u64,
    user_cs = const USER_CODE_SELECTOR as u64,
    handler = sym HANDLER,
);

unsafe extern "C" {
    /// Never called from Rust: its address goes into LSTAR.
    fn tally_syscall_entry();
}

/// Make system calls run the kernel's handlers `T`, then enable `syscall`/`sysret` and point
/// them at the stub. Call once after `gdt::init`.
pub fn init<T: SyscallHandlers>() {
    let handler: extern "C" fn(&mut SyscallFrame) -> u64 = syscall_from_stub::<T>;
    HANDLER.store(handler as usize as u64, Ordering::Relaxed);
    let sel = |s: u16| SegmentSelector(s);
    if let Err(e) = Star::write(
        sel(USER_CODE_SELECTOR),
        sel(USER_DATA_SELECTOR),
        sel(KERNEL_CODE_SELECTOR),
        sel(KERNEL_DATA_SELECTOR),
    ) {
        panic!("STAR selectors rejected: {e:?}");
    }
    LStar::write(VirtAddr::new(tally_syscall_entry as *const () as usize as u64));
    SFMask::write(
        RFlags::INTERRUPT_FLAG
            | RFlags::DIRECTION_FLAG
            | RFlags::TRAP_FLAG
            | RFlags::ALIGNMENT_CHECK
            | RFlags::NESTED_TASK
            | RFlags::IOPL_HIGH
            | RFlags::IOPL_LOW,
    );
    // SAFETY: the entry point, selectors and flag mask are in place, so enabling the
    // instruction cannot send the CPU anywhere unprepared; the stub is sound for any user
    // register contents (it trusts only KERNEL_STACK_TOP, which `switch` maintains).
    unsafe { Efer::update(|f| *f |= EferFlags::SYSTEM_CALL_EXTENSIONS) };
}
