//! The alternate signal stack (`sigaltstack`): where a handler with `SA_ONSTACK` runs, so
//! that a SIGSEGV from a stack overflow can still be handled.

use tally_uapi::errno::{EINVAL, ENOMEM, EPERM};
use tally_uapi::signal::{StackT, MINSIGSTKSZ, SS_AUTODISARM, SS_DISABLE, SS_ONSTACK};

/// A thread's alternate stack: `sp .. sp + size` (size 0: none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AltStack {
    pub sp: u64,
    pub size: u64,
    /// `SS_AUTODISARM`: the stack is cleared while a handler runs on it (restored by
    /// `rt_sigreturn` from the frame's `uc_stack`).
    pub autodisarm: bool,
}

impl AltStack {
    /// Is `rsp` on this stack? (Linux's `on_sig_stack`: `sp` above the base, at most `size`
    /// above it — the top itself counts, the base does not.)
    pub fn on(&self, rsp: u64) -> bool {
        self.size != 0 && rsp > self.sp && rsp - self.sp <= self.size
    }

    /// `ss_flags` as `sigaltstack` reports it for a thread at `rsp` (Linux's `sas_ss_flags`).
    pub fn flags(&self, rsp: u64) -> i32 {
        let base = if self.size == 0 {
            SS_DISABLE
        } else if self.on(rsp) {
            SS_ONSTACK
        } else {
            0
        };
        base | if self.autodisarm { SS_AUTODISARM } else { 0 }
    }

    /// The `stack_t` `sigaltstack` returns, and a signal frame's `uc_stack` holds.
    pub fn as_stack_t(&self, rsp: u64) -> StackT {
        StackT { sp: self.sp, flags: self.flags(rsp), size: self.size }
    }

    /// `sigaltstack(ss, _)` by a thread at `rsp`, with Linux's checks (`do_sigaltstack`):
    /// `EPERM` while running on the current stack, `EINVAL` for flags other than 0,
    /// `SS_ONSTACK` (taken as 0) or `SS_DISABLE` (each may carry `SS_AUTODISARM`), `ENOMEM`
    /// for a size below `MINSIGSTKSZ` (unless disabling).
    pub fn set(&mut self, ss: &StackT, rsp: u64) -> Result<(), i32> {
        if self.on(rsp) {
            return Err(EPERM);
        }
        let mode = ss.flags & !SS_AUTODISARM;
        if mode != 0 && mode != SS_DISABLE && mode != SS_ONSTACK {
            return Err(EINVAL);
        }
        *self = if mode == SS_DISABLE {
            AltStack::default()
        } else {
            if ss.size < MINSIGSTKSZ {
                return Err(ENOMEM);
            }
            AltStack { sp: ss.sp, size: ss.size, autodisarm: ss.flags & SS_AUTODISARM != 0 }
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigaltstack_checks_as_linux() {
        let mut a = AltStack::default();
        assert_eq!(a.flags(0x1000), SS_DISABLE);
        assert_eq!(a.set(&StackT { sp: 0x10000, flags: 0, size: 100 }, 0x9000_0000), Err(ENOMEM));
        assert_eq!(a.set(&StackT { sp: 0x10000, flags: 7, size: 8192 }, 0x9000_0000), Err(EINVAL));
        assert_eq!(a.set(&StackT { sp: 0x10000, flags: 0, size: 8192 }, 0x9000_0000), Ok(()));
        assert!(a.on(0x10000 + 8192) && a.on(0x10001) && !a.on(0x10000) && !a.on(0x12001));
        assert_eq!(a.flags(0x11000), SS_ONSTACK);
        assert_eq!(a.set(&StackT { sp: 0, flags: SS_DISABLE, size: 0 }, 0x11000), Err(EPERM));
        assert_eq!(a.set(&StackT { sp: 0, flags: SS_DISABLE, size: 0 }, 0x9000_0000), Ok(()));
        assert_eq!(a, AltStack::default());
        assert_eq!(a.set(&StackT { sp: 0x10000, flags: SS_AUTODISARM, size: 4096 }, 1), Ok(()));
        assert_eq!(a.flags(1), SS_AUTODISARM);
    }
}
