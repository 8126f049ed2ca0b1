//! `MsaClock` without the `accounting` feature: everything reads zero.

use super::*;

#[test]
fn everything_reads_zero() {
    let mut c = MsaClock::new(100, MicroState::OnActiveQueue);
    c.switch(200, MicroState::OncpuUsr);
    assert_eq!(c.snapshot(300), [0; NR_MICROSTATES]);
    assert_eq!(c.created(), 0);
    assert_eq!(c.delays(300), crate::DelayStats::ZERO);
    assert_eq!(c.delays_as_if_switched(300, MicroState::Interrupted, 400), crate::DelayStats::ZERO);
    assert_eq!(core::mem::size_of::<MsaClock>(), 0);
    // Its vvar page stays zero (the header says accounting is off, and the reader reports
    // zeros without reading it, as the system call does).
    let zero = tally_uapi::msa::vvar::ThreadClock { seq: 0, state: 0, last_change: 0, clocks: [0; NR_MICROSTATES] };
    assert_eq!(c.user_view(), zero);
}
