//! # A socket's receive queue and flow control
//!
//! Everything the bus says to a program — replies, errors, acknowledgements, exit records
//! multicast to listeners — lands in the receive queue of one of its sockets, as whole
//! *datagrams*: one `recv` returns exactly one message, never part of one, never two.
//!
//! The queue is bounded by the socket's **receive buffer** (`SO_RCVBUF`): a number of bytes,
//! [`DEFAULT_RCVBUF`] unless set, clamped to [`MIN_RCVBUF`]..=[`MAX_RCVBUF`]. Each queued
//! datagram is charged its length (Linux charges the skb's `truesize`, which is why Linux
//! doubles the value given to `setsockopt`; Tally charges exact bytes and keeps the value as
//! given). A datagram that does not fit in what is free is **dropped**: the sender never
//! waits, because the sender may be a task in the middle of exiting, which must not block on
//! a slow reader. This is the flow control of Linux taskstats ("Flow control for taskstats"
//! in Linux's `Documentation/accounting/taskstats.rst`): the kernel keeps going and tells the
//! reader it lost data.
//!
//! A message the bus could not even build for a socket (the kernel failing to encode an exit
//! record) is counted the same way, as a drop of 0 bytes ([`RecvQueue::lose`]).
//!
//! Only the datagram that does not fit is dropped; a later, smaller one may still be queued.
//! (Linux is stricter: after an overrun it marks the socket *congested* and drops everything
//! until the reader has emptied the queue. Tally's rule loses less and is easier to count.)
//! A datagram larger than the whole buffer can never be queued: enlarge the buffer.
//!
//! How it tells: after a drop the socket has a pending error, and the next `recv` returns
//! `Err(ENOBUFS)` — **once** — before any queued data, as Linux's `netlink_overrun()` sets
//! `sk_err` and `sock_error()` reports and clears it. Receives then go on normally; the reader
//! knows some records are missing (with TASKSTATS, a gap in the per-CPU sequence numbers says
//! how many) and can enlarge its buffer or split its CPUs over more listeners.
//!
//! Nothing is lost without being counted. For every socket, at every moment:
//!
//! ```text
//!   produced  == delivered + dropped        every datagram offered to it, either way
//!   delivered == received + queued           every queued one was dequeued or still waits
//! ```
//!
//! and `enobufs_reported` counts the `ENOBUFS` returns.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use tally_uapi::netlink::{DEFAULT_RCVBUF, MAX_RCVBUF, MIN_RCVBUF};

use crate::error::ENOBUFS;

/// A socket's counters (see the [module documentation](self) for the invariants).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SocketStats {
    /// The socket's port id, 0 while unbound.
    pub portid: u32,
    /// Datagrams offered to the socket (replies, errors, acks, multicast).
    pub produced: u64,
    /// Datagrams queued.
    pub delivered: u64,
    /// Datagrams dropped for lack of receive buffer.
    pub dropped: u64,
    /// Datagrams dequeued by `recv`.
    pub received: u64,
    /// `recv` calls answered with `ENOBUFS`.
    pub enobufs_reported: u64,
    /// Datagrams waiting in the queue now.
    pub queued: u64,
    /// Bytes they hold.
    pub queued_bytes: u32,
    /// The receive buffer size.
    pub rcvbuf: u32,
    /// Bytes queued in total, and bytes dropped.
    pub bytes_delivered: u64,
    pub bytes_dropped: u64,
}

/// Clamps a requested receive buffer size to [`MIN_RCVBUF`]..=[`MAX_RCVBUF`].
pub fn clamp_rcvbuf(bytes: u32) -> u32 {
    bytes.clamp(MIN_RCVBUF, MAX_RCVBUF)
}

/// A receive queue with its buffer accounting.
#[derive(Clone, Debug)]
pub struct RecvQueue {
    queue: VecDeque<Vec<u8>>,
    queued_bytes: u32,
    rcvbuf: u32,
    enobufs_pending: bool,
    stats: SocketStats,
}

impl Default for RecvQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl RecvQueue {
    pub fn new() -> Self {
        RecvQueue {
            queue: VecDeque::new(),
            queued_bytes: 0,
            rcvbuf: DEFAULT_RCVBUF,
            enobufs_pending: false,
            stats: SocketStats::default(),
        }
    }

