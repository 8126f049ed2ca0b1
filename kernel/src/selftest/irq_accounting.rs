//! Interrupt accounting: the per-IRQ timers and the INTERRUPTED microstate agree exactly.
//!
//! The boot thread idles for a while with interrupts on (every tick steals time from it),
//! takes a spurious interrupt, and then the two exact invariants are checked in TSC ticks:
//! (a) its microstate clocks sum to its age; (b) its INTERRUPTED time equals the sum of
//! handler time over all IRQ lines. It also prints the per-IRQ table.

use tally_msa::{IntrKind, MicroState, ACCOUNTING_ENABLED};

use crate::{arch, irq, time};

pub fn invariants() -> Result<(), &'static str> {
    let clock = time::clock();
    let until = arch::tsc::read() + clock.ns_to_ticks(300_000_000);
    while arch::tsc::read() < until {
        arch::cpu::wait_for_interrupt();
    }
    arch::idt::raise_irq_vector(7);
    let s = irq::accounting_snapshot().ok_or("interrupt accounting not initialised")?;

    println!("irq  {:>8} {:>12} {:>10} {:>10} {:>10}  kinds(hard soft watchdog spurious multsvc)", "count", "total us", "min ns", "max ns", "mean ns");
    for (line, l) in s.lines.iter().enumerate().filter(|(_, l)| l.timer.num_events > 0) {
        let t = &l.timer;
        println!(
            "{:>3}  {:>8} {:>12} {:>10} {:>10} {:>10}  {:?}",
            line,
            t.num_events,
            clock.ticks_to_ns(t.elapsed_time) / 1000,
            clock.ticks_to_ns(t.min_time),
            clock.ticks_to_ns(t.max_time),
            clock.ticks_to_ns(t.elapsed_time / t.num_events),
            l.intrs.counts
        );
    }
    if !ACCOUNTING_ENABLED {
        println!("irq_accounting: accounting compiled out, nothing to check");
        return Ok(());
    }
    let age = s.now - s.current_created;
    let sum: u64 = s.current.iter().sum();
    let interrupted = s.current[MicroState::Interrupted as usize];
    println!(
        "irq_accounting: boot thread age {age} ticks, sum of microstates {sum}; INTERRUPTED {interrupted}, handler time over all lines {}",
        s.total_handler_ticks
    );
    if sum != age {
        return Err("invariant (a): microstate clocks do not sum to the task's age");
    }
    if interrupted != s.total_handler_ticks {
        return Err("invariant (b): INTERRUPTED differs from the sum of handler time");
    }
    let timer = irq::TIMER_LINE as usize;
    if s.lines[timer].timer.num_events != s.counts[timer] {
        return Err("the timer line's event count differs from its interrupt count");
    }
    if s.lines[timer].intrs.get(IntrKind::Watchdog) != s.counts[timer] {
        return Err("timer interrupts are not counted as watchdog interrupts");
    }
    if s.lines[7].intrs.get(IntrKind::Spurious) != s.spurious[7] || s.spurious[7] == 0 {
        return Err("the spurious IRQ 7 is not counted as spurious by the accounting");
    }
    println!("irq_accounting: both invariants hold exactly");
    Ok(())
}
