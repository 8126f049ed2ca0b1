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
    let (_, _, ecx, edx) = cpuid(1, 0);
    (ecx, edx)
}

/// `cpuid` leaf `leaf`, sub-leaf `sub`: `(eax, ebx, ecx, edx)`.
fn cpuid(leaf: u32, sub: u32) -> (u32, u32, u32, u32) {
    // Safe in core: `cpuid` exists on every x86_64 CPU and reads no memory.
    let r = core::arch::x86_64::__cpuid_count(leaf, sub);
    (r.eax, r.ebx, r.ecx, r.edx)
}

/// Whether the CPU has `rdrand` (CPUID.1:ECX bit 30) and `rdseed` (CPUID.(7,0):EBX bit 18):
/// QEMU's `-cpu max` under TCG has `rdrand` only, real machines since 2012/2014 both.
pub fn random_instructions() -> (bool, bool) {
    let max_leaf = cpuid(0, 0).0;
    let rdrand = cpuid(1, 0).2 & (1 << 30) != 0;
    let rdseed = max_leaf >= 7 && cpuid(7, 0).1 & (1 << 18) != 0;
    (rdrand, rdseed)
}

/// One 64-bit value of the CPU's random number generator: `rdseed` (a conditioned entropy
/// source) when `seed`, else `rdrand` (a DRBG it reseeds). `None` when the instruction says
/// it has nothing now (CF = 0; Intel advises a few retries) — call only if
/// [`random_instructions`] said the instruction exists, or the CPU raises #UD.
pub fn random_u64(seed: bool) -> Option<u64> {
    let (value, ok): (u64, u8);
    if seed {
        // SAFETY: the caller checked CPUID for rdseed; it writes one register and CF.
        unsafe {
            core::arch::asm!("rdseed {v}", "setc {ok}", v = out(reg) value, ok = out(reg_byte) ok, options(nomem, nostack))
        };
    } else {
        // SAFETY: the caller checked CPUID for rdrand; it writes one register and CF.
        unsafe {
            core::arch::asm!("rdrand {v}", "setc {ok}", v = out(reg) value, ok = out(reg_byte) ok, options(nomem, nostack))
        };
    }
    (ok != 0).then_some(value)
}
