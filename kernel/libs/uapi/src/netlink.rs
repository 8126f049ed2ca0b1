//! Netlink and generic-netlink framing — the wire format of Tally's message bus.
//!
//! The bus (`tally-msgbus`) frames every message exactly like Linux generic netlink, so a
//! reader who knows `<linux/netlink.h>` and `<linux/genetlink.h>` knows this format, and
//! the numbers below are Linux's:
//!
//! ```text
//!   nlmsghdr (16 bytes)  len u32 | type u16 | flags u16 | seq u32 | pid u32
//!   genlmsghdr (4 bytes) cmd u8  | version u8 | reserved u16
//!   attributes           nlattr { len u16, type u16 } payload, padded to 4 bytes (repeat)
//! ```
//!
//! `len` counts the header and the payload but not the padding after it. All integers are
//! little-endian (the host order of x86_64, as on Linux). A message whose `type` is a
//! family id below [`NLMSG_MIN_TYPE`] is a control message ([`NLMSG_ERROR`], ...).

/// Socket domain and protocol for `socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC)`.
pub const AF_NETLINK: u32 = 16;
pub const SOCK_RAW: u32 = 3;
pub const SOCK_DGRAM: u32 = 2;
pub const NETLINK_GENERIC: u32 = 16;

/// `setsockopt`/`getsockopt` levels and options.
pub const SOL_SOCKET: u32 = 1;
pub const SO_RCVBUF: u32 = 8;
/// Linux's `net.core.rmem_default` (212992 bytes): a socket's receive buffer until set.
pub const DEFAULT_RCVBUF: u32 = 212_992;
/// Smallest receive buffer a socket accepts (Linux's `SOCK_MIN_RCVBUF` is 2304).
pub const MIN_RCVBUF: u32 = 2304;
/// Largest receive buffer a socket accepts (Tally's `rmem_max`: 16 MiB).
pub const MAX_RCVBUF: u32 = 16 << 20;

/// `socket` type flags (or-ed into the type).
pub const SOCK_NONBLOCK: u32 = 0o4000;
pub const SOCK_CLOEXEC: u32 = 0o2_000_000;

/// `recvfrom` flags: don't sleep (`EAGAIN` if nothing is queued); return the datagram's
/// real length even if the buffer was shorter.
pub const MSG_DONTWAIT: u32 = 0x40;
pub const MSG_TRUNC: u32 = 0x20;
/// `sendmsg`/`recvmsg` flags accepted and ignored: no signal exists to suppress on the bus,
/// and `MSG_CMSG_CLOEXEC` has no descriptor to apply to (no `SCM_RIGHTS` on the bus).
pub const MSG_NOSIGNAL: u32 = 0x4000;
pub const MSG_CMSG_CLOEXEC: u32 = 0x4000_0000;

/// Linux's `struct msghdr` (`include/linux/socket.h`, 56 bytes on x86_64): `msg_name` (8,
/// a `sockaddr_nl` here), `msg_namelen` (4, then 4 of padding), `msg_iov` (8), `msg_iovlen`
/// (8), `msg_control` (8), `msg_controllen` (8), `msg_flags` (4, then 4 of padding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsgHdr {
    pub name: u64,
    pub namelen: u32,
    pub iov: u64,
    pub iovlen: u64,
    pub control: u64,
    pub controllen: u64,
    pub flags: u32,
}

impl MsgHdr {
    pub const SIZE: usize = 56;
    /// Where `recvmsg` writes back `msg_namelen`, `msg_controllen` and `msg_flags`.
    pub const NAMELEN_AT: usize = 8;
    pub const CONTROLLEN_AT: usize = 40;
    pub const FLAGS_AT: usize = 48;

    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or([0; 4]));
        MsgHdr {
            name: u64_at(0),
            namelen: u32_at(Self::NAMELEN_AT),
            iov: u64_at(16),
            iovlen: u64_at(24),
            control: u64_at(32),
            controllen: u64_at(Self::CONTROLLEN_AT),
            flags: u32_at(Self::FLAGS_AT),
        }
    }
}

/// Largest message `sendto` accepts (bytes).
pub const MAX_SEND: usize = 64 * 1024;

/// `struct sockaddr_nl` (12 bytes): family, padding, port id (0 = the kernel), multicast
/// groups (none exist on Tally's bus: taskstats listeners register a cpumask instead).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SockaddrNl {
    pub nl_family: u16,
    pub nl_pad: u16,
    pub nl_pid: u32,
    pub nl_groups: u32,
}

const _: () = assert!(core::mem::size_of::<SockaddrNl>() == 12);

