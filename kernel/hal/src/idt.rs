//! The IDT: where the CPU goes on each exception and interrupt.
//!
//! Vectors 0–31 are CPU exceptions; each gets a stub that packs what the CPU pushed into an
//! [`Exception`] and hands it to the kernel's policy, one of the [`TrapHandlers`] the kernel
//! registered at [`init`] (its `trap` layer: report the fault and stop the machine, resume
//! after a breakpoint, or — for an exception from user mode — fix a demand-zero page fault
//! or kill the task). An exception from ring 3 arrives on the thread's kernel stack (TSS
//! `rsp0`, set at every switch). Vectors 32–47 are the 16 legacy IRQ lines of the two 8259
//! PICs; each stub calls the registered `irq(line, from_user)` (the kernel's `irq`
//! dispatcher), saying whether the interrupted code ran in ring 3. Stubs use the
//! `x86-interrupt` calling convention, so the compiler saves every register the handler
//! clobbers and returns with `iretq`.

use spin::Once;
use x86_64::registers::control::Cr2;
use x86_64::structures::idt::{InterruptDescriptorTable, InterruptStackFrame, PageFaultErrorCode};

use super::gdt::DOUBLE_FAULT_IST_INDEX;
use super::pic::IRQ_BASE;

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

    /// Whether the CPU was in ring 3 when the exception happened.
    pub fn from_user(&self) -> bool {
        self.cs & 3 == 3
    }
}

/// Where the kernel wants each kind of trap to go. Every handler runs with interrupts
/// disabled, on the interrupted thread's kernel stack (the double fault on its own stack).
#[derive(Clone, Copy)]
pub struct TrapHandlers {
    /// Any exception but breakpoints, page faults, double faults and machine checks: fatal
    /// in the kernel, the end of the task in user mode.
    pub exception: fn(&Exception) -> !,
    /// A page fault the direct user copy did not expect (see [`crate::uaccess`]); returns
    /// to retry the faulting instruction.
    pub page_fault: fn(&Exception),
    /// `int3`; returns to resume after it.
    pub breakpoint: fn(&Exception),
    /// Double fault, machine check: the machine cannot go on.
    pub fatal: fn(&Exception) -> !,
    /// Legacy IRQ `line` (0–15) fired; `from_user`: the CPU was running ring-3 code.
    pub irq: fn(line: u8, from_user: bool),
}

static HANDLERS: Once<TrapHandlers> = Once::new();

/// The registered handlers. `init` stores them before the IDT is loaded, so no stub can run
/// before they exist; if one somehow did, the CPU halts rather than guess.
fn handlers() -> &'static TrapHandlers {
    match HANDLERS.get() {
        Some(h) => h,
        None => super::cpu::halt_forever(),
    }
}

/// A stub that hands the exception to the registered `exception` handler: fatal in the
/// kernel, the end of the task in user mode.
macro_rules! fatal {
    ($fn:ident, $vec:expr, $name:expr) => {
        extern "x86-interrupt" fn $fn(f: InterruptStackFrame) {
            super::uaccess::clear_ac();
            (handlers().exception)(&Exception::new($vec, $name, &f, None))
        }
    };
    ($fn:ident, $vec:expr, $name:expr, code) => {
        extern "x86-interrupt" fn $fn(f: InterruptStackFrame, code: u64) {
            super::uaccess::clear_ac();
            (handlers().exception)(&Exception::new($vec, $name, &f, Some(code)))
        }
    };
}

fatal!(divide_error, 0, "divide error");
fatal!(debug, 1, "debug");
fatal!(nmi, 2, "non-maskable interrupt");
fatal!(overflow, 4, "overflow");
fatal!(bound_range, 5, "bound range exceeded");
fatal!(invalid_opcode, 6, "invalid opcode");
fatal!(device_not_available, 7, "device not available");
fatal!(invalid_tss, 10, "invalid TSS", code);
fatal!(segment_not_present, 11, "segment not present", code);
fatal!(stack_segment, 12, "stack-segment fault", code);
fatal!(general_protection, 13, "general protection fault", code);
fatal!(x87_fp, 16, "x87 floating-point exception");
fatal!(alignment_check, 17, "alignment check", code);
fatal!(simd_fp, 19, "SIMD floating-point exception");
fatal!(virtualization, 20, "virtualization exception");
fatal!(control_protection, 21, "control protection exception", code);
fatal!(hv_injection, 28, "hypervisor injection exception");
fatal!(vmm_communication, 29, "VMM communication exception", code);
fatal!(security, 30, "security exception", code);

extern "x86-interrupt" fn breakpoint(f: InterruptStackFrame) {
    super::uaccess::clear_ac();
    (handlers().breakpoint)(&Exception::new(3, "breakpoint", &f, None));
}