    /// Offers a datagram: queued if it fits in the free buffer (returns true), otherwise
    /// dropped, counted, and `ENOBUFS` made pending (returns false). Never blocks.
    pub fn offer(&mut self, datagram: Vec<u8>) -> bool {
        // BEGIN LAB 8: queue it only if its bytes fit in what the buffer has free; else lose it (counted)
        // STUB: self.queue.push_back(datagram);
        // STUB: true
        let len = u32::try_from(datagram.len()).unwrap_or(u32::MAX);
        let fits = self.queued_bytes.checked_add(len).is_some_and(|total| total <= self.rcvbuf);
        if !fits {
            self.lose(len);
            return false;
        }
        self.stats.produced = self.stats.produced.saturating_add(1);
        self.queued_bytes = self.queued_bytes.saturating_add(len);
        self.stats.delivered = self.stats.delivered.saturating_add(1);
        self.stats.bytes_delivered = self.stats.bytes_delivered.saturating_add(u64::from(len));
        self.queue.push_back(datagram);
        true
        // END LAB 8
    }

    /// Counts a datagram of `len` bytes that was meant for this socket but is lost before
    /// it could be offered — produced and dropped, `ENOBUFS` made pending — exactly as if it
    /// had not fitted. For a message the sender could not even build (`len` 0: no bytes
    /// existed), so that nothing is lost without being counted and reported.
    pub fn lose(&mut self, len: u32) {
        // BEGIN LAB 8: a loss is produced and dropped (its bytes too), and the reader must hear of it
        // STUB: let _ = len;
        self.stats.produced = self.stats.produced.saturating_add(1);
        self.stats.dropped = self.stats.dropped.saturating_add(1);
        self.stats.bytes_dropped = self.stats.bytes_dropped.saturating_add(u64::from(len));
        self.enobufs_pending = true;
        // END LAB 8
    }

    /// The next datagram; `Err(ENOBUFS)` once after drops; `Ok(None)` if the queue is empty.
    pub fn recv(&mut self) -> Result<Option<Vec<u8>>, i32> {
        // BEGIN LAB 8: a pending ENOBUFS first, once; then the oldest datagram, its bytes freed
        // STUB: Ok(self.queue.pop_front())
        if self.enobufs_pending {
            self.enobufs_pending = false;
            self.stats.enobufs_reported = self.stats.enobufs_reported.saturating_add(1);
            return Err(ENOBUFS);
        }
        let Some(d) = self.queue.pop_front() else { return Ok(None) };
        let len = u32::try_from(d.len()).unwrap_or(u32::MAX);
        self.queued_bytes = self.queued_bytes.saturating_sub(len);
        self.stats.received = self.stats.received.saturating_add(1);
        Ok(Some(d))
        // END LAB 8
    }

    /// [`recv`](Self::recv), but the next datagram is dequeued only if `take` accepts it
    /// (returns true; it sees the bytes first, e.g. to copy them out): `Ok(None)` if the
    /// queue is empty or `take` declined, and then nothing has changed. `ENOBUFS` comes first,
    /// as from `recv`.
    pub fn recv_if(&mut self, take: impl FnOnce(&[u8]) -> bool) -> Result<Option<Vec<u8>>, i32> {
        if !self.enobufs_pending && !self.queue.front().is_some_and(|d| take(d)) {
            return Ok(None);
        }
        self.recv()
    }

    /// The next datagram without dequeuing it (`MSG_PEEK`).
    pub fn peek(&self) -> Option<&[u8]> {
        self.queue.front().map(Vec::as_slice)
    }

    /// True when `recv` would not return `Ok(None)`: data queued or an error pending.
    pub fn readable(&self) -> bool {
        self.enobufs_pending || !self.queue.is_empty()
    }

    pub fn enobufs_pending(&self) -> bool {
        self.enobufs_pending
    }

    /// Sets the receive buffer (clamped). Datagrams already queued stay, even if they now
    /// exceed it; new ones are dropped until the queue drains below the new size.
    pub fn set_rcvbuf(&mut self, bytes: u32) {
        self.rcvbuf = clamp_rcvbuf(bytes);
    }

    pub fn rcvbuf(&self) -> u32 {
        self.rcvbuf
    }

    /// The counters, with `queued`, `queued_bytes`, `rcvbuf` filled in (`portid` left 0).
    pub fn stats(&self) -> SocketStats {
        SocketStats {
            queued: u64::try_from(self.queue.len()).unwrap_or(u64::MAX),
            queued_bytes: self.queued_bytes,
            rcvbuf: self.rcvbuf,
            ..self.stats
        }
    }
}

#[cfg(test)]
#[path = "socket_tests.rs"]
mod tests;
