//! Tables of where time went, printed on the console: per task (in the manner of Solaris
//! `prstat -m`, one column per microstate) and per IRQ line (count, total, min, max, mean).

use tally_microstate::{IrqLineStats, MicroState, MsaTimes, NR_MICROSTATES};

use crate::base::time;

/// The columns shown for kernel threads: the states they can be in (user-mode states come
/// with user mode), with short headings.
const COLUMNS: &[(MicroState, &str)] = &[
    (MicroState::OncpuSys, "SYS"),
    (MicroState::Interrupted, "INTR"),
    (MicroState::OnActiveQueue, "ACTQ"),
    (MicroState::OnExpiredQueue, "EXPQ"),
    (MicroState::InterruptibleSleep, "SLEEP"),
    (MicroState::UninterruptibleSleep, "DISK"),
    (MicroState::Zombie, "ZOMB"),
];

/// One row: pid, name, clocks (TSC ticks).
pub struct Row<'a> {
    pub pid: i32,
    pub name: &'a str,
    pub clocks: MsaTimes,
}

/// Print the microstate table: each state in ms and as % of the task's elapsed time.
pub fn microstates(rows: &[Row]) {
    let clock = time::clock();
    print!("{:>5} {:<12}", "PID", "COMM");
    for (_, h) in COLUMNS {
        print!(" {:>13}", alloc::format!("{h} ms(%)"));
    }
    println!(" {:>9}", "TOTAL ms");
    for r in rows {
        let total: u64 = r.clocks.iter().sum();
        print!("{:>5} {:<12}", r.pid, r.name);
        for (s, _) in COLUMNS {
            let v = r.clocks[*s as usize];
            let pct = (v * 1000).checked_div(total).unwrap_or(0);
            print!(" {:>13}", alloc::format!("{}({}.{})", clock.ticks_to_ns(v) / 1_000_000, pct / 10, pct % 10));
        }
        println!(" {:>9}", clock.ticks_to_ns(total) / 1_000_000);
        let shown: u64 = COLUMNS.iter().map(|(s, _)| r.clocks[*s as usize]).sum();
        debug_assert!(NR_MICROSTATES >= COLUMNS.len());
        if shown != total {
            println!("      (other states: {} us)", clock.ticks_to_ns(total - shown) / 1000);
        }
    }
}

/// Print the per-IRQ table for the lines that fired.
pub fn irq_lines(lines: &[IrqLineStats]) {
    let clock = time::clock();
    println!(
        "{:>3}  {:>8} {:>12} {:>10} {:>10} {:>10}  kinds(hard soft watchdog spurious multiple_service)",
        "irq", "count", "total us", "min ns", "max ns", "mean ns"
    );
    for (line, l) in lines.iter().enumerate().filter(|(_, l)| l.timer.num_events > 0) {
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
}
