//! Signal sets: Linux's 64-bit `sigset_t` for signals 1..=64 (bit `sig - 1`).

use tally_uapi::signal::{NSIG, SIGKILL, SIGSTOP};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SigSet(pub u64);

impl SigSet {
    pub const EMPTY: SigSet = SigSet(0);
    /// SIGKILL and SIGSTOP: never blocked, caught or ignored.
    pub const UNBLOCKABLE: SigSet = SigSet((1 << (SIGKILL - 1)) | (1 << (SIGSTOP - 1)));

    /// The set holding `sig` alone (empty for 0 or a number above 64).
    pub const fn of(sig: u8) -> SigSet {
        if sig == 0 || sig > NSIG {
            SigSet(0)
        } else {
            SigSet(1 << (sig - 1))
        }
    }

    pub const fn contains(self, sig: u8) -> bool {
        self.0 & Self::of(sig).0 != 0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub const fn union(self, o: SigSet) -> SigSet {
        SigSet(self.0 | o.0)
    }

    pub const fn minus(self, o: SigSet) -> SigSet {
        SigSet(self.0 & !o.0)
    }

    pub const fn and(self, o: SigSet) -> SigSet {
        SigSet(self.0 & o.0)
    }

    pub fn insert(&mut self, sig: u8) {
        self.0 |= Self::of(sig).0;
    }

    pub fn remove(&mut self, sig: u8) {
        self.0 &= !Self::of(sig).0;
    }

    /// What a thread may actually block: `self` without SIGKILL and SIGSTOP (Linux's
    /// `sigdelsetmask(&newset, sigmask(SIGKILL)|sigmask(SIGSTOP))`).
    pub const fn blockable(self) -> SigSet {
        self.minus(Self::UNBLOCKABLE)
    }

    /// The lowest signal in the set.
    pub const fn lowest(self) -> Option<u8> {
        if self.0 == 0 {
            None
        } else {
            Some(self.0.trailing_zeros() as u8 + 1)
        }
    }

    /// `rt_sigprocmask`'s `how` applied to the mask `self` with `set`; `None` for a bad `how`.
    pub fn apply(self, how: u64, set: SigSet) -> Option<SigSet> {
        use tally_uapi::signal::{SIG_BLOCK, SIG_SETMASK, SIG_UNBLOCK};
        let m = match how {
            SIG_BLOCK => self.union(set),
            SIG_UNBLOCK => self.minus(set),
            SIG_SETMASK => set,
            _ => return None,
        };
        Some(m.blockable())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn masks_never_block_kill_or_stop(start in any::<u64>(), how in 0u64..4, set in any::<u64>()) {
            match SigSet(start).blockable().apply(how, SigSet(set)) {
                Some(m) => {
                    prop_assert!(!m.contains(SIGKILL) && !m.contains(SIGSTOP));
                    for sig in 1..=64u8 {
                        let expect = match how {
                            0 => SigSet(start).contains(sig) || SigSet(set).contains(sig),
                            1 => SigSet(start).contains(sig) && !SigSet(set).contains(sig),
                            _ => SigSet(set).contains(sig),
                        } && sig != SIGKILL && sig != SIGSTOP;
                        prop_assert_eq!(m.contains(sig), expect);
                    }
                }
                None => prop_assert_eq!(how, 3),
            }
        }

        #[test]
        fn lowest_is_the_first_member(bits in any::<u64>()) {
            let s = SigSet(bits);
            match s.lowest() {
                None => prop_assert!(s.is_empty()),
                Some(l) => {
                    prop_assert!(s.contains(l));
                    prop_assert!((1..l).all(|x| !s.contains(x)));
                }
            }
        }
    }

    #[test]
    fn out_of_range_signals_are_no_members() {
        assert_eq!(SigSet::of(0), SigSet::EMPTY);
        assert_eq!(SigSet::of(65), SigSet::EMPTY);
        assert_eq!(SigSet::of(64), SigSet(1 << 63));
    }
}
