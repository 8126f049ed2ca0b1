//! # Delivering a signal on the way back to user mode, and `rt_sigreturn`
//!
//! Every return to user mode — the end of a system call, of an interrupt or an exception
//! that came from ring 3 — asks the scheduler whether the thread has a signal it does not
//! block (`sched::enter_user_mode` → `UserReturn::Signal`). If so, [`handle_pending`] takes
//! the next one (its own pending set first, then its process's; synchronous faults first,
//! then the lowest number: Linux's `get_signal`) and does what its disposition says:
//!
//! * ignored: nothing (it was counted when sent);
//! * a default action: the process stops (job control) or dies, as `kill` would have done
//!   had the signal not been blocked when it came;
//! * a handler: Linux's `rt_sigframe` is laid out (`tally_sig::frame::setup`: below the
//!   red zone or on the alternate stack), the FPU state (`hal::fpu::save`) and the frame
//!   are copied to the user stack, and the registers the thread returns with become the
//!   handler's: `rip` = the handler, `rdi` = the signal, `rsi` = `&info`, `rdx` = `&uc`,
//!   `rsp` = the frame, whose first word is `sa_restorer`. The mask while it runs adds
//!   `sa_mask` and the signal itself (unless `SA_NODEFER`). A frame that cannot be written
//!   (no `SA_RESTORER`, a stack that is not mapped) kills the process with SIGSEGV, as
//!   Linux's `force_sigsegv` does.
//!
//! A system call cut short by the signal returned `ERESTARTSYS`/`ERESTARTNOHAND`: here it
//! becomes `EINTR`, or the call is restarted — `rip` back over the 2-byte `syscall`, `rax`
//! the call's number again (`tally_sig::restart_after`: `SA_RESTART`, or no handler).
//!
//! [`sigreturn`] is the handler's way back: `sa_restorer` calls `rt_sigreturn` with `rsp`
//! at the frame's `ucontext`; the registers, the mask, the FPU state and the alternate
//! stack come back from it, checked (`tally_sig::frame::restore`): a frame whose `rip`
//! or `rsp` is not a user address kills the process with SIGSEGV, never the kernel.

use tally_sig::frame::{self, FaultInfo};
use tally_sig::{restart_after, Act, Restart, SigSet};
use tally_uapi::signal::{KernelSigaction, SigContext, SigInfo, UContext, FPSTATE_SIZE, SIGSEGV};

use hal::regs::UserRegs;

use super::Procs;
use crate::sched;

/// What the next pending signal came to (under the table's lock).
enum Next {
    /// No signal left to deliver.
    Nothing,
    /// Its default action was taken (a stop or a death): the return loop acts on it.
    Acted,
    /// Run this handler.
    Handler { info: SigInfo, action: KernelSigaction, blocked: SigSet, alt: tally_sig::AltStack, fault: FaultInfo },
}

impl Procs {
    /// Take the running thread's next deliverable signal and act on it unless it has a
    /// handler (Linux's `get_signal`).
    fn next_signal_for_delivery(&mut self) -> Next {
        let me = sched::current();
        let Ok(leader) = self.table.leader(me) else { return Next::Nothing };
        let protected = self.table.get(leader).is_ok_and(|l| l.pid() == tally_tasktable::INIT_PID);
        loop {
            let allowed = SigSet(!self.signals.thread(me).blocked.0);
            let info = match self.signals.thread(me).pending.take_next(allowed) {
                Some(i) => Some(i),
                None => self.signals.process(leader).pending.take_next(allowed),
            };
            let Some(info) = info else {
                // A sigsuspend that ran no handler gets its mask back (and is restarted).
                let t = self.signals.thread(me);
                if let Some(m) = t.saved_mask.take() {
                    t.blocked = m;
                }
                self.recalc_sigpending(me);
                return Next::Nothing;
            };
            let sig = info.signo as u8;
            let act = self.signals.process(leader).actions.act(sig);
            match act {
                Act::Handle(action) => {
                    self.signals.process(leader).actions.handler_entered(sig);
                    let t = self.signals.thread(me);
                    let blocked = t.saved_mask.take().unwrap_or(t.blocked);
                    let fault =
                        if info.addr.is_some() { t.fault.take().unwrap_or_default() } else { FaultInfo::default() };
                    let alt = t.altstack;
                    return Next::Handler { info, action, blocked, alt, fault };
                }
                Act::Default(d) if !protected && d != tally_uapi::signal::DefaultAction::Continue => {
                    self.default_action(leader, sig, act, protected, hal::tsc::read());
                    self.recalc_sigpending(me);
                    return Next::Acted;
                }
                _ => {} // ignored (or init's default): the next one
            }
        }
    }
}

