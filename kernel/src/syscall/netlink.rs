//! Bus sockets: `socket`, `bind`, `sendto`, `recvfrom`, `sendmsg`, `recvmsg`, `setsockopt`,
//! `getsockopt`.
//!
//! The calls are Linux's, for the one kind of socket Tally has:
//! `socket(AF_NETLINK, SOCK_RAW | SOCK_DGRAM, NETLINK_GENERIC)` — a port on the kernel's
//! message bus (the `bus` layer, framed like generic netlink: `tally_uapi::netlink`). Anything
//! else is `EAFNOSUPPORT`/`EPROTONOSUPPORT`. A socket is a file descriptor: `write` is
//! `send`, `read` is `recv`, `close` closes it (and drops its listener registrations).
//!
//! * `sendto(fd, buf, len, flags, addr, addrlen)`: `buf` holds one or more whole netlink
//!   messages (at most `MAX_SEND` bytes, else `EMSGSIZE`); `addr`, if given, must be a
//!   `sockaddr_nl` naming the kernel (port 0). Replies and errors are queued on the socket.
//! * `recvfrom(fd, buf, len, flags, addr, addrlen)`: one whole datagram; sleeps
//!   (INTERRUPTIBLE_SLEEP) while none is queued unless `MSG_DONTWAIT` (`EAGAIN`). A datagram
//!   longer than `len` is cut (the rest is lost, as on Linux); `MSG_TRUNC` returns its real
//!   length. After the socket dropped a message because its receive buffer was full, the
//!   next call fails once with `ENOBUFS` (Linux taskstats' flow control).
//! * `sendmsg(fd, msg, flags)`, `recvmsg(fd, msg, flags)`: the same with Linux's `struct
//!   msghdr` (`tally_uapi::netlink::MsgHdr`): the request gathered from `msg_iov`, the
//!   datagram scattered over it; `msg_name` as `sendto`'s/`recvfrom`'s address. `recvmsg`
//!   sets `MSG_TRUNC` in `msg_flags` when the datagram was longer than the buffers, and
//!   `msg_controllen` to 0 (the bus sends no control data; control data given to `sendmsg`
//!   is ignored, as netlink ignores what it does not use). `msg_iovlen` above `IOV_MAX`:
//!   `EMSGSIZE`; `MSG_OOB`: `EOPNOTSUPP`, as Linux's netlink.
//! * `setsockopt/getsockopt(fd, SOL_SOCKET, SO_RCVBUF, ...)`: the receive buffer in bytes.
//!   Linux doubles the value given (it charges `skb` overhead too); Tally charges each
//!   datagram exactly its length and does not double. Other options: `ENOPROTOOPT`.
//!
//! **I/O accounting.** `sendto` and `recvfrom` do not count in the task's `read_char`,
//! `write_char`, `read_syscalls`, `write_syscalls` (taskstats' rchar/wchar/syscr/syscw), as
//! on Linux, where those are counted by `vfs_read`/`vfs_write` and a socket's
//! `sendmsg`/`recvmsg` path never passes there. `read` and `write` on a socket descriptor do
//! pass there on Linux, and are counted here too (by `io.rs`, like any other `read`/`write`).

use tally_uapi::errno::{EFAULT, EINVAL, EMSGSIZE, ENOPROTOOPT, ENOTSOCK, EOPNOTSUPP};
use tally_uapi::netlink::{
    MsgHdr, SockaddrNl, AF_NETLINK, MAX_SEND, MSG_CMSG_CLOEXEC, MSG_DONTWAIT, MSG_TRUNC, SOCK_CLOEXEC, SOCK_NONBLOCK,
    SOL_SOCKET, SO_RCVBUF,
};
use tally_uapi::uio::IOV_MAX;

use super::io::file;
use super::uio::Iov;
use super::{int_arg, usercopy, Args, SysResult};
use crate::file::OpenFile;
use crate::{acct, bus, proc};

