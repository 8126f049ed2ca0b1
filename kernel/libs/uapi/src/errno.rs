//! Linux errno values. System calls return `-errno` on failure, exactly as Linux does,
//! so user programs (and students) can read them with the numbers they already know.

pub const EPERM: i32 = 1;
pub const ENOENT: i32 = 2;
pub const ESRCH: i32 = 3;
pub const EINTR: i32 = 4;
pub const EIO: i32 = 5;
pub const ENXIO: i32 = 6;
pub const E2BIG: i32 = 7;
pub const ENOEXEC: i32 = 8;
pub const EBADF: i32 = 9;
pub const ECHILD: i32 = 10;
pub const EAGAIN: i32 = 11;
pub const ENOMEM: i32 = 12;
pub const EACCES: i32 = 13;
pub const EFAULT: i32 = 14;
pub const EBUSY: i32 = 16;
pub const EEXIST: i32 = 17;
pub const ENODEV: i32 = 19;
pub const ENOTDIR: i32 = 20;
pub const EISDIR: i32 = 21;
pub const EINVAL: i32 = 22;
pub const ENFILE: i32 = 23;
pub const EMFILE: i32 = 24;
/// Not a typewriter: a terminal `ioctl` on a descriptor that is not a terminal, or a request
/// the terminal does not know.
pub const ENOTTY: i32 = 25;
pub const EFBIG: i32 = 27;
pub const ENOSPC: i32 = 28;
/// Illegal seek: `lseek` on a pipe, socket or the console.
pub const ESPIPE: i32 = 29;
/// Read-only file system: writing where the file system cannot (the ramdisk under `/bin`).
pub const EROFS: i32 = 30;
pub const EPIPE: i32 = 32;
pub const ERANGE: i32 = 34;
pub const ENAMETOOLONG: i32 = 36;
pub const ENOSYS: i32 = 38;
pub const ENOTEMPTY: i32 = 39;
/// No data available: CSA's answer for a process in no job (`job_getjid`, `csa_ctl`).
pub const ENODATA: i32 = 61;
pub const EPROTO: i32 = 71;
pub const ENOTSOCK: i32 = 88;
pub const EMSGSIZE: i32 = 90;
pub const ENOPROTOOPT: i32 = 92;
pub const EPROTONOSUPPORT: i32 = 93;
/// Socket type not supported (a netlink socket asked for a type other than raw or datagram).
pub const ESOCKTNOSUPPORT: i32 = 94;
pub const EOPNOTSUPP: i32 = 95;
pub const EAFNOSUPPORT: i32 = 97;
pub const EADDRINUSE: i32 = 98;
pub const ENOBUFS: i32 = 105;
pub const ENOTCONN: i32 = 107;
/// Connection timed out: also what a timed `futex` wait answers when its time runs out.
pub const ETIMEDOUT: i32 = 110;
pub const ECONNREFUSED: i32 = 111;
