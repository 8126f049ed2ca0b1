//! The IDT: where the CPU goes on each exception and interrupt.
//!
//! Vectors 0–31 are CPU exceptions, 32–47 the 16 legacy IRQ lines of the two 8259 PICs.
//! Every one of them but three enters through an assembly stub of this file that saves the
//! *whole* register set in Linux's `struct pt_regs` layout ([`UserRegs`], the same frame
//! the `syscall` entry builds): the CPU pushed `ss rsp rflags cs rip` (and, for some
//! exceptions, an error code, which lands in the `orig_rax` slot as on Linux; the others
//! push -1 there), the stub pushes the fifteen general registers, calls the kernel's
//! handler with the frame, pops them all and returns with `iretq`. So the kernel sees, and
//! may change, everything the interrupted code will resume with: a signal handler can run
//! after a fault or at a timer tick that interrupted user code spinning in ring 3 (its
//! frame is built from these registers and the return goes to the handler), and the user
//! copy's fault fixup simply moves `rip`. The handlers run with interrupts disabled, on the
//! interrupted thread's kernel stack (TSS `rsp0` for an entry from ring 3).
//!
//! Each exception is packed into an [`Exception`] and handed to the kernel's policy, the
//! [`TrapHandlers`] the kernel gave [`init`] (its `trap` floor: report the fault and stop
//! the machine, resume after a breakpoint, or — for an exception from user mode — fix a
//! demand-zero page fault, run the process's signal handler, or kill it). Each IRQ goes to
//! the kernel's `irq(line, regs)` (its `irq` dispatcher), which tells from `regs.cs` whether
//! the interrupted code ran in ring 3. The three kept on the `x86-interrupt` calling
//! convention are fatal wherever they come from: the non-maskable interrupt, the double
//! fault (on its own IST stack) and the machine check.

use spin::Once;
use x86_64::registers::control::Cr2;
use x86_64::structures::idt::{InterruptDescriptorTable, InterruptStackFrame};

use core::sync::atomic::{AtomicU64, Ordering};

use super::gdt::DOUBLE_FAULT_IST_INDEX;
use super::pic::IRQ_BASE;
pub use super::regs::UserRegs;

/// What the CPU reported about an exception.
#[derive(Debug, Clone, Copy)]
pub struct Exception {
    pub vector: u8,
    pub name: &'static str,
    pub error_code: Option<u64>,
    pub rip: u64,
    pub cs: u64,
    pub rsp: u64,
    pub rflags: u64,
    /// The faulting linear address, for page faults (and double faults, where it tells
    /// which access overflowed a stack).
    pub cr2: Option<u64>,
}

impl Exception {
    fn new(vector: u8, name: &'static str, f: &InterruptStackFrame, error_code: Option<u64>) -> Self {
        Self {
            vector,
            name,
            error_code,
            rip: f.instruction_pointer.as_u64(),
            cs: f.code_segment.0 as u64,
            rsp: f.stack_pointer.as_u64(),
            rflags: f.cpu_flags.bits(),
            cr2: None,
        }
    }

    fn from_regs(vector: u8, regs: &UserRegs, error_code: Option<u64>) -> Self {
        Self {
            vector,
            name: name(vector),
            error_code,
            rip: regs.rip,
            cs: regs.cs,
            rsp: regs.rsp,
            rflags: regs.rflags,
            cr2: None,
        }
    }

    /// Whether the CPU was in ring 3 when the exception happened.
    pub fn from_user(&self) -> bool {
        self.cs & 3 == 3
    }
}