fn with_socket<R>(fd: i32, f: impl FnOnce(&bus::Socket) -> Result<R, i32>) -> Result<R, i32> {
    let file = file(fd)?;
    match &*file {
        OpenFile::Socket(s) => f(s),
        _ => Err(ENOTSOCK),
    }
}

/// `socket(domain, type, protocol)`.
pub fn socket(a: &Args) -> SysResult {
    let (domain, ty, protocol) = (int_arg(a[0]) as u32, int_arg(a[1]) as u32, int_arg(a[2]) as u32);
    let files = proc::current_files().ok_or(EINVAL)?;
    let nonblock = ty & SOCK_NONBLOCK != 0;
    let sock = acct::open_socket(domain, ty & !(SOCK_NONBLOCK | SOCK_CLOEXEC), protocol, nonblock)?;
    Ok(files.install(OpenFile::Socket(sock), ty & SOCK_CLOEXEC != 0)? as u64)
}

/// Read a `sockaddr_nl` of `len` bytes at `addr` (`EINVAL` if too short or not netlink).
fn read_sockaddr(addr: u64, len: u64) -> Result<SockaddrNl, i32> {
    if len < SockaddrNl::SIZE as u64 {
        return Err(EINVAL);
    }
    let sa = SockaddrNl::from_bytes(&usercopy::read_array::<{ SockaddrNl::SIZE }>(addr)?);
    if sa.nl_family != AF_NETLINK as u16 {
        return Err(EINVAL);
    }
    Ok(sa)
}

/// `bind(fd, addr, addrlen)`: choose the socket's port id (0: the kernel picks one).
pub fn bind(a: &Args) -> SysResult {
    let sa = read_sockaddr(a[1], a[2])?;
    if sa.nl_groups != 0 {
        return Err(EINVAL); // no multicast groups on Tally's bus
    }
    with_socket(int_arg(a[0]), |s| s.bind(sa.nl_pid))?;
    Ok(0)
}

/// Requests up to this many bytes are copied into a buffer on the kernel stack; longer ones
/// (up to `MAX_SEND`) into an allocated one. Every request a program such as `getdelays`
/// sends (a GET is 28 bytes, a family lookup 36, a cpumask registration about as much) is
/// under it. Small, because the buffer is zeroed on every call before the copy fills it.
const SEND_ON_STACK: usize = 64;

/// Copy `len` bytes of request from user memory and hand them to the bus.
pub fn send_from(sock: &bus::Socket, addr: u64, len: u64) -> SysResult {
    if len > MAX_SEND as u64 {
        return Err(EMSGSIZE);
    }
    let len = len as usize;
    let mut small = [0u8; SEND_ON_STACK];
    let mut large = alloc::vec::Vec::new();
    let buf = match small.get_mut(..len) {
        Some(b) => b,
        None => {
            large.resize(len, 0);
            &mut large[..]
        }
    };
    usercopy::copy_from_user(addr, buf)?;
    // A taskstats GET is answered from the tasks' accounting, read by `acct`.
    Ok(acct::send(sock, buf)? as u64)
}

/// `sendto(fd, buf, len, flags, addr, addrlen)`.
pub fn sendto(a: &Args) -> SysResult {
    let (fd, buf, len, addr, addrlen) = (int_arg(a[0]), a[1], a[2], a[4], a[5]);
    if addr != 0 {
        let sa = read_sockaddr(addr, addrlen)?;
        if sa.nl_pid != 0 {
            return Err(tally_uapi::errno::ECONNREFUSED); // only the kernel listens on the bus
        }
    }
    let file = file(fd)?;
    match &*file {
        OpenFile::Socket(s) => send_from(s, buf, len),
        _ => Err(ENOTSOCK),
    }
}