/// Deliver the running thread's next pending signal on its way back to user mode (called
/// with interrupts off, when `sched::enter_user_mode` answered `Signal`). `regs` are the
/// registers the thread returns with; `syscall` is `Some(number)` on the way out of a
/// system call whose restart is not decided yet (taken here once decided).
pub fn handle_pending(regs: &mut SigContext, syscall: &mut Option<u64>) {
    let next = super::with(|p| p.next_signal_for_delivery());
    let Next::Handler { info, action, blocked, alt, fault } = next else { return };
    if let Some(nr) = syscall.take() {
        restart(regs, nr, Some(action.sa_flags));
    }
    let Ok(f) = frame::setup(regs, &info, &action, blocked, alt, fault) else {
        return bad_frame("no room or no restorer for a signal frame");
    };
    let fp = hal::fpu::save();
    if !copy_out(f.fpstate, &fp) || !copy_out(f.addr, &f.bytes) {
        return bad_frame("signal frame not writable");
    }
    *regs = f.regs;
    super::with(|p| {
        let me = sched::current();
        let t = p.signals.thread(me);
        t.blocked = f.blocked;
        t.altstack = f.altstack;
        p.recalc_sigpending(me);
    });
}

/// [`handle_pending`] on the registers of a return to user mode.
pub(super) fn deliver(regs: &mut UserRegs, syscall: &mut Option<u64>) {
    let mut ctx = to_sigcontext(regs);
    handle_pending(&mut ctx, syscall);
    from_sigcontext(regs, &ctx);
}

/// The thread returns to user mode with nothing (more) to deliver: a system call still
/// marked as interrupted is restarted (no handler ran).
pub(super) fn finish(regs: &mut UserRegs, syscall: &mut Option<u64>) {
    if let Some(nr) = syscall.take() {
        if tally_sig::restart_after(regs.rax as i64, None) == Restart::Rewind {
            regs.rax = nr;
            regs.rip = regs.rip.wrapping_sub(2);
        }
    }
}

/// The user registers as a signal frame's `sigcontext` holds them.
pub fn to_sigcontext(r: &UserRegs) -> SigContext {
    SigContext {
        r8: r.r8,
        r9: r.r9,
        r10: r.r10,
        r11: r.r11,
        r12: r.r12,
        r13: r.r13,
        r14: r.r14,
        r15: r.r15,
        rdi: r.rdi,
        rsi: r.rsi,
        rbp: r.rbp,
        rbx: r.rbx,
        rdx: r.rdx,
        rax: r.rax,
        rcx: r.rcx,
        rsp: r.rsp,
        rip: r.rip,
        eflags: r.rflags,
        cs: r.cs as u16,
        ss: r.ss as u16,
        ..Default::default()
    }
}

/// Back from a `sigcontext` (`orig_rax` untouched; the selectors stay the user's).
pub fn from_sigcontext(r: &mut UserRegs, c: &SigContext) {
    (r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15) = (c.r8, c.r9, c.r10, c.r11, c.r12, c.r13, c.r14, c.r15);
    (r.rdi, r.rsi, r.rbp, r.rbx, r.rdx, r.rax, r.rcx) = (c.rdi, c.rsi, c.rbp, c.rbx, c.rdx, c.rax, c.rcx);
    (r.rsp, r.rip, r.rflags) = (c.rsp, c.rip, c.eflags);
    if !r.sanitize() {
        // Checked where the values came from (the frame's setup, rt_sigreturn): only a
        // handler address outside user space gets here.
        bad_frame("signal handler outside user space");
    }
}

fn restart(regs: &mut SigContext, nr: u64, handler: Option<u64>) {
    match restart_after(regs.rax as i64, handler) {
        Restart::Keep => {}
        Restart::Rewind => {
            regs.rax = nr;
            regs.rip = regs.rip.wrapping_sub(2);
        }
        Restart::Eintr => regs.rax = -(tally_uapi::errno::EINTR as i64) as u64,
    }
}

