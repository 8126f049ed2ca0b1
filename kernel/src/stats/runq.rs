//! # The run queue as an I/O kstat: `unix:0:runq`, class `sched`
//!
//! A CPU is a server of requests like a disk is, so its run queue is published with the
//! disk's statistics (`kstat_io_t`, see `tally_kstat::io`):
//!
//! | `kstat_io_t` queue       | here                                        |
//! |--------------------------|---------------------------------------------|
//! | wait queue (`wcnt`)      | runnable tasks waiting for the CPU          |
//! | run queue (`rcnt`, 0/1)  | a task (not the idle task) on the CPU       |
//!
//! so that `wlentime` is the run-queue length integrated over time (Δwlentime/Δsnaptime is
//! the average number of tasks waiting, the load average without its decay), `wtime` the
//! time anyone was waiting, and `rtime` the time the CPU was busy (Δrtime/Δsnaptime is its
//! utilisation).
//!
//! The scheduler integrates both lengths itself, in TSC ticks, at every run-queue change
//! (`runq_changed` in `sched/state.rs`: a few additions on the context-switch path, under
//! the lock it already holds). A read of `unix:0:runq` copies them into the registry converted to
//! nanoseconds (Solaris' `ks_update`), and the registry's snapshot folds in the time since
//! the last change.
//!
//! ```text
//!   scheduler: wake-up, dispatch, block, exit ─> Sched::runq_changed: set_queue_lengths(ticks)
//!   reader: stats::read(runq kid) ─> refresh(): registry's IoStats = sched::runq_io() in ns
//!                                  ─> registry read at the read's time: open interval folded
//! ```

use tally_kstat::{KstatError, KstatRegistry};
use tally_uapi::kstat::{Hrtime, KidT, KSTAT_TYPE_IO};

pub(super) fn create(reg: &mut KstatRegistry, now: Hrtime) -> Result<KidT, KstatError> {
    let kid = reg.create("unix", 0, "runq", "sched", KSTAT_TYPE_IO, 1, now)?;
    reg.install(kid)?;
    Ok(kid)
}

/// `ks_update`: the registry's copy becomes the current integrals.
pub(super) fn refresh(reg: &mut KstatRegistry, kid: KidT) -> Result<(), KstatError> {
    // BEGIN LAB 5: ks_update: the registry's io kstat becomes the scheduler's integrals, in ns
    // STUB: let _ = (reg, kid);
    // STUB: Ok(())
    *reg.io_mut(kid)? = crate::sched::runq_io();
    Ok(())
    // END LAB 5
}
