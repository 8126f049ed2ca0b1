//! The user-space reader of a vvar page (`ThreadClock::ticks_at`) against the kernel's own
//! reading (`MsaClock::snapshot`): the same numbers at the same TSC, whatever the history.

use super::*;
use proptest::prelude::*;

fn state(i: u8) -> MicroState {
    MicroState::ALL[i as usize % NR_MICROSTATES]
}

proptest! {
    /// After any history of switches, the page image read at any `now` gives exactly
    /// `snapshot(now)`; the sequence count moved by one at every switch (so a reader that
    /// straddles one sees it change).
    #[test]
    fn the_page_reads_what_snapshot_reads(
        born in 0u64..1 << 40,
        start in 0u8..13,
        steps in proptest::collection::vec((0u64..1 << 20, 0u8..13), 0..40),
        ahead in 0u64..1 << 20,
        behind in 0u64..1 << 20,
    ) {
        let mut c = MsaClock::new(born, state(start));
        let mut now = born;
        for (n, &(dt, s)) in steps.iter().enumerate() {
            now += dt;
            let before = c.user_view().seq;
            c.switch(now, state(s));
            let view = c.user_view();
            prop_assert_eq!(view.seq, before.wrapping_add(1));
            prop_assert_eq!(view.seq as usize, n + 1);
            prop_assert_eq!(view.ticks_at(now), c.snapshot(now));
        }
        let view = c.user_view();
        prop_assert_eq!(view.microstate(), Some(c.state()));
        prop_assert_eq!(view.last_change, c.last_change());
        prop_assert_eq!(view.clocks, c.settled());
        prop_assert_eq!(view.ticks_at(now + ahead), c.snapshot(now + ahead));
        prop_assert_eq!(view.ticks_at(now.saturating_sub(behind)), c.snapshot(now.saturating_sub(behind)));
        // The accounting identity holds for the page's reading as for the kernel's.
        prop_assert_eq!(view.ticks_at(now + ahead).iter().sum::<u64>(), now + ahead - born);
    }
}