impl SockaddrNl {
    pub const SIZE: usize = 12;

    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        b[0..2].copy_from_slice(&self.nl_family.to_le_bytes());
        b[2..4].copy_from_slice(&self.nl_pad.to_le_bytes());
        b[4..8].copy_from_slice(&self.nl_pid.to_le_bytes());
        b[8..12].copy_from_slice(&self.nl_groups.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        SockaddrNl {
            nl_family: u16::from_le_bytes([b[0], b[1]]),
            nl_pad: u16::from_le_bytes([b[2], b[3]]),
            nl_pid: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            nl_groups: u32::from_le_bytes([b[8], b[9], b[10], b[11]]),
        }
    }
}

/// Alignment of messages and attributes.
pub const NLMSG_ALIGNTO: usize = 4;
pub const NLMSG_HDRLEN: usize = 16;
pub const GENL_HDRLEN: usize = 4;
pub const NLA_HDRLEN: usize = 4;
pub const NLA_ALIGNTO: usize = 4;
/// Bits of `nla_type` that are flags, not the type.
pub const NLA_F_NESTED: u16 = 1 << 15;
pub const NLA_F_NET_BYTEORDER: u16 = 1 << 14;
pub const NLA_TYPE_MASK: u16 = !(NLA_F_NESTED | NLA_F_NET_BYTEORDER);

/// Round `len` up to the netlink alignment (4).
pub const fn nlmsg_align(len: usize) -> usize {
    (len + NLMSG_ALIGNTO - 1) & !(NLMSG_ALIGNTO - 1)
}

/// `nlmsg_flags`.
pub const NLM_F_REQUEST: u16 = 0x01;
pub const NLM_F_MULTI: u16 = 0x02;
pub const NLM_F_ACK: u16 = 0x04;
pub const NLM_F_ECHO: u16 = 0x08;
/// In an `NLMSG_ERROR` acknowledgement: the offending message's payload was not echoed.
pub const NLM_F_CAPPED: u16 = 0x100;

/// Modifiers of a GET request (Linux's `NLM_F_ROOT`, `NLM_F_MATCH`, `NLM_F_ATOMIC`);
/// both of ROOT and MATCH make a dump request, which Tally's bus does not implement.
pub const NLM_F_ROOT: u16 = 0x100;
pub const NLM_F_MATCH: u16 = 0x200;
pub const NLM_F_ATOMIC: u16 = 0x400;
pub const NLM_F_DUMP: u16 = NLM_F_ROOT | NLM_F_MATCH;

/// Control message types (`nlmsg_type` below [`NLMSG_MIN_TYPE`]).
pub const NLMSG_NOOP: u16 = 0x1;
/// Carries `struct nlmsgerr`: an `i32` error (0 for an acknowledgement, else `-errno`)
/// followed by the offending message's `nlmsghdr`.
pub const NLMSG_ERROR: u16 = 0x2;
pub const NLMSG_DONE: u16 = 0x3;
pub const NLMSG_OVERRUN: u16 = 0x4;
pub const NLMSG_MIN_TYPE: u16 = 0x10;

/// Generic netlink: the controller's fixed family id, and where dynamic ids start.
pub const GENL_ID_CTRL: u16 = NLMSG_MIN_TYPE;
pub const GENL_START_ALLOC: u16 = NLMSG_MIN_TYPE + 3;
pub const GENL_MAX_ID: u16 = 1023;
/// Longest family name, NUL included.
pub const GENL_NAMSIZ: usize = 16;
/// Operation flag: only an administrator (uid 0 in Tally) may use the command.
pub const GENL_ADMIN_PERM: u32 = 0x01;

/// Controller commands (the family "nlctrl", id [`GENL_ID_CTRL`]).
pub const CTRL_CMD_UNSPEC: u8 = 0;
pub const CTRL_CMD_NEWFAMILY: u8 = 1;
pub const CTRL_CMD_DELFAMILY: u8 = 2;
pub const CTRL_CMD_GETFAMILY: u8 = 3;
/// Controller attributes.
pub const CTRL_ATTR_UNSPEC: u16 = 0;
pub const CTRL_ATTR_FAMILY_ID: u16 = 1;
pub const CTRL_ATTR_FAMILY_NAME: u16 = 2;
pub const CTRL_ATTR_VERSION: u16 = 3;
pub const CTRL_ATTR_HDRSIZE: u16 = 4;
pub const CTRL_ATTR_MAXATTR: u16 = 5;

/// Controller attribute: the family's commands, a nest of nests (one per command, numbered
/// from 1) each holding [`CTRL_ATTR_OP_ID`] and [`CTRL_ATTR_OP_FLAGS`], both `u32`.
pub const CTRL_ATTR_OPS: u16 = 6;
pub const CTRL_ATTR_OP_UNSPEC: u16 = 0;
pub const CTRL_ATTR_OP_ID: u16 = 1;
pub const CTRL_ATTR_OP_FLAGS: u16 = 2;
/// The controller family's own name and version (Linux's `genl_ctrl` has version 2).
pub const GENL_CTRL_NAME: &str = "nlctrl";
pub const GENL_CTRL_VERSION: u8 = 2;

