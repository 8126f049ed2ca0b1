//! Single instructions the rest of the kernel may need: interrupt flag, halt, breakpoint.

use x86_64::instructions::interrupts;

/// Enable maskable interrupts (`sti`).
#[inline]
pub fn enable_interrupts() {
    interrupts::enable();
}

/// Run `f` with maskable interrupts disabled, restoring the previous state afterwards.
#[inline]
pub fn without_interrupts<R>(f: impl FnOnce() -> R) -> R {
    interrupts::without_interrupts(f)
}

/// Wait for the next interrupt (`sti; hlt` so that no wake-up is lost in between).
#[inline]
pub fn wait_for_interrupt() {
    interrupts::enable_and_hlt();
}

/// Raise a breakpoint exception (`int3`); the handler reports it and execution resumes.
pub fn breakpoint() {
    interrupts::int3();
}

/// Stop this CPU for good (used after asking QEMU to exit, in case there is no QEMU).
pub fn halt_forever() -> ! {
    loop {
        interrupts::disable();
        x86_64::instructions::hlt();
    }
}
