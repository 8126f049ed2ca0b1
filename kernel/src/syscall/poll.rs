//! `poll(fds, nfds, timeout_ms)` and `ppoll(fds, nfds, tmo_p, sigmask, sigsetsize)`: wait
//! until one of several descriptors is ready.
//!
//! 1. `nfds` above 1024 (Linux's default `RLIMIT_NOFILE`) is `EINVAL`; the `pollfd` array
//!    is read in (`EFAULT`) and checked writable before anything waits (Tally's rule: a bad
//!    pointer changes nothing; Linux finds it at the end);
//! 2. each descriptor is looked up once; the call holds its open file until it returns, so
//!    a `close` by another thread meanwhile does not pull a wait queue from under it;
//! 3. with interrupts off, each file is asked what it is ready for
//!    (`OpenFile::poll_ready`, `file/readiness.rs`) and `revents` set by Linux's rules
//!    (`tally_usync::poll::revents`: POLLNVAL for a descriptor not open, POLLERR and POLLHUP
//!    whether asked or not, negative `fd`s skipped). If any is non-zero, or the time is up,
//!    the call returns how many; otherwise the task sleeps on every file's wait queue at once
//!    (`sync::WaitSet`) in POLL_SLEEP until one is woken, the deadline passes (the tick
//!    wakes it), its process is killed or a signal comes (`EINTR` once the handler has run), and
//!    asks again;
//! 4. the array is written back.
//!
//! Timeouts: `poll`'s in milliseconds (negative: none, 0: do not wait); `ppoll`'s a
//! `timespec` (NULL: none; invalid: `EINVAL`), and the time left is written back into it,
//! as Linux does. `ppoll`'s signal mask: NULL or a `sigsetsize` of 8 (`EINVAL` otherwise),
//! read (`EFAULT`), and the caller's mask for the wait ([`wait_mask`]).

use alloc::sync::Arc;
use alloc::vec::Vec;
use tally_runqueue::SleepKind;
use tally_sig::{SigSet, ERESTARTNOHAND};
use tally_uapi::errno::EINVAL;
use tally_uapi::poll::{PollFd, SIGSET_SIZE};
use tally_uapi::syscall::Timespec;
use tally_usync::poll as rules;
use tally_usync::Timeout;

use super::futex_call::tsc_deadline;
use super::{int_arg, usercopy, Args, SysResult};
use crate::file::OpenFile;
use crate::proc;
use crate::sync::WaitSet;

/// `poll(fds, nfds, timeout_ms)`.
pub fn poll(a: &Args) -> SysResult {
    do_poll(a[0], a[1], rules::timeout_ms(int_arg(a[2])))
}

/// `ppoll(fds, nfds, tmo_p, sigmask, sigsetsize)`.
pub fn ppoll(a: &Args) -> SysResult {
    let (fds, nfds, tmo, sigmask, sigsetsize) = (a[0], a[1], a[2], a[3], a[4]);
    let ts = if tmo == 0 {
        None
    } else {
        let t = usercopy::read_timespec(tmo)?;
        Some((t.tv_sec, t.tv_nsec))
    };
    let timeout = rules::timeout_ts(ts)?;
    let mask = if sigmask == 0 {
        None
    } else {
        if sigsetsize != SIGSET_SIZE {
            return Err(EINVAL);
        }
        Some(u64::from_ne_bytes(usercopy::read_array::<8>(sigmask)?))
    };
    let start = hal::tsc::read();
    let result = wait_mask(mask, || do_poll(fds, nfds, timeout));
    if let Timeout::After(total) = timeout {
        // The time left, as Linux's `poll_select_finish` writes it (a failure to write is
        // not the call's failure).
        let elapsed = crate::base::time::clock().ticks_to_ns(hal::tsc::read().saturating_sub(start));
        let (tv_sec, tv_nsec) = rules::remaining(total, elapsed);
        let _ = usercopy::write_timespec(tmo, &Timespec { tv_sec, tv_nsec });
    }
    result
}

/// Run `wait` with the caller's signal mask replaced by `mask` (`ppoll`'s), as Linux's
/// `set_user_sigmask`: the old mask comes back at once if no signal cut the wait short, or
/// once the handler of the one that did has run (its frame holds the old mask).
fn wait_mask(mask: Option<u64>, wait: impl FnOnce() -> SysResult) -> SysResult {
    let Some(mask) = mask else { return wait() };
    proc::begin_wait_mask(SigSet(mask));
    let result = wait();
    if result != Err(ERESTARTNOHAND) {
        proc::end_wait_mask();
    }
    result
}

/// One `pollfd`'s descriptor, looked up once.
enum Watched {
    /// A negative `fd`: skipped.
    Skip,
    /// Not an open descriptor: POLLNVAL.
    Closed,
    Open(Arc<OpenFile>),
}

fn do_poll(addr: u64, nfds: u64, timeout: Timeout) -> SysResult {
    let n = rules::check_nfds(nfds)?;
    let bytes = n as u64 * 8;
    let mut raw = alloc::vec![0u8; n * 8];
    usercopy::copy_from_user(addr, &mut raw)?;
    usercopy::check(addr, bytes, true)?;
    let mut fds: Vec<PollFd> = raw.as_chunks::<8>().0.iter().map(|c| PollFd::from_bytes(*c)).collect();
    let watched: Vec<Watched> = fds
        .iter()
        .map(|p| match p.fd {
            fd if fd < 0 => Watched::Skip,
            fd => proc::current_file(fd).map_or(Watched::Closed, Watched::Open),
        })
        .collect();
    let deadline = tsc_deadline(timeout);
    let mut set = WaitSet::new();
    let outcome = loop {
        let pass = hal::cpu::without_interrupts(|| {
            set.clear();
            let mut count = 0;
            for (p, w) in fds.iter_mut().zip(&watched) {
                let ready = match w {
                    Watched::Skip => Some(0),
                    Watched::Closed => None,
                    Watched::Open(f) => Some(f.poll_ready(&mut set)),
                };
                p.revents = rules::revents(p.fd, p.events, ready);
                count += usize::from(p.revents != 0);
            }
            if count > 0 || deadline.is_some_and(|d| hal::tsc::read() >= d) {
                return Some(Ok(count as u64));
            }
            if !set.sleep(SleepKind::Poll, deadline) {
                // Killed, or a signal: `EINTR` once its handler has run (Linux's
                // ERESTARTNOHAND: a signal that runs no handler restarts the wait).
                return Some(Err(ERESTARTNOHAND));
            }
            None
        });
        if let Some(r) = pass {
            break r;
        }
    };
    drop(set);
    if outcome.is_ok() {
        for (chunk, p) in raw.as_chunks_mut::<8>().0.iter_mut().zip(&fds) {
            chunk.copy_from_slice(&p.to_bytes());
        }
        usercopy::copy_to_user(addr, &raw)?;
    }
    outcome
}
