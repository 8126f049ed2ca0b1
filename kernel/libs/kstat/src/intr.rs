//! # Interrupt kstats (`KSTAT_TYPE_INTR`): five counters per interrupt source
//!
//! An interrupt source (a device's vector, the timer) publishes how many interrupts of
//! each kind it took:
//!
//! * *hard* — raised by the device itself (the PIT's clock tick too, as Solaris counts its
//!   clock interrupt);
//! * *soft* — raised by the system through a software interrupt;
//! * *watchdog* — from a periodic timer call (a driver's watchdog routine; Tally has none);
//! * *spurious* — the handler ran but found nothing to service;
//! * *multsvc* — serviced just before returning from another interrupt ("multiple service").
//!
//! The handler calls [`IntrStats::bump`] with the kind; `kstat -p` prints the counters as
//! `module:instance:name:hard` and so on. Counters are 32 bits and wrap (`uint_t` in
//! Solaris); readers take differences modulo 2^32.

use tally_uapi::kstat::KstatIntr;

pub use tally_uapi::kstat::IntrKind;

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
        assert_eq!(IntrKind::MultSvc.name(), "multiple_service");
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
