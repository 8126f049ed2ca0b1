//! # Futex wait queues: who sleeps on which word
//!
//! A futex is a 32-bit word in user memory that threads agree on; the kernel keeps no state
//! for it except, while someone sleeps on it, a queue of sleepers. `FUTEX_WAIT(uaddr, val)`
//! sleeps if the word still holds `val` (the check and the queueing are one step under the
//! kernel's futex lock, so a `FUTEX_WAKE` after the user's store cannot be missed), and
//! `FUTEX_WAKE(uaddr, n)` wakes up to `n` of them. This module is the queues: [`Futexes`],
//! generic over how the kernel names a task, with Linux's rules for wake counts and bitsets
//! (`kernel/futex/waitwake.c`, `requeue.c`), and the decoding of `op` ([`decode`]) and of
//! a wait's timeout ([`timeout`]).
//!
//! **Keys.** Linux keys a private futex by (`mm`, address) and a shared one by the page it
//! lies in. Tally has no memory shared between address spaces (`MAP_SHARED` is refused), so
//! one key serves both: ([`FutexKey::space`], [`FutexKey::addr`]), the address space being
//! whatever the kernel uses to tell two apart (its `Vm`'s address). Threads share their
//! process's space, so they meet on its futexes; another process's word at the same
//! address is another futex.
//!
//! **A waiter knows where it is.** Each task waits on at most one futex, so the queues keep
//! an index from task to key: a task that wakes for another reason (its timeout, its
//! process being killed) takes itself off with [`Futexes::cancel`], whose answer also tells
//! it whether a wake-up came first (then the wait succeeded, as in Linux's
//! `futex_unqueue`). Requeueing moves waiters between keys, so the index, not the key the
//! waiter started on, is the truth.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec::Vec;
use tally_uapi::errno::{EINVAL, ENOSYS};
use tally_uapi::futex::*;

use crate::Timeout;

/// Which futex: an address space and an address in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FutexKey {
    pub space: u64,
    pub addr: u64,
}

#[derive(Clone, Copy, Debug)]
struct Waiter<W> {
    who: W,
    bitset: u32,
}

/// Every futex that has sleepers: a FIFO queue per key, and where each task waits.
#[derive(Debug)]
pub struct Futexes<W> {
    queues: BTreeMap<FutexKey, VecDeque<Waiter<W>>>,
    waiting: BTreeMap<W, FutexKey>,
}

impl<W: Copy + Ord> Default for Futexes<W> {
    fn default() -> Self {
        Self::new()
    }
}

/// Linux's wake count: `nr_wake` (an `int`) ≤ 0 still wakes one (`futex_wake` counts
/// after waking).
fn wake_limit(n: i32) -> usize {
    n.max(1) as usize
}

impl<W: Copy + Ord> Futexes<W> {
    pub const fn new() -> Self {
        Futexes { queues: BTreeMap::new(), waiting: BTreeMap::new() }
    }

    /// `who` sleeps on `key`, woken by wakes whose bitset meets `bitset` (non-zero: the
    /// caller checked). A task waits on one futex at a time: an old entry is dropped.
    pub fn enqueue(&mut self, key: FutexKey, who: W, bitset: u32) {
        self.cancel(who);
        self.queues.entry(key).or_default().push_back(Waiter { who, bitset });
        self.waiting.insert(who, key);
    }

    /// Take `who` off its queue if it is still on one (its wait ended by timeout or
    /// interruption): true. False: it was woken (or never waited).
    pub fn cancel(&mut self, who: W) -> bool {
        let Some(key) = self.waiting.remove(&who) else { return false };
        if let Some(q) = self.queues.get_mut(&key) {
            q.retain(|w| w.who != who);
            if q.is_empty() {
                self.queues.remove(&key);
            }
        }
        true
    }

    /// Is `who` waiting (not yet woken)?
    pub fn is_waiting(&self, who: W) -> bool {
        self.waiting.contains_key(&who)
    }

    /// The futex `who` waits on.
    pub fn key_of(&self, who: W) -> Option<FutexKey> {
        self.waiting.get(&who).copied()
    }

    /// How many sleep on `key`.
    pub fn waiters(&self, key: FutexKey) -> usize {
        self.queues.get(&key).map_or(0, VecDeque::len)
    }

