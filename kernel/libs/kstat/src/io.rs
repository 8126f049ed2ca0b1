//! # I/O kstats (`KSTAT_TYPE_IO`): a wait queue and a run queue
//!
//! Most servers of requests — a disk driver, an NFS client, a CPU — hold work in two
//! lists: accepted but not started (the *wait* queue, "pre-service") and being served (the
//! *run* queue, "service"). An I/O kstat is two [`QueueIntegrator`]s, one per list, plus
//! byte and operation counters, published as one `kstat_io_t` ([`KstatIo`]).
//!
//! A provider reports each transition with Solaris' six functions:
//!
//! ```text
//!              waitq_enter          waitq_to_runq          runq_exit
//!   arrives  -------------> [wait] --------------> [run] -----------> done
//!                             |  ^                   |
//!                  waitq_exit |  +-------------------+ runq_back_to_waitq
//!                  (cancelled)      (preempted / requeued)
//!
//!   runq_enter: straight into service, skipping the wait queue.
//! ```
//!
//! Each function brings the affected queue's sums up to `now` before changing its length,
//! exactly as the C versions do; the two moves (`waitq_to_runq`, `runq_back_to_waitq`)
//! update both queues at the same instant. A move whose source queue is empty is refused
//! as a whole and counted in that queue's `underflows` (the C code only `ASSERT`s).
//!
//! ## A scheduler's run queue as an I/O kstat
//!
//! Map "waiting for service" to "runnable, waiting for the CPU" and "in service" to
//! "on the CPU":
//!
//! | scheduler event          | call                 |
//! |--------------------------|----------------------|
//! | thread made runnable     | `waitq_enter`        |
//! | thread dispatched        | `waitq_to_runq`      |
//! | thread preempted         | `runq_back_to_waitq` |
//! | thread blocks or exits   | `runq_exit`          |
//!
//! Then, between two snapshots: `Δwlentime / Δsnaptime` is the average run-queue length
//! (the load average without the decay), `Δwtime / Δsnaptime` the fraction of time anyone
//! was waiting, `Δrtime / Δsnaptime` the CPU's utilisation, and `Δwlentime / dispatches`
//! the mean dispatch latency.
//!
//! ```
//! use tally_kstat::KstatRegistry;
//! use tally_uapi::kstat::KSTAT_TYPE_IO;
//!
//! let mut reg = KstatRegistry::new(0);
//! let kid = reg.create("sched", 0, "runq", "sched", KSTAT_TYPE_IO, 1, 0).unwrap();
//! reg.install(kid).unwrap();
//! let rq = reg.io_mut(kid).unwrap();
//! rq.waitq_enter(100).unwrap();          // A runnable
//! rq.waitq_enter(100).unwrap();          // B runnable
//! rq.waitq_to_runq(150).unwrap();        // A runs; B waits
//! rq.runq_back_to_waitq(250).unwrap();   // A preempted
//! rq.waitq_to_runq(250).unwrap();        // B runs
//! rq.runq_exit(300).unwrap();            // B blocks; A still waiting
//! let io = reg.snapshot(kid, 400).unwrap().data.as_io().unwrap();
//! assert_eq!(io.wlentime, 2 * 50 + 1 * 250); // 2 waiting 100..150, then 1 until 400
//! assert_eq!(io.rtime, 150);                   // the CPU was busy 150..300
//! assert_eq!((io.wcnt, io.rcnt), (1, 0));
//! ```

use crate::queue::QueueIntegrator;
use crate::KstatError;
use tally_uapi::kstat::{Hrtime, KstatIo};

/// The data of an I/O kstat. See the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoStats {
    nread: u64,
    nwritten: u64,
    reads: u32,
    writes: u32,
    waitq: QueueIntegrator,
    runq: QueueIntegrator,
}

impl IoStats {
    pub const fn new() -> Self {
        IoStats {
            nread: 0,
            nwritten: 0,
            reads: 0,
            writes: 0,
            waitq: QueueIntegrator::new(),
            runq: QueueIntegrator::new(),
        }
    }

    /// The wait (pre-service) queue.
    pub fn waitq(&self) -> &QueueIntegrator {
        &self.waitq
    }
    /// The run (service) queue.
    pub fn runq(&self) -> &QueueIntegrator {
        &self.runq
    }

