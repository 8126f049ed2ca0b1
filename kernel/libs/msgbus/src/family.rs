//! # Families: who answers a request
//!
//! Generic netlink multiplexes many services over one protocol. Each service is a
//! *family* with a name ("nlctrl", "TASKSTATS"), a small numeric id handed out when it
//! registers, a version, and a list of *commands*. A request's `nlmsg_type` is the family
//! id and its `genlmsghdr.cmd` the command; a program that knows only the name asks the
//! controller family ([`crate::ctrl`]) for the id first.
//!
//! A family is a value implementing [`Family`]. The bus does the generic work before it
//! calls [`Family::handle`], in Linux's `genl_rcv_msg()` order: find the family by id
//! (`ENOENT`), check the payload holds the genl header and the family header (`EINVAL`),
//! find the command among [`Family::ops`] (`EOPNOTSUPP`), refuse a command flagged
//! `GENL_ADMIN_PERM` to a sender whose uid is not 0 (`EPERM`; Linux checks
//! `CAP_NET_ADMIN`), refuse dump requests (`EOPNOTSUPP`: Tally has no dumps), and validate
//! the attributes' structure (`EINVAL`). So a handler starts from a [`Request`] whose
//! attributes are known to be well-formed; it still checks their *types* (a `u32` that is not
//! 4 bytes) through the typed getters.
//!
//! The handler answers through its [`FamilyCx`]: it builds replies with
//! [`FamilyCx::reply`] (the right family id, command, version, the request's `seq` and the
//! requester's port id are filled in) and queues them with [`FamilyCx::send_reply`]; it may
//! register the requesting socket as a listener of the family for a set of CPUs. If it
//! returns `Err(errno)` the bus answers `NLMSG_ERROR(-errno)`; if it returns `Ok` and the
//! request carried `NLM_F_ACK`, the bus adds an acknowledgement after the replies.
//!
//! The environment `E` is the kernel's view of the world (its task table, for TASKSTATS),
//! passed by the kernel at each `send` — the bus owns no reference to it.

use alloc::string::String;
use alloc::vec::Vec;

use tally_uapi::netlink::{GenlMsgHdr, NlMsgHdr, GENL_ID_CTRL};

use crate::attr::{Attr, AttrIter};
use crate::bus::{Listeners, SockId};
use crate::cpumask::MAX_CPUS;
use crate::error::EINVAL;
use crate::msg::MsgBuilder;
use crate::socket::RecvQueue;

/// Who sent a request: the task's pid and tgid, and its uid (0 is the administrator).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sender {
    pub pid: u32,
    pub tgid: u32,
    pub uid: u32,
}

impl Sender {
    pub fn is_admin(&self) -> bool {
        self.uid == 0
    }
}

/// One command of a family and its flags (`GENL_ADMIN_PERM`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenlOp {
    pub cmd: u8,
    pub flags: u32,
}

/// What the bus knows about a registered family (what the controller reports).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyInfo {
    pub id: u16,
    pub name: String,
    pub version: u8,
    pub hdrsize: u32,
    pub max_attr: u16,
    pub ops: Vec<GenlOp>,
}

/// A generic-netlink family. See the [module documentation](self).
pub trait Family<E: ?Sized>: Send {
    /// The name the controller resolves (at most 15 bytes).
    fn name(&self) -> &str;
    /// The family's version, reported by the controller and put in replies.
    fn version(&self) -> u8;
    /// The highest attribute type the family reads; others are ignored (Linux's legacy
    /// `nla_parse` behaviour).
    fn max_attr(&self) -> u16;
    /// Bytes of family-specific header after the genl header (0 for every family here).
    fn hdrsize(&self) -> u32 {
        0
    }
    /// The commands and their flags.
    fn ops(&self) -> &[GenlOp];
    /// Handles one request whose command is among [`ops`](Self::ops) and whose attributes
    /// are well-formed. `Err(errno)` (positive) is answered with `NLMSG_ERROR(-errno)`.
    fn handle(&mut self, req: &Request<'_>, env: &mut E, cx: &mut FamilyCx<'_>) -> Result<(), i32>;
}

/// A request as a family sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request<'a> {
    pub header: NlMsgHdr,
    pub genl: GenlMsgHdr,
    /// The family header (`hdrsize` bytes; empty for every family here).
    pub user_hdr: &'a [u8],
    /// The attribute bytes (structure already validated by the bus).
    pub attrs: &'a [u8],
    pub sender: Sender,
    /// The family's `max_attr` (attributes above it are invisible to [`attr`](Self::attr)).
    pub max_attr: u16,
}

impl<'a> Request<'a> {
    /// The attribute of type `ty` (the last one if repeated, as Linux's `nla_parse`);
    /// `None` for type 0 or a type above the family's `max_attr`.
    pub fn attr(&self, ty: u16) -> Option<Attr<'a>> {
        if ty == 0 || ty > self.max_attr {
            return None;
        }
        AttrIter::new(self.attrs).filter_map(Result::ok).filter(|a| a.ty == ty).last()
    }

    /// For every type `0..N`, what [`attr`](Self::attr) would return — found in one pass
    /// over the attributes instead of one per type (index 0 is always `None`).
    pub fn last_attrs<const N: usize>(&self) -> [Option<Attr<'a>>; N] {
        let mut found = [None; N];
        for a in AttrIter::new(self.attrs).filter_map(Result::ok) {
            if a.ty != 0 && a.ty <= self.max_attr {
                if let Some(slot) = found.get_mut(usize::from(a.ty)) {
                    *slot = Some(a);
                }
            }
        }
        found
    }

    /// Every attribute, in order.
    pub fn attrs(&self) -> AttrIter<'a> {
        AttrIter::new(self.attrs)
    }
}

