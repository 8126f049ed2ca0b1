//! System-wide accounting at one instant: every task's clocks, the released ones, and the
//! interrupt lines' handler times — what invariant (b) and the kstats compare.

use alloc::vec::Vec;
use tally_microstate::{IrqLineStats, MsaTimes};
use tally_tasktable::TaskKey;

use crate::proc;
use crate::sched::{self, slot_of};

/// Every task's clocks (live and released) and the handler time of every IRQ line, read at
/// one TSC value.
pub struct SystemSnapshot {
    /// (pid, comm, clocks, age in ticks) of each live task.
    pub tasks: Vec<(i32, [u8; 16], MsaTimes, u64)>,
    pub released: MsaTimes,
    pub total_handler_ticks: u64,
    pub irq_lines: [IrqLineStats; hal::pic::NR_LINES],
}

pub fn snapshot() -> SystemSnapshot {
    proc::with(|p| {
        let table = p.table();
        let keys: Vec<TaskKey> = table.iter().map(|(key, _)| key).collect();
        let now = hal::tsc::read();
        let mut tasks = Vec::with_capacity(keys.len());
        sched::with(|s| {
            for key in keys {
                let Ok(t) = table.get(key) else { continue };
                let slot = slot_of(key);
                let clocks = s.msa_snapshot(slot, now);
                let created = s.created(slot);
                tasks.push((t.pid(), *t.comm(), clocks, now - created));
            }
        });
        let (released, total_handler_ticks, irq_lines) = sched::interrupt_totals(now);
        SystemSnapshot { tasks, released, total_handler_ticks, irq_lines }
    })
}