    /// How many sleep on any futex.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// `FUTEX_WAKE(_BITSET)`: take up to `n` waiters of `key` whose bitset meets `bitset`
    /// (oldest first) off the queue and return them, for the kernel to make runnable.
    pub fn wake(&mut self, key: FutexKey, n: i32, bitset: u32) -> Vec<W> {
        let limit = wake_limit(n);
        let mut woken = Vec::new();
        if let Some(q) = self.queues.get_mut(&key) {
            q.retain(|w| {
                if woken.len() < limit && w.bitset & bitset != 0 {
                    woken.push(w.who);
                    false
                } else {
                    true
                }
            });
            if q.is_empty() {
                self.queues.remove(&key);
            }
        }
        for w in &woken {
            self.waiting.remove(w);
        }
        woken
    }

    /// `FUTEX_(CMP_)REQUEUE`: wake up to `nr_wake` waiters of `from` (here: at least one if
    /// there are any, as Linux's loop does only when `nr_requeue` leaves room), then move up to
    /// `nr_requeue` more to `to`, oldest first. Returns the woken and how many moved; the call
    /// returns their sum. Negative counts are the caller's `EINVAL`.
    pub fn requeue(&mut self, from: FutexKey, to: FutexKey, nr_wake: u32, nr_requeue: u32) -> (Vec<W>, usize) {
        let (nr_wake, nr_requeue) = (nr_wake as usize, nr_requeue as usize);
        let mut woken = Vec::new();
        let mut moved = Vec::new();
        if let Some(q) = self.queues.get_mut(&from) {
            // Linux: stop once `task_count - nr_wake >= nr_requeue`, i.e. at
            // nr_wake + nr_requeue tasks (wakes first).
            while woken.len() + moved.len() < nr_wake.saturating_add(nr_requeue) {
                let Some(w) = q.pop_front() else { break };
                if woken.len() < nr_wake {
                    woken.push(w.who);
                } else {
                    moved.push(w);
                }
            }
            if q.is_empty() {
                self.queues.remove(&from);
            }
        }
        for w in &woken {
            self.waiting.remove(w);
        }
        let count = moved.len();
        if !moved.is_empty() {
            let q = self.queues.entry(to).or_default();
            if from == to {
                // Requeued onto itself: back at the front, in their order.
                for w in moved.into_iter().rev() {
                    q.push_front(w);
                }
            } else {
                for w in moved {
                    self.waiting.insert(w.who, to);
                    q.push_back(w);
                }
            }
        }
        (woken, count)
    }
}

/// A futex operation, decoded from `op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// `FUTEX_WAIT` (bitset: match any) and `FUTEX_WAIT_BITSET`.
    Wait { bitset_op: bool },
    /// `FUTEX_WAKE` and `FUTEX_WAKE_BITSET`.
    Wake { bitset_op: bool },
    /// `FUTEX_REQUEUE` (`compare`: false) and `FUTEX_CMP_REQUEUE`.
    Requeue { compare: bool },
}

/// What [`decode`] found in `op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub cmd: Cmd,
    /// `FUTEX_PRIVATE_FLAG`.
    pub private: bool,
    /// `FUTEX_CLOCK_REALTIME`.
    pub realtime: bool,
}

/// Decode `op` as Linux's `do_futex` does: `FUTEX_CLOCK_REALTIME` only with a wait (else
/// `ENOSYS`); the operations Tally serves; `ENOSYS` for the others — `FUTEX_FD` (gone
/// from Linux too), `FUTEX_WAKE_OP` and the priority-inheritance ones, which musl's
/// threads do not use — and for unknown numbers, as Linux answers.
pub fn decode(op: u32) -> Result<Request, i32> {
    let cmd = op & FUTEX_CMD_MASK;
    let realtime = op & FUTEX_CLOCK_REALTIME != 0;
    let cmd = match cmd {
        FUTEX_WAIT => Cmd::Wait { bitset_op: false },
        FUTEX_WAIT_BITSET => Cmd::Wait { bitset_op: true },
        FUTEX_WAKE => Cmd::Wake { bitset_op: false },
        FUTEX_WAKE_BITSET => Cmd::Wake { bitset_op: true },
        FUTEX_REQUEUE => Cmd::Requeue { compare: false },
        FUTEX_CMP_REQUEUE => Cmd::Requeue { compare: true },
        _ => return Err(ENOSYS),
    };
    if realtime && !matches!(cmd, Cmd::Wait { .. }) {
        return Err(ENOSYS);
    }
    Ok(Request { cmd, private: op & FUTEX_PRIVATE_FLAG != 0, realtime })
}