/// Where the kernel wants each kind of trap to go: it implements this trait on a type of its
/// own and hands the type to [`init`]. Every stub calls the one entry the kernel's type
/// gives it (a word set at `init`, as for system calls), and that entry calls these
/// directly. Every handler runs with interrupts disabled, on the interrupted thread's
/// kernel stack (the fatal ones on their own stack), with the interrupted registers in
/// `regs`: what it leaves there is what the interrupted code resumes with.
pub trait TrapHandlers {
    /// Any exception but breakpoints, page faults, double faults and machine checks: fatal
    /// in the kernel; in user mode, the process's signal (a handler, or its end).
    fn exception(e: &Exception, regs: &mut UserRegs);
    /// A page fault the direct user copy did not expect (see [`crate::uaccess`]); returns
    /// to retry the faulting instruction (or wherever `regs` now says).
    fn page_fault(e: &Exception, regs: &mut UserRegs);
    /// `int3`; returns to resume after it.
    fn breakpoint(e: &Exception, regs: &mut UserRegs);
    /// Double fault, machine check, NMI: the machine cannot go on.
    fn fatal(e: &Exception) -> !;
    /// Legacy IRQ `line` (0–15) fired; `regs.cs & 3 == 3`: the CPU was running ring-3 code.
    fn irq(line: u8, regs: &mut UserRegs);
}

/// Whether exception vector `v` pushes an error code.
const fn has_error_code(v: u8) -> bool {
    matches!(v, 8 | 10 | 11 | 12 | 13 | 14 | 17 | 21 | 29 | 30)
}

/// Where every stub goes: `trap_from_stub::<T>` for the kernel's handlers `T`, stored by
/// [`init`] before the IDT is loaded.
static TRAP_HANDLER: AtomicU64 = AtomicU64::new(0);

/// Called by every stub with the frame it built and its vector.
extern "C" fn trap_from_stub<T: TrapHandlers>(regs: &mut UserRegs, vector: u64) {
    super::uaccess::clear_ac();
    let v = vector as u8;
    if v >= IRQ_BASE {
        return T::irq(v - IRQ_BASE, regs);
    }
    let code = has_error_code(v).then_some(regs.orig_rax);
    let mut e = Exception::from_regs(v, regs, code);
    match v {
        3 => T::breakpoint(&e, regs),
        14 => {
            e.cr2 = Some(Cr2::read_raw());
            // The kernel's direct copy to or from user memory hit a page it may not use that
            // way (`uaccess::fixup`): resume at the copy's failure exit, and the copy is
            // retried on the checked path. Everything else goes to the kernel's handler.
            if !e.from_user() {
                if let Some(resume) = super::uaccess::fixup(e.rip, e.cr2.unwrap_or(0)) {
                    regs.rip = resume;
                    return;
                }
            }
            T::page_fault(&e, regs)
        }
        _ => T::exception(&e, regs),
    }
}

// The stubs: each pushes -1 where the CPU pushed no error code (so every frame has the
// `orig_rax` word), then its vector, and joins the common part.
macro_rules! stubs {
    ($($v:literal $code:literal),* $(,)?) => {
        core::arch::global_asm!(
            $(
                concat!(".global tally_isr_", $v),
                concat!("tally_isr_", $v, ":"),
                $code,
                concat!("push ", $v),
                "jmp {common}",
            )*
            common = sym tally_isr_common,
        );
    };
}

core::arch::global_asm!(
    ".global tally_isr_common",
    "tally_isr_common:",
    // [rsp] = the vector, [rsp + 8] = orig_rax (error code or -1), then the CPU's words.
    // The CPU leaves RFLAGS.DF as the interrupted code had it (`std` in ring 3): the
    // kernel's `rep movs`/`rep stos` (memcpy, memset) must run forwards. (`iretq` gives the
    // user its DF back from the frame.)
    "cld",
    "xchg rdi, [rsp]", // rdi = the vector; the interrupted rdi in pt_regs.rdi's slot
    "push rsi",
    "push rdx",
    "push rcx",
    "push rax",
    "push r8",
    "push r9",
    "push r10",
    "push r11",
    "push rbx",
    "push rbp",
    "push r12",
    "push r13",
    "push r14",
    "push r15",
    "mov rsi, rdi", // the vector: the handler's second argument
    "mov rdi, rsp", // &mut UserRegs: its first
    // 21 words below a 16-byte aligned top (the CPU aligns it): 8 more for the call.
    "sub rsp, 8",
    "call qword ptr [rip + {handler}]",
    "add rsp, 8",
    // Every register back from the pt_regs at rsp, then iretq: also the first way into
    // ring 3 (`usermode::enter_user_regs`).
    ".global tally_restore_user_regs",
    "tally_restore_user_regs:",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbp",
    "pop rbx",
    "pop r11",
    "pop r10",
    "pop r9",
    "pop r8",
    "pop rax",
    "pop rcx",
    "pop rdx",
    "pop rsi",
    "pop rdi",
    "add rsp, 8", // orig_rax
    "iretq",
    handler = sym TRAP_HANDLER,
);

