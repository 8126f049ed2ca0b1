//! Tests of `socket.rs` (kept apart: lab 8 hands out socket.rs for editing).

use super::*;
use alloc::vec;

#[test]
fn fills_drops_and_reports_enobufs_once() {
    let mut q = RecvQueue::new();
    q.set_rcvbuf(0);
    assert_eq!(q.rcvbuf(), MIN_RCVBUF);
    let mut fitted = 0;
    for _ in 0..10 {
        if q.offer(vec![0; 500]) {
            fitted += 1;
        }
    }
    assert_eq!(fitted, 4); // 4 * 500 <= 2304 < 5 * 500
    let s = q.stats();
    assert_eq!((s.produced, s.delivered, s.dropped, s.queued), (10, 4, 6, 4));
    assert!(q.readable());
    assert_eq!(q.recv(), Err(ENOBUFS));
    for _ in 0..4 {
        assert_eq!(q.recv().unwrap().map(|d| d.len()), Some(500));
    }
    assert_eq!(q.recv(), Ok(None));
    assert!(!q.readable());
    let s = q.stats();
    assert_eq!((s.received, s.enobufs_reported, s.queued_bytes), (4, 1, 0));
    assert_eq!(s.produced, s.delivered + s.dropped);
}

#[test]
fn a_datagram_larger_than_the_whole_buffer_is_dropped_and_signalled() {
    let mut q = RecvQueue::new();
    q.set_rcvbuf(MIN_RCVBUF);
    assert!(!q.offer(vec![0; MIN_RCVBUF as usize + 1]));
    assert!(q.readable());
    assert_eq!(q.recv(), Err(ENOBUFS));
    assert_eq!(q.recv(), Ok(None));
    q.set_rcvbuf(u32::MAX);
    assert_eq!(q.rcvbuf(), MAX_RCVBUF);
}

#[test]
fn a_lost_datagram_counts_as_a_drop_and_reports_enobufs_once() {
    let mut q = RecvQueue::new();
    assert!(q.offer(vec![1; 10]));
    q.lose(0);
    let s = q.stats();
    assert_eq!((s.produced, s.delivered, s.dropped, s.bytes_dropped, s.queued), (2, 1, 1, 0, 1));
    assert!(q.readable() && q.enobufs_pending());
    assert_eq!(q.recv(), Err(ENOBUFS));
    assert_eq!(q.recv(), Ok(Some(vec![1; 10])), "what was queued before is still there");
    assert_eq!(q.recv(), Ok(None));
    // On an empty queue the loss alone makes the socket readable (a sleeping reader wakes).
    q.lose(7);
    assert!(q.readable());
    assert_eq!(q.recv_if(|_| panic!("nothing queued")), Err(ENOBUFS));
    assert_eq!(q.recv(), Ok(None));
    let s = q.stats();
    assert_eq!((s.produced, s.dropped, s.bytes_dropped, s.enobufs_reported), (3, 2, 7, 2));
    assert_eq!(s.produced, s.delivered + s.dropped);
    assert_eq!(s.delivered, s.received + s.queued);
}

#[test]
fn recv_if_dequeues_only_what_is_taken() {
    let mut q = RecvQueue::new();
    assert_eq!(q.recv_if(|_| true), Ok(None));
    assert!(q.offer(vec![1; 10]));
    assert!(q.offer(vec![2; 20]));
    assert_eq!(q.recv_if(|d| d.len() == 20), Ok(None), "declined: still queued");
    assert_eq!(q.stats().queued, 2);
    assert_eq!(q.recv_if(|d| d == [1; 10]), Ok(Some(vec![1; 10])));
    q.set_rcvbuf(0);
    assert!(!q.offer(vec![3; MIN_RCVBUF as usize + 1]));
    assert_eq!(q.recv_if(|_| panic!("ENOBUFS comes first")), Err(ENOBUFS));
    assert_eq!(q.recv_if(|_| true), Ok(Some(vec![2; 20])));
    let s = q.stats();
    assert_eq!((s.received, s.queued, s.queued_bytes, s.enobufs_reported), (2, 0, 0, 1));
    assert_eq!(s.delivered, s.received + s.queued);
}

#[test]
fn shrinking_keeps_what_is_queued() {
    let mut q = RecvQueue::new();
    for _ in 0..10 {
        assert!(q.offer(vec![1; 1000]));
    }
    q.set_rcvbuf(MIN_RCVBUF);
    assert!(!q.offer(vec![1; 16]));
    assert_eq!(q.stats().queued, 10);
    assert_eq!(q.peek().map(<[u8]>::len), Some(1000));
}

#[test]
fn offer_charges_each_datagram_its_bytes_and_frees_them_on_recv() {
    let mut q = RecvQueue::new();
    q.set_rcvbuf(MIN_RCVBUF); // 2304 bytes
    assert!(q.offer(vec![1; 1000]), "1000 of 2304 bytes used: it fits");
    assert!(q.offer(vec![2; 1000]), "2000 of 2304 bytes used: it fits");
    assert_eq!(q.stats().queued_bytes, 2000, "each queued datagram is charged its length");
    assert!(!q.offer(vec![3; 305]), "2000 + 305 > 2304: it must be dropped, not queued");
    assert!(q.offer(vec![4; 304]), "2000 + 304 == 2304: exactly full still fits");
    let s = q.stats();
    assert_eq!(
        (s.produced, s.delivered, s.dropped, s.queued, s.queued_bytes),
        (4, 3, 1, 3, 2304),
        "(produced, delivered, dropped, queued, queued_bytes) after 3 fits and 1 drop"
    );
    assert_eq!((s.bytes_delivered, s.bytes_dropped), (2304, 305), "(bytes_delivered, bytes_dropped)");
    assert!(!q.offer(vec![5; 1]), "a full buffer takes not even one byte");
    assert_eq!(q.recv(), Err(ENOBUFS), "the drops are reported first");
    assert_eq!(q.recv(), Ok(Some(vec![1; 1000])), "then the oldest datagram");
    assert_eq!(q.stats().queued_bytes, 1304, "a received datagram gives its bytes back to the buffer");
    assert!(q.offer(vec![6; 1000]), "1304 + 1000 <= 2304: room again after the receive");
    let s = q.stats();
    assert_eq!(s.produced, s.delivered + s.dropped, "produced == delivered + dropped");
    assert_eq!(s.delivered, s.received + s.queued, "delivered == received + queued");
}