/// What a handler may do while handling one request.
pub struct FamilyCx<'a> {
    pub(crate) info: &'a FamilyInfo,
    pub(crate) registry: &'a [Option<FamilyInfo>],
    pub(crate) nr_cpus: u32,
    pub(crate) sock: SockId,
    pub(crate) portid: u32,
    pub(crate) seq: u32,
    pub(crate) listeners: &'a mut Listeners,
    pub(crate) queue: &'a mut RecvQueue,
    /// The bus's buffers for reuse ([`crate::Bus::recycle`]).
    pub(crate) spare: &'a mut Vec<Vec<u8>>,
    pub(crate) replies: u64,
    pub(crate) replies_dropped: u64,
}

impl<'a> FamilyCx<'a> {
    /// The id the bus gave this family.
    pub fn family_id(&self) -> u16 {
        self.info.id
    }

    pub fn family(&self) -> &'a FamilyInfo {
        self.info
    }

    /// Number of CPUs of the machine (masks are subsets of `0..nr_cpus`).
    pub fn nr_cpus(&self) -> u32 {
        self.nr_cpus
    }

    /// The requesting socket and its port id.
    pub fn socket(&self) -> SockId {
        self.sock
    }

    pub fn portid(&self) -> u32 {
        self.portid
    }

    /// The request's sequence number, which replies echo.
    pub fn seq(&self) -> u32 {
        self.seq
    }

    /// A reply to the requester: `nlmsghdr { type: family id, flags: 0, seq: request's,
    /// pid: requester's port id }` and `genlmsghdr { cmd, version: family's }`.
    pub fn reply(&self, cmd: u8) -> MsgBuilder {
        MsgBuilder::genl(self.info.id, 0, self.seq, self.portid, cmd, self.info.version)
    }

    /// [`reply`](Self::reply) with room for `capacity` bytes in all, for a reply whose size
    /// is known before it is built: written into a buffer the bus keeps for reuse if it has
    /// one, else into one allocation of that size.
    pub fn reply_with_capacity(&mut self, cmd: u8, capacity: usize) -> MsgBuilder {
        let buf = self.spare.pop().unwrap_or_default();
        MsgBuilder::genl_in(buf, self.info.id, 0, self.seq, self.portid, cmd, self.info.version, capacity)
    }

    /// Finishes `msg` and queues it on the requesting socket. `Err` only if the message
    /// could not be built; a reply dropped for lack of receive buffer is counted on the
    /// socket (which then reports `ENOBUFS`) and is not an error of the request.
    pub fn send_reply(&mut self, msg: MsgBuilder) -> Result<(), i32> {
        let bytes = msg.finish()?;
        self.replies = self.replies.saturating_add(1);
        if !self.queue.offer(bytes) {
            self.replies_dropped = self.replies_dropped.saturating_add(1);
        }
        Ok(())
    }

    fn check_mask(&self, mask: u64) -> Result<(), i32> {
        let all = if self.nr_cpus >= MAX_CPUS { u64::MAX } else { (1u64 << self.nr_cpus) - 1 };
        if mask == 0 || mask & !all != 0 {
            return Err(EINVAL);
        }
        Ok(())
    }

    /// Adds the CPUs of `mask` to the requesting socket's registration as a listener of this
    /// family (registering twice for a CPU is harmless). `EINVAL` for an empty mask or one
    /// naming a CPU at or above `nr_cpus`.
    pub fn register_listener(&mut self, mask: u64) -> Result<(), i32> {
        self.check_mask(mask)?;
        self.listeners.register(self.sock, mask);
        Ok(())
    }

    /// Removes the CPUs of `mask` from the requesting socket's registration (CPUs it was not
    /// registered for are ignored, as in Linux).
    pub fn deregister_listener(&mut self, mask: u64) -> Result<(), i32> {
        self.check_mask(mask)?;
        self.listeners.deregister(self.sock, mask);
        Ok(())
    }

    /// The CPUs the requesting socket currently listens to in this family.
    pub fn listener_mask(&self) -> u64 {
        self.listeners.mask_of(self.sock)
    }

    /// Every registered family.
    pub fn families(&self) -> impl Iterator<Item = &'a FamilyInfo> + 'a {
        self.registry.iter().flatten()
    }

    pub fn family_by_id(&self, id: u16) -> Option<&'a FamilyInfo> {
        let i = usize::from(id.checked_sub(GENL_ID_CTRL)?);
        self.registry.get(i)?.as_ref()
    }

    pub fn family_by_name(&self, name: &[u8]) -> Option<&'a FamilyInfo> {
        self.registry.iter().flatten().find(|f| f.name.as_bytes() == name)
    }
}
