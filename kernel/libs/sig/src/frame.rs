//! Linux x86_64's `rt_sigframe`: where it goes on the user stack, what it holds, what the
//! handler starts with, and how `rt_sigreturn` checks what comes back.
//!
//! ```text
//!   higher addresses
//!   ┌───────────────────────────┐ ← the user's rsp − 128 (red zone), or the alternate stack's top
//!   │ fpstate: fxsave area 512 B│   64-byte aligned (uc_mcontext.fpstate points here)
//!   ├───────────────────────────┤
//!   │ siginfo (128 B)           │ frame + 312   rsi
//!   │ ucontext (304 B)          │ frame + 8     rdx: uc_flags, uc_link, uc_stack,
//!   │                           │                    uc_mcontext (every register), uc_sigmask
//!   │ pretcode = sa_restorer    │ frame         rsp at the handler's first instruction
//!   └───────────────────────────┘   (rsp + 8) % 16 == 0, as just after a `call`
//! ```
//!
//! The handler runs with `rdi` = the signal, `rsi` = `&info`, `rdx` = `&uc`, `rax` = 0,
//! `rip` = the handler, DF/TF/RF cleared, every other register as it was. Its `ret` pops
//! `pretcode`: musl's and glibc's restorer is `mov rax, 15; syscall` (`rt_sigreturn`), which
//! finds the `ucontext` at `rsp − 8`... at `rsp` after the pop, exactly as Linux reads it.

use tally_uapi::layout::USER_END;
use tally_uapi::signal::{
    KernelSigaction, SigContext, SigInfo, UContext, FPSTATE_SIZE, RED_ZONE, RT_SIGFRAME_INFO, RT_SIGFRAME_SIZE,
    RT_SIGFRAME_UC, SA_NODEFER, SA_ONSTACK, SA_RESTORER, UC_SIGCONTEXT_SS, UC_STRICT_RESTORE_SS,
};

use crate::{AltStack, SigSet};

/// The user code and stack selectors (Tally's GDT: Linux's `__USER_CS`/`__USER_DS`).
pub const USER_CS: u16 = 0x33;
pub const USER_SS: u16 = 0x2b;
/// RFLAGS bits `rt_sigreturn` takes from the frame (Linux's `FIX_EFLAGS`, the arithmetic
/// flags, TF, DF, AC and RF, with NT and ID as a program may set them itself); IF and bit 1
/// are always set; IOPL and VM never.
pub const FIX_EFLAGS: u64 = 0x0025_4dd5 | (1 << 16);
/// DF, TF and RF: cleared for the handler (Linux's `setup_rt_frame`).
const HANDLER_CLEARS: u64 = (1 << 10) | (1 << 8) | (1 << 16);
/// The MXCSR bits `fxrstor` accepts without a #GP on every x86_64 (DAZ excluded).
pub const MXCSR_MASK: u32 = 0xffbf;

/// Why no frame could be built: the process then dies of SIGSEGV (Linux's `force_sigsegv`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The action has no `SA_RESTORER` (x86_64 Linux refuses those).
    NoRestorer,
    /// The frame would leave the user half or wrap around.
    BadStack,
}

/// A frame ready to be copied to user memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Where the frame goes (the handler's `rsp`).
    pub addr: u64,
    /// Where the FPU state goes (`uc_mcontext.fpstate`).
    pub fpstate: u64,
    /// The `rt_sigframe` bytes: pretcode, ucontext, siginfo.
    pub bytes: [u8; RT_SIGFRAME_SIZE],
    /// The registers the handler starts with.
    pub regs: SigContext,
    /// The thread's mask while the handler runs.
    pub blocked: SigSet,
    /// The alternate stack after delivery (disarmed for `SS_AUTODISARM` when used).
    pub altstack: AltStack,
}

/// What the thread was doing when the signal came (for a fault: `trapno`, `err`, `cr2`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultInfo {
    pub trapno: u64,
    pub err: u64,
    pub cr2: u64,
}

