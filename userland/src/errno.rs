//! # Errors from the kernel
//!
//! A failed system call returns `-errno` in `rax`; [`crate::sys`] turns that into
//! `Err(Errno(n))`. The numbers are Linux's and are defined once, in `tally_uapi::errno`;
//! this module only gives them names for printing, so a program reports
//! `spawn: ENOSYS (function not implemented)` instead of a bare `-38`.
#![forbid(unsafe_code)]

use core::fmt;

use tally_uapi::errno::*;

/// A positive errno value, as a system call reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Errno(pub i32);

impl Errno {
    pub const ENOSYS: Errno = Errno(ENOSYS);

    /// The symbolic name (`"ENOSYS"`), or `None` for a number `tally_uapi` does not define.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            EPERM => "EPERM",
            ENOENT => "ENOENT",
            ESRCH => "ESRCH",
            EINTR => "EINTR",
            EIO => "EIO",
            ENXIO => "ENXIO",
            E2BIG => "E2BIG",
            ENOEXEC => "ENOEXEC",
            EBADF => "EBADF",
            ECHILD => "ECHILD",
            EAGAIN => "EAGAIN",
            ENOMEM => "ENOMEM",
            EACCES => "EACCES",
            EFAULT => "EFAULT",
            EBUSY => "EBUSY",
            EEXIST => "EEXIST",
            ENODEV => "ENODEV",
            EINVAL => "EINVAL",
            ENOSPC => "ENOSPC",
            ENOTDIR => "ENOTDIR",
            EISDIR => "EISDIR",
            ENFILE => "ENFILE",
            EFBIG => "EFBIG",
            ESPIPE => "ESPIPE",
            EROFS => "EROFS",
            ENOTEMPTY => "ENOTEMPTY",
            ENODATA => "ENODATA",
            ERANGE => "ERANGE",
            ENAMETOOLONG => "ENAMETOOLONG",
            ENOSYS => "ENOSYS",
            EPROTO => "EPROTO",
            ENOBUFS => "ENOBUFS",
            EMFILE => "EMFILE",
            ENOTTY => "ENOTTY",
            EPIPE => "EPIPE",
            ENOTSOCK => "ENOTSOCK",
            EMSGSIZE => "EMSGSIZE",
            ENOPROTOOPT => "ENOPROTOOPT",
            EPROTONOSUPPORT => "EPROTONOSUPPORT",
            EOPNOTSUPP => "EOPNOTSUPP",
            EAFNOSUPPORT => "EAFNOSUPPORT",
            EADDRINUSE => "EADDRINUSE",
            ESOCKTNOSUPPORT => "ESOCKTNOSUPPORT",
            ENOTCONN => "ENOTCONN",
            ECONNREFUSED => "ECONNREFUSED",
            _ => return None,
        })
    }

    /// What `strerror` says, in lower case.
    pub const fn description(self) -> &'static str {
        match self.0 {
            EPERM => "operation not permitted",
            ENOENT => "no such file or directory",
            ESRCH => "no such process",
            EINTR => "interrupted system call",
            EIO => "input/output error",
            ENXIO => "no such device or address",
            E2BIG => "argument list too long",
            ENOEXEC => "exec format error",
            EBADF => "bad file descriptor",
            ECHILD => "no child processes",
            EAGAIN => "resource temporarily unavailable",
            ENOMEM => "cannot allocate memory",
            EACCES => "permission denied",
            EFAULT => "bad address",
            EBUSY => "device or resource busy",
            EEXIST => "file exists",
            ENODEV => "no such device",
            EINVAL => "invalid argument",
            ENOSPC => "no space left on device",
            ENOTDIR => "not a directory",
            EISDIR => "is a directory",
            ENFILE => "too many open files in system",
            EFBIG => "file too large",
            ESPIPE => "illegal seek",
            EROFS => "read-only file system",
            ENOTEMPTY => "directory not empty",
            ENODATA => "no data available",
            ERANGE => "numerical result out of range",
            ENAMETOOLONG => "file name too long",
            ENOSYS => "function not implemented",
            EPROTO => "protocol error",
            ENOBUFS => "no buffer space available",
            EMFILE => "too many open files",
            ENOTTY => "inappropriate ioctl for device",
            EPIPE => "broken pipe",
            ENOTSOCK => "socket operation on non-socket",
            EMSGSIZE => "message too long",
            ENOPROTOOPT => "protocol not available",
            EPROTONOSUPPORT => "protocol not supported",
            EOPNOTSUPP => "operation not supported",
            EAFNOSUPPORT => "address family not supported by protocol",
            EADDRINUSE => "address already in use",
            ESOCKTNOSUPPORT => "socket type not supported",
            ENOTCONN => "transport endpoint is not connected",
            ECONNREFUSED => "connection refused",
            _ => "unknown error",
        }
    }

    /// What C's `strerror` prints, capitalised as glibc does (`No such file or directory`),
    /// for the messages of the Unix tools (`cat: /var/x: No such file or directory`).
    pub fn strerror(self) -> impl fmt::Display {
        fmt::from_fn(move |f| {
            let d = self.description();
            let mut chars = d.chars();
            if let Some(c) = chars.next() {
                write!(f, "{}", c.to_ascii_uppercase())?;
            }
            f.write_str(chars.as_str())?;
            if self.name().is_none() {
                write!(f, " {}", self.0)?;
            }
            Ok(())
        })
    }
}

impl fmt::Display for Errno {
    /// `ENOSYS (function not implemented)`, or `errno 99 (unknown error)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => write!(f, "{n} ({})", self.description()),
            None => write!(f, "errno {} ({})", self.0, self.description()),
        }
    }
}
