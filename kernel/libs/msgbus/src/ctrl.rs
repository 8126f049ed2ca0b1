//! # The controller: from a family's name to its id
//!
//! Family ids are handed out at registration, so a program cannot know that TASKSTATS is,
//! say, 0x13. It asks the controller, the one family with a fixed id (`GENL_ID_CTRL`,
//! 0x10) and name ("nlctrl"):
//!
//! ```text
//!   request   nlmsghdr{type 0x10, flags REQUEST} genlmsghdr{cmd GETFAMILY}
//!             CTRL_ATTR_FAMILY_NAME "TASKSTATS\0"      (or CTRL_ATTR_FAMILY_ID u16)
//!   reply     nlmsghdr{type 0x10} genlmsghdr{cmd NEWFAMILY, version 2}
//!             FAMILY_NAME "TASKSTATS\0", FAMILY_ID u16, VERSION u32, HDRSIZE u32,
//!             MAXATTR u32, OPS { 1 { OP_ID u32, OP_FLAGS u32 }, ... }
//! ```
//!
//! As in Linux's `ctrl_getfamily()`: the name wins when both attributes are present; an
//! unknown name or id is `ENOENT`; neither attribute is `EINVAL`. The name must be
//! NUL-terminated within `GENL_NAMSIZ` bytes (Linux's `NLA_NUL_STRING` policy; libnl and
//! `getdelays` send it so), the id exactly 2 bytes — else `EINVAL`. Anyone may ask.
//!
//! The client half — [`getfamily_request`] and [`parse_family_reply`] — is for user
//! programs (`getdelays`) and host tools.

use alloc::string::String;
use alloc::vec::Vec;

use tally_uapi::netlink::{
    CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME, CTRL_ATTR_HDRSIZE, CTRL_ATTR_MAXATTR, CTRL_ATTR_OPS,
    CTRL_ATTR_OP_FLAGS, CTRL_ATTR_OP_ID, CTRL_ATTR_VERSION, CTRL_CMD_GETFAMILY, CTRL_CMD_NEWFAMILY, GENL_CTRL_NAME,
    GENL_CTRL_VERSION, GENL_ID_CTRL, GENL_NAMSIZ, NLM_F_REQUEST,
};

use crate::error::{EINVAL, ENOENT};
use crate::family::{Family, FamilyCx, FamilyInfo, GenlOp, Request};
use crate::msg::{first_message, MsgBuilder};

/// The highest controller attribute Tally knows.
pub const CTRL_MAX_ATTR: u16 = CTRL_ATTR_OPS;

const CTRL_OPS: &[GenlOp] = &[GenlOp { cmd: CTRL_CMD_GETFAMILY, flags: 0 }];

/// The controller family ("nlctrl", id `GENL_ID_CTRL`); [`crate::Bus::new`] registers it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Controller;

impl<E: ?Sized> Family<E> for Controller {
    fn name(&self) -> &str {
        GENL_CTRL_NAME
    }

    fn version(&self) -> u8 {
        GENL_CTRL_VERSION
    }

    fn max_attr(&self) -> u16 {
        CTRL_MAX_ATTR
    }

    fn ops(&self) -> &[GenlOp] {
        CTRL_OPS
    }

    fn handle(&mut self, req: &Request<'_>, _env: &mut E, cx: &mut FamilyCx<'_>) -> Result<(), i32> {
        // Validate both attributes first, as Linux's policy does, then pick (name wins).
        let id = req.attr(CTRL_ATTR_FAMILY_ID).map(|a| a.u16()).transpose()?;
        let name = req.attr(CTRL_ATTR_FAMILY_NAME).map(|a| a.nul_str(GENL_NAMSIZ)).transpose()?;
        let found = match (name, id) {
            (Some(name), _) => cx.family_by_name(name).ok_or(ENOENT)?,
            (None, Some(id)) => cx.family_by_id(id).ok_or(ENOENT)?,
            (None, None) => return Err(EINVAL),
        };
        let mut b = cx.reply(CTRL_CMD_NEWFAMILY);
        put_family(&mut b, found);
        cx.send_reply(b)
    }
}

