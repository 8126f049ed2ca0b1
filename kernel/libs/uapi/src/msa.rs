//! Microstate numbering — the ABI of the `msa()` system call.
//!
//! A *microstate* says where a task's time is going right now: running in user mode, waiting
//! on the runqueue, sleeping on a disk, stolen by an interrupt, and so on. The kernel keeps one
//! clock per microstate for every task (see `tally-microstate`), and `msa()` copies those clocks out:
//!
//! ```text
//! int msa(int ntimers, int which, clk_t *timers);   // which = MSA_SELF | MSA_CHILDREN | MSA_THREAD
//! ```
//!
//! `timers[i]` is the time, in nanoseconds, spent in the microstate whose number is `i`.
//! The numbering below is therefore part of the ABI: it is the order of the original Linux
//! micro-state accounting patch, and a program asking for `ntimers = 3` gets exactly the
//! three on-CPU states. New states may only ever be appended.
//!
//! ## The system call (`SYS_MSA` = 502)
//!
//! * `which` = [`MSA_THREAD`]: the calling thread's clocks now (its current state included
//!   up to the instant of the call). [`MSA_SELF`]: the sum over every thread of the calling
//!   process, past and present — the clocks of the threads that have exited plus those of
//!   the live ones, all read at one instant. [`MSA_CHILDREN`]: the sum over the child
//!   processes this process has waited for (and, recursively, those they waited for), as
//!   they were when they exited.
//! * `ntimers` (an `int`: the low 32 bits of its register) says how many leading timers to
//!   fill: `0..=13`. Fewer than [`NR_MICROSTATES`] fills only `timers[0..ntimers]` and
//!   leaves the rest of the caller's array alone; 0 touches nothing (and `timers` may be
//!   NULL). More than 13, or negative, is `-EINVAL` — the kernel never writes past what
//!   the caller said it has, and does not pretend to have states it does not keep.
//! * `which` (an `int`) other than the three above is `-EINVAL`; a `timers` array the
//!   caller cannot write is `-EFAULT` (nothing written). Arguments are checked in that
//!   order. Success returns 0.
//! * Times are nanoseconds, converted from TSC ticks state by state. With accounting
//!   compiled out of the kernel every timer reads 0.
//!
//! ## Without a system call: [`vvar`]
//!
//! A thread's own clocks ([`MSA_THREAD`]) can also be read in user space, from pages the
//! kernel maps read-only into every process; the runtime's `tally_rt::msa::msa` does, and
//! gives the same numbers the system call would give at the same TSC value.

/// One clock value as `msa()` reports it: nanoseconds (inside the kernel the same clocks
/// count raw TSC ticks and are converted on the way out).
pub type ClkT = u64;

pub mod vvar;

/// `which` for `msa()`: the sum over all threads of the calling process.
pub const MSA_SELF: u32 = 0;
/// `which` for `msa()`: the sum over the process's waited-for (reaped) children.
pub const MSA_CHILDREN: u32 = 1;
/// `which` for `msa()`: the calling thread only. Also readable without entering the
/// kernel, from the thread's [`vvar`] page (the runtime's `msa()` does that).
pub const MSA_THREAD: u32 = 2;

/// How many microstates there are (the length of a full `msa()` timer array).
pub const NR_MICROSTATES: usize = 13;

/// Where a task's time is going. The discriminant is the index into the `msa()` timer array.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MicroState {
    /// Running in user mode.
    OncpuUsr = 0,
    /// Running in the kernel on the task's behalf (system calls; kernel threads).
    OncpuSys = 1,
    /// Running in the kernel handling an exception the task caused (e.g. a minor page fault).
    OncpuTrap = 2,
    /// Sleeping until an event that a signal may cut short (e.g. `sleep(2)`).
    InterruptibleSleep = 3,
    /// Sleeping in a short wait that signals cannot cut short (e.g. disk I/O).
    UninterruptibleSleep = 4,
    /// Runnable, waiting on the active array: it still has timeslice left.
    OnActiveQueue = 5,
    /// Runnable, waiting on the expired array: it used up its slice and waits for a new one.
    OnExpiredQueue = 6,
    /// Exited, waiting for its parent to collect it with `wait()`.
    Zombie = 7,
    /// Stopped by job control or a debugger.
    Stopped = 8,
    /// Would be running, but the CPU is handling an interrupt.
    Interrupted = 9,
    /// Sleeping until a page arrives from disk.
    PagingSleep = 10,
    /// Sleeping on a futex (e.g. a contended `pthread_mutex_lock`).
    FutexSleep = 11,
    /// Sleeping in `poll`, `epoll_wait` or `select`.
    PollSleep = 12,
}