/// Receive one datagram into `len` bytes at `addr`.
pub fn recv_into(sock: &bus::Socket, addr: u64, len: u64, flags: u32) -> SysResult {
    // Check the buffer before sleeping, so a bad pointer fails at once and loses nothing.
    usercopy::check(addr, len, true)?;
    let want = len as usize;
    let reply = |n: usize, full: usize| Ok(if flags & MSG_TRUNC != 0 { full } else { n } as u64);
    // A datagram already waiting is copied straight out under the bus lock, by the direct
    // copy (which cannot block); if that cannot take it, the path below does.
    if let Some(full) = sock.recv_copy(|d| usercopy::copy_to_user_direct(addr, &d[..d.len().min(want)]))? {
        return reply(full.min(want), full);
    }
    let msg = sock.recv(flags & MSG_DONTWAIT != 0)?;
    let n = msg.len().min(want);
    let copied = usercopy::copy_to_user(addr, &msg[..n]);
    let full = msg.len();
    sock.recycle(msg); // its buffer carries the next reply
    copied?;
    reply(n, full)
}

/// Receive one datagram scattered over `iov`: `(bytes copied, the datagram's length)`.
pub fn recv_iov(sock: &bus::Socket, iov: &Iov, flags: u32) -> Result<(u64, usize), i32> {
    iov.check(true)?;
    let want = iov.total as usize;
    if let Some(full) = sock.recv_copy(|d| iov.scatter_direct(0, &d[..d.len().min(want)]))? {
        return Ok((full.min(want) as u64, full));
    }
    let msg = sock.recv(flags & MSG_DONTWAIT != 0)?;
    let n = msg.len().min(want);
    let copied = iov.scatter(&msg[..n]);
    let full = msg.len();
    sock.recycle(msg);
    copied?;
    Ok((n as u64, full))
}

/// Send the bytes of `iov`, gathered, as one request (at most `MAX_SEND`: `EMSGSIZE`).
pub fn send_iov(sock: &bus::Socket, iov: &Iov) -> SysResult {
    if iov.total > MAX_SEND as u64 {
        return Err(EMSGSIZE);
    }
    let buf = iov.gather(iov.total as usize)?;
    Ok(acct::send(sock, &buf)? as u64)
}

/// Read the `struct msghdr` at `addr` and its iovec array.
fn read_msghdr(addr: u64) -> Result<(MsgHdr, Iov), i32> {
    let m = MsgHdr::from_bytes(&usercopy::read_array::<{ MsgHdr::SIZE }>(addr)?);
    if m.iovlen > IOV_MAX as u64 {
        return Err(EMSGSIZE);
    }
    let iov = Iov::from_user_len(m.iov, m.iovlen as i64)?;
    Ok((m, iov))
}

/// `MSG_OOB`: netlink has no out-of-band data.
const MSG_OOB: u32 = 0x1;

/// `sendmsg(fd, msg, flags)`.
pub fn sendmsg(a: &Args) -> SysResult {
    let (fd, flags) = (int_arg(a[0]), int_arg(a[2]) as u32);
    if flags & MSG_OOB != 0 {
        return Err(EOPNOTSUPP);
    }
    let file = file(fd)?;
    let OpenFile::Socket(s) = &*file else { return Err(ENOTSOCK) };
    let (m, iov) = read_msghdr(a[1])?;
    if m.name != 0 && m.namelen != 0 {
        let sa = read_sockaddr(m.name, u64::from(m.namelen))?;
        if sa.nl_pid != 0 {
            return Err(tally_uapi::errno::ECONNREFUSED); // only the kernel listens on the bus
        }
    }
    send_iov(s, &iov)
}