    /// `kstat_waitq_enter`: a request was queued.
    pub fn waitq_enter(&mut self, now: Hrtime) -> Result<(), KstatError> {
        self.waitq.enter(now)
    }
    /// `kstat_waitq_exit`: a request left the wait queue without being served.
    pub fn waitq_exit(&mut self, now: Hrtime) -> Result<(), KstatError> {
        self.waitq.exit(now)
    }
    /// `kstat_runq_enter`: a request went straight into service.
    pub fn runq_enter(&mut self, now: Hrtime) -> Result<(), KstatError> {
        self.runq.enter(now)
    }
    /// `kstat_runq_exit`: a request finished service.
    pub fn runq_exit(&mut self, now: Hrtime) -> Result<(), KstatError> {
        self.runq.exit(now)
    }
    /// `kstat_waitq_to_runq`: a waiting request started service. Refused whole (neither
    /// queue changes) if the wait queue is empty or the run queue full.
    pub fn waitq_to_runq(&mut self, now: Hrtime) -> Result<(), KstatError> {
        // BEGIN LAB 5: check both queues first (all or nothing), then move one request at the same now
        // STUB: let _ = now;
        // STUB: Ok(())
        self.waitq.check_exit()?;
        self.runq.check_enter()?;
        self.waitq.exit(now)?;
        self.runq.enter(now)
        // END LAB 5
    }
    /// `kstat_runq_back_to_waitq`: a request in service was put back to wait. Refused
    /// whole if the run queue is empty or the wait queue full.
    pub fn runq_back_to_waitq(&mut self, now: Hrtime) -> Result<(), KstatError> {
        // BEGIN LAB 5: the reverse move, also all or nothing
        // STUB: let _ = now;
        // STUB: Ok(())
        self.runq.check_exit()?;
        self.waitq.check_enter()?;
        self.runq.exit(now)?;
        self.waitq.enter(now)
        // END LAB 5
    }

    /// A read of `bytes` completed: `reads += 1`, `nread += bytes` (both wrap).
    pub fn record_read(&mut self, bytes: u64) {
        self.reads = self.reads.wrapping_add(1);
        self.nread = self.nread.wrapping_add(bytes);
    }
    /// A write of `bytes` completed: `writes += 1`, `nwritten += bytes` (both wrap).
    pub fn record_write(&mut self, bytes: u64) {
        self.writes = self.writes.wrapping_add(1);
        self.nwritten = self.nwritten.wrapping_add(bytes);
    }

    /// Both queue lengths became known values at `now`: for a provider that knows its
    /// lengths (a scheduler's run queue) rather than each arrival and departure.
    pub fn set_queue_lengths(&mut self, now: Hrtime, waiting: u32, running: u32) {
        self.waitq.set_cnt(now, waiting);
        self.runq.set_cnt(now, running);
    }

    /// The same statistics with every time converted by `f` (see
    /// [`QueueIntegrator::rescaled`]).
    pub fn rescaled(&self, f: impl Fn(Hrtime) -> Hrtime) -> Self {
        IoStats { waitq: self.waitq.rescaled(&f), runq: self.runq.rescaled(&f), ..*self }
    }

    /// The record exactly as stored: sums only up to each queue's `lastupdate`.
    pub fn kstat_io(&self) -> KstatIo {
        Self::record(self, &self.waitq, &self.runq)
    }

    /// The record a reader gets at `now`: both queues settled to `now`
    /// ([`QueueIntegrator::settled`]), as Solaris' default snapshot does.
    pub fn snapshot(&self, now: Hrtime) -> KstatIo {
        Self::record(self, &self.waitq.settled(now), &self.runq.settled(now))
    }

    fn record(&self, w: &QueueIntegrator, r: &QueueIntegrator) -> KstatIo {
        KstatIo {
            nread: self.nread,
            nwritten: self.nwritten,
            reads: self.reads,
            writes: self.writes,
            wtime: w.time(),
            wlentime: w.lentime(),
            wlastupdate: w.lastupdate(),
            rtime: r.time(),
            rlentime: r.lentime(),
            rlastupdate: r.lastupdate(),
            wcnt: w.cnt(),
            rcnt: r.cnt(),
        }
    }
}

#[cfg(test)]
#[path = "io_tests.rs"]
mod tests;
