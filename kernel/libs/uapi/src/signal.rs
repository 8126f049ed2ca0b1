//! Signal numbers (Linux x86_64's) and what Tally does with each.
//!
//! Tally has no signal handlers: a signal takes its *default action* — the process ends
//! ("terminate", or "terminate with the core flag" for the signals that dump core on Unix),
//! it stops or continues (job control), or nothing happens ("ignore") — unless the process
//! ignores it (`rt_sigaction` with `SIG_IGN`, [`crate::syscall::SYS_RT_SIGACTION`]). Every signal a process
//! receives is counted for its receiving thread (prstat's SIG column, `ProcStat::signals`).
//! Signals arrive four ways: an exception in user mode (SIGSEGV, SIGFPE, SIGILL, SIGTRAP,
//! SIGBUS), `kill(pid, sig)`, the console's ISIG characters (^C SIGINT, ^\ SIGQUIT, ^Z
//! SIGTSTP, to the console's foreground process group) and the kernel's job control
//! (SIGTTIN to a background reader of the console; SIGCHLD to a parent whenever one of its
//! child processes ends, stops or continues).
//!
//! `kill(pid, sig)` (`SYS_KILL` = 62), as Linux: `pid > 0` names a process, `pid == 0` every
//! process of the caller's process group, `pid < -1` every process of group `-pid`, and
//! `pid == -1` every process the caller may signal except init and itself (`ESRCH` if none;
//! a group with no member is `ESRCH` too). `sig` 0 checks that the process exists and may
//! be signalled; 1..=31 are delivered; anything else is `EINVAL`. A caller whose uid is not
//! 0 may only signal processes of its own uid (`EPERM`; for a group, `EPERM` only if it may
//! signal none of them). Job control (`docs/job-control.md`): SIGSTOP, SIGTSTP, SIGTTIN and
//! SIGTTOU stop every thread of the process (the STOPPED microstate; SIGTSTP/SIGTTIN/SIGTTOU
//! are discarded for a process in an orphaned group, as POSIX says), SIGCONT continues it
//! (even if ignored), SIGKILL ends it stopped or not.
//!
//! `rt_sigaction(sig, act, oldact, sigsetsize)` (13): Tally keeps only the disposition —
//! `sa_handler` `SIG_DFL` (0) or `SIG_IGN` (1); any other handler is `EINVAL`, as are
//! SIGKILL and SIGSTOP, a `sigsetsize` other than 8, and signal numbers outside 1..=64.
//! `act` and `oldact` point to a Linux `struct kernel_sigaction` ([`KernelSigaction`],
//! 32 bytes); either may be NULL. A spawned child starts with every signal at `SIG_DFL`.

/// `sa_handler` values Tally knows.
pub const SIG_DFL: u64 = 0;
pub const SIG_IGN: u64 = 1;

/// Linux x86_64's `struct kernel_sigaction` as `rt_sigaction` reads and writes it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelSigaction {
    pub sa_handler: u64,
    pub sa_flags: u64,
    pub sa_restorer: u64,
    pub sa_mask: u64,
}
const _: () = assert!(core::mem::size_of::<KernelSigaction>() == 32);

impl KernelSigaction {
    pub const SIZE: usize = 32;

    /// The little-endian bytes user space sees.
    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        for (i, w) in [self.sa_handler, self.sa_flags, self.sa_restorer, self.sa_mask].iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        let w = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        KernelSigaction { sa_handler: w(0), sa_flags: w(1), sa_restorer: w(2), sa_mask: w(3) }
    }
}

pub const SIGHUP: u8 = 1;
pub const SIGINT: u8 = 2;
pub const SIGQUIT: u8 = 3;
pub const SIGILL: u8 = 4;
pub const SIGTRAP: u8 = 5;
pub const SIGABRT: u8 = 6;
pub const SIGBUS: u8 = 7;
pub const SIGFPE: u8 = 8;
pub const SIGKILL: u8 = 9;
pub const SIGUSR1: u8 = 10;
pub const SIGSEGV: u8 = 11;
pub const SIGUSR2: u8 = 12;
pub const SIGPIPE: u8 = 13;
pub const SIGALRM: u8 = 14;
pub const SIGTERM: u8 = 15;
pub const SIGCHLD: u8 = 17;
pub const SIGCONT: u8 = 18;
pub const SIGSTOP: u8 = 19;
pub const SIGTSTP: u8 = 20;
pub const SIGTTIN: u8 = 21;
pub const SIGTTOU: u8 = 22;
pub const SIGURG: u8 = 23;
pub const SIGWINCH: u8 = 28;
pub const SIGSYS: u8 = 31;
/// Highest standard signal number.
pub const NSIG_STD: u8 = 31;

/// What a signal does when nobody handles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultAction {
    /// The process ends, killed by the signal.
    Terminate,
    /// The process ends, killed by the signal, with the core flag (ACORE) — no core file.
    Core,
    /// The process stops (job control: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU).
    Stop,
    /// A stopped process continues (SIGCONT; nothing if it runs).
    Continue,
    /// Nothing (counted only).
    Ignore,
}

/// The default action of signal `sig` (1..=31), as signal(7) lists it.
pub const fn default_action(sig: u8) -> DefaultAction {
    match sig {
        SIGQUIT | SIGILL | SIGTRAP | SIGABRT | SIGBUS | SIGFPE | SIGSEGV | SIGSYS => DefaultAction::Core,
        SIGSTOP | SIGTSTP | SIGTTIN | SIGTTOU => DefaultAction::Stop,
        SIGCONT => DefaultAction::Continue,
        SIGCHLD | SIGURG | SIGWINCH => DefaultAction::Ignore,
        _ => DefaultAction::Terminate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigaction_round_trips() {
        let a = KernelSigaction { sa_handler: SIG_IGN, sa_flags: 2, sa_restorer: 3, sa_mask: 4 };
        assert_eq!(KernelSigaction::from_bytes(&a.to_bytes()), a);
    }

    #[test]
    fn default_actions_follow_signal7() {
        assert_eq!(default_action(SIGSEGV), DefaultAction::Core);
        assert_eq!(default_action(SIGTERM), DefaultAction::Terminate);
        assert_eq!(default_action(SIGKILL), DefaultAction::Terminate);
        assert_eq!(default_action(SIGCHLD), DefaultAction::Ignore);
        assert_eq!(default_action(SIGSTOP), DefaultAction::Stop);
        assert_eq!(default_action(SIGTSTP), DefaultAction::Stop);
        assert_eq!(default_action(SIGCONT), DefaultAction::Continue);
        assert_eq!(default_action(SIGWINCH), DefaultAction::Ignore);
    }
}
