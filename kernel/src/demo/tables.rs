//! Tables of where time went, printed on the console: per task (in the manner of Solaris
//! `prstat -m`, one column per microstate) and per IRQ line (count, total, min, max, mean).

use tally_microstate::{IrqLineStats, MicroState, MsaTimes, NR_MICROSTATES};
use tally_uapi::kstat::{KSTAT_INTR_NAMES, KSTAT_NUM_INTRS};

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

/// Print the per-IRQ table for the lines that fired. KINDS names each kind that counted
/// (illumos `kstat_intr_t`'s names: `hard 304`, `spurious 1`, …); kinds at zero are left out.
pub fn irq_lines(lines: &[IrqLineStats]) {
    let clock = time::clock();
    println!(
        "{:>3} {:<6} {:>8} {:>12} {:>10} {:>10} {:>10}  {}",
        "irq", "name", "count", "total us", "min ns", "max ns", "mean ns", "kinds"
    );
    for (line, l) in lines.iter().enumerate().filter(|(_, l)| l.timer.num_events > 0) {
        let t = &l.timer;
        println!(
            "{:>3} {:<6} {:>8} {:>12} {:>10} {:>10} {:>10}  {}",
            line,
            crate::stats::irq_line_name(line),
            t.num_events,
            clock.ticks_to_ns(t.elapsed_time) / 1000,
            clock.ticks_to_ns(t.min_time),
            clock.ticks_to_ns(t.max_time),
            clock.ticks_to_ns(t.elapsed_time / t.num_events),
            Kinds(&l.intrs.counts)
        );
    }
}

/// Interrupt counts by kind, as `hard 304, spurious 1`: the non-zero ones, named.
struct Kinds<'a>(&'a [u64; KSTAT_NUM_INTRS]);

impl core::fmt::Display for Kinds<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut sep = "";
        for (name, n) in KSTAT_INTR_NAMES.iter().zip(self.0).filter(|(_, &n)| n > 0) {
            write!(f, "{sep}{name} {n}")?;
            sep = ", ";
        }
        if sep.is_empty() {
            f.write_str("-")?;
        }
        Ok(())
    }
}
