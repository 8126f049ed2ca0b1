//! # tally-microstate — microstate accounting
//!
//! Where does a task's time go? Classic Unix can only say "user" and "system", and even those
//! are *sampled*: whoever happens to be running when the timer ticks is charged a whole tick.
//! Microstate accounting measures instead. Every task carries one clock per
//! [`MicroState`] (running in user mode, waiting on the runqueue, sleeping on a disk, stolen
//! by an interrupt, ...) and the kernel tells the task's [`MsaClock`] every time the task
//! changes state. The technique is the *single clock*:
//!
//! ```text
//!   switch(now, new):   clocks[current] += now - last_change
//!                       current          = new
//!                       last_change      = now
//! ```
//!
//! so a state change costs one subtraction and one addition, and at any moment the clocks
//! add up to exactly the task's age. Time is never read here: the caller passes `now`, a raw
//! TSC value, and the scheduler passes the *same* `now` to both tasks of a context switch, so
//! no tick of time falls between the outgoing task's clock and the incoming one's.
//!
//! Interrupts steal time from whoever is on the CPU. [`IrqAccounting`] (one per CPU) turns the
//! interrupted task's state into `INTERRUPTED` for the length of the interrupt, and times each
//! IRQ line the way Solaris times events, so that across the whole system
//!
//! ```text
//!   Σ over tasks  clocks[INTERRUPTED]  ==  Σ over IRQ lines  handler time
//! ```
//!
//! holds exactly (see `irq.rs` for how nested interrupts are split to make that true, and for
//! the *handover* that moves `INTERRUPTED` from one task to another when the scheduler
//! switches tasks inside an interrupt).
//!
//! Where it sits in the flow:
//!
//! ```text
//!   interrupt entry ──► IrqAccounting::irq_enter ─┐
//!   handler (timer tick, wake-ups) ─► tally-runqueue ├─► MsaClock::switch on the tasks involved
//!   interrupt exit  ──► IrqAccounting::irq_exit  ─┘
//!   msa() system call ─► MsaClock::snapshot(now) ─► nanoseconds (tally-clock) ─► user
//! ```
//!
//! The same state changes give Linux's *delay accounting* for free: a wait on the run
//! queue, for the disk or in an interrupt is a stretch of time in certain microstates, and
//! [`MsaClock::delays`] reports those stretches as [`DelayStats`] (count, total, longest,
//! shortest, when the longest was seen), exactly consistent with the clocks ([`delay`]).
//!
//! The `accounting` cargo feature (on by default) can be turned off: every hook then compiles
//! to nothing and every clock reads zero, with the same API, so the kernel can be benchmarked
//! with accounting compiled in and out. Nesting depth is still tracked either way, because
//! the scheduler asks "am I inside an interrupt?" to make scheduling decisions.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

mod clock;
pub mod delay;
mod irq;
mod line_stats;

pub use clock::{MsaClock, MsaTimes};
pub use delay::{DelayClass, DelayEpisodes, DelayStats, NR_DELAY_CLASSES};
pub use irq::{IrqAccounting, SwitchInstant, MAX_IRQ_NESTING, NR_IRQ_LINES};
pub use line_stats::{EventTimer, IntrCounts, IntrKind, IrqLineStats, NR_INTR_KINDS};
pub use tally_uapi::msa::{MicroState, NR_MICROSTATES};

/// True when this build keeps accounting (the `accounting` feature is on).
pub const ACCOUNTING_ENABLED: bool = cfg!(feature = "accounting");
