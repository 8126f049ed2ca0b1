//! # trap — what the kernel does with CPU exceptions
//!
//! A breakpoint is reported and execution resumes after the `int3`. (A page fault in the
//! direct user copy never gets here: the HAL's page-fault stub sends it back to the copy, see
//! `hal::uaccess`.) Every other exception in the kernel is fatal: the report names the
//! exception, its vector, the error code, RIP, and CR2 for page faults, and the run ends
//! through QEMU's exit device with a failure status, so a broken kernel never hangs or
//! reboots in a loop.
//!
//! A double fault whose CR2 lies just below the interrupted stack pointer is a kernel stack
//! overflow: the push that hit the guard page faulted, and so did delivering that fault on
//! the same stack. The handler runs on its own IST stack, which is why it can say so.
//!
//! **Exceptions from user mode** (ring 3: the low bits of the saved CS) are the process's
//! problem, not the kernel's. The task's running microstate becomes ONCPU_TRAP; a page fault
//! that a demand-zero region explains is fixed (`proc::vm`: a zeroed page is mapped, a minor
//! fault counted), as is a write to a page `fork` shared copy-on-write (the page copied),
//! and the task resumes in ONCPU_USR at the faulting instruction; a page of
//! a program on `/var` is read from the disk first, the thread sleeping in PAGING_SLEEP (a
//! major fault: `proc/vm_file.rs`, the one fault that sleeps) — or, when
//! no frame can be had, the OOM killer ends the largest process with SIGKILL and the fault is
//! retried (`proc/oom.rs`); anything
//! else raises the signal Linux would send — SIGFPE for a divide error, SIGILL for an
//! invalid opcode, SIGTRAP for a breakpoint or single step, SIGBUS for an alignment check,
//! SIGSEGV for page and protection faults — with Linux's `siginfo` (`si_addr`, `si_code`).
//! If the process catches it and the thread does not block it, the handler runs on the way
//! back (`proc::fault_signal`, then `proc::interrupt_return_to_user` builds its frame from
//! the registers the IDT stub saved). Otherwise it kills the task's process, with the signal
//! as its wait status, and the kernel and every other task go on. (For the signals whose
//! default action is a core dump the status carries the core flag, so the accounting says
//! ACORE as well as AXSIG; no core file is written.)
//! Non-maskable
//! interrupts, double faults and machine checks stay fatal wherever they come from.
//!
//! See `docs/user-mode.md` (faults from ring 3) and `docs/boot-and-interrupts.md` (the IDT).

use core::sync::atomic::{AtomicU64, Ordering};
use tally_microstate::MicroState;

use hal::idt::{Exception, UserRegs};
use hal::qemu::ExitCode;
use tally_sig::frame::FaultInfo;
use tally_uapi::signal::{
    SigInfo, BUS_ADRALN, FPE_INTDIV, ILL_ILLOPN, SEGV_ACCERR, SEGV_MAPERR, SI_KERNEL, TRAP_BRKPT,
};

use crate::base::console::emergency_print;
use crate::{proc, sched};

pub use tally_uapi::signal::{SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP};

static BREAKPOINTS: AtomicU64 = AtomicU64::new(0);
/// User tasks killed by an exception, and demand-zero faults fixed, since boot.
static USER_KILLS: AtomicU64 = AtomicU64::new(0);
static USER_FAULTS_FIXED: AtomicU64 = AtomicU64::new(0);

/// The signal Linux sends for exception `vector` taken in user mode.
pub fn signal_for(vector: u8) -> u8 {
    match vector {
        0 | 7 | 16 | 19 => SIGFPE,
        1 | 3 => SIGTRAP,
        6 => SIGILL,
        11 | 12 | 17 => SIGBUS,
        _ => SIGSEGV,
    }
}

fn signal_name(sig: u8) -> &'static str {
    match sig {
        SIGTRAP => "SIGTRAP",
        SIGILL => "SIGILL",
        SIGBUS => "SIGBUS",
        SIGFPE => "SIGFPE",
        SIGSEGV => "SIGSEGV",
        _ => "signal",
    }
}