impl MicroState {
    /// Every microstate, in ABI order (`ALL[i].index() == i`).
    pub const ALL: [MicroState; NR_MICROSTATES] = [
        MicroState::OncpuUsr,
        MicroState::OncpuSys,
        MicroState::OncpuTrap,
        MicroState::InterruptibleSleep,
        MicroState::UninterruptibleSleep,
        MicroState::OnActiveQueue,
        MicroState::OnExpiredQueue,
        MicroState::Zombie,
        MicroState::Stopped,
        MicroState::Interrupted,
        MicroState::PagingSleep,
        MicroState::FutexSleep,
        MicroState::PollSleep,
    ];

    /// The index of this state's timer in an `msa()` timer array.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The state whose timer sits at `index`, if there is one.
    pub const fn from_index(index: usize) -> Option<MicroState> {
        if index < NR_MICROSTATES {
            Some(Self::ALL[index])
        } else {
            None
        }
    }

    /// The state's name as tools print it (the original patch's spelling).
    pub const fn name(self) -> &'static str {
        match self {
            MicroState::OncpuUsr => "ONCPU_USR",
            MicroState::OncpuSys => "ONCPU_SYS",
            MicroState::OncpuTrap => "ONCPU_TRAP",
            MicroState::InterruptibleSleep => "INTERRUPTIBLE_SLEEP",
            MicroState::UninterruptibleSleep => "UNINTERRUPTIBLE_SLEEP",
            MicroState::OnActiveQueue => "ONACTIVEQUEUE",
            MicroState::OnExpiredQueue => "ONEXPIREDQUEUE",
            MicroState::Zombie => "ZOMBIE",
            MicroState::Stopped => "STOPPED",
            MicroState::Interrupted => "INTERRUPTED",
            MicroState::PagingSleep => "PAGING_SLEEP",
            MicroState::FutexSleep => "FUTEX_SLEEP",
            MicroState::PollSleep => "POLL_SLEEP",
        }
    }

    /// True for the three states in which the task itself is executing on a CPU.
    pub const fn is_on_cpu(self) -> bool {
        matches!(self, MicroState::OncpuUsr | MicroState::OncpuSys | MicroState::OncpuTrap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_numbers_are_the_patch_order() {
        assert_eq!(MicroState::OncpuUsr as u32, 0);
        assert_eq!(MicroState::OnActiveQueue as u32, 5);
        assert_eq!(MicroState::Interrupted as u32, 9);
        assert_eq!(MicroState::PollSleep as u32, 12);
        assert_eq!(MicroState::ALL.len(), NR_MICROSTATES);
        for (i, s) in MicroState::ALL.iter().enumerate() {
            assert_eq!(s.index(), i);
            assert_eq!(MicroState::from_index(i), Some(*s));
        }
        assert_eq!(MicroState::from_index(NR_MICROSTATES), None);
        assert_eq!((MSA_SELF, MSA_CHILDREN, MSA_THREAD), (0, 1, 2));
    }

    #[test]
    fn names_are_unique_and_upper_case() {
        for a in MicroState::ALL {
            assert!(a.name().bytes().all(|b| b.is_ascii_uppercase() || b == b'_'));
            for b in MicroState::ALL {
                assert_eq!(a == b, a.name() == b.name());
            }
        }
        assert_eq!(MicroState::OncpuUsr.name(), "ONCPU_USR");
        assert_eq!(MicroState::OnExpiredQueue.name(), "ONEXPIREDQUEUE");
    }
}
