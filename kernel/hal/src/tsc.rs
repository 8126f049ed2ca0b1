//! The time-stamp counter: one `rdtsc` per accounting timestamp.

/// Read the TSC. Not serialising: an accounting timestamp may be taken a few instructions
/// early or late, which is far below the resolution anyone reads it at, and it costs ~20
/// cycles instead of ~100.
#[inline(always)]
pub fn read() -> u64 {
    // SAFETY: `rdtsc` has no side effects and is available on every x86_64 CPU.
    unsafe { core::arch::x86_64::_rdtsc() }
}
