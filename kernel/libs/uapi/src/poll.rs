//! `poll(fds, nfds, timeout)` and `ppoll`: Linux's `struct pollfd` and event bits
//! (`<asm-generic/poll.h>`). What each kind of descriptor reports: `docs/user-mode.md`
//! (poll); the rules for `revents` and timeouts: the `tally-usync` crate's `poll` module.

/// One descriptor to watch: `events` asked for, `revents` filled in by the kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PollFd {
    pub fd: i32,
    pub events: i16,
    pub revents: i16,
}

const _: () = assert!(core::mem::size_of::<PollFd>() == 8);

impl PollFd {
    /// Its 8 bytes as Linux lays them out.
    pub fn to_bytes(&self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&self.fd.to_ne_bytes());
        b[4..6].copy_from_slice(&self.events.to_ne_bytes());
        b[6..].copy_from_slice(&self.revents.to_ne_bytes());
        b
    }

    pub fn from_bytes(b: [u8; 8]) -> PollFd {
        PollFd {
            fd: i32::from_ne_bytes([b[0], b[1], b[2], b[3]]),
            events: i16::from_ne_bytes([b[4], b[5]]),
            revents: i16::from_ne_bytes([b[6], b[7]]),
        }
    }
}

/// Data to read.
pub const POLLIN: i16 = 0x0001;
/// Urgent data (Tally's files never have any).
pub const POLLPRI: i16 = 0x0002;
/// Writing would not block.
pub const POLLOUT: i16 = 0x0004;
/// An error condition (always reported, even if not asked for): a pipe's write end with no
/// reader left.
pub const POLLERR: i16 = 0x0008;
/// Hung up (always reported): a pipe's read end with no writer left.
pub const POLLHUP: i16 = 0x0010;
/// `fd` is not an open descriptor (always reported).
pub const POLLNVAL: i16 = 0x0020;
pub const POLLRDNORM: i16 = 0x0040;
pub const POLLRDBAND: i16 = 0x0080;
pub const POLLWRNORM: i16 = 0x0100;
pub const POLLWRBAND: i16 = 0x0200;
pub const POLLMSG: i16 = 0x0400;
pub const POLLRDHUP: i16 = 0x2000;

/// The size of the signal set `ppoll` takes (Linux's `sizeof(sigset_t)` in the kernel: 64
/// signals).
pub const SIGSET_SIZE: u64 = 8;