/// A handler's frame could not be built: the process dies of SIGSEGV (Linux's
/// `force_sigsegv`, with the core flag).
fn bad_frame(why: &str) {
    let ids = super::current_ids();
    log::warn!("pid {}: {why}: killed by SIGSEGV", ids.pid);
    super::exit_signaled(SIGSEGV)
}

/// A fault in user mode raised `info` (SIGSEGV at an address...): if the process catches
/// it and the thread does not block it, it is made pending for the thread with `fault`
/// (for the frame) and the thread's return to user mode runs the handler — true. Otherwise
/// false: the fault kills the process, as Linux's `force_sig_info` does to a blocked or
/// ignored fault signal.
pub fn fault_signal(info: SigInfo, fault: FaultInfo) -> bool {
    super::with(|p| {
        let me = sched::current();
        let Ok(leader) = p.table.leader(me) else { return false };
        let sig = info.signo as u8;
        let caught = p.signals.process(leader).actions.caught(sig);
        let t = p.signals.thread(me);
        if !caught || t.blocked.contains(sig) || t.pending.set().contains(sig) {
            return false;
        }
        t.pending.post(info);
        t.fault = Some(fault);
        p.count_signal(leader);
        p.recalc_sigpending(me);
        true
    })
}

/// `rt_sigreturn` on the system call's frame: [`sigreturn`], and the frame no longer counts
/// as a system call that could be restarted (Linux sets `orig_ax` to -1).
pub fn sigreturn_regs(regs: &mut UserRegs) {
    let mut ctx = to_sigcontext(regs);
    sigreturn(&mut ctx);
    from_sigcontext(regs, &ctx);
    regs.orig_rax = u64::MAX;
}

/// `rt_sigreturn`: the thread's registers, mask, FPU state and alternate stack from the
/// frame whose `ucontext` is at `regs.rsp` (the handler's `ret` popped `pretcode`). A frame
/// that cannot be read, or whose `rip`/`rsp` is not a user address, kills the process with
/// SIGSEGV.
pub fn sigreturn(regs: &mut SigContext) {
    let mut b = [0u8; UContext::SIZE];
    if !copy_in(regs.rsp, &mut b) {
        return bad_frame("rt_sigreturn: frame not readable");
    }
    let uc = UContext::read(&b);
    let Some(r) = frame::restore(&uc) else {
        return bad_frame("rt_sigreturn: frame returns outside user space");
    };
    if r.fpstate != 0 {
        let mut fp = [0u8; FPSTATE_SIZE];
        if !copy_in(r.fpstate, &mut fp) {
            return bad_frame("rt_sigreturn: FPU state not readable");
        }
        hal::fpu::restore(&fp);
    }
    *regs = r.regs;
    super::with(|p| {
        let me = sched::current();
        let t = p.signals.thread(me);
        t.blocked = r.blocked;
        // Linux's restore_altstack: the stack the frame recorded, its errors ignored.
        let _ = t.altstack.set(&r.altstack, regs.rsp);
        p.recalc_sigpending(me);
    });
}

/// Copy to the running thread's user memory, faulting demand-zero pages in (counted as
/// minor faults, as `syscall/usercopy.rs` does); false if the range is not writable.
fn copy_out(addr: u64, bytes: &[u8]) -> bool {
    if hal::uaccess::copy_to_user_direct(addr, bytes) {
        return true;
    }
    let Some(vm) = super::current_vm() else { return false };
    let cpu = super::current_process_cpu_ticks();
    let mut resolve = |page: u64, write: bool| resolve_page(&vm, page, write, cpu);
    hal::uaccess::copy_to_user(vm.space(), addr, bytes, &mut resolve).is_ok()
}

/// Copy from the running thread's user memory; false if the range is not readable.
fn copy_in(addr: u64, buf: &mut [u8]) -> bool {
    if hal::uaccess::copy_from_user_direct(addr, buf) {
        return true;
    }
    let Some(vm) = super::current_vm() else { return false };
    let cpu = super::current_process_cpu_ticks();
    let mut resolve = |page: u64, write: bool| resolve_page(&vm, page, write, cpu);
    hal::uaccess::copy_from_user(vm.space(), addr, buf, &mut resolve).is_ok()
}

fn resolve_page(vm: &super::vm::Vm, page: u64, write: bool, cpu: u64) -> bool {
    // Delivery runs with interrupts off: a `/var` page is refused rather than read (SIGSEGV).
    super::user::resolve_for_copy(vm, page, write, cpu)
}
