//! # tally-runqueue — the Linux 2.6 O(1) scheduler, with microstate accounting
//!
//! This is the scheduler of Linux 2.6.11–2.6.20 (`kernel/sched.c`), rebuilt in safe Rust
//! without hardware: the kernel passes in the time (a TSC value, `now`) and lends access to
//! its tasks through a [`TaskStore`]. Every operation is O(1): nothing ever walks the set of
//! tasks.
//!
//! The pieces, in the order a student might read them:
//!
//! | file             | what it holds                                                      |
//! |------------------|--------------------------------------------------------------------|
//! | `prio.rs`        | priorities 0..139, nice, RT priority, policies                      |
//! | `config.rs`      | `HZ` and the TSC rate; every tick count derived from them           |
//! | `timeslice.rs`   | slice length from static priority (800 / 100 / 5 ms)                |
//! | `interactivity.rs` | sleep average, bonus, dynamic priority, "is it interactive?"      |
//! | `task.rs`        | [`SchedEntity`] (per-task fields), [`TaskSlot`], [`TaskStore`]       |
//! | `prio_array.rs`  | 140 intrusive FIFO queues + bitmap: pick-next is find-first-bit     |
//! | `runqueue.rs`    | [`RunQueue`]: the active and expired arrays, current, idle          |
//! | `tick.rs`        | `scheduler_tick`: slices, expiry, RR rotation, starvation           |
//! | `wakeup.rs`      | `wake_up`, `wake_up_new_task`                                       |
//! | `schedule.rs`    | `schedule`, yield: the array flip and the pick                      |
//! | `setprio.rs`     | `set_nice`, `set_scheduler`, `remove`                               |
//! | `msa_hooks.rs`   | microstate clocks: the lazy flip, interrupts, idle                  |
//!
//! ## How the kernel drives it (one `RunQueue` per CPU)
//!
//! ```text
//!   boot            RunQueue::new(config, idle, &mut store, now)
//!   create task     store slot ← SchedEntity::new(nice), MsaClock::new(now, ONACTIVEQUEUE)
//!                   rq.wake_up_new_task(&mut store, key, now)
//!   timer irq       rq.irq_enter(&mut store, TIMER_LINE, now)
//!                   rq.scheduler_tick(&mut store, now)
//!                   [ if rq.need_resched(): rq.schedule(&mut store, now, Preempted) ]  ← handover
//!                   rq.irq_exit(&mut store, TIMER_LINE, now)
//!   other irq       the same, with wake_up(&mut store, key, now) instead of the tick
//!   after an irq    if rq.need_resched(): rq.schedule(&mut store, now, Preempted)
//!   sleep / exit    rq.schedule(&mut store, now, Block(Sleep(kind)) / Block(Exit))
//!   sched_yield     rq.schedule(&mut store, now, Yield)
//!   user/kernel     rq.set_running_state(&mut store, key, ONCPU_USR / ONCPU_SYS, now)
//!   msa() syscall   rq.msa_snapshot(&mut store, key, now)   (TSC ticks; convert to ns)
//!                   rq.msa_add_to(&mut store, key, now, &mut sum)  (a process: each thread)
//! ```
//!
//! `schedule` returns a [`Switch`]; if `prev != next` the kernel switches stacks. Each call
//! reads the TSC once and passes the same `now` to everything it touches, so the accounting
//! identities hold exactly (every task's clocks sum to its age; the `INTERRUPTED` time of all
//! tasks equals the handler time of all IRQ lines).
//!
//! Not modelled (yet): SMP load balancing, the fork-time timeslice split and sleep-average
//! penalties (a new task gets a full slice), signals interrupting a sleep, and priority
//! inheritance.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

pub mod config;
pub mod interactivity;
mod msa_hooks;
pub mod prio;
pub mod prio_array;
mod runqueue;
mod schedule;
mod setprio;
mod stop;
mod task;
mod tick;
pub mod timeslice;
mod wakeup;

pub use config::SchedConfig;
pub use prio::{Policy, MAX_PRIO, MAX_RT_PRIO};
pub use prio_array::{ArrayId, PrioArray};
pub use runqueue::RunQueue;
pub use schedule::{PrevAction, Switch};
pub use tally_microstate::{
    IntrKind, IrqAccounting, MicroState, MsaClock, MsaTimes, ACCOUNTING_ENABLED, NR_MICROSTATES,
};
pub use task::{BlockReason, SchedEntity, SchedError, SleepKind, SleepType, TaskSlot, TaskState, TaskStore};