// Every exception but 2 (NMI), 8 (double fault), 18 (machine check) and the reserved
// vectors; every IRQ vector.
stubs!(
    0 "push -1", 1 "push -1", 3 "push -1", 4 "push -1", 5 "push -1", 6 "push -1", 7 "push -1", 10 "", 11 "", 12 "", 13 "", 14 "",
    16 "push -1", 17 "", 19 "push -1", 20 "push -1", 21 "", 28 "push -1", 29 "", 30 "",
);
stubs!(
    32 "push -1", 33 "push -1", 34 "push -1", 35 "push -1", 36 "push -1", 37 "push -1", 38 "push -1", 39 "push -1", 40 "push -1", 41 "push -1", 42 "push -1",
    43 "push -1", 44 "push -1", 45 "push -1", 46 "push -1", 47 "push -1",
);

unsafe extern "C" {
    fn tally_isr_common();
    fn tally_isr_0();
    fn tally_isr_1();
    fn tally_isr_3();
    fn tally_isr_4();
    fn tally_isr_5();
    fn tally_isr_6();
    fn tally_isr_7();
    fn tally_isr_10();
    fn tally_isr_11();
    fn tally_isr_12();
    fn tally_isr_13();
    fn tally_isr_14();
    fn tally_isr_16();
    fn tally_isr_17();
    fn tally_isr_19();
    fn tally_isr_20();
    fn tally_isr_21();
    fn tally_isr_28();
    fn tally_isr_29();
    fn tally_isr_30();
    fn tally_isr_32();
    fn tally_isr_33();
    fn tally_isr_34();
    fn tally_isr_35();
    fn tally_isr_36();
    fn tally_isr_37();
    fn tally_isr_38();
    fn tally_isr_39();
    fn tally_isr_40();
    fn tally_isr_41();
    fn tally_isr_42();
    fn tally_isr_43();
    fn tally_isr_44();
    fn tally_isr_45();
    fn tally_isr_46();
    fn tally_isr_47();
}

fn addr(f: unsafe extern "C" fn()) -> x86_64::VirtAddr {
    x86_64::VirtAddr::new(f as usize as u64)
}

/// The name of exception vector `v`, as the Intel manuals give it.
fn name(v: u8) -> &'static str {
    match v {
        0 => "divide error",
        1 => "debug",
        2 => "non-maskable interrupt",
        3 => "breakpoint",
        4 => "overflow",
        5 => "bound range exceeded",
        6 => "invalid opcode",
        7 => "device not available",
        8 => "double fault",
        10 => "invalid TSS",
        11 => "segment not present",
        12 => "stack-segment fault",
        13 => "general protection fault",
        14 => "page fault",
        16 => "x87 floating-point exception",
        17 => "alignment check",
        18 => "machine check",
        19 => "SIMD floating-point exception",
        20 => "virtualization exception",
        21 => "control protection exception",
        28 => "hypervisor injection exception",
        29 => "VMM communication exception",
        30 => "security exception",
        _ => "exception",
    }
}

extern "x86-interrupt" fn double_fault<T: TrapHandlers>(f: InterruptStackFrame, code: u64) -> ! {
    super::uaccess::clear_ac();
    let mut e = Exception::new(8, name(8), &f, Some(code));
    e.cr2 = Some(Cr2::read_raw());
    T::fatal(&e)
}

extern "x86-interrupt" fn machine_check<T: TrapHandlers>(f: InterruptStackFrame) -> ! {
    super::uaccess::clear_ac();
    T::fatal(&Exception::new(18, name(18), &f, None))
}

extern "x86-interrupt" fn nmi<T: TrapHandlers>(f: InterruptStackFrame) {
    super::uaccess::clear_ac();
    T::fatal(&Exception::new(2, name(2), &f, None))
}

static IDT: Once<InterruptDescriptorTable> = Once::new();

