//! The IDT: where the CPU goes on each exception and interrupt.
//!
//! Vectors 0–31 are CPU exceptions; each gets a stub that packs what the CPU pushed into an
//! [`Exception`] and hands it to the kernel's policy, the [`TrapHandlers`] the kernel gave
//! [`init`] (its `trap` floor: report the fault and stop the machine, resume after a
//! breakpoint, or — for an exception from user mode — fix a demand-zero page fault or kill
//! the task). An exception from ring 3 arrives on the thread's kernel stack (TSS `rsp0`, set
//! at every switch). Vectors 32–47 are the 16 legacy IRQ lines of the two 8259 PICs; each
//! stub calls the kernel's `irq(line, from_user)` (its `irq` dispatcher), saying whether the
//! interrupted code ran in ring 3. Stubs use the `x86-interrupt` calling convention, so the
//! compiler saves every register the handler clobbers and returns with `iretq`.

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

/// Where the kernel wants each kind of trap to go: it implements this trait on a type of its
/// own and hands the type to [`init`]. The stubs are generic over it, so every trap calls
/// the kernel's handler directly (no function pointer is looked up on the way). Every
/// handler runs with interrupts disabled, on the interrupted thread's kernel stack (the
/// double fault on its own stack).
pub trait TrapHandlers {
    /// Any exception but breakpoints, page faults, double faults and machine checks: fatal
    /// in the kernel, the end of the task in user mode.
    fn exception(e: &Exception) -> !;
    /// A page fault the direct user copy did not expect (see [`crate::uaccess`]); returns
    /// to retry the faulting instruction.
    fn page_fault(e: &Exception);
    /// `int3`; returns to resume after it.
    fn breakpoint(e: &Exception);
    /// Double fault, machine check: the machine cannot go on.
    fn fatal(e: &Exception) -> !;
    /// Legacy IRQ `line` (0–15) fired; `from_user`: the CPU was running ring-3 code.
    fn irq(line: u8, from_user: bool);
}

/// A stub that hands exception `V` to the kernel's `exception` handler: fatal in the
/// kernel, the end of the task in user mode. `name(V)` says what it is.
extern "x86-interrupt" fn fault<T: TrapHandlers, const V: u8>(f: InterruptStackFrame) {
    super::uaccess::clear_ac();
    T::exception(&Exception::new(V, name(V), &f, None))
}

/// [`fault`] for the exceptions that push an error code.
extern "x86-interrupt" fn fault_code<T: TrapHandlers, const V: u8>(f: InterruptStackFrame, code: u64) {
    super::uaccess::clear_ac();
    T::exception(&Exception::new(V, name(V), &f, Some(code)))
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

extern "x86-interrupt" fn breakpoint<T: TrapHandlers>(f: InterruptStackFrame) {
    super::uaccess::clear_ac();
    T::breakpoint(&Exception::new(3, name(3), &f, None));
}

/// A page fault. One kind is handled here: the kernel's direct copy to or from user memory
/// hitting a page it may not use that way (`uaccess::fixup`) resumes at the copy's failure
/// exit, and the copy is retried on the checked path. Everything else goes to the kernel's
/// `page_fault` handler.
extern "x86-interrupt" fn page_fault<T: TrapHandlers>(mut f: InterruptStackFrame, code: PageFaultErrorCode) {
    super::uaccess::clear_ac();
    let mut e = Exception::new(14, name(14), &f, Some(code.bits()));
    e.cr2 = Some(Cr2::read_raw());
    if !e.from_user() {
        if let Some(resume) = super::uaccess::fixup(e.rip, e.cr2.unwrap_or(0)) {
            // SAFETY: `resume` is the copy routine's own failure exit, in the same function
            // as the faulting instruction, with the same stack and registers it expects.
            unsafe { f.as_mut().update(|v| v.instruction_pointer = x86_64::VirtAddr::new(resume)) };
            return;
        }
    }
    T::page_fault(&e)
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

/// The stub of legacy IRQ line `LINE`: the kernel's `irq` handler, told whether the CPU
/// was in ring 3.
extern "x86-interrupt" fn irq<T: TrapHandlers, const LINE: u8>(f: InterruptStackFrame) {
    super::uaccess::clear_ac();
    T::irq(LINE, f.code_segment.0 & 3 == 3)
}

static IDT: Once<InterruptDescriptorTable> = Once::new();

/// Build and load the IDT, every stub calling the kernel's handlers `T`. Must run after
/// `gdt::init` (the double-fault IST slot). Call once: the first IDT built stays.
pub fn init<T: TrapHandlers>() {
    let idt = IDT.call_once(|| {
        let mut idt = InterruptDescriptorTable::new();
        idt.divide_error.set_handler_fn(fault::<T, 0>);
        idt.debug.set_handler_fn(fault::<T, 1>);
        idt.non_maskable_interrupt.set_handler_fn(fault::<T, 2>);
        // DPL 3: `int3` is allowed in user mode (a debugger's breakpoint); from ring 3 it
        // then arrives here as a breakpoint (SIGTRAP) instead of a general-protection fault.
        idt.breakpoint.set_handler_fn(breakpoint::<T>).set_privilege_level(x86_64::PrivilegeLevel::Ring3);
        idt.overflow.set_handler_fn(fault::<T, 4>);
        idt.bound_range_exceeded.set_handler_fn(fault::<T, 5>);
        idt.invalid_opcode.set_handler_fn(fault::<T, 6>);
        idt.device_not_available.set_handler_fn(fault::<T, 7>);
        // SAFETY: the IST slot was filled with a valid, unused stack by `gdt::init`.
        unsafe {
            idt.double_fault.set_handler_fn(double_fault::<T>).set_stack_index(DOUBLE_FAULT_IST_INDEX);
        }
        idt.invalid_tss.set_handler_fn(fault_code::<T, 10>);
        idt.segment_not_present.set_handler_fn(fault_code::<T, 11>);
        idt.stack_segment_fault.set_handler_fn(fault_code::<T, 12>);
        idt.general_protection_fault.set_handler_fn(fault_code::<T, 13>);
        idt.page_fault.set_handler_fn(page_fault::<T>);
        idt.x87_floating_point.set_handler_fn(fault::<T, 16>);
        idt.alignment_check.set_handler_fn(fault_code::<T, 17>);
        idt.machine_check.set_handler_fn(machine_check::<T>);
        idt.simd_floating_point.set_handler_fn(fault::<T, 19>);
        idt.virtualization.set_handler_fn(fault::<T, 20>);
        idt.cp_protection_exception.set_handler_fn(fault_code::<T, 21>);
        idt.hv_injection_exception.set_handler_fn(fault::<T, 28>);
        idt.vmm_communication_exception.set_handler_fn(fault_code::<T, 29>);
        idt.security_exception.set_handler_fn(fault_code::<T, 30>);
        let irqs: [extern "x86-interrupt" fn(InterruptStackFrame); 16] = [
            irq::<T, 0>,
            irq::<T, 1>,
            irq::<T, 2>,
            irq::<T, 3>,
            irq::<T, 4>,
            irq::<T, 5>,
            irq::<T, 6>,
            irq::<T, 7>,
            irq::<T, 8>,
            irq::<T, 9>,
            irq::<T, 10>,
            irq::<T, 11>,
            irq::<T, 12>,
            irq::<T, 13>,
            irq::<T, 14>,
            irq::<T, 15>,
        ];
        for (line, stub) in irqs.into_iter().enumerate() {
            idt[IRQ_BASE + line as u8].set_handler_fn(stub);
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
