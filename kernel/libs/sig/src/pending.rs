//! Pending signals: a set, with the `siginfo` of each, and the choice of the next one.
//!
//! A thread has its own pending set (signals sent to it: `tgkill`, its own faults) and
//! shares its process's (`kill`). Standard signals are pending at most once — a second one
//! while the first waits is merged, as on every Unix; Tally merges real-time signals the
//! same way (Linux queues them: a documented deviation).

use alloc::vec::Vec;
use tally_uapi::signal::{SigInfo, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGSYS, SIGTRAP};

use crate::SigSet;

/// Signals a fault raises, delivered before any other (Linux's `SYNCHRONOUS_MASK`).
pub const SYNCHRONOUS: SigSet = SigSet(
    SigSet::of(SIGSEGV).0
        | SigSet::of(SIGBUS).0
        | SigSet::of(SIGILL).0
        | SigSet::of(SIGTRAP).0
        | SigSet::of(SIGFPE).0
        | SigSet::of(SIGSYS).0,
);

/// The signal of `candidates` delivered first: a synchronous one if any (lowest first),
/// else the lowest number (Linux's `next_signal`).
pub fn next_signal(candidates: SigSet) -> Option<u8> {
    candidates.and(SYNCHRONOUS).lowest().or_else(|| candidates.lowest())
}

/// A pending set and the `siginfo` of each member.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    set: SigSet,
    infos: Vec<SigInfo>,
}

impl Pending {
    pub fn set(&self) -> SigSet {
        self.set
    }

    /// Make `info.signo` pending; false if it was already (the new one is merged into it).
    pub fn post(&mut self, info: SigInfo) -> bool {
        let sig = info.signo as u8;
        if SigSet::of(sig).is_empty() || self.set.contains(sig) {
            return false;
        }
        self.set.insert(sig);
        self.infos.push(info);
        true
    }

    /// Take `sig` out, with its `siginfo`.
    pub fn take(&mut self, sig: u8) -> Option<SigInfo> {
        if !self.set.contains(sig) {
            return None;
        }
        self.set.remove(sig);
        let i = self.infos.iter().position(|i| i.signo == sig as i32)?;
        Some(self.infos.swap_remove(i))
    }

    /// Take the next signal of `allowed` ([`next_signal`]).
    pub fn take_next(&mut self, allowed: SigSet) -> Option<SigInfo> {
        let sig = next_signal(self.set.and(allowed))?;
        self.take(sig)
    }

    /// Forget `sigs` (a stop signal discards pending SIGCONT and the reverse; a signal
    /// newly ignored is discarded).
    pub fn discard(&mut self, sigs: SigSet) {
        self.set = self.set.minus(sigs);
        self.infos.retain(|i| !sigs.contains(i.signo as u8));
    }

    pub fn clear(&mut self) {
        self.set = SigSet::EMPTY;
        self.infos.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Clone, Debug)]
    enum Op {
        Post(u8, i32),
        Take(u8),
        TakeNext(u64),
        Discard(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..70, any::<i32>()).prop_map(|(s, p)| Op::Post(s, p)),
            (0u8..70).prop_map(Op::Take),
            any::<u64>().prop_map(Op::TakeNext),
            any::<u64>().prop_map(Op::Discard),
        ]
    }

    proptest! {
        /// Against a model (a map from signal to the first siginfo posted): the set and the
        /// infos agree, merges keep the first, and the next signal is synchronous first.
        #[test]
        fn pending_matches_its_model(ops in proptest::collection::vec(op(), 0..60)) {
            let mut p = Pending::default();
            let mut model: BTreeMap<u8, i32> = BTreeMap::new();
            for o in ops {
                match o {
                    Op::Post(s, pid) => {
                        let fresh = p.post(SigInfo { signo: s as i32, pid, ..Default::default() });
                        let valid = (1..=64).contains(&s);
                        prop_assert_eq!(fresh, valid && !model.contains_key(&s));
                        if valid { model.entry(s).or_insert(pid); }
                    }
                    Op::Take(s) => {
                        let got = p.take(s).map(|i| i.pid);
                        prop_assert_eq!(got, model.remove(&s));
                    }
                    Op::TakeNext(allowed) => {
                        let allowed = SigSet(allowed);
                        let cands: Vec<u8> = model.keys().copied().filter(|&s| allowed.contains(s)).collect();
                        let expect = cands.iter().copied().find(|&s| SYNCHRONOUS.contains(s)).or(cands.first().copied());
                        let got = p.take_next(allowed);
                        prop_assert_eq!(got.map(|i| i.signo as u8), expect);
                        if let Some(s) = expect {
                            prop_assert_eq!(got.map(|i| i.pid), model.remove(&s));
                        }
                    }
                    Op::Discard(bits) => {
                        p.discard(SigSet(bits));
                        model.retain(|&s, _| !SigSet(bits).contains(s));
                    }
                }
                let set: u64 = model.keys().fold(0, |a, &s| a | SigSet::of(s).0);
                prop_assert_eq!(p.set(), SigSet(set));
                prop_assert_eq!(p.infos.len(), model.len());
            }
        }
    }
}
