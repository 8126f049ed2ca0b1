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
//! The scheduler glue reports every change of the two lengths with
//! [`runq_changed`]`(now_ns, queued, running)` — from task context and from the tick, that
//! is from interrupt context too — so the integrals are kept here, under a lock of their
//! own taken with interrupts disabled, and not in the registry (whose lock interrupt
//! handlers never take). A read of `unix:0:runq` copies them into the registry; the
//! registry's snapshot folds in the time since the last change.
//!
//! ```text
//!   scheduler: wake-up, dispatch, block, exit ─> runq_changed(now, queued, running)
//!                                                   └─ RUNQ: waitq/runq enter/exit at `now`
//!   reader: kstats::read(runq kid) ─> refresh(): registry's IoStats = copy of RUNQ
//!                                  ─> registry read at the read's time: open interval folded
//! ```

use spin::Mutex;
use tally_kstat::{IoStats, KstatError, KstatRegistry};
use tally_uapi::kstat::{Hrtime, KidT, KSTAT_TYPE_IO};

use crate::arch::cpu::without_interrupts;

/// Longest queue believed: a larger length is clamped (and counted) rather than walked to
/// one entry at a time.
const MAX_LEN: u32 = 1 << 16;

struct RunqState {
    io: IoStats,
    /// Calls to [`runq_changed`].
    calls: u64,
    /// Calls whose lengths were clamped to [`MAX_LEN`].
    clamped: u64,
}

static RUNQ: Mutex<RunqState> = Mutex::new(RunqState { io: IoStats::new(), calls: 0, clamped: 0 });

/// The run queue changed at `now_ns` (nanoseconds since boot, `time::monotonic_ns`):
/// `queued` runnable tasks wait for the CPU and `running` (0 or 1) non-idle tasks are on it.
/// Call after every change; callable with interrupts disabled, from interrupt handlers, and
/// with the task lock held (this takes only its own lock). A time earlier than the last one
/// adds no time (the queue counts it as a clock regression).
pub fn runq_changed(now_ns: u64, queued: u32, running: u32) {
    let now = super::hrtime(now_ns);
    without_interrupts(|| {
        let mut s = RUNQ.lock();
        s.calls = s.calls.wrapping_add(1);
        let (q, r) = (queued.min(MAX_LEN), running.min(MAX_LEN));
        if (q, r) != (queued, running) {
            s.clamped = s.clamped.wrapping_add(1);
        }
        set_len(&mut s.io, now, q, true);
        set_len(&mut s.io, now, r, false);
    });
}

/// Bring the wait (or run) queue to length `len` at `now` with the crate's enter/exit
/// calls: the first one integrates the old length up to `now`, the others add no time.
fn set_len(io: &mut IoStats, now: Hrtime, len: u32, wait: bool) {
    loop {
        let cnt = if wait { io.waitq().cnt() } else { io.runq().cnt() };
        let step = match (cnt.cmp(&len), wait) {
            (core::cmp::Ordering::Equal, _) => return,
            (core::cmp::Ordering::Less, true) => io.waitq_enter(now),
            (core::cmp::Ordering::Greater, true) => io.waitq_exit(now),
            (core::cmp::Ordering::Less, false) => io.runq_enter(now),
            (core::cmp::Ordering::Greater, false) => io.runq_exit(now),
        };
        if step.is_err() {
            return;
        }
    }
}

/// How many times the scheduler has reported a change (0: not wired yet).
pub fn calls() -> u64 {
    without_interrupts(|| RUNQ.lock().calls)
}

pub(super) fn create(reg: &mut KstatRegistry, now: Hrtime) -> Result<KidT, KstatError> {
    let kid = reg.create("unix", 0, "runq", "sched", KSTAT_TYPE_IO, 1, now)?;
    reg.install(kid)?;
    Ok(kid)
}

/// `ks_update`: the registry's copy becomes the current integrals.
pub(super) fn refresh(reg: &mut KstatRegistry, kid: KidT) -> Result<(), KstatError> {
    let io = without_interrupts(|| RUNQ.lock().io);
    *reg.io_mut(kid)? = io;
    Ok(())
}