/// `recvmsg(fd, msg, flags)`.
pub fn recvmsg(a: &Args) -> SysResult {
    let (fd, addr, flags) = (int_arg(a[0]), a[1], int_arg(a[2]) as u32);
    if flags & !(MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC) != 0 {
        return Err(EINVAL);
    }
    let file = file(fd)?;
    let OpenFile::Socket(s) = &*file else { return Err(ENOTSOCK) };
    let (m, iov) = read_msghdr(addr)?;
    // The header is written back (namelen, controllen, flags): check before sleeping.
    usercopy::check(addr, MsgHdr::SIZE as u64, true)?;
    if m.name != 0 {
        if (m.namelen as i32) < 0 {
            return Err(EINVAL);
        }
        usercopy::check(m.name, u64::from(m.namelen).min(SockaddrNl::SIZE as u64), true)?;
    }
    let (n, full) = recv_iov(s, &iov, flags)?;
    if m.name != 0 {
        // Every datagram comes from the kernel: port 0.
        let sa = SockaddrNl { nl_family: AF_NETLINK as u16, ..Default::default() }.to_bytes();
        usercopy::copy_to_user(m.name, &sa[..(m.namelen as usize).min(sa.len())])?;
        usercopy::copy_to_user(addr + MsgHdr::NAMELEN_AT as u64, &(SockaddrNl::SIZE as u32).to_le_bytes())?;
    }
    usercopy::write_u64(addr + MsgHdr::CONTROLLEN_AT as u64, 0)?;
    let out_flags = if full as u64 > n { MSG_TRUNC } else { 0 };
    usercopy::copy_to_user(addr + MsgHdr::FLAGS_AT as u64, &out_flags.to_le_bytes())?;
    Ok(if flags & MSG_TRUNC != 0 { full as u64 } else { n })
}

/// `recvfrom(fd, buf, len, flags, addr, addrlen)`.
pub fn recvfrom(a: &Args) -> SysResult {
    let (fd, buf, len, flags, addr, addrlen_ptr) = (int_arg(a[0]), a[1], a[2], int_arg(a[3]) as u32, a[4], a[5]);
    if flags & !(MSG_DONTWAIT | MSG_TRUNC) != 0 {
        return Err(EINVAL);
    }
    if addr != 0 {
        if addrlen_ptr == 0 {
            return Err(EFAULT);
        }
        let cap = usercopy::read_i32(addrlen_ptr)?;
        if cap < 0 {
            return Err(EINVAL);
        }
        usercopy::check(addr, (cap as u64).min(SockaddrNl::SIZE as u64), true)?;
    }
    let file = file(fd)?;
    let OpenFile::Socket(s) = &*file else { return Err(ENOTSOCK) };
    let n = recv_into(s, buf, len, flags)?;
    if addr != 0 {
        // Every datagram comes from the kernel: port 0.
        let sa = SockaddrNl { nl_family: AF_NETLINK as u16, ..Default::default() }.to_bytes();
        let cap = usercopy::read_i32(addrlen_ptr)?.max(0) as usize;
        usercopy::copy_to_user(addr, &sa[..cap.min(sa.len())])?;
        usercopy::write_i32(addrlen_ptr, SockaddrNl::SIZE as i32)?;
    }
    Ok(n)
}

/// `setsockopt(fd, level, name, value, len)`.
pub fn setsockopt(a: &Args) -> SysResult {
    let (fd, level, name, val, len) = (int_arg(a[0]), int_arg(a[1]) as u32, int_arg(a[2]) as u32, a[3], a[4]);
    with_socket(fd, |s| {
        if level != SOL_SOCKET || name != SO_RCVBUF {
            return Err(ENOPROTOOPT);
        }
        if len < 4 {
            return Err(EINVAL);
        }
        let v = usercopy::read_i32(val)?;
        // Negative values are taken as 0, which the bus raises to its minimum (as Linux).
        s.set_rcvbuf(v.max(0) as u32)?;
        Ok(0)
    })
}

/// `getsockopt(fd, level, name, value, len_ptr)`.
pub fn getsockopt(a: &Args) -> SysResult {
    let (fd, level, name, val, len_ptr) = (int_arg(a[0]), int_arg(a[1]) as u32, int_arg(a[2]) as u32, a[3], a[4]);
    with_socket(fd, |s| {
        if level != SOL_SOCKET || name != SO_RCVBUF {
            return Err(ENOPROTOOPT);
        }
        let cap = usercopy::read_i32(len_ptr)?;
        if cap < 4 {
            return Err(EINVAL);
        }
        usercopy::write_i32(val, s.rcvbuf()? as i32)?;
        usercopy::write_i32(len_ptr, 4)?;
        Ok(0)
    })
}
