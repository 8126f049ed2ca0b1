//! What the kernel does with CPU exceptions.
//!
//! A breakpoint is reported and execution resumes after the `int3`. Every other exception in
//! the kernel is fatal: the report names the exception, its vector, the error code, RIP, and
//! CR2 for page faults, and the run ends through QEMU's exit device with a failure status,
//! so a broken kernel never hangs or reboots in a loop.
//!
//! A double fault whose CR2 lies just below the interrupted stack pointer is a kernel stack
//! overflow: the push that hit the guard page faulted, and so did delivering that fault on
//! the same stack. The handler runs on its own IST stack, which is why it can say so.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::{self, idt::Exception, qemu::ExitCode};
use crate::console::emergency_print;

static BREAKPOINTS: AtomicU64 = AtomicU64::new(0);

/// How far below the stack pointer a faulting address may be and still count as the stack
/// overflowing (a function may reserve a large frame before touching it).
const STACK_OVERFLOW_WINDOW: u64 = 64 * 1024;

pub fn breakpoint(e: &Exception) {
    BREAKPOINTS.fetch_add(1, Ordering::Relaxed);
    log::info!("breakpoint (vector 3) at rip={:#018x}, resuming", e.rip);
}

pub fn breakpoints() -> u64 {
    BREAKPOINTS.load(Ordering::Relaxed)
}

pub fn fatal(e: &Exception) -> ! {
    // No allocation here: the fault may have happened inside the allocator.
    emergency_print(format_args!(
        "\nEXCEPTION: {} (vector {}) in {} mode\n",
        e.name,
        e.vector,
        if e.from_user() { "user" } else { "kernel" }
    ));
    match e.error_code {
        Some(c) => emergency_print(format_args!("  error code: {c:#x}\n")),
        None => emergency_print(format_args!("  error code: none\n")),
    }
    emergency_print(format_args!(
        "  rip={:#018x} cs={:#x} rflags={:#x} rsp={:#018x}\n",
        e.rip,
        e.cs,
        e.rflags,
        e.rsp,
    ));
    if let Some(cr2) = e.cr2 {
        emergency_print(format_args!("  cr2={cr2:#018x}\n"));
        if e.vector == 8 && cr2 < e.rsp && e.rsp - cr2 <= STACK_OVERFLOW_WINDOW {
            let (lo, hi) = arch::gdt::double_fault_stack();
            emergency_print(format_args!(
                "  kernel stack overflow: rsp {:#x} ran into the guard page at {:#x} (handled on IST stack {:#x}..{:#x})\n",
                e.rsp, cr2, lo, hi
            ));
        }
    }
    arch::qemu::exit(ExitCode::Failure)
}
