//! The line statistics' unit tests (kept out of `line_stats.rs`, which lab 4 hands out for editing).

use super::*;

#[test]
fn event_timer_keeps_min_max_and_last() {
    let mut t = EventTimer::new();
    t.record(10, 15, 5);
    t.record(100, 130, 20);
    t.record(200, 203, 3);
    assert_eq!((t.num_events, t.elapsed_time, t.min_time, t.max_time), (3, 28, 3, 20));
    assert_eq!((t.start_time, t.stop_time), (200, 203));
}

#[test]
fn kinds_use_solaris_numbers() {
    assert_eq!(IntrKind::Hard as u32, 0);
    assert_eq!(IntrKind::Soft as u32, 1);
    assert_eq!(IntrKind::Watchdog as u32, 2);
    assert_eq!(IntrKind::Spurious as u32, 3);
    assert_eq!(IntrKind::MultSvc as u32, 4);
}