/// Lay out the frame for delivering `info` to `action`, for a thread whose user registers are
/// `saved`, whose mask is `blocked`, with alternate stack `alt` (Linux's `get_sigframe` and
/// `x64_setup_rt_frame`).
pub fn setup(
    saved: &SigContext,
    info: &SigInfo,
    action: &KernelSigaction,
    blocked: SigSet,
    alt: AltStack,
    fault: FaultInfo,
) -> Result<Frame, FrameError> {
    if action.sa_flags & SA_RESTORER == 0 {
        return Err(FrameError::NoRestorer);
    }
    let mut sp = saved.rsp.wrapping_sub(RED_ZONE);
    let mut altstack = alt;
    if action.sa_flags & SA_ONSTACK != 0 && alt.size != 0 && !alt.on(sp) {
        sp = alt.sp.wrapping_add(alt.size);
        if alt.autodisarm {
            altstack = AltStack::default();
        }
    }
    let fpstate = sp.checked_sub(FPSTATE_SIZE as u64).ok_or(FrameError::BadStack)? & !63;
    let addr = (fpstate.checked_sub(RT_SIGFRAME_SIZE as u64).ok_or(FrameError::BadStack)? & !15).wrapping_sub(8);
    if sp > USER_END || addr < 4096 || addr > fpstate {
        return Err(FrameError::BadStack);
    }
    let sig = info.signo as u8;
    let mut mcontext = *saved;
    mcontext.cs = USER_CS;
    mcontext.ss = USER_SS;
    mcontext.trapno = fault.trapno;
    mcontext.err = fault.err;
    mcontext.cr2 = fault.cr2;
    mcontext.oldmask = blocked.0;
    mcontext.fpstate = fpstate;
    let uc = UContext {
        flags: UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS,
        link: 0,
        stack: alt.as_stack_t(saved.rsp),
        mcontext,
        sigmask: blocked.0,
    };
    let mut bytes = [0u8; RT_SIGFRAME_SIZE];
    bytes[..8].copy_from_slice(&action.sa_restorer.to_le_bytes());
    uc.write(&mut bytes[RT_SIGFRAME_UC..RT_SIGFRAME_INFO]);
    bytes[RT_SIGFRAME_INFO..].copy_from_slice(&info.to_bytes());
    let mut regs = *saved;
    regs.rdi = sig as u64;
    regs.rsi = addr + RT_SIGFRAME_INFO as u64;
    regs.rdx = addr + RT_SIGFRAME_UC as u64;
    regs.rax = 0;
    regs.rsp = addr;
    regs.rip = action.sa_handler;
    regs.eflags &= !HANDLER_CLEARS;
    regs.cs = USER_CS;
    regs.ss = USER_SS;
    let mut during = blocked.union(SigSet(action.sa_mask));
    if action.sa_flags & SA_NODEFER == 0 {
        during.insert(sig);
    }
    Ok(Frame { addr, fpstate, bytes, regs, blocked: during.blockable(), altstack })
}

/// What `rt_sigreturn` restores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Restored {
    pub regs: SigContext,
    pub blocked: SigSet,
    /// The FPU state's address in the frame (0: none to restore).
    pub fpstate: u64,
    /// The alternate stack as the frame recorded it (re-armed if it was disarmed).
    pub altstack: tally_uapi::signal::StackT,
}

/// Check the `ucontext` user space hands back to `rt_sigreturn`, from a frame at `frame`
/// (Linux's `restore_sigcontext`): the code and stack selectors are forced to the user's,
/// RFLAGS takes only [`FIX_EFLAGS`] from the frame (IF and bit 1 always on), the mask never blocks
/// SIGKILL or SIGSTOP. `None` — the process then dies of SIGSEGV, never the kernel — for a
/// `rip` or `rsp` outside the user half (non-canonical or the kernel's), which no return to
/// user mode may load.
pub fn restore(uc: &UContext) -> Option<Restored> {
    let mut regs = uc.mcontext;
    if regs.rip >= USER_END || regs.rsp >= USER_END {
        return None;
    }
    regs.cs = USER_CS;
    regs.ss = USER_SS;
    regs.eflags = (regs.eflags & FIX_EFLAGS) | 0x202; // IOPL, VM: never the user's
    Some(Restored { regs, blocked: SigSet(uc.sigmask).blockable(), fpstate: regs.fpstate, altstack: uc.stack })
}

