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
//! `swapgs`). It then pushes the user registers the kernel's code may change — `rax`, the
//! six arguments and the `iretq` words — into a [`SyscallFrame`] and calls the kernel's
//! [`SyscallHandlers::entry`] (its `syscall` floor, safe Rust: microstates, interrupts on,
//! dispatch) with the frame, then, with interrupts off again, [`SyscallHandlers::leave`]
//! (preemption, back to user mode's microstate). Those registers come back from the frame,
//! so the result is whatever the dispatcher left in `frame.rax`; the callee-saved ones
//! (`rbx rbp r12-r15`) come back because every Rust function restores them (the C ABI). So
//! every register except `rcx`/`r11` is preserved, as on Linux.
//!
//! The way out is `sysretq`: `rip ← rcx`, `rflags ← r11`, CS/SS ← the user selectors derived
//! from `STAR[63:48]` (+16 and +8: the GDT's user code and data, `gdt.rs`). One trap: on Intel
//! CPUs `sysretq` to a *non-canonical* `rcx` raises #GP in ring 0 with the user's `rsp`
//! already loaded — a classic privilege-escalation hole. The frame's tail is laid out as an
//! `iretq` frame, so when the return address is not in the lower half (non-canonical, or the
//! kernel's) the stub returns with `iretq` instead (the dispatcher also refuses to return to
//! anything outside the user half).

use core::sync::atomic::{AtomicU64, Ordering};
use x86_64::registers::model_specific::{Efer, EferFlags, LStar, SFMask, Star};
use x86_64::registers::rflags::RFlags;
use x86_64::structures::gdt::SegmentSelector;
use x86_64::VirtAddr;

use super::gdt::{KERNEL_CODE_SELECTOR, KERNEL_DATA_SELECTOR, USER_CODE_SELECTOR, USER_DATA_SELECTOR};

/// The user registers at the `syscall` instruction that the kernel's Rust code may change,
/// as the entry stub saves them on the thread's kernel stack (lowest address first). The
/// last five words form an `iretq` frame. The callee-saved registers (`rbx rbp r12-r15`)
/// are not here: every function the stub calls gives them back as it found them (the C
/// ABI), so they reach `sysretq` holding the user's values without being saved twice.
#[repr(C)]
#[derive(Clone, Debug, Default)]
pub struct SyscallFrame {
    /// The six arguments in ABI order, `rdi rsi rdx r10 r8 r9` (argument 4 is `rcx` in the C
    /// convention, but `syscall` overwrites `rcx`). Pushed last-first, so that they lie in
    /// order and a handler reads them where they are.
    pub args: [u64; 6],
    /// The system-call number on entry; the result (`>= 0`, or `-errno`) on return.
    pub rax: u64,
    /// Where user code resumes (saved from `rcx`).
    pub rip: u64,
    pub cs: u64,
    /// User RFLAGS (saved from `r11`).
    pub rflags: u64,
    /// User stack pointer.
    pub rsp: u64,
    pub ss: u64,
}

const _: () = assert!(core::mem::size_of::<SyscallFrame>() == 12 * 8);

impl SyscallFrame {
    /// The system-call number.
    pub fn number(&self) -> u64 {
        self.rax
    }

    /// The six arguments, in ABI order.
    pub fn args(&self) -> &[u64; 6] {
        &self.args
    }
}

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
/// `iretq` (a return address outside the lower half: non-canonical, or the kernel's).
extern "C" fn syscall_from_stub<T: SyscallHandlers>(frame: &mut SyscallFrame) -> u64 {
    T::entry(frame);
    // Interrupts stay off from here until sysretq/iretq restores the user's RFLAGS.
    x86_64::instructions::interrupts::disable();
    T::leave(frame);
    (frame.rip >> 47 != 0) as u64
}

core::arch::global_asm!(
    ".global tally_syscall_entry",
    "tally_syscall_entry:",
    // Interrupts are off (SFMASK). Switch to this thread's kernel stack.
    "mov [rip + {scratch}], rsp",
    "mov rsp, [rip + {kstack}]",
    // The iretq-shaped tail: ss, rsp, rflags, cs, rip.
    "push {user_ss}",
    "push qword ptr [rip + {scratch}]",
    "push r11",
    "push {user_cs}",
    "push rcx",
    // Number/result, then the six arguments (the last first: `args` in ABI order).
    "push rax",
    "push r9",
    "push r8",
    "push r10",
    "push rdx",
    "push rsi",
    "push rdi",
    // 12 words from a 16-byte-aligned top: rsp is 16-byte aligned for the call.
    "mov rdi, rsp",
    "call qword ptr [rip + {handler}]",
    "test rax, rax",
    "jnz 2f",
    "pop rdi",
    "pop rsi",
    "pop rdx",
    "pop r10",
    "pop r8",
    "pop r9",
    "pop rax",
    "pop rcx",          // rip
    "add rsp, 8",       // cs
    "pop r11",          // rflags
    "pop rsp",          // user rsp: from here on we are on the user stack, interrupts off
    "sysretq",
    "2:",
    "pop rdi",
    "pop rsi",
    "pop rdx",
    "pop r10",
    "pop r8",
    "pop r9",
    "pop rax",
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