/// Build and load the IDT, every stub calling the kernel's handlers `T`. Must run after
/// `gdt::init` (the double-fault IST slot). Call once: the first IDT built stays.
pub fn init<T: TrapHandlers>() {
    let handler: extern "C" fn(&mut UserRegs, u64) = trap_from_stub::<T>;
    TRAP_HANDLER.store(handler as usize as u64, Ordering::Relaxed);
    let idt = IDT.call_once(|| {
        let mut idt = InterruptDescriptorTable::new();
        // SAFETY: every address is one of the stubs above, which save the registers, call
        // the handler stored just now and return with iretq, whatever the vector pushed
        // (the stub of a vector with an error code pushes none of its own); the double
        // fault's IST slot was filled with a valid, unused stack by `gdt::init`.
        unsafe {
            idt.divide_error.set_handler_addr(addr(tally_isr_0));
            idt.debug.set_handler_addr(addr(tally_isr_1));
            idt.non_maskable_interrupt.set_handler_fn(nmi::<T>);
            // DPL 3: `int3` is allowed in user mode (a debugger's breakpoint); from ring 3 it
            // then arrives here as a breakpoint (SIGTRAP) instead of a general-protection fault.
            idt.breakpoint.set_handler_addr(addr(tally_isr_3)).set_privilege_level(x86_64::PrivilegeLevel::Ring3);
            idt.overflow.set_handler_addr(addr(tally_isr_4));
            idt.bound_range_exceeded.set_handler_addr(addr(tally_isr_5));
            idt.invalid_opcode.set_handler_addr(addr(tally_isr_6));
            idt.device_not_available.set_handler_addr(addr(tally_isr_7));
            idt.double_fault.set_handler_fn(double_fault::<T>).set_stack_index(DOUBLE_FAULT_IST_INDEX);
            idt.invalid_tss.set_handler_addr(addr(tally_isr_10));
            idt.segment_not_present.set_handler_addr(addr(tally_isr_11));
            idt.stack_segment_fault.set_handler_addr(addr(tally_isr_12));
            idt.general_protection_fault.set_handler_addr(addr(tally_isr_13));
            idt.page_fault.set_handler_addr(addr(tally_isr_14));
            idt.x87_floating_point.set_handler_addr(addr(tally_isr_16));
            idt.alignment_check.set_handler_addr(addr(tally_isr_17));
            idt.machine_check.set_handler_fn(machine_check::<T>);
            idt.simd_floating_point.set_handler_addr(addr(tally_isr_19));
            idt.virtualization.set_handler_addr(addr(tally_isr_20));
            idt.cp_protection_exception.set_handler_addr(addr(tally_isr_21));
            idt.hv_injection_exception.set_handler_addr(addr(tally_isr_28));
            idt.vmm_communication_exception.set_handler_addr(addr(tally_isr_29));
            idt.security_exception.set_handler_addr(addr(tally_isr_30));
            let irqs: [unsafe extern "C" fn(); 16] = [
                tally_isr_32,
                tally_isr_33,
                tally_isr_34,
                tally_isr_35,
                tally_isr_36,
                tally_isr_37,
                tally_isr_38,
                tally_isr_39,
                tally_isr_40,
                tally_isr_41,
                tally_isr_42,
                tally_isr_43,
                tally_isr_44,
                tally_isr_45,
                tally_isr_46,
                tally_isr_47,
            ];
            for (line, stub) in irqs.into_iter().enumerate() {
                idt[IRQ_BASE + line as u8].set_handler_addr(addr(stub));
            }
        }
        idt
    });
    idt.load();
}

/// Raise the interrupt vector of IRQ line `line` in software (`int n`), as a test of what
/// the kernel does with an interrupt the PIC did not deliver (a spurious one).
pub fn raise_irq_vector(line: u8) {
    // `int` needs an immediate operand, hence one arm per line that tests use.
    // SAFETY: vectors 39 and 47 are IRQ stubs installed above; they save and restore every
    // register and return with iretq.
    unsafe {
        match line {
            7 => core::arch::asm!("int 39"),
            15 => core::arch::asm!("int 47"),
            _ => {}
        }
    }
}
