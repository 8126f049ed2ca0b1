//! # Ring 3: setting the CPU up for user mode, and the first jump into it
//!
//! The CPU runs user code at privilege level 3. Nothing special is needed to *be* in ring 3
//! — CS's low two bits say so — but getting there, and getting back, needs the pieces the
//! rest of this crate provides:
//!
//! * `gdt.rs`: ring-3 code and data segments, and the TSS whose `rsp0` is the kernel stack
//!   the CPU switches to on an interrupt or exception from ring 3;
//! * `address_space.rs`: page tables with USER pages for the program, the kernel half shared
//!   but supervisor-only;
//! * `syscall_entry.rs`: the `syscall`/`sysretq` path for system calls;
//! * `idt.rs` + the kernel's trap handlers: exceptions from ring 3 kill the task, not the
//!   kernel;
//! * `uaccess.rs`: SMEP/SMAP, and checked copies of user memory;
//! * `context.rs`: each thread's CR3 and kernel stack, loaded at every switch, and the FPU/SSE
//!   registers of user threads, saved and restored there too.
//!
//! [`init`] turns the CPU features on once at boot. [`enter_user`] is how a thread gets to
//! ring 3 the first time: there is no user context to "return" to yet, so it builds the
//! frame an interrupt from ring 3 would have pushed — SS, RSP, RFLAGS, CS, RIP — and executes
//! `iretq`, which pops it and drops to ring 3 at `rip` with interrupts enabled. Every later
//! return to user mode is the way back from a system call, an exception or an interrupt.

use x86_64::registers::control::{Cr0, Cr0Flags, Cr4, Cr4Flags};

use super::regs::UserRegs;
use super::syscall_entry::SyscallHandlers;

/// What the CPU offers and what [`init`] enabled.
#[derive(Clone, Copy, Debug)]
pub struct Features {
    pub smep: bool,
    pub smap: bool,
}

/// Enable what user mode needs: SSE state handled by `fxsave`/`fxrstor` (so user programs
/// may use SSE and x87 registers; the kernel itself is built without them), SMEP/SMAP, and
/// the `syscall` instruction, which runs the kernel's handlers `S`. Call once, after
/// `gdt::init` and `idt::init`.
pub fn init<S: SyscallHandlers>() -> Features {
    // SAFETY: CR0.MP with EM clear makes x87/SSE instructions execute (no emulation trap),
    // CR0.NE reports x87 errors as #MF (SIGFPE) rather than through the PIC's IRQ 13;
    // CR4.OSFXSR/OSXMMEXCPT declare that the kernel saves SSE state with fxsave (context.rs
    // does, for every user thread) and handles SIMD exceptions (#XM, the kernel's `trap`
    // floor). The kernel is compiled without SSE, so its own code is unaffected. CR0.WP (the
    // boot loader sets it too) makes read-only pages read-only for the kernel as well, which
    // `uaccess`'s direct copies rely on.
    unsafe {
        Cr0::update(|f| {
            f.remove(Cr0Flags::EMULATE_COPROCESSOR | Cr0Flags::TASK_SWITCHED);
            f.insert(Cr0Flags::MONITOR_COPROCESSOR | Cr0Flags::NUMERIC_ERROR | Cr0Flags::WRITE_PROTECT);
        });
        Cr4::update(|f| f.insert(Cr4Flags::OSFXSR | Cr4Flags::OSXMMEXCPT_ENABLE));
    }
    let (smep, smap) = super::uaccess::init();
    super::syscall_entry::init::<S>();
    Features { smep, smap }
}

/// Drop to ring 3 at `rip` with stack pointer `rsp` and `arg` in `rdi`; every other
/// general-purpose register is zero ([`UserRegs::start`], then [`enter_user_regs`]).
pub fn enter_user(rip: u64, rsp: u64, arg: u64) -> ! {
    enter_user_regs(&UserRegs::start(rip, rsp, arg))
}

/// Drop to ring 3 with every register as in `regs` (a new thread's start, or a forked
/// child's copy of its parent's registers): the registers are loaded from a copy on this
/// stack by the interrupt stubs' own way out (`idt.rs`), whose `iretq` pops the last five
/// words. Never returns: from now on the thread
/// re-enters the kernel only by system calls, exceptions and interrupts, on its kernel stack
/// (TSS.rsp0); whatever was on that stack before is abandoned (so the caller must hold
/// nothing that needs dropping). Call with interrupts disabled (checked) and the thread's
/// address space active; the selectors and RFLAGS are forced to user values, and `rip` and
/// `rsp` must be user addresses (checked: anything else is a kernel bug).
pub fn enter_user_regs(regs: &UserRegs) -> ! {
    assert!(!x86_64::instructions::interrupts::are_enabled(), "enter_user with interrupts enabled");
    let mut frame = *regs;
    assert!(frame.sanitize(), "enter_user to a non-user address");
    let at = &raw const frame;
    // SAFETY: `frame` is a complete pt_regs on this stack whose iretq words were just made a
    // valid ring-3 frame (user selectors, RFLAGS limited to user bits plus IF, user-half
    // rip/rsp checked); loading rsp with its address and popping it is reading our own local.
    // The kernel is left for good: no kernel state is referenced afterwards, and the
    // TSS/syscall stack point to this thread's kernel stack (set by the switch that started it).
    unsafe {
        core::arch::asm!(
            "mov rsp, {0}",
            "jmp tally_restore_user_regs", // the IDT stubs' way out: every register, iretq
            in(reg) at,
            options(noreturn)
        )
    }
}
