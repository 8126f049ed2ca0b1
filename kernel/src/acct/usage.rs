//! What a process used, as `getrusage` and `wait4` report it: its totals so far, and what
//! its reaped children left.

use alloc::vec::Vec;
use tally_tasktable::TaskKey;

use crate::proc::{self, Totals};
use crate::sched::{self, slot_of};

/// What the reaped children of process `pid` (or, with `None`, of the current process)
/// left: the `MSA_CHILDREN`/`RUSAGE_CHILDREN` total.
pub fn children_totals(pid: Option<i32>) -> Result<Totals, i32> {
    proc::with(|p| {
        let key = match pid {
            Some(pid) => p.table().lookup(pid)?,
            None => sched::current(),
        };
        p.table().children_total(key).cloned()
    })
}

/// Process `pid`'s totals so far ("past and present": exited threads, live threads'
/// clocks and counters now, its memory numbers now), like `getrusage(RUSAGE_SELF)`.
pub fn process_usage(pid: i32) -> Result<Totals, i32> {
    let (mut totals, vm, cpu) = proc::with(|p| {
        let now = hal::tsc::read();
        let key = p.table().lookup(pid)?;
        let clocks = p.process_clocks(key, now)?;
        let mut t = p.table().dead_total(key)?.clone();
        t.msa = clocks.total;
        let threads: Vec<TaskKey> = p.table().threads(key)?.to_vec();
        let mut vm = None;
        sched::with(|s| {
            for &th in &threads {
                t.counters.add(&s.counters(slot_of(th)));
            }
        });
        for th in threads {
            if vm.is_none() {
                vm = p.table().get(th).ok().and_then(|task| task.payload().vm().cloned());
            }
        }
        Ok::<_, i32>((t, vm, proc::on_cpu(&clocks.total)))
    })?;
    if let Some(vm) = vm {
        // Exited threads left no memory numbers (only the last thread does): the map has
        // them all.
        totals.mem = vm.usage(cpu);
    }
    Ok(totals)
}
