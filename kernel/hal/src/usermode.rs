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

use super::address_space::USER_END;
use super::gdt::{USER_CODE_SELECTOR, USER_DATA_SELECTOR};
use super::syscall_entry::SyscallHandlers;

/// RFLAGS a user thread starts with: IF (interrupts on) and the always-one bit 1.
pub const USER_RFLAGS: u64 = 0x202;

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
/// general-purpose register is zero. Never returns: from now on the thread re-enters the
/// kernel only by system calls, exceptions and interrupts, on its kernel stack (TSS.rsp0),
/// whatever was on that stack before is abandoned (so the caller must hold nothing that
/// needs dropping). Call with interrupts disabled (checked) and the thread's address space
/// active; `rip` and `rsp` must be user addresses (checked: anything else is a kernel bug).
pub fn enter_user(rip: u64, rsp: u64, arg: u64) -> ! {
    assert!(!x86_64::instructions::interrupts::are_enabled(), "enter_user with interrupts enabled");
    assert!(rip < USER_END && rsp <= USER_END, "enter_user to a non-user address");
    // SAFETY: builds a valid ring-3 iretq frame (user selectors from the GDT, RFLAGS with
    // only IF and bit 1, user-half rip/rsp checked above) and leaves the kernel for good;
    // no kernel state is referenced afterwards, and the TSS/syscall stack point to this
    // thread's kernel stack (set by the switch that started it).
    unsafe {
        core::arch::asm!(
            "push {ss}",
            "push rsi",
            "push {rflags}",
            "push {cs}",
            "push rdx",
            "xor eax, eax",
            "xor ebx, ebx",
            "xor ecx, ecx",
            "xor edx, edx",
            "xor esi, esi",
            "xor ebp, ebp",
            "xor r8d, r8d",
            "xor r9d, r9d",
            "xor r10d, r10d",
            "xor r11d, r11d",
            "xor r12d, r12d",
            "xor r13d, r13d",
            "xor r14d, r14d",
            "xor r15d, r15d",
            "iretq",
            ss = const USER_DATA_SELECTOR as u64,
            cs = const USER_CODE_SELECTOR as u64,
            rflags = const USER_RFLAGS,
            in("rdi") arg,
            in("rsi") rsp,
            in("rdx") rip,
            options(noreturn)
        )
    }
}
