//! # sched — the glue between the O(1) scheduler and the machine
//!
//! Who runs. This layer holds the kernel's one run queue (`tally_runqueue::RunQueue`, the
//! Linux 2.6 O(1) scheduler, which also drives every task's microstate clock,
//! `tally_microstate`) and each task's hot per-task state, behind one lock taken with
//! interrupts disabled (`state.rs`). Above it, `sync` builds wait queues on
//! [`block_current`]/[`wake`]; `proc` admits and releases tasks; the `irq`, `trap` and
//! `syscall` entry paths report interrupts, ticks and the running microstate. Nothing here
//! knows what a process, a file or a bus is. The design is in `docs/scheduler.md`.
//!
//! | file | what |
//! |---|---|
//! | `state.rs` | [`Sched`]: the run queue, the per-task `Hot` state by slot, the lock, who is current |
//! | `switch.rs` | `schedule()`'s pick, the machine switch, `after_switch`, a new thread's first code, idle |
//! | `sleep.rs` | blocking and waking, timed sleeps |
//! | `interrupts.rs` | INTERRUPTED accounting at IRQ entry and exit, the tick, the handover switch |
//! | `running.rs` | ONCPU_USR/SYS/TRAP, the kill flag checked on the way back to user mode |
//! | `stop.rs` | job control: a task stopped (STOPPED) and continued, in its sleep or on its way to user mode |
//! | `tasks.rs` | admitting a task, its parameters, its last switch at exit, its release |
//! | `counters.rs` | the running task's event counters |
//!
//! No scheduling operation walks all tasks (only the readers in `acct` do).

mod counters;
mod interrupts;
mod running;
mod sleep;
mod state;
mod stop;
mod switch;
mod tasks;

pub use counters::{
    account_blocks, account_read, account_write, merge_io_calls, note_major_fault, note_minor_fault,
    with_current as with_current_counters,
};
pub use interrupts::{irq_enter, irq_outcome, irq_return, set_line_kind, tick};
pub use running::{
    current_msa, enter_user_mode, interrupted, kill, kill_pending, killed, msa_now, set_running_state,
    set_signal_pending, signal_pending, syscall_entered, user_return_work, UserReturn,
};
pub use sleep::{block_current, block_current_unless_killed, sleep_ns, sleep_until, wake};
pub use state::{current, current_ids, slot_of, TaskIds, ThreadStart};
pub(crate) use state::{with, Sched};
pub use stop::{continue_thread, is_stopped, stop_current, stop_pending, stop_thread};
pub use switch::{idle_loop, preempt_if_needed, yield_now};
pub use tasks::{
    admit, clock_page_reading, exec_user_space, exit_current, exit_invariant_counts, fs_base, inherited_params, init,
    map_vvar_header, new_thread, release, set_fs_base, set_nice, set_scheduler, NewThread, SchedParams,
};

use tally_kstat::IoStats;
use tally_microstate::{IrqLineStats, MsaTimes};

/// Context switches since boot.
pub fn nr_switches() -> u64 {
    with(|s| s.rq.nr_switches())
}

/// The run queue's io-kstat integrals, times in ns since boot (settled by the reader).
pub fn runq_io() -> IoStats {
    let (io, clock) = with(|s| (s.runq_io, crate::base::time::clock()));
    io.rescaled(|ticks| clock.ticks_to_ns(ticks.max(0) as u64) as i64)
}

/// Invariant (b) at one instant `now`: INTERRUPTED summed over the `live` tasks and every
/// released one, and the handler time of every IRQ line — equal to the TSC tick when the
/// accounting is right ([microstate-accounting.md](../../../docs/microstate-accounting.md)).
pub fn interrupt_invariant(live: &[tally_runqueue::TaskSlot], now: u64) -> (u64, u64) {
    let i = tally_microstate::MicroState::Interrupted.index();
    with(|s| {
        let mut sum = s.released_msa[i];
        for &slot in live {
            sum = sum.wrapping_add(s.msa_snapshot(slot, now)[i]);
        }
        (sum, s.rq.irq().total_handler_ticks(now))
    })
}

/// What the interrupt accounting knows at TSC `now`: the clocks of every released task, the
/// total handler time of all lines, and each line's statistics.
pub fn interrupt_totals(now: u64) -> (MsaTimes, u64, [IrqLineStats; hal::pic::NR_LINES]) {
    with(|s| (s.released_msa, s.rq.irq().total_handler_ticks(now), core::array::from_fn(|l| *s.rq.irq().line_stats(l))))
}
