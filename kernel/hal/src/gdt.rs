//! The GDT and the TSS.
//!
//! In long mode segmentation is almost gone, but the CPU still needs a GDT for the code and
//! stack selectors of each privilege level, and a TSS for two stack pointers it loads by
//! itself: `rsp0` (the kernel stack to switch to on an interrupt from user mode, used once
//! user mode exists) and the Interrupt Stack Table. IST entry 0 is a separate stack for the
//! double-fault handler: when a kernel stack overflows into its guard page, the page-fault
//! handler cannot push its frame, the CPU raises a double fault, and that handler must run
//! on a stack that is known good — otherwise the third fault resets the machine.
//!
//! The selector order (kernel code, kernel data, user data, user code) is the one
//! `syscall`/`sysret` require.

use spin::Once;
use x86_64::instructions::segmentation::{Segment, CS, DS, ES, SS};
use x86_64::instructions::tables::load_tss;
use x86_64::structures::gdt::{Descriptor, GlobalDescriptorTable, SegmentSelector};
use x86_64::structures::tss::TaskStateSegment;
use x86_64::VirtAddr;

/// Selectors of the ring-3 segments (GDT index 3 and 4, RPL 3): what `iretq` and `sysretq`
/// load into SS and CS on the way to user mode. `init` checks the GDT agrees.
pub const USER_DATA_SELECTOR: u16 = (3 << 3) | 3;
pub const USER_CODE_SELECTOR: u16 = (4 << 3) | 3;
/// Selectors of the ring-0 segments (GDT index 1 and 2).
pub const KERNEL_CODE_SELECTOR: u16 = 1 << 3;
pub const KERNEL_DATA_SELECTOR: u16 = 2 << 3;

/// IST slot (0-based, as the `x86_64` crate counts) of the double-fault stack.
pub const DOUBLE_FAULT_IST_INDEX: u16 = 0;
const IST_STACK_SIZE: usize = 32 * 1024;

#[repr(C, align(16))]
struct Stack([u8; IST_STACK_SIZE]);

static mut DOUBLE_FAULT_STACK: Stack = Stack([0; IST_STACK_SIZE]);
static mut TSS: TaskStateSegment = TaskStateSegment::new();

#[derive(Debug, Clone, Copy)]
struct Selectors {
    kernel_code: SegmentSelector,
    kernel_data: SegmentSelector,
    tss: SegmentSelector,
}

static GDT: Once<(GlobalDescriptorTable, Selectors)> = Once::new();

/// Build and load the GDT and TSS. Called once, first thing after the serial port.
pub fn init() {
    // SAFETY: runs once on the boot CPU before interrupts are enabled; nothing else holds a
    // reference to TSS or the stack yet. The stack is static, so its address stays valid.
    let tss: &'static TaskStateSegment = unsafe {
        let stack_top = VirtAddr::from_ptr(&raw const DOUBLE_FAULT_STACK) + IST_STACK_SIZE as u64;
        let tss = &raw mut TSS;
        (*tss).interrupt_stack_table[DOUBLE_FAULT_IST_INDEX as usize] = stack_top;
        &*tss
    };
    let (gdt, sel) = GDT.call_once(|| {
        let mut gdt = GlobalDescriptorTable::new();
        let kernel_code = gdt.append(Descriptor::kernel_code_segment());
        let kernel_data = gdt.append(Descriptor::kernel_data_segment());
        // Ring-3 segments, in the order `sysret` derives them from STAR (data, then code).
        let user_data = gdt.append(Descriptor::user_data_segment());
        let user_code = gdt.append(Descriptor::user_code_segment());
        assert!(
            kernel_code.0 == KERNEL_CODE_SELECTOR
                && kernel_data.0 == KERNEL_DATA_SELECTOR
                && user_data.0 == USER_DATA_SELECTOR
                && user_code.0 == USER_CODE_SELECTOR,
            "GDT layout differs from the selector constants"
        );
        let tss = gdt.append(Descriptor::tss_segment(tss));
        (gdt, Selectors { kernel_code, kernel_data, tss })
    });
    gdt.load();
    // SAFETY: the selectors index descriptors of the GDT just loaded, which lives forever.
    unsafe {
        CS::set_reg(sel.kernel_code);
        SS::set_reg(sel.kernel_data);
        DS::set_reg(sel.kernel_data);
        ES::set_reg(sel.kernel_data);
        load_tss(sel.tss);
    }
}

/// Set the TSS's `rsp0`: the stack the CPU switches to when an interrupt or exception
/// arrives in ring 3. `context::switch` sets it to the incoming thread's kernel stack top.
pub fn set_rsp0(top: u64) {
    // SAFETY: called with interrupts disabled (by `switch`) on the only CPU, so nothing else
    // reads or writes the TSS meanwhile; the CPU itself reads `rsp0` only on a ring change,
    // which cannot happen until we return to user mode.
    unsafe {
        let tss = &raw mut TSS;
        (*tss).privilege_stack_table[0] = VirtAddr::new_truncate(top);
    }
}

/// The bounds of the double-fault stack, so a fault report can say which stack it is on.
pub fn double_fault_stack() -> (u64, u64) {
    let bottom = (&raw const DOUBLE_FAULT_STACK) as u64;
    (bottom, bottom + IST_STACK_SIZE as u64)
}