/// A page fault. One kind is handled here: the kernel's direct copy to or from user memory
/// hitting a page it may not use that way (`uaccess::fixup`) resumes at the copy's failure
/// exit, and the copy is retried on the checked path. Everything else goes to the kernel's
/// `page_fault` handler.
extern "x86-interrupt" fn page_fault(mut f: InterruptStackFrame, code: PageFaultErrorCode) {
    super::uaccess::clear_ac();
    let mut e = Exception::new(14, "page fault", &f, Some(code.bits()));
    e.cr2 = Some(Cr2::read_raw());
    if !e.from_user() {
        if let Some(resume) = super::uaccess::fixup(e.rip, e.cr2.unwrap_or(0)) {
            // SAFETY: `resume` is the copy routine's own failure exit, in the same function
            // as the faulting instruction, with the same stack and registers it expects.
            unsafe { f.as_mut().update(|v| v.instruction_pointer = x86_64::VirtAddr::new(resume)) };
            return;
        }
    }
    (handlers().page_fault)(&e)
}

extern "x86-interrupt" fn double_fault(f: InterruptStackFrame, code: u64) -> ! {
    super::uaccess::clear_ac();
    let mut e = Exception::new(8, "double fault", &f, Some(code));
    e.cr2 = Some(Cr2::read_raw());
    (handlers().fatal)(&e)
}

extern "x86-interrupt" fn machine_check(f: InterruptStackFrame) -> ! {
    super::uaccess::clear_ac();
    (handlers().fatal)(&Exception::new(18, "machine check", &f, None))
}

macro_rules! irq_stubs {
    ($($fn:ident = $line:expr),* $(,)?) => {
        $(extern "x86-interrupt" fn $fn(f: InterruptStackFrame) {
            super::uaccess::clear_ac();
            (handlers().irq)($line, f.code_segment.0 & 3 == 3)
        })*
        const IRQ_STUBS: [extern "x86-interrupt" fn(InterruptStackFrame); 16] = [$($fn),*];
    };
}

irq_stubs!(
    irq0 = 0, irq1 = 1, irq2 = 2, irq3 = 3, irq4 = 4, irq5 = 5, irq6 = 6, irq7 = 7,
    irq8 = 8, irq9 = 9, irq10 = 10, irq11 = 11, irq12 = 12, irq13 = 13, irq14 = 14, irq15 = 15,
);

static IDT: Once<InterruptDescriptorTable> = Once::new();

/// Register the kernel's trap handlers, then build and load the IDT. Must run after
/// `gdt::init` (the double-fault IST slot). Call once; later calls keep the first handlers.
pub fn init(trap_handlers: TrapHandlers) {
    HANDLERS.call_once(|| trap_handlers);
    let idt = IDT.call_once(|| {
        let mut idt = InterruptDescriptorTable::new();
        idt.divide_error.set_handler_fn(divide_error);
        idt.debug.set_handler_fn(debug);
        idt.non_maskable_interrupt.set_handler_fn(nmi);
        // DPL 3: `int3` is allowed in user mode (a debugger's breakpoint); from ring 3 it
        // then arrives here as a breakpoint (SIGTRAP) instead of a general-protection fault.
        idt.breakpoint.set_handler_fn(breakpoint).set_privilege_level(x86_64::PrivilegeLevel::Ring3);
        idt.overflow.set_handler_fn(overflow);
        idt.bound_range_exceeded.set_handler_fn(bound_range);
        idt.invalid_opcode.set_handler_fn(invalid_opcode);
        idt.device_not_available.set_handler_fn(device_not_available);
        // SAFETY: the IST slot was filled with a valid, unused stack by `gdt::init`.
        unsafe {
            idt.double_fault.set_handler_fn(double_fault).set_stack_index(DOUBLE_FAULT_IST_INDEX);
        }
        idt.invalid_tss.set_handler_fn(invalid_tss);
        idt.segment_not_present.set_handler_fn(segment_not_present);
        idt.stack_segment_fault.set_handler_fn(stack_segment);
        idt.general_protection_fault.set_handler_fn(general_protection);
        idt.page_fault.set_handler_fn(page_fault);
        idt.x87_floating_point.set_handler_fn(x87_fp);
        idt.alignment_check.set_handler_fn(alignment_check);
        idt.machine_check.set_handler_fn(machine_check);
        idt.simd_floating_point.set_handler_fn(simd_fp);
        idt.virtualization.set_handler_fn(virtualization);
        idt.cp_protection_exception.set_handler_fn(control_protection);
        idt.hv_injection_exception.set_handler_fn(hv_injection);
        idt.vmm_communication_exception.set_handler_fn(vmm_communication);
        idt.security_exception.set_handler_fn(security);
        for (line, stub) in IRQ_STUBS.iter().enumerate() {
            idt[IRQ_BASE + line as u8].set_handler_fn(*stub);
        }
        idt
    });
    idt.load();
}

/// Raise the interrupt vector of IRQ line `line` in software (`int n`), as a test of what
/// the kernel does with an interrupt the PIC did not deliver (a spurious one).
pub fn raise_irq_vector(line: u8) {
    // `int` needs an immediate operand, hence one arm per line that tests use.
    // SAFETY: vectors 39 and 47 are IRQ stubs installed above; they return with iretq.
    unsafe {
        match line {
            7 => core::arch::asm!("int 39"),
            15 => core::arch::asm!("int 47"),
            _ => {}
        }
    }
}
