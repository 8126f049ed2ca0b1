//! Tests of `queue.rs`, kept out of the file a student edits in lab 5 (the module is still
//! `queue::tests`).

use super::*;

#[test]
fn the_picture_in_the_module_docs() {
    let mut q = QueueIntegrator::new();
    q.enter(10).unwrap(); // t1: 1
    q.enter(20).unwrap(); // t2: 2
    q.enter(30).unwrap(); // t3: 3
    q.exit(40).unwrap(); //  t4: 1 (two leave at once)
    q.exit(40).unwrap();
    q.exit(50).unwrap(); //  t5: 0
    assert_eq!(q.cnt(), 0);
    assert_eq!(q.lentime(), 10 + 2 * 10 + 3 * 10 + 10);
    assert_eq!(q.time(), 40);
    assert_eq!(q.lastupdate(), 50);
}

#[test]
fn idle_time_is_not_busy_time() {
    let mut q = QueueIntegrator::new();
    q.enter(100).unwrap();
    q.exit(150).unwrap();
    q.enter(1000).unwrap();
    q.exit(1010).unwrap();
    assert_eq!((q.time(), q.lentime()), (60, 60));
}

#[test]
fn extra_exit_is_refused_and_counted() {
    let mut q = QueueIntegrator::new();
    assert_eq!(q.exit(5), Err(KstatError::QueueUnderflow));
    assert_eq!(q.underflows(), 1);
    assert_eq!(q, QueueIntegrator { underflows: 1, ..QueueIntegrator::new() });
}

#[test]
fn overflow_is_refused_and_counted() {
    let mut q = QueueIntegrator::new();
    q.set_cnt(0, u32::MAX);
    assert_eq!(q.enter(1), Err(KstatError::QueueOverflow));
    assert_eq!((q.overflows(), q.cnt()), (1, u32::MAX));
    // A huge length times a long interval wraps rather than panicking.
    q.update(i64::MAX);
    q.exit(i64::MAX).unwrap();
}

#[test]
fn backwards_clock_adds_nothing() {
    let mut q = QueueIntegrator::new();
    q.enter(100).unwrap();
    q.enter(50).unwrap(); // clock went back: count changes, no area, lastupdate stays
    assert_eq!((q.cnt(), q.lentime(), q.lastupdate()), (2, 0, 100));
    assert_eq!(q.clock_regressions(), 1);
    q.exit(110).unwrap();
    assert_eq!(q.lentime(), 20);
    assert_eq!(q.enter(-5), Ok(()));
    assert_eq!(q.clock_regressions(), 2);
}

#[test]
fn settled_folds_the_open_interval() {
    let mut q = QueueIntegrator::new();
    q.enter(10).unwrap();
    q.enter(10).unwrap();
    let s = q.settled(25);
    assert_eq!((s.time(), s.lentime(), s.lastupdate(), s.cnt()), (15, 30, 25, 2));
    assert_eq!(q.lentime(), 0, "the original is untouched");
    let early = q.settled(5);
    assert_eq!(early, q, "a reader behind the provider sees the stored values");
    assert_eq!(QueueIntegrator::new().settled(99).time(), 0);
}

#[test]
fn set_cnt_integrates_the_old_length() {
    let mut q = QueueIntegrator::new();
    q.set_cnt(0, 4);
    q.set_cnt(10, 1);
    q.set_cnt(20, 0);
    assert_eq!((q.lentime(), q.time()), (50, 20));
}
