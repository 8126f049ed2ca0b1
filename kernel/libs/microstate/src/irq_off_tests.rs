//! `IrqAccounting` without the `accounting` feature: only the depth is kept.

use super::*;

#[test]
fn only_depth_is_kept() {
    let mut irq = IrqAccounting::new();
    let mut task = MsaClock::new(0, MicroState::OncpuSys);
    irq.irq_enter(1, 100, &mut task);
    irq.irq_enter(2, 110, &mut task);
    assert_eq!(irq.depth(), 2);
    assert!(irq.in_irq());
    irq.irq_exit(2, 120, &mut task);
    irq.irq_exit(1, 130, &mut task);
    assert_eq!(irq.depth(), 0);
    assert_eq!(irq.total_handler_ticks(500), 0);
    assert_eq!(irq.line_stats(1).timer.num_events, 0);
    assert_eq!(task.snapshot(500), [0; tally_uapi::msa::NR_MICROSTATES]);
}