/// Make an `fxsave` image from user memory safe for `fxrstor` (a reserved MXCSR bit set
/// would raise #GP in the kernel).
pub fn sanitize_fxsave(area: &mut [u8; FPSTATE_SIZE]) {
    let mut m = [0u8; 4];
    m.copy_from_slice(&area[24..28]);
    let mxcsr = u32::from_le_bytes(m) & MXCSR_MASK;
    area[24..28].copy_from_slice(&mxcsr.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tally_uapi::signal::{SA_SIGINFO, SIGUSR1};

    fn action(flags: u64) -> KernelSigaction {
        KernelSigaction {
            sa_handler: 0x40_1000,
            sa_flags: flags | SA_RESTORER,
            sa_restorer: 0x40_2000,
            sa_mask: 1 << 1,
        }
    }

    fn regs_strategy() -> impl Strategy<Value = SigContext> {
        (proptest::array::uniform16(any::<u64>()), 0x10_0000u64..USER_END, 0u64..USER_END, any::<u64>()).prop_map(
            |(g, rsp, rip, fl)| SigContext {
                r8: g[0],
                r9: g[1],
                r10: g[2],
                r11: g[3],
                r12: g[4],
                r13: g[5],
                r14: g[6],
                r15: g[7],
                rdi: g[8],
                rsi: g[9],
                rbp: g[10],
                rbx: g[11],
                rdx: g[12],
                rax: g[13],
                rcx: g[14],
                rsp,
                rip,
                eflags: (fl & FIX_EFLAGS) | 0x202,
                cs: USER_CS,
                ss: USER_SS,
                ..Default::default()
            },
        )
    }

    proptest! {
        /// The frame is where Linux puts it, below the red zone or on the alternate stack,
        /// aligned as after a call; the handler's registers point into it; and what
        /// `rt_sigreturn` reads back from the very bytes is the thread as it was.
        #[test]
        fn frame_round_trips(saved in regs_strategy(), blocked in any::<u64>(), onstack in any::<bool>(),
                             alt_base in 0x1_0000u64..0x1000_0000, alt_size in 2048u64..0x10_0000) {
            let alt = AltStack { sp: alt_base, size: alt_size, autodisarm: false };
            let flags = if onstack { SA_ONSTACK | SA_SIGINFO } else { SA_SIGINFO };
            let info = SigInfo::from_process(SIGUSR1, 0, 7, 0);
            let f = setup(&saved, &info, &action(flags), SigSet(blocked).blockable(), alt, FaultInfo::default()).unwrap();
            prop_assert_eq!((f.addr + 8) % 16, 0);
            prop_assert_eq!(f.fpstate % 64, 0);
            prop_assert!(f.addr + RT_SIGFRAME_SIZE as u64 <= f.fpstate);
            let top = if onstack && !alt.on(saved.rsp - RED_ZONE) { alt_base + alt_size } else { saved.rsp - RED_ZONE };
            prop_assert!(f.fpstate + FPSTATE_SIZE as u64 <= top);
            prop_assert!(top - f.addr < (RT_SIGFRAME_SIZE + FPSTATE_SIZE + 64 + 16) as u64);
            prop_assert_eq!(f.regs.rsp, f.addr);
            prop_assert_eq!(f.regs.rdi, SIGUSR1 as u64);
            prop_assert_eq!(f.regs.rsi, f.addr + RT_SIGFRAME_INFO as u64);
            prop_assert_eq!(f.regs.rdx, f.addr + RT_SIGFRAME_UC as u64);
            prop_assert_eq!(f.regs.rip, 0x40_1000);
            prop_assert_eq!(u64::from_le_bytes(f.bytes[..8].try_into().unwrap()), 0x40_2000);
            prop_assert!(f.blocked.contains(SIGUSR1) && f.blocked.contains(2));
            let uc = UContext::read(&f.bytes[RT_SIGFRAME_UC..RT_SIGFRAME_INFO]);
            let r = restore(&uc).unwrap();
            let mut expect = saved;
            expect.oldmask = SigSet(blocked).blockable().0;
            expect.fpstate = f.fpstate;
            prop_assert_eq!(r.regs, expect);
            prop_assert_eq!(r.blocked, SigSet(blocked).blockable());
        }

        /// Whatever user space writes into the frame, `rt_sigreturn` gives back user
        /// selectors, interrupts on, no IOPL, and a user-half rip and rsp, or refuses.
        #[test]
        fn restore_never_yields_kernel_state(words in proptest::collection::vec(any::<u64>(), 38)) {
            let mut b = [0u8; UContext::SIZE];
            for (i, w) in words.iter().enumerate() { b[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes()); }
            let uc = UContext::read(&b);
            match restore(&uc) {
                Some(r) => {
                    prop_assert!(r.regs.rip < USER_END && r.regs.rsp < USER_END);
                    prop_assert_eq!((r.regs.cs, r.regs.ss), (USER_CS, USER_SS));
                    prop_assert_eq!(r.regs.eflags & 0x202, 0x202);
                    prop_assert_eq!(r.regs.eflags & (3 << 12 | 1 << 14 | 1 << 17), 0);
                    prop_assert!(!r.blocked.contains(9) && !r.blocked.contains(19));
                }
                None => prop_assert!(uc.mcontext.rip >= USER_END || uc.mcontext.rsp >= USER_END),
            }
        }
    }

    #[test]
    fn refusals() {
        let saved = SigContext { rsp: 0x7fff_0000, rip: 0x40_0000, ..Default::default() };
        let info = SigInfo::kernel(SIGUSR1);
        let mut a = action(0);
        a.sa_flags &= !SA_RESTORER;
        assert_eq!(
            setup(&saved, &info, &a, SigSet::EMPTY, AltStack::default(), FaultInfo::default()),
            Err(FrameError::NoRestorer)
        );
        let low = SigContext { rsp: 0x300, ..saved };
        assert_eq!(
            setup(&low, &info, &action(0), SigSet::EMPTY, AltStack::default(), FaultInfo::default()),
            Err(FrameError::BadStack)
        );
        let alt = AltStack { sp: 0x10_0000, size: 8192, autodisarm: true };
        let f =
            setup(&saved, &info, &action(SA_ONSTACK | SA_NODEFER), SigSet::EMPTY, alt, FaultInfo::default()).unwrap();
        assert!(alt.on(f.addr) && !f.blocked.contains(SIGUSR1));
        assert_eq!(f.altstack, AltStack::default());
        let mut area = [0xffu8; FPSTATE_SIZE];
        sanitize_fxsave(&mut area);
        assert_eq!(u32::from_le_bytes(area[24..28].try_into().unwrap()), MXCSR_MASK);
    }
}
