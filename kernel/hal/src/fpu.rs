//! # The running thread's x87/SSE registers, read and written in place
//!
//! A user thread's FPU/SSE registers stay live in the CPU while it runs in the kernel (the
//! kernel is built without SSE; `context::switch` saves and restores them at each switch).
//! Signal delivery needs them at one more point: Linux's `rt_sigframe` carries the
//! interrupted code's FPU state (`uc_mcontext.fpstate`, the 512-byte `fxsave` image), so a
//! handler may use SSE freely and `rt_sigreturn` puts the registers back. [`save`] and
//! [`restore`] are those two moves. `restore` takes any 512 bytes (they come from user
//! memory): the one field `fxrstor` refuses with a #GP — reserved MXCSR bits — is masked
//! first, so user space cannot fault the kernel with a forged frame.

/// The image `fxsave64`/`fxrstor64` use (512 bytes, 16-byte aligned).
#[repr(C, align(16))]
struct Area([u8; 512]);

/// The MXCSR bits every x86_64 accepts (DAZ, bit 6, needs a CPU check: left out).
const MXCSR_SAFE: u32 = 0xffbf;

/// The running thread's FPU/SSE registers as an `fxsave` image. Call with interrupts off,
/// from a user thread's kernel path (the registers are then that thread's).
pub fn save() -> [u8; 512] {
    let mut a = Area([0; 512]);
    // SAFETY: `a` is 512 bytes, 16-byte aligned, as fxsave64 needs; CR4.OSFXSR is set at
    // boot (`usermode::init`); fxsave64 only writes the area.
    unsafe { core::arch::asm!("fxsave64 [{}]", in(reg) &mut a.0, options(nostack, preserves_flags)) };
    a.0
}

/// Load the running thread's FPU/SSE registers from `image` (from a signal frame), with
/// MXCSR's reserved bits cleared. Call with interrupts off, on a user thread's kernel path.
pub fn restore(image: &[u8; 512]) {
    let mut a = Area(*image);
    let mut m = [0u8; 4];
    m.copy_from_slice(&a.0[24..28]);
    let mxcsr = u32::from_le_bytes(m) & MXCSR_SAFE;
    a.0[24..28].copy_from_slice(&mxcsr.to_le_bytes());
    // SAFETY: a 512-byte, 16-byte aligned image whose MXCSR has no reserved bit set (the
    // only field fxrstor64 rejects with #GP); the kernel itself never uses these registers,
    // so loading them affects only the user thread it returns to.
    unsafe { core::arch::asm!("fxrstor64 [{}]", in(reg) &a.0, options(nostack, preserves_flags)) };
}
