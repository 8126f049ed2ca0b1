//! Interrupt accounting: the per-IRQ timers and the INTERRUPTED microstate agree exactly.
//!
//! Init halts between ticks for 300 ms (every tick steals time from whoever is on the CPU:
//! init, or the idle task), takes a spurious interrupt, and then the two exact invariants are
//! checked over all tasks, in TSC ticks: (a) each task's microstate clocks sum to its age;
//! (b) the INTERRUPTED time of all tasks (live and released) equals the sum of handler time
//! over all IRQ lines. It also prints the per-IRQ table.

use tally_microstate::{IntrKind, MicroState, ACCOUNTING_ENABLED};

use crate::acct;
use crate::base::time;
use crate::irq;

pub fn invariants() -> Result<(), &'static str> {
    let clock = time::clock();
    let until = hal::tsc::read() + clock.ns_to_ticks(300_000_000);
    while hal::tsc::read() < until {
        hal::cpu::wait_for_interrupt();
    }
    hal::idt::raise_irq_vector(7);
    // Both at the same instant: no tick may land between them.
    let (s, (counts, spurious)) = hal::cpu::without_interrupts(|| (acct::snapshot(), irq::counters()));

    crate::demo::tables::irq_lines(&s.irq_lines);
    if !ACCOUNTING_ENABLED {
        println!("irq_accounting: accounting compiled out, nothing to check");
        return Ok(());
    }
    let mut interrupted = s.released[MicroState::Interrupted as usize];
    for (pid, _, clocks, age) in &s.tasks {
        let sum: u64 = clocks.iter().sum();
        println!(
            "irq_accounting: pid {pid}: age {age} ticks, sum of microstates {sum}, INTERRUPTED {}",
            clocks[MicroState::Interrupted as usize]
        );
        if sum != *age {
            return Err("invariant (a): a task's microstate clocks do not sum to its age");
        }
        interrupted += clocks[MicroState::Interrupted as usize];
    }
    println!(
        "irq_accounting: INTERRUPTED over all tasks {interrupted}, handler time over all lines {}",
        s.total_handler_ticks
    );
    if interrupted != s.total_handler_ticks {
        return Err("invariant (b): INTERRUPTED differs from the sum of handler time");
    }
    let timer = hal::pit::IRQ_LINE as usize;
    if counts[timer] != s.irq_lines[timer].timer.num_events {
        return Err("the timer line's event count differs from its interrupt count");
    }
    if s.irq_lines[timer].intrs.get(IntrKind::Hard) != s.irq_lines[timer].timer.num_events {
        return Err("timer interrupts are not counted as hard interrupts (Solaris' clock is KSTAT_INTR_HARD)");
    }
    if s.irq_lines[7].intrs.get(IntrKind::Spurious) != spurious[7] || spurious[7] == 0 {
        return Err("the spurious IRQ 7 is not counted as spurious by the accounting");
    }
    println!("irq_accounting: both invariants hold exactly");
    Ok(())
}
