//! `msa()`'s readers: the clocks of a thread, a process, its reaped children.
//!
//! The numbers live in three places, and every reader combines them the same way:
//!
//! ```text
//!   a live thread        its MsaClock (the scheduler's, by slot) + its counters
//!   a process            the dead-threads total (tally-tasktable's group.dead)
//!                          + every live thread, read at ONE instant (proc/cputime.rs)
//!                          + its memory map's numbers (tally_memacct)
//!   its reaped children  tally-tasktable's children total (added to at each reap)
//! ```
//!
//! That is what `msa()` answers for `MSA_THREAD`, `MSA_SELF` and `MSA_CHILDREN`
//! ([`msa_of`]). All clocks are read with one TSC value per query, so a process total is the
//! exact sum of its threads at that instant ([`msa_breakdown`] shows the parts, for the
//! self-tests). Values stay in TSC ticks here; the system calls convert to nanoseconds.

use tally_microstate::{MsaTimes, NR_MICROSTATES};

use crate::proc::{self, ProcessClocks};
use crate::sched;

/// Whose clocks (`msa()`'s `which`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsaWhich {
    /// The calling thread.
    Thread,
    /// Every thread of the calling process, past and present.
    SelfProcess,
    /// The reaped children of the calling process.
    Children,
}

/// `msa()`: the clocks of the current thread, process or reaped children, in TSC ticks,
/// written into `out` (in place: a 13-word result is not copied on its way back).
#[inline]
pub fn msa_of(which: MsaWhich, out: &mut MsaTimes) {
    // BEGIN LAB 1: answer MSA_THREAD, MSA_SELF and MSA_CHILDREN, each read with one TSC value
    // STUB: let found = false;
    let found = match which {
        MsaWhich::Thread => {
            *out = sched::current_msa();
            true
        }
        MsaWhich::SelfProcess => proc::with(|p| p.process_msa_into(sched::current(), hal::tsc::read(), out)),
        MsaWhich::Children => proc::with(|p| p.table().children_total(sched::current()).map(|t| *out = t.msa).is_ok()),
    };
    // END LAB 1
    if !found {
        *out = [0; NR_MICROSTATES];
    }
}

/// `MSA_SELF` of process `pid` with its parts, all read at one instant (for tests).
pub fn msa_breakdown(pid: i32) -> Result<ProcessClocks, i32> {
    proc::with(|p| {
        let key = p.table().lookup(pid)?;
        p.process_clocks(key, hal::tsc::read())
    })
}
