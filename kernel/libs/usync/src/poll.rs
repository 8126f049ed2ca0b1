//! # `poll`'s rules: which bits come back, what is counted, how long to wait
//!
//! `poll(fds, nfds, timeout)` asks, for each `struct pollfd`, which of `events` its
//! descriptor is ready for, and sleeps until at least one is (or the time is up). The
//! kernel asks each open file what it is ready for *now* — all of POLLIN, POLLOUT, POLLHUP,
//! POLLERR it could report ([`Ready`]) — and this module turns that into Linux's answer
//! (`fs/select.c`'s `do_pollfd`):
//!
//! * a negative `fd` is skipped: `revents` 0;
//! * a descriptor that is not open: `POLLNVAL`;
//! * otherwise what the file reports, masked by `events` plus POLLERR and POLLHUP, which
//!   are reported whether asked for or not;
//! * the call returns how many entries have a non-zero `revents`.

use tally_uapi::errno::EINVAL;
use tally_uapi::poll::*;

use crate::Timeout;

/// What an open file is ready for now: a set of `POLL*` bits (POLLIN/POLLRDNORM for data to
/// read, POLLOUT/POLLWRNORM for room to write, POLLHUP, POLLERR).
pub type Ready = i16;

/// Every bit a file reports when it never blocks (Linux's `DEFAULT_POLLMASK`): files on
/// disk, the ramdisk's.
pub const ALWAYS_READY: Ready = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM;

/// `revents` for one `pollfd`: `ready` is `None` for a descriptor that is not open.
pub fn revents(fd: i32, events: i16, ready: Option<Ready>) -> i16 {
    if fd < 0 {
        return 0;
    }
    match ready {
        None => POLLNVAL,
        Some(r) => r & (events | POLLERR | POLLHUP),
    }
}

/// The most descriptors one call may watch: Linux refuses more than `RLIMIT_NOFILE` (1024
/// by default) with `EINVAL`.
pub const MAX_NFDS: u64 = 1024;

/// `nfds` checked (`EINVAL` above [`MAX_NFDS`]).
pub fn check_nfds(nfds: u64) -> Result<usize, i32> {
    if nfds > MAX_NFDS {
        return Err(EINVAL);
    }
    Ok(nfds as usize)
}

/// `poll`'s timeout in milliseconds (a C `int`): negative waits for ever, 0 not at all.
pub fn timeout_ms(ms: i32) -> Timeout {
    if ms < 0 {
        Timeout::Never
    } else {
        Timeout::After(ms as u64 * 1_000_000)
    }
}

/// `ppoll`'s timeout, a `timespec` (`None`: a NULL pointer, for ever); `EINVAL` if invalid.
pub fn timeout_ts(ts: Option<(i64, i64)>) -> Result<Timeout, i32> {
    match ts {
        None => Ok(Timeout::Never),
        Some((s, ns)) => crate::timespec_ns(s, ns).map(Timeout::After).ok_or(EINVAL),
    }
}

/// What `ppoll` writes back into its `timespec`: the time left (Linux does, unless the
/// personality asks for sticky timeouts), 0 once it has run out.
pub fn remaining(total_ns: u64, elapsed_ns: u64) -> (i64, i64) {
    let left = total_ns.saturating_sub(elapsed_ns);
    ((left / 1_000_000_000) as i64, (left % 1_000_000_000) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revents_as_linux() {
        assert_eq!(revents(-1, POLLIN, Some(POLLIN)), 0, "negative fds are skipped");
        assert_eq!(revents(7, POLLIN, None), POLLNVAL);
        assert_eq!(revents(7, 0, None), POLLNVAL, "even with no events asked");
        assert_eq!(revents(0, POLLIN, Some(POLLIN | POLLOUT)), POLLIN);
        assert_eq!(revents(0, POLLOUT, Some(POLLIN)), 0);
        assert_eq!(revents(0, 0, Some(POLLHUP | POLLIN)), POLLHUP, "HUP unasked");
        assert_eq!(revents(0, POLLIN, Some(POLLERR)), POLLERR, "ERR unasked");
        assert_eq!(revents(0, POLLRDNORM, Some(ALWAYS_READY)), POLLRDNORM);
    }

    #[test]
    fn timeouts() {
        assert_eq!(timeout_ms(-1), Timeout::Never);
        assert_eq!(timeout_ms(i32::MIN), Timeout::Never);
        assert_eq!(timeout_ms(0), Timeout::After(0));
        assert_eq!(timeout_ms(1500), Timeout::After(1_500_000_000));
        assert_eq!(timeout_ts(None), Ok(Timeout::Never));
        assert_eq!(timeout_ts(Some((0, 5))), Ok(Timeout::After(5)));
        assert_eq!(timeout_ts(Some((0, -5))), Err(EINVAL));
        assert_eq!(remaining(3_000_000_001, 1), (3, 0));
        assert_eq!(remaining(5, 10), (0, 0));
        assert_eq!(check_nfds(1024), Ok(1024));
        assert_eq!(check_nfds(1025), Err(EINVAL));
    }

    proptest::proptest! {
        /// revents never reports a bit that was neither asked for nor always reported, and a
        /// skipped descriptor reports nothing.
        #[test]
        fn only_asked_bits(fd in -3i32..5, events in proptest::prelude::any::<i16>(), ready in proptest::option::of(proptest::prelude::any::<i16>())) {
            let r = revents(fd, events, ready);
            if fd < 0 {
                proptest::prop_assert_eq!(r, 0);
            } else if ready.is_some() {
                proptest::prop_assert_eq!(r & !(events | POLLERR | POLLHUP), 0);
            }
        }
    }
}
