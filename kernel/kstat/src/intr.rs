//! # Interrupt kstats (`KSTAT_TYPE_INTR`): five counters per interrupt source
//!
//! An interrupt source (a device's vector, the timer) publishes how many interrupts of
//! each kind it took:
//!
//! * *hard* — raised by the device itself;
//! * *soft* — raised by the system through a software interrupt;
//! * *watchdog* — from a periodic timer call;
//! * *spurious* — the handler ran but found nothing to service;
//! * *multsvc* — serviced just before returning from another interrupt ("multiple service").
//!
//! The handler calls [`IntrStats::bump`] with the kind; `kstat -p` prints the counters as
//! `module:instance:name:hard` and so on. Counters are 32 bits and wrap (`uint_t` in
//! Solaris); readers take differences modulo 2^32.

use tally_uapi::kstat::{
    KstatIntr, KSTAT_INTR_HARD, KSTAT_INTR_MULTSVC, KSTAT_INTR_NAMES, KSTAT_INTR_SOFT,
    KSTAT_INTR_SPURIOUS, KSTAT_INTR_WATCHDOG,
};

/// The five kinds of interrupt, numbered as `KSTAT_INTR_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntrKind {
    Hard = KSTAT_INTR_HARD as isize,
    Soft = KSTAT_INTR_SOFT as isize,
    Watchdog = KSTAT_INTR_WATCHDOG as isize,
    Spurious = KSTAT_INTR_SPURIOUS as isize,
    Multsvc = KSTAT_INTR_MULTSVC as isize,
}

impl IntrKind {
    pub const ALL: [IntrKind; 5] =
        [IntrKind::Hard, IntrKind::Soft, IntrKind::Watchdog, IntrKind::Spurious, IntrKind::Multsvc];

    /// The kind with `KSTAT_INTR_*` number `i`, if there is one.
    pub fn from_index(i: usize) -> Option<Self> {
        Self::ALL.get(i).copied()
    }
    /// Its `KSTAT_INTR_*` number, the index into `intrs`.
    pub fn index(self) -> usize {
        self as usize
    }
    /// The statistic name `kstat -p` prints ("hard", "soft", ...).
    pub fn name(self) -> &'static str {
        KSTAT_INTR_NAMES[self.index()]
    }
}

/// The data of an interrupt kstat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntrStats {
    rec: KstatIntr,
}

impl IntrStats {
    pub const fn new() -> Self {
        IntrStats { rec: KstatIntr { intrs: [0; 5] } }
    }
    /// One more interrupt of this kind.
    pub fn bump(&mut self, kind: IntrKind) {
        self.add(kind, 1);
    }
    /// `n` more interrupts of this kind (wrapping).
    pub fn add(&mut self, kind: IntrKind, n: u32) {
        let c = &mut self.rec.intrs[kind.index()];
        *c = c.wrapping_add(n);
    }
    pub fn count(&self, kind: IntrKind) -> u32 {
        self.rec.intrs[kind.index()]
    }
    /// The `kstat_intr_t` a reader gets.
    pub fn record(&self) -> KstatIntr {
        self.rec
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_solaris_numbering() {
        for (i, k) in IntrKind::ALL.into_iter().enumerate() {
            assert_eq!(k.index(), i);
            assert_eq!(IntrKind::from_index(i), Some(k));
        }
        assert_eq!(IntrKind::from_index(5), None);
        assert_eq!(IntrKind::Multsvc.name(), "multsvc");
        assert_eq!(IntrKind::Hard.index(), 0);
    }

    #[test]
    fn counting_and_wrapping() {
        let mut s = IntrStats::new();
        s.bump(IntrKind::Hard);
        s.bump(IntrKind::Hard);
        s.bump(IntrKind::Spurious);
        s.add(IntrKind::Watchdog, u32::MAX);
        s.bump(IntrKind::Watchdog);
        assert_eq!(s.record().intrs, [2, 0, 0, 1, 0]);
        assert_eq!(s.count(IntrKind::Hard), 2);
    }
}