/// The `siginfo` Linux gives signal `sig` for exception `e` (`si_code`, and `si_addr`: the
/// faulting address for a page fault, the instruction for arithmetic and opcode faults).
fn fault_siginfo(e: &Exception, sig: u8) -> SigInfo {
    let (code, addr) = match e.vector {
        14 if e.error_code.unwrap_or(0) & 1 != 0 => (SEGV_ACCERR, e.cr2.unwrap_or(0)),
        14 => (SEGV_MAPERR, e.cr2.unwrap_or(0)),
        0 => (FPE_INTDIV, e.rip),
        6 => (ILL_ILLOPN, e.rip),
        17 => (BUS_ADRALN, e.rip),
        3 => (TRAP_BRKPT, e.rip),
        16 | 19 => (0, e.rip),
        _ => (SI_KERNEL, 0),
    };
    SigInfo::fault(sig, code, addr)
}

/// An exception from user mode raises `sig`: its handler runs on the way back if the
/// process catches it (and the thread does not block it); otherwise the process dies.
fn raise_user(e: &Exception, sig: u8, regs: &mut UserRegs) {
    let fault = FaultInfo { trapno: e.vector as u64, err: e.error_code.unwrap_or(0), cr2: e.cr2.unwrap_or(0) };
    if !proc::fault_signal(fault_siginfo(e, sig), fault) {
        kill_user(e, sig)
    }
    back_to_user(regs);
}

/// The exception is dealt with: the thread runs in user mode again, after whatever the way
/// back has to do (a kill, a stop, a reschedule, a signal's frame) — the way a system call
/// goes back, so that building a handler's frame is still the trap's time, and ONCPU_USR
/// starts when ring 3 does.
fn back_to_user(regs: &mut UserRegs) {
    proc::return_to_user(regs, false);
}

/// Any exception except breakpoints and page faults (which have their own entry points).
pub fn exception(e: &Exception, regs: &mut UserRegs) {
    if !e.from_user() || matches!(e.vector, 2 | 8 | 18) {
        fatal(e)
    }
    sched::set_running_state(MicroState::OncpuTrap);
    raise_user(e, signal_for(e.vector), regs)
}

/// A page fault: demand-zero for user tasks (returns to retry the instruction), SIGSEGV for
/// user addresses they may not use that way, the OOM killer (SIGKILL to the largest process,
/// then a retry) when no frame can be had (`proc/oom.rs`), fatal in the kernel.
pub fn page_fault(e: &Exception, regs: &mut UserRegs) {
    if !e.from_user() {
        fatal(e)
    }
    sched::set_running_state(MicroState::OncpuTrap);
    let code = e.error_code.unwrap_or(0);
    let (write, reserved, exec) = (code & 0x2 != 0, code & 0x8 != 0, code & 0x10 != 0);
    let addr = e.cr2.unwrap_or(0);
    if reserved {
        kill_user(e, SIGSEGV)
    }
    match proc::user_page_fault(addr, write, exec) {
        proc::UserFault::Fixed => {
            USER_FAULTS_FIXED.fetch_add(1, Ordering::Relaxed);
            back_to_user(regs);
        }
        // A write to a page `fork` shared, now the process's own (`proc/vm.rs`); counted
        // there (`unix:0:vm`'s `cow_fault`), not as demand-zero.
        proc::UserFault::CopiedOnWrite => back_to_user(regs),
        proc::UserFault::PageIn => page_in(e, addr, regs),
        proc::UserFault::BusError => raise_user(e, SIGBUS, regs),
        proc::UserFault::Denied => raise_user(e, SIGSEGV, regs),
        // Allowed but no frame left: the OOM killer's SIGKILL (for this process, which then
        // never comes back here, or for a larger one), not a segfault; then retry.
        proc::UserFault::OutOfMemory => {
            proc::oom::out_of_memory();
            back_to_user(regs);
        }
    }
}

