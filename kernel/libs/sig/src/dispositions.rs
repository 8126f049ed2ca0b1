//! What a process does with each signal: Linux's `struct sighand_struct`, 64
//! `kernel_sigaction`s, and what each means for a signal about to be delivered ([`Act`]).

use tally_uapi::errno::EINVAL;
use tally_uapi::signal::{
    default_action, DefaultAction, KernelSigaction, NSIG, SA_RESETHAND, SIGCHLD, SIGKILL, SIGSTOP, SIG_DFL, SIG_IGN,
};

use crate::SigSet;

/// What delivering a signal does, given its disposition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    /// Nothing (`SIG_IGN`, or `SIG_DFL` of a signal whose default is to be ignored).
    Ignore,
    /// The default action (terminate, core, stop, continue).
    Default(DefaultAction),
    /// Run this handler in user mode.
    Handle(KernelSigaction),
}

/// The actions of signals 1..=64 for one process (shared by its threads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispositions {
    actions: [KernelSigaction; NSIG as usize],
}

impl Default for Dispositions {
    fn default() -> Self {
        Dispositions { actions: [KernelSigaction::default(); NSIG as usize] }
    }
}

impl Dispositions {
    /// The action of `sig` (the default action for a number outside 1..=64).
    pub fn get(&self, sig: u8) -> KernelSigaction {
        match sig {
            1..=NSIG => self.actions[sig as usize - 1],
            _ => KernelSigaction::default(),
        }
    }

    /// `rt_sigaction`'s change: `EINVAL` for a number outside 1..=64 and for SIGKILL and
    /// SIGSTOP; returns the old action. The mask kept never holds SIGKILL or SIGSTOP.
    pub fn set(&mut self, sig: u8, mut new: KernelSigaction) -> Result<KernelSigaction, i32> {
        if !(1..=NSIG).contains(&sig) || sig == SIGKILL || sig == SIGSTOP {
            return Err(EINVAL);
        }
        new.sa_mask = SigSet(new.sa_mask).blockable().0;
        Ok(core::mem::replace(&mut self.actions[sig as usize - 1], new))
    }

    /// What delivering `sig` does now.
    pub fn act(&self, sig: u8) -> Act {
        let a = self.get(sig);
        match a.sa_handler {
            _ if sig == SIGKILL || sig == SIGSTOP => Act::Default(default_action(sig)),
            SIG_IGN => Act::Ignore,
            SIG_DFL => match default_action(sig) {
                DefaultAction::Ignore => Act::Ignore,
                d => Act::Default(d),
            },
            _ => Act::Handle(a),
        }
    }

    /// Is `sig` caught by a handler?
    pub fn caught(&self, sig: u8) -> bool {
        matches!(self.act(sig), Act::Handle(_))
    }

    /// Is `sig` explicitly ignored (`SIG_IGN`)?
    pub fn ignored(&self, sig: u8) -> bool {
        sig != SIGKILL && sig != SIGSTOP && self.get(sig).sa_handler == SIG_IGN
    }

    /// A handler with `SA_RESETHAND` was just entered for `sig`: back to `SIG_DFL` (Linux
    /// clears `SA_SIGINFO` with it, as POSIX asks).
    pub fn handler_entered(&mut self, sig: u8) {
        if (1..=NSIG).contains(&sig) && self.actions[sig as usize - 1].sa_flags & SA_RESETHAND != 0 {
            self.actions[sig as usize - 1] = KernelSigaction::default();
        }
    }

    /// `execve`: caught signals go back to `SIG_DFL`; ignored ones stay ignored (Linux's
    /// `flush_signal_handlers`; the flags and masks of default actions are cleared too).
    pub fn reset_for_exec(&mut self) {
        for a in self.actions.iter_mut() {
            if a.sa_handler != SIG_IGN {
                *a = KernelSigaction::default();
            } else {
                *a = KernelSigaction { sa_handler: SIG_IGN, ..Default::default() };
            }
        }
    }

    /// Does the parent want SIGCHLD for a child's stop or continue (no `SA_NOCLDSTOP`)?
    pub fn wants_stop_reports(&self) -> bool {
        self.get(SIGCHLD).sa_flags & tally_uapi::signal::SA_NOCLDSTOP == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_uapi::signal::{SA_RESTORER, SIGINT, SIGSEGV, SIGTERM, SIGTSTP, SIGUSR1};

    fn handler(h: u64, flags: u64) -> KernelSigaction {
        KernelSigaction { sa_handler: h, sa_flags: flags | SA_RESTORER, sa_restorer: 0x40_1000, sa_mask: u64::MAX }
    }

    #[test]
    fn kill_and_stop_cannot_change() {
        let mut d = Dispositions::default();
        assert_eq!(d.set(SIGKILL, handler(0x40_0000, 0)), Err(EINVAL));
        assert_eq!(d.set(SIGSTOP, handler(SIG_IGN, 0)), Err(EINVAL));
        assert_eq!(d.set(0, handler(0x40_0000, 0)), Err(EINVAL));
        assert_eq!(d.set(65, handler(0x40_0000, 0)), Err(EINVAL));
        assert_eq!(d.act(SIGKILL), Act::Default(DefaultAction::Terminate));
    }

    #[test]
    fn acts_follow_the_disposition() {
        let mut d = Dispositions::default();
        assert_eq!(d.act(SIGCHLD), Act::Ignore);
        assert_eq!(d.act(SIGTERM), Act::Default(DefaultAction::Terminate));
        assert_eq!(d.act(SIGTSTP), Act::Default(DefaultAction::Stop));
        d.set(SIGINT, handler(SIG_IGN, 0)).unwrap();
        assert_eq!(d.act(SIGINT), Act::Ignore);
        assert!(d.ignored(SIGINT));
        let old = d.set(SIGUSR1, handler(0x40_2000, SA_RESETHAND)).unwrap();
        assert_eq!(old, KernelSigaction::default());
        match d.act(SIGUSR1) {
            Act::Handle(a) => assert_eq!(a.sa_mask & SigSet::UNBLOCKABLE.0, 0),
            other => panic!("{other:?}"),
        }
        d.handler_entered(SIGUSR1);
        assert_eq!(d.act(SIGUSR1), Act::Default(DefaultAction::Terminate));
        d.set(SIGSEGV, handler(0x40_3000, 0)).unwrap();
        d.handler_entered(SIGSEGV);
        assert!(d.caught(SIGSEGV));
    }

    #[test]
    fn exec_keeps_ignored_and_drops_handlers() {
        let mut d = Dispositions::default();
        d.set(SIGINT, handler(SIG_IGN, 0)).unwrap();
        d.set(SIGUSR1, handler(0x40_2000, 0)).unwrap();
        d.reset_for_exec();
        assert!(d.ignored(SIGINT));
        assert_eq!(d.get(SIGUSR1), KernelSigaction::default());
    }
}
