//! The scheduler's side of an interrupt: INTERRUPTED accounting, the tick, and the switch
//! that may happen before the interrupt returns.
//!
//! The `irq` layer brackets every interrupt with [`irq_enter`] and [`irq_return`]. At entry
//! the interrupted task's clock switches to INTERRUPTED and the line's timer starts (both
//! from the same TSC value, which is what makes the sum of INTERRUPTED over tasks equal the
//! sum of handler time over lines). The timer line's handler calls [`tick`]. At the end, if
//! the tick or a wake-up asked for a reschedule, the switch happens inside the interrupt:
//! the incoming task inherits the interrupt and ends its accounting when it first runs
//! (`switch.rs`, the handover). See `docs/microstate-accounting.md`.

use tally_microstate::IntrKind;
use tally_runqueue::PrevAction;

use super::state::{self, Store};
use super::switch::switch_and_clean;

/// Interrupt entry accounting: the current task becomes INTERRUPTED, the line's timer starts.
/// Called with interrupts disabled (an interrupt handler), before [`super::init`] too.
pub fn irq_enter(line: u8, now: u64) {
    state::try_with_irqs_off(|s| s.rq.irq_enter(&mut Store(&mut s.tasks), line as usize, now));
}

/// Record how the interrupt in progress ended (spurious, ...).
pub fn irq_outcome(kind: IntrKind) {
    state::try_with_irqs_off(|s| s.rq.irq_mut().set_outcome(kind));
}

/// Set the kind a line's interrupts count as (`Hard` unless set: the timer's are too).
pub fn set_line_kind(line: u8, kind: IntrKind) {
    state::with(|s| s.rq.irq_mut().set_line_kind(line as usize, kind));
}

/// The timer tick: charge the current task, wake sleepers whose time has come.
pub fn tick(now: u64) {
    state::try_with_irqs_off(|s| {
        s.rq.scheduler_tick(&mut Store(&mut s.tasks), now);
        while let Some((&(when, seq), &slot)) = s.sleepers.first_key_value() {
            if when > now {
                break;
            }
            s.sleepers.remove(&(when, seq));
            if super::stop::wake_allowed(s, slot) {
                s.rq.wake_up(&mut Store(&mut s.tasks), slot, now);
            }
        }
        s.runq_changed(now);
    });
}

/// Called at the end of an interrupt handler, still inside the interrupt. If the handler
/// asked for a reschedule (the tick used up the slice, a wake-up preempts), switch now: the
/// outgoing task's INTERRUPTED time ends at the switch and the incoming task inherits the
/// interrupt until it ends it in `after_switch`. Otherwise end the interrupt's accounting
/// here. One lock acquisition either way.
pub fn irq_return(line: u8) {
    let threads = state::try_with_irqs_off(|s| {
        let switch = if s.rq.need_resched() && s.rq.irq().depth() == 1 { s.pick(PrevAction::Preempted) } else { None };
        match switch {
            Some(t) => {
                s.handover_line = Some(line);
                super::switch::note_after_switch_work();
                Some(t)
            }
            None => {
                s.rq.irq_exit(&mut Store(&mut s.tasks), line as usize, hal::tsc::read());
                None
            }
        }
    })
    .flatten();
    if threads.is_some() {
        switch_and_clean(threads);
    }
}