/// A wait's timeout from its `timespec` (`None`: a NULL pointer): relative for
/// `FUTEX_WAIT`, absolute for `FUTEX_WAIT_BITSET` (CLOCK_MONOTONIC, or CLOCK_REALTIME with
/// `FUTEX_CLOCK_REALTIME`), as Linux's `futex_init_timeout`. `EINVAL` for an invalid
/// `timespec`.
pub fn timeout(req: &Request, ts: Option<(i64, i64)>) -> Result<Timeout, i32> {
    let Some((sec, nsec)) = ts else { return Ok(Timeout::Never) };
    let ns = crate::timespec_ns(sec, nsec).ok_or(EINVAL)?;
    Ok(match req.cmd {
        Cmd::Wait { bitset_op: true } if req.realtime => Timeout::AtRealtime(ns),
        Cmd::Wait { bitset_op: true } => Timeout::AtMonotonic(ns),
        _ => Timeout::After(ns),
    })
}

/// The bitset a wait or wake uses: `val3` for the `_BITSET` forms (0 is `EINVAL`), every
/// bit for the plain ones.
pub fn bitset(bitset_op: bool, val3: u32) -> Result<u32, i32> {
    match (bitset_op, val3) {
        (false, _) => Ok(FUTEX_BITSET_MATCH_ANY),
        (true, 0) => Err(EINVAL),
        (true, b) => Ok(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const A: FutexKey = FutexKey { space: 1, addr: 0x1000 };
    const B: FutexKey = FutexKey { space: 1, addr: 0x1004 };
    const OTHER_SPACE: FutexKey = FutexKey { space: 2, addr: 0x1000 };
    const ANY: u32 = FUTEX_BITSET_MATCH_ANY;

    #[test]
    fn fifo_wake_counts() {
        let mut f = Futexes::new();
        for t in 1..=4u32 {
            f.enqueue(A, t, ANY);
        }
        assert_eq!(f.wake(A, 2, ANY), [1, 2]);
        assert_eq!(f.wake(A, 0, ANY), [3], "nr_wake 0 still wakes one, as Linux");
        assert_eq!(f.wake(A, -5, ANY), [4]);
        assert_eq!(f.wake(A, i32::MAX, ANY), Vec::<u32>::new());
        assert!(f.is_empty());
    }

    #[test]
    fn spaces_are_separate() {
        let mut f = Futexes::new();
        f.enqueue(A, 1u32, ANY);
        f.enqueue(OTHER_SPACE, 2, ANY);
        assert_eq!(f.wake(A, i32::MAX, ANY), [1]);
        assert_eq!(f.waiters(OTHER_SPACE), 1);
    }

    #[test]
    fn cancel_says_whether_woken() {
        let mut f = Futexes::new();
        f.enqueue(A, 1u32, ANY);
        f.enqueue(A, 2, ANY);
        assert_eq!(f.wake(A, 1, ANY), [1]);
        assert!(!f.cancel(1), "woken first: the wait succeeded");
        assert!(f.cancel(2), "still queued: timed out or interrupted");
        assert!(!f.cancel(2));
        assert!(f.is_empty() && f.waiters(A) == 0);
    }

    #[test]
    fn bitsets() {
        let mut f = Futexes::new();
        f.enqueue(A, 1u32, 0b01);
        f.enqueue(A, 2, 0b10);
        assert_eq!(f.wake(A, i32::MAX, 0b10), [2]);
        assert_eq!(f.wake(A, i32::MAX, 0b10), Vec::<u32>::new());
        assert_eq!(f.wake(A, 1, ANY), [1]);
        assert_eq!(bitset(true, 0), Err(EINVAL));
        assert_eq!(bitset(false, 0), Ok(ANY));
    }

    #[test]
    fn requeue_moves_the_rest() {
        let mut f = Futexes::new();
        for t in 1..=5u32 {
            f.enqueue(A, t, ANY);
        }
        let (woken, moved) = f.requeue(A, B, 1, 2);
        assert_eq!((woken, moved), (vec![1], 2));
        assert_eq!((f.waiters(A), f.waiters(B)), (2, 2));
        assert_eq!(f.key_of(2), Some(B));
        assert_eq!(f.key_of(4), Some(A));
        assert!(f.cancel(2) && f.waiters(B) == 1);
        assert_eq!(f.wake(B, 9, ANY), [3]);
        // musl's condition variables: wake 0, requeue 1.
        let (woken, moved) = f.requeue(A, B, 0, 1);
        assert_eq!((woken.len(), moved), (0, 1));
    }

    #[test]
    fn waiting_again_replaces() {
        let mut f = Futexes::new();
        f.enqueue(A, 1u32, ANY);
        f.enqueue(B, 1, ANY);
        assert_eq!((f.waiters(A), f.waiters(B), f.len()), (0, 1, 1));
    }

    #[test]
    fn ops() {
        let r = decode(FUTEX_WAIT_PRIVATE).unwrap();
        assert_eq!((r.cmd, r.private, r.realtime), (Cmd::Wait { bitset_op: false }, true, false));
        assert_eq!(decode(FUTEX_WAKE).unwrap().cmd, Cmd::Wake { bitset_op: false });
        assert_eq!(decode(FUTEX_CMP_REQUEUE_PRIVATE).unwrap().cmd, Cmd::Requeue { compare: true });
        assert!(decode(FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME).unwrap().realtime);
        assert_eq!(decode(FUTEX_WAKE | FUTEX_CLOCK_REALTIME), Err(ENOSYS));
        for op in [FUTEX_FD, FUTEX_WAKE_OP, FUTEX_LOCK_PI, FUTEX_UNLOCK_PI, FUTEX_TRYLOCK_PI, 14, 99, u32::MAX] {
            assert_eq!(decode(op), Err(ENOSYS), "op {op}");
        }
    }

    #[test]
    fn timeouts() {
        let wait = decode(FUTEX_WAIT).unwrap();
        let bits = decode(FUTEX_WAIT_BITSET).unwrap();
        let bits_rt = decode(FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME).unwrap();
        assert_eq!(timeout(&wait, None), Ok(Timeout::Never));
        assert_eq!(timeout(&wait, Some((1, 2))), Ok(Timeout::After(1_000_000_002)));
        assert_eq!(timeout(&bits, Some((3, 0))), Ok(Timeout::AtMonotonic(3_000_000_000)));
        assert_eq!(timeout(&bits_rt, Some((3, 0))), Ok(Timeout::AtRealtime(3_000_000_000)));
        assert_eq!(timeout(&wait, Some((0, 1_000_000_000))), Err(EINVAL));
        assert_eq!(timeout(&wait, Some((-1, 0))), Err(EINVAL));
    }

    #[derive(Clone, Debug)]
    enum Step {
        Wait(u8, u8),
        Wake(u8, i8),
        Cancel(u8),
        Requeue(u8, u8, u8, u8),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0..8u8, 0..3u8).prop_map(|(t, k)| Step::Wait(t, k)),
            (0..3u8, -2..4i8).prop_map(|(k, n)| Step::Wake(k, n)),
            (0..8u8).prop_map(Step::Cancel),
            (0..3u8, 0..3u8, 0..3u8, 0..3u8).prop_map(|(a, b, w, r)| Step::Requeue(a, b, w, r)),
        ]
    }

    proptest! {
        /// Against a model (a list of (task, key) in arrival order): every task is woken at
        /// most once per wait, in FIFO order, never one that does not wait, and the index
        /// always agrees with the queues.
        #[test]
        fn model(steps in proptest::collection::vec(step(), 0..64)) {
            let key = |k: u8| FutexKey { space: 1, addr: 4 * k as u64 };
            let mut f = Futexes::new();
            let mut model: Vec<(u8, FutexKey)> = Vec::new();
            for s in steps {
                match s {
                    Step::Wait(t, k) => {
                        f.enqueue(key(k), t, ANY);
                        model.retain(|&(w, _)| w != t);
                        model.push((t, key(k)));
                    }
                    Step::Wake(k, n) => {
                        let woken = f.wake(key(k), n as i32, ANY);
                        let expect: Vec<u8> = model.iter().filter(|&&(_, kk)| kk == key(k)).map(|&(t, _)| t)
                            .take((n as i32).max(1) as usize).collect();
                        prop_assert_eq!(&woken, &expect);
                        model.retain(|(t, _)| !woken.contains(t));
                    }
                    Step::Cancel(t) => {
                        let was = model.iter().any(|&(w, _)| w == t);
                        prop_assert_eq!(f.cancel(t), was);
                        model.retain(|&(w, _)| w != t);
                    }
                    Step::Requeue(a, b, w, r) => {
                        let (woken, moved) = f.requeue(key(a), key(b), w as u32, r as u32);
                        let on_a: Vec<u8> = model.iter().filter(|&&(_, kk)| kk == key(a)).map(|&(t, _)| t).collect();
                        let take = on_a.len().min(w as usize + r as usize);
                        let nw = take.min(w as usize);
                        prop_assert_eq!(&woken[..], &on_a[..nw]);
                        prop_assert_eq!(moved, take - nw);
                        model.retain(|(t, _)| !woken.contains(t));
                        if a != b {
                            // Moved ones go to the back of b's queue, in order.
                            let movers: Vec<u8> = on_a[nw..take].to_vec();
                            model.retain(|(t, _)| !movers.contains(t));
                            for t in movers {
                                model.push((t, key(b)));
                            }
                        }
                    }
                }
                prop_assert_eq!(f.len(), model.len());
                for &(t, k) in &model {
                    prop_assert_eq!(f.key_of(t), Some(k));
                }
            }
        }
    }
}