/// `struct nlmsgerr`: the payload of an [`NLMSG_ERROR`] — an `i32` error (`-errno`, or 0
/// for an acknowledgement) then a copy of the offending message's header (and, for an
/// error whose reply is not [`NLM_F_CAPPED`], the rest of the offending message).
pub const NLMSGERR_LEN: usize = 4 + NLMSG_HDRLEN;

/// Round an attribute length up to the attribute alignment (4).
pub const fn nla_align(len: usize) -> usize {
    (len + NLA_ALIGNTO - 1) & !(NLA_ALIGNTO - 1)
}

/// `struct nlmsghdr`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NlMsgHdr {
    pub nlmsg_len: u32,
    pub nlmsg_type: u16,
    pub nlmsg_flags: u16,
    pub nlmsg_seq: u32,
    pub nlmsg_pid: u32,
}

const _: () = assert!(core::mem::size_of::<NlMsgHdr>() == NLMSG_HDRLEN);

impl NlMsgHdr {
    pub const SIZE: usize = NLMSG_HDRLEN;

    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        b[0..4].copy_from_slice(&self.nlmsg_len.to_le_bytes());
        b[4..6].copy_from_slice(&self.nlmsg_type.to_le_bytes());
        b[6..8].copy_from_slice(&self.nlmsg_flags.to_le_bytes());
        b[8..12].copy_from_slice(&self.nlmsg_seq.to_le_bytes());
        b[12..16].copy_from_slice(&self.nlmsg_pid.to_le_bytes());
        b
    }

    /// The header at the start of `b`, if `b` is long enough to hold one.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        let b: &[u8; Self::SIZE] = b.get(..Self::SIZE)?.try_into().ok()?;
        Some(NlMsgHdr {
            nlmsg_len: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            nlmsg_type: u16::from_le_bytes([b[4], b[5]]),
            nlmsg_flags: u16::from_le_bytes([b[6], b[7]]),
            nlmsg_seq: u32::from_le_bytes([b[8], b[9], b[10], b[11]]),
            nlmsg_pid: u32::from_le_bytes([b[12], b[13], b[14], b[15]]),
        })
    }
}

/// `struct genlmsghdr`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenlMsgHdr {
    pub cmd: u8,
    pub version: u8,
    pub reserved: u16,
}

const _: () = assert!(core::mem::size_of::<GenlMsgHdr>() == GENL_HDRLEN);

impl GenlMsgHdr {
    pub const SIZE: usize = GENL_HDRLEN;

    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let r = self.reserved.to_le_bytes();
        [self.cmd, self.version, r[0], r[1]]
    }

    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        let b = b.get(..Self::SIZE)?;
        Some(GenlMsgHdr { cmd: b[0], version: b[1], reserved: u16::from_le_bytes([b[2], b[3]]) })
    }
}

/// `struct nlattr` (the header; the payload follows, padded to 4).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NlAttr {
    pub nla_len: u16,
    pub nla_type: u16,
}

const _: () = assert!(core::mem::size_of::<NlAttr>() == NLA_HDRLEN);

impl NlAttr {
    pub const SIZE: usize = NLA_HDRLEN;

    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let l = self.nla_len.to_le_bytes();
        let t = self.nla_type.to_le_bytes();
        [l[0], l[1], t[0], t[1]]
    }

    /// The attribute header at the start of `b`, if `b` is long enough to hold one.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        let b = b.get(..Self::SIZE)?;
        Some(NlAttr { nla_len: u16::from_le_bytes([b[0], b[1]]), nla_type: u16::from_le_bytes([b[2], b[3]]) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_in_linux_byte_order() {
        let h = NlMsgHdr { nlmsg_len: 36, nlmsg_type: 0x10, nlmsg_flags: NLM_F_REQUEST, nlmsg_seq: 7, nlmsg_pid: 42 };
        let b = h.to_bytes();
        assert_eq!(&b[..6], &[36, 0, 0, 0, 0x10, 0]);
        assert_eq!(NlMsgHdr::from_bytes(&b), Some(h));
        assert_eq!(NlMsgHdr::from_bytes(&b[..15]), None);
        let g = GenlMsgHdr { cmd: CTRL_CMD_GETFAMILY, version: 1, reserved: 0 };
        assert_eq!(GenlMsgHdr::from_bytes(&g.to_bytes()), Some(g));
        assert_eq!(nlmsg_align(17), 20);
        assert_eq!(nlmsg_align(16), 16);
        let a = NlAttr { nla_len: 8, nla_type: NLA_F_NESTED | 4 };
        assert_eq!(a.to_bytes(), [8, 0, 4, 0x80]);
        assert_eq!(NlAttr::from_bytes(&a.to_bytes()), Some(a));
        assert_eq!(NlAttr::from_bytes(&[8, 0, 4]), None);
        assert_eq!(nla_align(5), 8);
        assert_eq!(NLM_F_DUMP, 0x300);
    }
}