/// The attributes of a NEWFAMILY message, in Linux's order.
pub fn put_family(b: &mut MsgBuilder, f: &FamilyInfo) {
    b.put_str(CTRL_ATTR_FAMILY_NAME, &f.name)
        .put_u16(CTRL_ATTR_FAMILY_ID, f.id)
        .put_u32(CTRL_ATTR_VERSION, u32::from(f.version))
        .put_u32(CTRL_ATTR_HDRSIZE, f.hdrsize)
        .put_u32(CTRL_ATTR_MAXATTR, u32::from(f.max_attr));
    if !f.ops.is_empty() {
        b.nest_start(CTRL_ATTR_OPS);
        for (i, op) in f.ops.iter().enumerate() {
            let n = u16::try_from(i + 1).unwrap_or(u16::MAX);
            b.nest_start(n)
                .put_u32(CTRL_ATTR_OP_ID, u32::from(op.cmd))
                .put_u32(CTRL_ATTR_OP_FLAGS, op.flags)
                .nest_end();
        }
        b.nest_end();
    }
}

/// A `CTRL_CMD_GETFAMILY` request for `name`, as `getdelays` builds it (genl version 1,
/// `NLM_F_REQUEST`, port id 0: the kernel fills in the sender).
pub fn getfamily_request(seq: u32, name: &str) -> Result<Vec<u8>, i32> {
    let mut b = MsgBuilder::genl(GENL_ID_CTRL, NLM_F_REQUEST, seq, 0, CTRL_CMD_GETFAMILY, 1);
    b.put_str(CTRL_ATTR_FAMILY_NAME, name);
    b.finish()
}

/// What a NEWFAMILY reply says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyReply {
    pub id: u16,
    pub name: String,
    pub version: u32,
    pub hdrsize: u32,
    pub max_attr: u32,
    pub ops: Vec<GenlOp>,
}

/// Decodes the first message of `bytes` as the controller's answer: `Ok` for a NEWFAMILY,
/// `Err(errno)` for an `NLMSG_ERROR` carrying one, `Err(EINVAL)` for anything else (an ack,
/// another message, missing id or name, malformed attributes).
pub fn parse_family_reply(bytes: &[u8]) -> Result<FamilyReply, i32> {
    let m = first_message(bytes)?;
    if let Some((e, _)) = m.error() {
        return Err(if e > 0 { e } else { EINVAL });
    }
    let (g, _) = m.genl()?;
    if m.header.nlmsg_type != GENL_ID_CTRL || g.cmd != CTRL_CMD_NEWFAMILY {
        return Err(EINVAL);
    }
    let (mut id, mut name) = (None, None);
    let mut r = FamilyReply { id: 0, name: String::new(), version: 0, hdrsize: 0, max_attr: 0, ops: Vec::new() };
    for a in m.attrs(0)? {
        let a = a?;
        match a.ty {
            CTRL_ATTR_FAMILY_ID => id = Some(a.u16()?),
            CTRL_ATTR_FAMILY_NAME => {
                name = Some(String::from(core::str::from_utf8(a.nul_str(GENL_NAMSIZ)?).map_err(|_| EINVAL)?))
            }
            CTRL_ATTR_VERSION => r.version = a.u32()?,
            CTRL_ATTR_HDRSIZE => r.hdrsize = a.u32()?,
            CTRL_ATTR_MAXATTR => r.max_attr = a.u32()?,
            CTRL_ATTR_OPS => {
                for op in a.nested() {
                    let (mut cmd, mut flags) = (None, 0);
                    for f in op?.nested() {
                        let f = f?;
                        match f.ty {
                            CTRL_ATTR_OP_ID => cmd = Some(f.u32()?),
                            CTRL_ATTR_OP_FLAGS => flags = f.u32()?,
                            _ => {}
                        }
                    }
                    let cmd = cmd.and_then(|c| u8::try_from(c).ok()).ok_or(EINVAL)?;
                    r.ops.push(GenlOp { cmd, flags });
                }
            }
            _ => {}
        }
    }
    r.id = id.ok_or(EINVAL)?;
    r.name = name.ok_or(EINVAL)?;
    Ok(r)
}
