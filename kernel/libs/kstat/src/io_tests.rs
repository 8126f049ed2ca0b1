//! Tests of `io.rs`, kept out of the file a student edits in lab 5 (the module is still
//! `io::tests`).

use super::*;

#[test]
fn known_lengths_integrate_and_rescale() {
    let mut io = IoStats::new();
    io.set_queue_lengths(10, 2, 1);
    io.set_queue_lengths(30, 0, 1);
    io.set_queue_lengths(40, 0, 0);
    let r = io.kstat_io();
    assert_eq!((r.wtime, r.wlentime, r.rtime, r.rlentime), (20, 40, 30, 30));
    let ns = io.rescaled(|t| t * 3).kstat_io();
    assert_eq!((ns.wtime, ns.wlentime, ns.wlastupdate, ns.rtime), (60, 120, 120, 90));
}

#[test]
fn a_disk_request_lifecycle() {
    let mut io = IoStats::new();
    io.waitq_enter(0).unwrap();
    io.waitq_enter(10).unwrap();
    io.waitq_to_runq(30).unwrap();
    io.runq_exit(70).unwrap();
    io.record_read(4096);
    io.waitq_to_runq(70).unwrap();
    io.runq_exit(100).unwrap();
    io.record_write(512);
    let k = io.kstat_io();
    assert_eq!((k.wcnt, k.rcnt), (0, 0));
    assert_eq!(k.wlentime, 10 + 2 * 20 + 40);
    assert_eq!(k.wtime, 70);
    assert_eq!((k.rlentime, k.rtime), (70, 70));
    assert_eq!((k.wlastupdate, k.rlastupdate), (70, 100));
    assert_eq!((k.reads, k.nread, k.writes, k.nwritten), (1, 4096, 1, 512));
}

#[test]
fn moves_from_an_empty_queue_change_nothing() {
    let mut io = IoStats::new();
    io.runq_enter(5).unwrap();
    let before = io.kstat_io();
    assert_eq!(io.waitq_to_runq(50), Err(KstatError::QueueUnderflow));
    assert_eq!(io.waitq_exit(50), Err(KstatError::QueueUnderflow));
    assert_eq!(io.kstat_io(), before);
    assert_eq!(io.waitq().underflows(), 2);
    io.runq_exit(6).unwrap();
    assert_eq!(io.runq_back_to_waitq(60), Err(KstatError::QueueUnderflow));
    assert_eq!(io.runq_exit(60), Err(KstatError::QueueUnderflow));
    assert_eq!(io.runq().underflows(), 2);
    assert_eq!((io.kstat_io().wcnt, io.kstat_io().rcnt), (0, 0));
}

#[test]
fn snapshot_folds_open_intervals_like_solaris() {
    let mut io = IoStats::new();
    io.waitq_enter(100).unwrap();
    io.runq_enter(100).unwrap();
    io.runq_enter(100).unwrap();
    let s = io.snapshot(1100);
    assert_eq!((s.wtime, s.wlentime, s.wlastupdate), (1000, 1000, 1100));
    assert_eq!((s.rtime, s.rlentime, s.rlastupdate), (1000, 2000, 1100));
    assert_eq!(io.kstat_io().wlentime, 0);
}

#[test]
fn counters_wrap() {
    let mut io = IoStats::new();
    io.record_read(u64::MAX);
    io.record_read(2);
    assert_eq!(io.kstat_io().nread, 1);
}

/// The run-queue kstat's path (`unix:0:runq`): the scheduler sets both lengths at each change
/// in TSC ticks, a reader converts to ns (`rescaled`) and snapshots later (`snapshot`).
#[test]
fn a_run_queue_integrated_in_ticks_reads_in_ns() {
    let mut rq = IoStats::new();
    rq.set_queue_lengths(100, 2, 1); // two waiting, one running from tick 100
    rq.set_queue_lengths(300, 1, 1); // one waiting from tick 300
    rq.set_queue_lengths(400, 0, 0); // idle from tick 400
    rq.set_queue_lengths(500, 3, 0); // three woken at tick 500, none dispatched yet
    let ticks = rq.kstat_io();
    assert_eq!(
        (ticks.wlentime, ticks.wtime),
        (2 * 200 + 100, 300),
        "wait queue in ticks: 2 waiting over 100..300 and 1 over 300..400 (wlentime, wtime)"
    );
    assert_eq!((ticks.rlentime, ticks.rtime), (300, 300), "run queue in ticks: busy 100..400 (rlentime, rtime)");
    assert_eq!(ticks.wcnt, 3, "wcnt: the length set last");
    let ns = rq.rescaled(|t| t * 10).snapshot(5_200);
    assert_eq!(
        (ns.wlentime, ns.wtime, ns.wlastupdate),
        (5_000 + 3 * 200, 3_000 + 200, 5_200),
        "at 5200 ns (tick 520): every time x10, plus 3 waiting over 5000..5200 ns folded in by the snapshot"
    );
    assert_eq!((ns.rlentime, ns.rtime, ns.rcnt), (3_000, 3_000, 0), "run queue in ns, idle since 4000 ns");
}

#[test]
fn a_move_into_a_full_queue_changes_nothing() {
    let mut io = IoStats::new();
    io.set_queue_lengths(0, 1, u32::MAX);
    let before = io.kstat_io();
    assert_eq!(io.waitq_to_runq(10), Err(KstatError::QueueOverflow), "waitq_to_runq into a full run queue");
    assert_eq!(
        io.kstat_io(),
        before,
        "a refused waitq_to_runq must leave both queues untouched (no exit from the wait queue)"
    );
    assert_eq!(
        (io.runq().overflows(), io.waitq().underflows()),
        (1, 0),
        "the refusal is counted once, on the run queue"
    );
    io.set_queue_lengths(20, u32::MAX, 1);
    let before = io.kstat_io();
    assert_eq!(io.runq_back_to_waitq(30), Err(KstatError::QueueOverflow), "runq_back_to_waitq into a full wait queue");
    assert_eq!(io.kstat_io(), before, "a refused runq_back_to_waitq must leave both queues untouched");
    assert_eq!(io.waitq().overflows(), 1, "counted on the wait queue");
}
