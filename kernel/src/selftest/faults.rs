//! Self-tests of the fault paths: each must be reported, never hang or reboot.

pub fn panic() -> Result<(), &'static str> {
    panic!("deliberate panic from the panic self-test");
}

pub fn breakpoint() -> Result<(), &'static str> {
    let before = crate::trap::breakpoints();
    hal::cpu::breakpoint();
    println!("breakpoint: execution resumed after int3");
    if crate::trap::breakpoints() != before + 1 {
        return Err("the breakpoint handler did not run exactly once");
    }
    Ok(())
}

/// An address no one maps: the report must show it in CR2.
pub const UNMAPPED: u64 = 0xdead_b000;

pub fn page_fault() -> Result<(), &'static str> {
    println!("page_fault: reading {UNMAPPED:#x}");
    let v = hal::testing::read_byte(UNMAPPED);
    println!("page_fault: read {v} — the fault was not raised");
    Err("no page fault")
}

/// Recurse with a 1 KiB frame until the boot stack runs into its guard page.
pub fn stack_overflow() -> Result<(), &'static str> {
    #[allow(unconditional_recursion)]
    fn recurse(depth: u64) -> u64 {
        let frame = [depth as u8; 1024];
        let below = recurse(core::hint::black_box(depth + 1));
        core::hint::black_box(&frame)[depth as usize % 1024] as u64 + below
    }
    println!("stack_overflow: recursing");
    let v = recurse(0);
    println!("stack_overflow: returned {v}");
    Err("the recursion ended without overflowing")
}

/// Raise IRQ 7's and IRQ 15's vectors in software: the PIC has no in-service bit for them,
/// so the dispatcher must classify both as spurious, count them, and not deliver them.
pub fn spurious() -> Result<(), &'static str> {
    let (s7, s15, c7, c15) =
        (crate::irq::spurious(7), crate::irq::spurious(15), crate::irq::count(7), crate::irq::count(15));
    hal::idt::raise_irq_vector(7);
    hal::idt::raise_irq_vector(15);
    println!(
        "spurious: irq7 spurious {} -> {}, irq15 spurious {} -> {}",
        s7,
        crate::irq::spurious(7),
        s15,
        crate::irq::spurious(15)
    );
    if crate::irq::spurious(7) != s7 + 1 || crate::irq::spurious(15) != s15 + 1 {
        return Err("spurious interrupts were not counted");
    }
    if crate::irq::count(7) != c7 || crate::irq::count(15) != c15 {
        return Err("a spurious interrupt was delivered as a real one");
    }
    Ok(())
}
