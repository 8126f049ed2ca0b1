//! Priorities and scheduling policies, numbered exactly as in Linux 2.6.
//!
//! One number, `prio`, orders every task: lower is better. Real-time tasks use 0..99 and
//! always beat normal tasks, which use 100..139:
//!
//! ```text
//!   prio   0 ............. 99 | 100 ........ 120 ........ 139 | 140
//!          RT prio 99 ... RT 1 | nice -20 .... nice 0 .... nice 19 | (the idle task)
//! ```
//!
//! A normal task has a fixed *static* priority from its nice value and a *dynamic* `prio`
//! that moves up to 5 levels either side of it according to how interactive it looks
//! (`interactivity.rs`). A real-time task's `prio` is fixed by its RT priority. The priority
//! arrays (`prio_array.rs`) keep one FIFO queue per `prio` value.

/// Priorities below this are real-time.
pub const MAX_RT_PRIO: i32 = 100;
/// `MAX_USER_RT_PRIO`: RT priorities settable by users are 1..=99.
pub const MAX_USER_RT_PRIO: i32 = 100;
/// One past the worst priority; also the idle task's priority.
pub const MAX_PRIO: i32 = MAX_RT_PRIO + 40;
/// Number of normal (non-RT) priority levels.
pub const MAX_USER_PRIO: i32 = MAX_PRIO - MAX_RT_PRIO;
/// Best (most favoured) nice value.
pub const MIN_NICE: i32 = -20;
/// Worst nice value.
pub const MAX_NICE: i32 = 19;

/// `NICE_TO_PRIO`: nice -20..19 → static priority 100..139.
pub const fn nice_to_prio(nice: i32) -> i32 {
    MAX_RT_PRIO + nice + 20
}

/// `PRIO_TO_NICE`: static priority → nice.
pub const fn prio_to_nice(prio: i32) -> i32 {
    prio - MAX_RT_PRIO - 20
}

/// The queue priority of an RT task with RT priority `rt_priority` (1..=99, higher is
/// more urgent): `MAX_USER_RT_PRIO - 1 - rt_priority`, so RT 99 → prio 0.
pub const fn rt_prio_to_prio(rt_priority: u32) -> i32 {
    MAX_USER_RT_PRIO - 1 - rt_priority as i32
}

/// Scheduling policy, numbered as Linux's `SCHED_*` constants.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Policy {
    /// `SCHED_NORMAL`: timeslices, dynamic priority, expiry to the expired array.
    Normal = 0,
    /// `SCHED_FIFO`: real-time, runs until it blocks or yields; never expires.
    Fifo = 1,
    /// `SCHED_RR`: real-time, round-robin among equals: a used-up slice sends it to the
    /// tail of its level in the *active* array.
    RoundRobin = 2,
    /// `SCHED_BATCH`: like normal, but never earns an interactivity bonus.
    Batch = 3,
}

impl Policy {
    /// True for `SCHED_FIFO` and `SCHED_RR`.
    pub const fn is_realtime(self) -> bool {
        matches!(self, Policy::Fifo | Policy::RoundRobin)
    }

    /// The policy with Linux number `raw`, if any.
    pub const fn from_raw(raw: u32) -> Option<Policy> {
        match raw {
            0 => Some(Policy::Normal),
            1 => Some(Policy::Fifo),
            2 => Some(Policy::RoundRobin),
            3 => Some(Policy::Batch),
            _ => None,
        }
    }
}
