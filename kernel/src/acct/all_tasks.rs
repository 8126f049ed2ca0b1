//! Every task at one instant, as `proc_stat` (`prstat`) and the self-tests read them.

use alloc::sync::Arc;
use alloc::vec::Vec;
use tally_microstate::MsaTimes;
use tally_taskstats::Counters;
use tally_tasktable::{ExitState, TaskKey};

use crate::proc::{self, vm::Vm};
use crate::sched::{self, slot_of};

/// One task as `proc_stat` (prstat) reports it: identity, scheduling, clocks, counters.
#[derive(Clone)]
pub struct TaskStat {
    pub pid: i32,
    pub tgid: i32,
    pub ppid: i32,
    pub uid: u32,
    pub comm: [u8; 16],
    /// Exited, not yet reaped.
    pub zombie: bool,
    pub nice: i32,
    /// Linux's policy number (SCHED_NORMAL 0, FIFO 1, RR 2, BATCH 3).
    pub policy: u32,
    pub rt_priority: u32,
    /// Microstate clocks, TSC ticks.
    pub msa: MsaTimes,
    pub counters: Counters,
    /// TSC when the task was created.
    pub created: u64,
    /// Its process's memory map (none for a kernel thread), read after the locks are
    /// released, as the taskstats readers do.
    pub vm: Option<Arc<Vm>>,
}

/// Every task in the table (idle, kernel threads, user threads, zombies), all read at one
/// TSC value, which is returned with them.
pub fn task_stats() -> (Vec<TaskStat>, u64) {
    proc::with(|p| {
        let table = p.table();
        let keys: Vec<TaskKey> = table.iter().map(|(key, _)| key).collect();
        sched::with(|s| {
            let now = hal::tsc::read();
            let mut out = Vec::with_capacity(keys.len());
            for key in keys {
                let slot = slot_of(key);
                let msa = s.msa_snapshot(slot, now);
                let (nice, policy, rt_priority) = {
                    let se = s.entity(slot);
                    (se.nice(), se.policy() as u32, se.rt_priority())
                };
                let created = s.created(slot);
                let counters = s.counters(slot);
                let ppid = table.ppid(key).unwrap_or(0);
                let Ok(t) = table.get(key) else { continue };
                out.push(TaskStat {
                    pid: t.pid(),
                    tgid: t.tgid(),
                    ppid,
                    uid: t.uid(),
                    comm: *t.comm(),
                    zombie: t.exit_state() == ExitState::Zombie,
                    nice,
                    policy,
                    rt_priority,
                    msa,
                    counters,
                    created,
                    vm: t.payload().vm().cloned(),
                });
            }
            (out, now)
        })
    })
}
