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

/// Disable maskable interrupts (`cli`): a trap handler that enabled them to sleep (a page
/// fault waiting for the disk) turns them off again before its return to user mode.
#[inline]
pub fn disable_interrupts() {
    interrupts::disable();
}

/// Whether maskable interrupts are enabled (RFLAGS.IF).
#[inline]
pub fn interrupts_enabled() -> bool {
    interrupts::are_enabled()
}

/// CPUID leaf 1: `(ecx, edx)`, the feature flags (Linux gives EDX to programs as `AT_HWCAP`).
pub fn cpuid1() -> (u32, u32) {
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86_64 CPU and only reads identification registers.
    let r = unsafe { core::arch::x86_64::__cpuid(1) };
    (r.ecx, r.edx)
}

/// A 64-bit random number from the CPU (`RDRAND`), if it has the instruction and it
/// delivers within 10 tries (Intel's advice for a transient underflow); `None` otherwise.
pub fn rdrand64() -> Option<u64> {
    if cpuid1().0 & (1 << 30) == 0 {
        return None;
    }
    /// # Safety
    /// The CPU must support RDRAND (CPUID.1:ECX bit 30).
    #[target_feature(enable = "rdrand")]
    unsafe fn step(v: &mut u64) -> i32 {
        core::arch::x86_64::_rdrand64_step(v)
    }
    let mut v = 0;
    for _ in 0..10 {
        // SAFETY: CPUID.1:ECX bit 30 says the CPU has RDRAND, checked just above.
        if unsafe { step(&mut v) } == 1 {
            return Some(v);
        }
    }
    None
}
