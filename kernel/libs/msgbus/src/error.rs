//! # Errors: positive errno values inside, negative ones on the wire
//!
//! The bus speaks Linux's language for failure. Inside Rust every fallible function
//! returns `Result<_, i32>` whose error is a **positive** errno from
//! [`tally_uapi::errno`] (`Err(EINVAL)`), so the kernel's system-call layer turns it into
//! `-errno` with one minus sign. On the wire, a request that fails is answered with an
//! `NLMSG_ERROR` message whose `struct nlmsgerr` carries the **negative** value, exactly as
//! Linux's `netlink_ack()` writes it; an acknowledgement carries 0.
//!
//! Where each errno comes from:
//!
//! | errno            | raised by                                                              |
//! |------------------|------------------------------------------------------------------------|
//! | `EBADF`          | any call naming a socket that is not open (a stale [`SockId`](crate::SockId)) |
//! | `EAFNOSUPPORT`   | `open` with a domain other than `AF_NETLINK`                            |
//! | `EINVAL`         | `open` with a socket type out of range or unknown type flags; `send` of fewer than 16 bytes |
//! | `EINVAL`         | `bind` of a bound socket to another port id                              |
//! | `EINVAL`         | on the wire: a bad `nlmsg_len`, a payload shorter than `genlmsghdr`, malformed attributes |
//! | `EINVAL`         | on the wire: a bad cpumask, a GET with no attribute it knows             |
//! | [`ESOCKTNOSUPPORT`] | `open` with a type other than `SOCK_RAW`/`SOCK_DGRAM` (Linux's `netlink_create`) |
//! | `EPROTONOSUPPORT`| `open` with a protocol other than `NETLINK_GENERIC`                     |
//! | `EMFILE`         | `open` when [`MAX_SOCKETS`](crate::bus::MAX_SOCKETS) are open           |
//! | [`EADDRINUSE`]   | `bind` to a port id another socket holds                                |
//! | `EMSGSIZE`       | `send` of more than [`MAX_SEND`](crate::bus::MAX_SEND) bytes; a message too big to build |
//! | `ENOBUFS`        | `recv`, once, after datagrams were dropped for lack of receive buffer   |
//! | `ENOENT`         | on the wire: unknown family id; `GETFAMILY` of an unknown name or id    |
//! | `EOPNOTSUPP`     | on the wire: unknown command, or a dump request (`NLM_F_DUMP`)          |
//! | `EPERM`          | on the wire: an admin-only command (`GENL_ADMIN_PERM`) from uid ≠ 0     |
//! | `E2BIG`          | on the wire: a cpumask longer than `TASKSTATS_CPUMASK_MAXLEN` (Linux's `parse()`) |
//! | `ESRCH`          | on the wire: TASKSTATS GET of a pid/tgid the kernel does not know       |
//! | `EEXIST`         | `register_family` with a name already registered                        |
//! | `ENOSPC`         | `register_family` when the family ids (up to `GENL_MAX_ID`) are used up  |

pub use tally_uapi::errno::*;

/// The largest errno Linux hands out (`MAX_ERRNO`); anything else is a bug in a handler.
pub const MAX_ERRNO: i32 = 4095;

/// Turns whatever a family handler returned as an error into a valid positive errno:
/// a negative value is accepted as `-errno` (a C habit), zero or an out-of-range value
/// becomes `EINVAL` — an error must never turn into an acknowledgement.
pub fn normalize_errno(e: i32) -> i32 {
    let e = if e < 0 { e.checked_neg().unwrap_or(EINVAL) } else { e };
    if (1..=MAX_ERRNO).contains(&e) {
        e
    } else {
        EINVAL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_normalized_to_positive_errnos() {
        assert_eq!(normalize_errno(ESRCH), ESRCH);
        assert_eq!(normalize_errno(-ESRCH), ESRCH);
        assert_eq!(normalize_errno(0), EINVAL);
        assert_eq!(normalize_errno(i32::MIN), EINVAL);
        assert_eq!(normalize_errno(5000), EINVAL);
        assert_eq!(EADDRINUSE, 98);
    }
}
