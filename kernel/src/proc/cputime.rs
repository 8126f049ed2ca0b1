//! A process's clocks: the sum over its threads, past and present, at one instant.
//!
//! A process's microstate clocks are the totals its exited threads left (the task table's
//! dead-threads accumulator) plus every live thread's clock, all read with one TSC value, so
//! the sum is exact at that instant. Its **CPU time** — the on-CPU microstates, ONCPU_USR +
//! ONCPU_SYS + ONCPU_TRAP — is the clock the memory integrals are kept against (`vm.rs`),
//! which is why this sum lives here and not with the other readers (`crate::acct`).

use alloc::vec::Vec;
use tally_microstate::{MicroState, MsaTimes, NR_MICROSTATES};
use tally_tasktable::TaskKey;

use super::Procs;
use crate::sched::{self, slot_of, Sched};

/// The parts of a process's `MSA_SELF` at one instant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessClocks {
    /// `dead` + every entry of `live`.
    pub total: MsaTimes,
    /// The threads that have exited.
    pub dead: MsaTimes,
    /// (tid, clocks) of each live thread.
    pub live: Vec<(i32, MsaTimes)>,
}

/// The on-CPU part of `m`: ONCPU_USR + ONCPU_SYS + ONCPU_TRAP.
pub fn on_cpu(m: &MsaTimes) -> u64 {
    m[MicroState::OncpuUsr as usize]
        .wrapping_add(m[MicroState::OncpuSys as usize])
        .wrapping_add(m[MicroState::OncpuTrap as usize])
}

impl Procs {
    /// The process of `key` at TSC `now`, with its parts.
    pub fn process_clocks(&self, key: TaskKey, now: u64) -> Result<ProcessClocks, i32> {
        let dead = self.table.dead_total(key)?.msa;
        let threads = self.table.threads(key)?;
        let mut b = ProcessClocks { total: dead, dead, live: Vec::with_capacity(threads.len()) };
        sched::with(|s| {
            for &t in threads {
                let tid = self.table.get(t).map(|t| t.pid()).unwrap_or(0);
                let clocks = s.msa_snapshot(slot_of(t), now);
                for (a, b) in b.total.iter_mut().zip(clocks) {
                    *a = a.wrapping_add(b);
                }
                b.live.push((tid, clocks));
            }
        });
        Ok(b)
    }

    /// `MSA_SELF` of the process of `key` at TSC `now` written into `total` — the total of
    /// [`Procs::process_clocks`] without collecting the parts; false (`total` untouched) if
    /// `key` is stale. This is the `msa()` fast path: no allocation, one group lookup, each
    /// live thread's clocks added in place, and the total built where the caller wants it.
    #[inline]
    pub fn process_msa_into(&self, key: TaskKey, now: u64, total: &mut MsaTimes) -> bool {
        sched::with(|s| self.process_msa_in(s, key, now, total))
    }

    /// [`Procs::process_msa_into`] for a caller that holds the scheduler's lock (`s`).
    #[inline]
    pub fn process_msa_in(&self, s: &mut Sched, key: TaskKey, now: u64, total: &mut MsaTimes) -> bool {
        let Ok((dead, threads)) = self.table.process_parts(key) else { return false };
        // BEGIN LAB 1: the process total at one instant: the exited threads' clocks plus each live thread's
        // STUB: let _ = (dead, threads, s, now);
        // STUB: *total = [0; NR_MICROSTATES];
        *total = dead.msa;
        for &t in threads {
            s.msa_add_to(slot_of(t), now, total);
        }
        // END LAB 1
        true
    }

    /// The CPU time of the process of `key` (on-CPU microstates of all its threads) at `now`.
    pub fn process_cpu(&self, key: TaskKey, now: u64) -> u64 {
        sched::with(|s| self.process_cpu_in(s, key, now))
    }

    /// [`Procs::process_cpu`] for a caller that holds the scheduler's lock (`s`).
    pub fn process_cpu_in(&self, s: &mut Sched, key: TaskKey, now: u64) -> u64 {
        let mut total = [0; NR_MICROSTATES];
        self.process_msa_in(s, key, now, &mut total);
        on_cpu(&total)
    }
}

/// The current process's CPU time now (TSC ticks): the clock of its memory integrals.
pub fn current_process_cpu_ticks() -> u64 {
    super::with(|p| p.process_cpu(sched::current(), hal::tsc::read()))
}
