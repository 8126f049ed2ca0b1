//! Signal numbers (Linux x86_64's) and what Tally does with each.
//!
//! Tally has no signal handlers: a signal takes its *default action* — the process ends
//! ("terminate", or "terminate with the core flag" for the signals that dump core on Unix),
//! or nothing happens ("ignore"). Every signal a process receives is counted for its
//! receiving thread (prstat's SIG column, `ProcStat::signals`). Signals arrive three ways:
//! an exception in user mode (SIGSEGV, SIGFPE, SIGILL, SIGTRAP, SIGBUS), `kill(pid, sig)`,
//! and SIGCHLD to a parent whenever one of its child processes ends.
//!
//! `kill(pid, sig)` (`SYS_KILL` = 62): `pid > 0` only (process groups: `EINVAL`, as `pid`
//! 0 and < 0 name groups). `sig` 0 checks that the process exists and may be signalled;
//! 1..=31 are delivered; anything else is `EINVAL`. A caller whose uid is not 0 may only
//! signal processes of its own uid (`EPERM`). SIGSTOP/SIGTSTP/SIGTTIN/SIGTTOU/SIGCONT:
//! there is no job control, so they are counted and otherwise ignored.

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
    /// Nothing (counted only). Stop/continue signals too: Tally has no job control.
    Ignore,
}

/// The default action of signal `sig` (1..=31), as signal(7) lists it.
pub const fn default_action(sig: u8) -> DefaultAction {
    match sig {
        SIGQUIT | SIGILL | SIGTRAP | SIGABRT | SIGBUS | SIGFPE | SIGSEGV | SIGSYS => DefaultAction::Core,
        SIGCHLD | SIGURG | SIGWINCH | SIGCONT | SIGSTOP | SIGTSTP | SIGTTIN | SIGTTOU => DefaultAction::Ignore,
        _ => DefaultAction::Terminate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_actions_follow_signal7() {
        assert_eq!(default_action(SIGSEGV), DefaultAction::Core);
        assert_eq!(default_action(SIGTERM), DefaultAction::Terminate);
        assert_eq!(default_action(SIGKILL), DefaultAction::Terminate);
        assert_eq!(default_action(SIGCHLD), DefaultAction::Ignore);
        assert_eq!(default_action(SIGSTOP), DefaultAction::Ignore);
    }
}