/// A page of a program on `/var` must come from the disk (`proc/vm_file.rs`): a major
/// fault. The handler was entered with interrupts off; it may sleep because it runs on the
/// faulting thread's own kernel stack and holds no lock (the fault came from ring 3), so it
/// enables them for the read — the thread sleeps in PAGING_SLEEP while `fsd` and the disk
/// work, and resumes in ONCPU_TRAP — and disables them again for the way back, which goes
/// through `proc::return_to_user` like a system call's: a kill, a stop, a signal or a
/// reschedule that came during the sleep is acted on before ring 3.
fn page_in(e: &Exception, addr: u64, regs: &mut UserRegs) {
    hal::cpu::enable_interrupts();
    let outcome = proc::user_page_in(addr);
    hal::cpu::disable_interrupts();
    match outcome {
        // Counted by `vm_file` (major, or a `.bss` zero-fill), not as a demand-zero fix.
        proc::UserFault::Fixed | proc::UserFault::CopiedOnWrite => proc::return_to_user(regs, false),
        proc::UserFault::BusError => raise_user(e, SIGBUS, regs),
        proc::UserFault::OutOfMemory => {
            proc::oom::out_of_memory();
            proc::return_to_user(regs, false);
        }
        proc::UserFault::Denied | proc::UserFault::PageIn => raise_user(e, SIGSEGV, regs),
    }
}

/// Report a fatal user exception (as Linux's "segfault at" line) and end the process.
fn kill_user(e: &Exception, sig: u8) -> ! {
    USER_KILLS.fetch_add(1, Ordering::Relaxed);
    let ids = proc::current_ids();
    let comm = ids.comm.iter().position(|&b| b == 0).map_or(&ids.comm[..], |n| &ids.comm[..n]);
    let comm = core::str::from_utf8(comm).unwrap_or("?");
    match e.cr2 {
        Some(cr2) => println!(
            "{comm}[{}]: {} at {cr2:#x} rip {:#x} rsp {:#x} error {:#x} in user mode: killed by {}",
            ids.pid,
            e.name,
            e.rip,
            e.rsp,
            e.error_code.unwrap_or(0),
            signal_name(sig)
        ),
        None => println!(
            "{comm}[{}]: {} (vector {}) at rip {:#x} rsp {:#x} in user mode: killed by {}",
            ids.pid,
            e.name,
            e.vector,
            e.rip,
            e.rsp,
            signal_name(sig)
        ),
    }
    proc::exit_signaled(sig)
}

/// (user tasks killed by exceptions, user page faults fixed by demand-zero) since boot.
pub fn user_fault_counts() -> (u64, u64) {
    (USER_KILLS.load(Ordering::Relaxed), USER_FAULTS_FIXED.load(Ordering::Relaxed))
}

/// How far below the stack pointer a faulting address may be and still count as the stack
/// overflowing (a function may reserve a large frame before touching it).
const STACK_OVERFLOW_WINDOW: u64 = 64 * 1024;

pub fn breakpoint(e: &Exception, regs: &mut UserRegs) {
    if e.from_user() {
        sched::set_running_state(MicroState::OncpuTrap);
        return raise_user(e, SIGTRAP, regs);
    }
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
    emergency_print(format_args!("  rip={:#018x} cs={:#x} rflags={:#x} rsp={:#018x}\n", e.rip, e.cs, e.rflags, e.rsp,));
    if let Some(cr2) = e.cr2 {
        emergency_print(format_args!("  cr2={cr2:#018x}\n"));
        if e.vector == 8 && cr2 < e.rsp && e.rsp - cr2 <= STACK_OVERFLOW_WINDOW {
            let (lo, hi) = hal::gdt::double_fault_stack();
            emergency_print(format_args!(
                "  kernel stack overflow: rsp {:#x} ran into the guard page at {:#x} (handled on IST stack \
                    {:#x}..{:#x})\n",
                e.rsp, cr2, lo, hi
            ));
        }
    }
    hal::qemu::exit(ExitCode::Failure)
}
