//! Scatter/gather I/O: `readv(2)`/`writev(2)` and the `msg_iov` of `sendmsg`/`recvmsg` take
//! an array of Linux's `struct iovec` (`include/uapi/linux/uio.h`).

/// Most entries in one array (`UIO_MAXIOV`, what `sysconf(_SC_IOV_MAX)` reports): more is
/// `EINVAL`.
pub const IOV_MAX: usize = 1024;
/// `struct iovec { void *iov_base; size_t iov_len; }`: 16 bytes.
pub const IOVEC_SIZE: usize = 16;
/// The total of the lengths may not exceed `ssize_t`'s range (`EINVAL`), and one call moves
/// at most `MAX_RW_COUNT` bytes (Linux's `INT_MAX & PAGE_MASK`): a longer request is short.
pub const MAX_RW_COUNT: u64 = 0x7fff_f000;

/// One `struct iovec`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Iovec {
    pub base: u64,
    pub len: u64,
}

impl Iovec {
    pub fn from_bytes(b: &[u8; IOVEC_SIZE]) -> Self {
        let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        Iovec { base: word(0), len: word(8) }
    }
}

/// `getrandom(2)`'s flags (`include/uapi/linux/random.h`).
pub const GRND_NONBLOCK: u32 = 0x1;
pub const GRND_RANDOM: u32 = 0x2;
pub const GRND_INSECURE: u32 = 0x4;
