//! # Messages: building and reading netlink frames
//!
//! Every unit on the bus is a netlink message: a 16-byte `nlmsghdr`, then the payload.
//! For generic netlink the payload starts with the 4-byte `genlmsghdr` (command, version)
//! and continues with attributes (see [`crate::attr`]):
//!
//! ```text
//!   offset 0   nlmsghdr    len u32 | type u16 | flags u16 | seq u32 | pid u32
//!   offset 16  genlmsghdr  cmd u8 | version u8 | reserved u16
//!   offset 20  attributes  nlattr, payload, pad, nlattr, ...
//!   ...        pad to 4    (a next message, in the same buffer, starts here)
//! ```
//!
//! `nlmsg_len` counts the header and the payload but not the trailing padding; several
//! messages may sit in one buffer, each starting at the previous one's `NLMSG_ALIGN`ed end.
//! All integers are little-endian, x86_64's (and so Linux's) host order.
//!
//! **Building.** [`MsgBuilder`] appends headers and attributes to a `Vec<u8>`, pads each
//! attribute to 4 bytes, patches the lengths of nests when they are closed and the
//! `nlmsg_len` when the message is finished. It never panics: a problem (an attribute too
//! long for its 16-bit length, unbalanced nests) is remembered and reported by
//! [`MsgBuilder::finish`].
//!
//! **Reading.** [`Messages`] walks a buffer and yields each message whose `nlmsg_len` is
//! sound, then a [`FrameError`] if the rest of the buffer is not a message.
//!
//! **Errors and acknowledgements.** [`error_message`] builds `NLMSG_ERROR` exactly as Linux's
//! `netlink_ack()`: `struct nlmsgerr { int error; struct nlmsghdr msg; }` with `error = -errno`
//! (0 for an ack), the request's `seq`, the requesting socket's port id as `pid`; an error
//! also echoes the offending message's payload after its header unless that would exceed
//! [`ERR_ECHO_MAX`] bytes, in which case — and always for an ack — only the header is copied
//! and the reply carries `NLM_F_CAPPED`.

use alloc::vec::Vec;

use tally_uapi::netlink::{
    nla_align, nlmsg_align, GenlMsgHdr, NlAttr, NlMsgHdr, GENL_HDRLEN, NLA_HDRLEN, NLMSGERR_LEN, NLMSG_ERROR,
    NLMSG_HDRLEN, NLM_F_CAPPED,
};

use crate::attr::{AttrIter, MAX_NEST_DEPTH};
use crate::error::{EINVAL, EMSGSIZE};

/// The longest message a builder produces (1 MiB): far above anything the bus sends, low
/// enough that a length can never overflow.
pub const MAX_BUILD: usize = 1 << 20;

/// Longest offending payload an error reply echoes; beyond it only the header is echoed and
/// the reply is flagged `NLM_F_CAPPED` (Linux echoes everything unless `NETLINK_CAP_ACK`).
pub const ERR_ECHO_MAX: usize = 512;

/// Builds one netlink message. See the [module documentation](self).
#[derive(Clone, Debug)]
pub struct MsgBuilder {
    buf: Vec<u8>,
    nests: [usize; MAX_NEST_DEPTH],
    depth: usize,
    err: Option<i32>,
}

impl MsgBuilder {
    /// A message with only an `nlmsghdr` so far (`nlmsg_len` is filled by [`finish`](Self::finish)).
    pub fn new(ty: u16, flags: u16, seq: u32, pid: u32) -> Self {
        Self::new_in(Vec::new(), ty, flags, seq, pid, 64)
    }

    /// [`new`](Self::new) with room for `capacity` bytes in all, written into `buf` (emptied
    /// first; grown if it has less room). A message whose size is known up front is built
    /// without the vector regrowing and copying itself, and a buffer kept from an earlier
    /// message saves the allocation.
    pub fn new_in(mut buf: Vec<u8>, ty: u16, flags: u16, seq: u32, pid: u32, capacity: usize) -> Self {
        buf.clear();
        buf.reserve(capacity.clamp(NLMSG_HDRLEN, MAX_BUILD));
        let h = NlMsgHdr { nlmsg_len: 0, nlmsg_type: ty, nlmsg_flags: flags, nlmsg_seq: seq, nlmsg_pid: pid };
        buf.extend_from_slice(&h.to_bytes());
        MsgBuilder { buf, nests: [0; MAX_NEST_DEPTH], depth: 0, err: None }
    }

    /// A generic-netlink message: `nlmsghdr` then `genlmsghdr { cmd, version }`.
    pub fn genl(ty: u16, flags: u16, seq: u32, pid: u32, cmd: u8, version: u8) -> Self {
        Self::genl_with_capacity(ty, flags, seq, pid, cmd, version, 64)
    }

    /// [`genl`](Self::genl) with room for `capacity` bytes in all (see
    /// [`new_in`](Self::new_in)).
    pub fn genl_with_capacity(ty: u16, flags: u16, seq: u32, pid: u32, cmd: u8, version: u8, capacity: usize) -> Self {
        Self::genl_in(Vec::new(), ty, flags, seq, pid, cmd, version, capacity)
    }

    /// [`genl_with_capacity`](Self::genl_with_capacity), written into `buf` (see
    /// [`new_in`](Self::new_in)).
    #[allow(clippy::too_many_arguments)]
    pub fn genl_in(
        buf: Vec<u8>,
        ty: u16,
        flags: u16,
        seq: u32,
        pid: u32,
        cmd: u8,
        version: u8,
        capacity: usize,
    ) -> Self {
        let mut b = Self::new_in(buf, ty, flags, seq, pid, capacity);
        b.buf.extend_from_slice(&GenlMsgHdr { cmd, version, reserved: 0 }.to_bytes());
        b
    }

    /// Bytes so far (including padding of the last attribute).
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    fn fail(&mut self, e: i32) {
        if self.err.is_none() {
            self.err = Some(e);
        }
    }

    fn room(&mut self, extra: usize) -> bool {
        if self.err.is_some() {
            return false;
        }
        match self.buf.len().checked_add(extra).map(|n| n.saturating_add(NLA_HDRLEN)) {
            Some(n) if n <= MAX_BUILD => true,
            _ => {
                self.fail(EMSGSIZE);
                false
            }
        }
    }

    /// Pads to 4 (usually nothing to do: every attribute the bus writes ends aligned).
    #[inline]
    fn pad(&mut self) {
        let want = nla_align(self.buf.len());
        if want != self.buf.len() {
            self.buf.resize(want, 0);
        }
    }

    /// Raw bytes straight after what is there (no attribute header, no padding before):
    /// for fixed payloads such as `struct nlmsgerr` or a family header.
    pub fn put_raw(&mut self, bytes: &[u8]) -> &mut Self {
        if self.room(bytes.len()) {
            self.buf.extend_from_slice(bytes);
        }
        self
    }

    /// An attribute of type `ty` with `payload`, padded to 4.
    pub fn put_bytes(&mut self, ty: u16, payload: &[u8]) -> &mut Self {
        if !self.room(payload.len().saturating_add(2 * NLA_HDRLEN)) {
            return self;
        }
        let Some(len) = payload.len().checked_add(NLA_HDRLEN).and_then(|n| u16::try_from(n).ok()) else {
            self.fail(EMSGSIZE);
            return self;
        };
        self.pad();
        self.buf.extend_from_slice(&NlAttr { nla_len: len, nla_type: ty }.to_bytes());
        self.buf.extend_from_slice(payload);
        self.pad();
        self
    }

    /// An attribute of type `ty` whose `len`-byte payload is written in place by `write`,
    /// which gets it zeroed: the same bytes as [`put_bytes`](Self::put_bytes) of what
    /// `write` writes, without building the payload elsewhere first and copying it in.
    /// (`write` is not called if the attribute does not fit.)
    pub fn put_with(&mut self, ty: u16, len: usize, write: impl FnOnce(&mut [u8])) -> &mut Self {
        if !self.room(len.saturating_add(2 * NLA_HDRLEN)) {
            return self;
        }
        let Some(nla_len) = len.checked_add(NLA_HDRLEN).and_then(|n| u16::try_from(n).ok()) else {
            self.fail(EMSGSIZE);
            return self;
        };
        self.pad();
        self.buf.extend_from_slice(&NlAttr { nla_len, nla_type: ty }.to_bytes());
        let start = self.buf.len();
        self.buf.resize(start + len, 0);
        if let Some(payload) = self.buf.get_mut(start..) {
            write(payload);
        }
        self.pad();
        self
    }

    pub fn put_u8(&mut self, ty: u16, v: u8) -> &mut Self {
        self.put_bytes(ty, &[v])
    }

    pub fn put_u16(&mut self, ty: u16, v: u16) -> &mut Self {
        self.put_bytes(ty, &v.to_le_bytes())
    }

    /// (The same bytes as `put_bytes(ty, &v.to_le_bytes())`, appended in one piece: the
    /// header and value of a pid or tgid attribute, in every taskstats reply.)
    pub fn put_u32(&mut self, ty: u16, v: u32) -> &mut Self {
        const LEN: usize = NLA_HDRLEN + 4;
        if !self.room(LEN + NLA_HDRLEN) {
            return self;
        }
        self.pad();
        let mut attr = [0u8; LEN];
        attr[..NLA_HDRLEN].copy_from_slice(&NlAttr { nla_len: LEN as u16, nla_type: ty }.to_bytes());
        attr[NLA_HDRLEN..].copy_from_slice(&v.to_le_bytes());
        self.buf.extend_from_slice(&attr);
        self
    }

    /// A `u64` attribute. (Linux's `nla_put_u64_64bit` may insert a pad attribute to align
    /// the value to 8; on x86_64, which reads unaligned words, it never does, nor does Tally.)
    pub fn put_u64(&mut self, ty: u16, v: u64) -> &mut Self {
        self.put_bytes(ty, &v.to_le_bytes())
    }

    /// A string attribute, NUL-terminated as Linux's `nla_put_string` writes it.
    pub fn put_str(&mut self, ty: u16, s: &str) -> &mut Self {
        self.put_str_bytes(ty, s.as_bytes())
    }

    /// [`put_str`](Self::put_str) for a byte string (a cpulist, a name read from a message).
    pub fn put_str_bytes(&mut self, ty: u16, s: &[u8]) -> &mut Self {
        if !self.room(s.len().saturating_add(2 * NLA_HDRLEN + 1)) {
            return self;
        }
        let Some(len) = s.len().checked_add(NLA_HDRLEN + 1).and_then(|n| u16::try_from(n).ok()) else {
            self.fail(EMSGSIZE);
            return self;
        };
        self.pad();
        self.buf.extend_from_slice(&NlAttr { nla_len: len, nla_type: ty }.to_bytes());
        self.buf.extend_from_slice(s);
        self.buf.push(0);
        self.pad();
        self
    }

    /// The bytes so far.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Appends a copy of the bytes at `range` (whole attributes already written, so the
    /// copy starts aligned); returns where the copy starts. `Err(EINVAL)` if `range` is not
    /// inside what is written, or an attribute error reported before.
    pub fn copy_within(&mut self, range: core::ops::Range<usize>) -> Result<usize, i32> {
        if let Some(e) = self.err {
            return Err(e);
        }
        if range.start > range.end || range.end > self.buf.len() || !self.room(range.len()) {
            return Err(self.err.unwrap_or(EINVAL));
        }
        self.pad();
        let at = self.buf.len();
        self.buf.extend_from_within(range);
        Ok(at)
    }

    /// Overwrites bytes already written at `at` (a type, an id, a flag of a copied record);
    /// out of range: nothing, and [`finish`](Self::finish) reports `EINVAL`.
    pub fn patch(&mut self, at: usize, bytes: &[u8]) {
        match self.buf.get_mut(at..at.saturating_add(bytes.len())) {
            Some(dst) => dst.copy_from_slice(bytes),
            None => self.fail(EINVAL),
        }
    }

    /// Opens a nest of type `ty`: the attributes put until the matching
    /// [`nest_end`](Self::nest_end) become its payload. The type is written as given,
    /// *without* `NLA_F_NESTED` (Linux's `nla_nest_start_noflag`, which TASKSTATS uses because
    /// old readers such as `getdelays` compare the type exactly); pass `NLA_F_NESTED | ty`
    /// to set the flag.
    pub fn nest_start(&mut self, ty: u16) -> &mut Self {
        if !self.room(2 * NLA_HDRLEN) {
            return self;
        }
        if self.depth >= MAX_NEST_DEPTH {
            self.fail(EINVAL);
            return self;
        }
        self.pad();
        let start = self.buf.len();
        if let Some(slot) = self.nests.get_mut(self.depth) {
            *slot = start;
        }
        self.depth += 1;
        self.buf.extend_from_slice(&NlAttr { nla_len: 0, nla_type: ty }.to_bytes());
        self
    }

    /// Closes the innermost open nest, writing its length.
    pub fn nest_end(&mut self) -> &mut Self {
        if self.err.is_some() {
            return self;
        }
        let Some(depth) = self.depth.checked_sub(1) else {
            self.fail(EINVAL);
            return self;
        };
        self.depth = depth;
        let start = self.nests.get(depth).copied().unwrap_or(0);
        let len = self.buf.len().checked_sub(start).and_then(|n| u16::try_from(n).ok());
        match (len, self.buf.get_mut(start..start.saturating_add(2))) {
            (Some(len), Some(field)) => field.copy_from_slice(&len.to_le_bytes()),
            _ => self.fail(EMSGSIZE),
        }
        self
    }

    /// The finished message: `nlmsg_len` set to everything written, the buffer padded to 4.
    /// `Err(EMSGSIZE)` if something did not fit, `Err(EINVAL)` if nests are unbalanced.
    pub fn finish(mut self) -> Result<Vec<u8>, i32> {
        if let Some(e) = self.err {
            return Err(e);
        }
        if self.depth != 0 {
            return Err(EINVAL);
        }
        let len = u32::try_from(self.buf.len()).map_err(|_| EMSGSIZE)?;
        match self.buf.get_mut(0..4) {
            Some(f) => f.copy_from_slice(&len.to_le_bytes()),
            None => return Err(EINVAL),
        }
        let padded = nlmsg_align(self.buf.len());
        self.buf.resize(padded, 0);
        Ok(self.buf)
    }
}

/// One message read from a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg<'a> {
    pub header: NlMsgHdr,
    /// The whole message, header included: exactly `nlmsg_len` bytes.
    pub bytes: &'a [u8],
    /// What follows the header: `nlmsg_len - 16` bytes.
    pub payload: &'a [u8],
}

impl<'a> Msg<'a> {
    /// The generic-netlink header and what follows it; `EINVAL` if the payload is shorter.
    pub fn genl(&self) -> Result<(GenlMsgHdr, &'a [u8]), i32> {
        let g = GenlMsgHdr::from_bytes(self.payload).ok_or(EINVAL)?;
        Ok((g, self.payload.get(GENL_HDRLEN..).unwrap_or(&[])))
    }

    /// The attributes after the genl header (and a family header of `hdrsize` bytes).
    pub fn attrs(&self, hdrsize: usize) -> Result<AttrIter<'a>, i32> {
        let skip = GENL_HDRLEN.checked_add(hdrsize).ok_or(EINVAL)?;
        Ok(AttrIter::new(self.payload.get(skip..).ok_or(EINVAL)?))
    }

    /// For an `NLMSG_ERROR`: the positive errno (0 for an acknowledgement) and the echoed
    /// header of the message it answers. `None` for any other message or a short payload.
    pub fn error(&self) -> Option<(i32, NlMsgHdr)> {
        if self.header.nlmsg_type != NLMSG_ERROR {
            return None;
        }
        let e = i32::from_le_bytes(self.payload.get(..4)?.try_into().ok()?);
        let h = NlMsgHdr::from_bytes(self.payload.get(4..)?)?;
        Some((e.checked_neg().unwrap_or(i32::MAX), h))
    }
}

/// Why [`Messages`] stopped before the end of its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// 1-15 bytes were left: not even a header.
    Truncated { offset: usize, remaining: usize },
    /// A readable header whose `nlmsg_len` is below 16 or past the end of the buffer.
    BadLength { offset: usize, header: NlMsgHdr },
}

impl FrameError {
    /// The errno this is reported with (always `EINVAL`).
    pub fn errno(&self) -> i32 {
        EINVAL
    }
}

/// Iterates the messages of a buffer, as Linux's `netlink_rcv_skb()` walks an skb: each
/// message must have `16 <= nlmsg_len <= bytes left`; the next one starts at the aligned end
/// (or the buffer's end, if the last message lacks its padding). The first bad frame is
/// yielded as `Err` and ends the iteration.
#[derive(Clone, Debug)]
pub struct Messages<'a> {
    buf: &'a [u8],
    off: usize,
    done: bool,
}

impl<'a> Messages<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Messages { buf, off: 0, done: false }
    }

    /// Offset of the next message in the buffer.
    pub fn offset(&self) -> usize {
        self.off
    }
}

impl<'a> Iterator for Messages<'a> {
    type Item = Result<Msg<'a>, FrameError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = self.buf.get(self.off..).unwrap_or(&[]);
        if rest.is_empty() {
            self.done = true;
            return None;
        }
        let offset = self.off;
        let Some(header) = NlMsgHdr::from_bytes(rest) else {
            self.done = true;
            return Some(Err(FrameError::Truncated { offset, remaining: rest.len() }));
        };
        let len = usize::try_from(header.nlmsg_len).unwrap_or(usize::MAX);
        let (Some(bytes), true) = (rest.get(..len), len >= NLMSG_HDRLEN) else {
            self.done = true;
            return Some(Err(FrameError::BadLength { offset, header }));
        };
        let payload = bytes.get(NLMSG_HDRLEN..).unwrap_or(&[]);
        let step = nlmsg_align(len).min(rest.len());
        self.off = self.off.saturating_add(step);
        Some(Ok(Msg { header, bytes, payload }))
    }
}

/// The first message of `bytes`, which must be sound (`EINVAL` otherwise).
pub fn first_message(bytes: &[u8]) -> Result<Msg<'_>, i32> {
    match Messages::new(bytes).next() {
        Some(Ok(m)) => Ok(m),
        _ => Err(EINVAL),
    }
}

/// An `NLMSG_ERROR` answering `req` (its header) with `errno` (positive; 0 = ack), sent
/// to port id `portid`. `req_payload` is what followed the offending header (`None` when it
/// could not be read): echoed for an error if it is at most [`ERR_ECHO_MAX`] bytes.
pub fn error_message(req: &NlMsgHdr, req_payload: Option<&[u8]>, errno: i32, portid: u32) -> Vec<u8> {
    let echo = match req_payload {
        Some(p) if errno != 0 && p.len() <= ERR_ECHO_MAX => p,
        _ => &[][..],
    };
    let capped = errno == 0 || echo.len() != req_payload.map_or(0, <[u8]>::len) || req_payload.is_none();
    let flags = if capped { NLM_F_CAPPED } else { 0 };
    let mut b = MsgBuilder::new(NLMSG_ERROR, flags, req.nlmsg_seq, portid);
    b.put_raw(&errno.saturating_neg().to_le_bytes()).put_raw(&req.to_bytes()).put_raw(echo);
    // Bounded (16 + 20 + ERR_ECHO_MAX bytes), so finishing cannot fail; fall back to a
    // bare header-only message rather than panic.
    b.finish().unwrap_or_else(|_| {
        let mut v = Vec::with_capacity(NLMSG_HDRLEN + NLMSGERR_LEN);
        let h = NlMsgHdr {
            nlmsg_len: (NLMSG_HDRLEN + NLMSGERR_LEN) as u32,
            nlmsg_type: NLMSG_ERROR,
            nlmsg_flags: NLM_F_CAPPED,
            nlmsg_seq: req.nlmsg_seq,
            nlmsg_pid: portid,
        };
        v.extend_from_slice(&h.to_bytes());
        v.extend_from_slice(&errno.saturating_neg().to_le_bytes());
        v.extend_from_slice(&req.to_bytes());
        v
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_uapi::errno::ENOENT;
    use tally_uapi::netlink::{NLA_F_NESTED, NLM_F_REQUEST};

    #[test]
    fn builder_pads_nests_and_fills_lengths() {
        let mut b = MsgBuilder::genl(0x17, NLM_F_REQUEST, 5, 9, 2, 1);
        b.nest_start(4).put_u32(1, 42).put_bytes(3, &[1, 2, 3]).nest_end().put_str(2, "ab").put_u16(7, 0xBEEF);
        let v = b.finish().unwrap();
        let m = first_message(&v).unwrap();
        assert_eq!(m.header.nlmsg_len as usize, v.len());
        assert_eq!(m.header.nlmsg_seq, 5);
        let (g, _) = m.genl().unwrap();
        assert_eq!((g.cmd, g.version), (2, 1));
        let top: Vec<_> = m.attrs(0).unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(top.len(), 3);
        assert_eq!(top[0].payload.len(), 8 + 8); // u32 attr + 3-byte attr padded
        let inner: Vec<_> = top[0].nested().collect::<Result<_, _>>().unwrap();
        assert_eq!(inner[0].u32(), Ok(42));
        assert_eq!(inner[1].payload, &[1, 2, 3]);
        assert_eq!(top[1].payload, b"ab\0");
        assert_eq!(top[2].u16(), Ok(0xBEEF));
        // Nest header written without NLA_F_NESTED unless asked.
        assert_eq!(&v[20..24], &[20, 0, 4, 0]);
        let mut b = MsgBuilder::new(0x17, 0, 0, 0);
        b.nest_start(NLA_F_NESTED | 4).nest_end();
        assert_eq!(&b.finish().unwrap()[16..20], &[4, 0, 4, 0x80]);
    }

    #[test]
    fn put_with_writes_the_same_bytes_as_put_bytes() {
        for len in [0usize, 1, 3, 4, 5, 688, 1000] {
            let payload: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
            let mut a = MsgBuilder::genl(0x17, 0, 1, 2, 3, 4);
            a.nest_start(1).put_u32(2, 9).put_bytes(3, &payload).put_u8(4, 1).nest_end();
            let mut b = MsgBuilder::genl_with_capacity(0x17, 0, 1, 2, 3, 4, 16 + len);
            b.nest_start(1).put_u32(2, 9).put_with(3, len, |out| {
                assert!(out.iter().all(|&x| x == 0), "handed over zeroed");
                out.copy_from_slice(&payload);
            });
            b.put_u8(4, 1).nest_end();
            assert_eq!(a.finish(), b.finish(), "len {len}");
        }
        // Built in a used buffer: the same bytes, and no trace of the old ones.
        let old = MsgBuilder::genl(9, 9, 9, 9, 9, 9).put_bytes(1, &[0xee; 300]).clone().finish().unwrap();
        let mut c = MsgBuilder::genl_in(old, 0x17, 0, 1, 2, 3, 4, 8);
        c.put_u32(2, 9);
        let mut d = MsgBuilder::genl(0x17, 0, 1, 2, 3, 4);
        d.put_u32(2, 9);
        assert_eq!(c.finish(), d.finish());
        // Too long for an attribute: an error, and the writer is never called.
        let mut b = MsgBuilder::new(0x17, 0, 0, 0);
        b.put_with(1, 70000, |_| panic!("called"));
        assert_eq!(b.finish(), Err(EMSGSIZE));
    }

    #[test]
    fn builder_reports_problems_instead_of_panicking() {
        let mut b = MsgBuilder::new(0x17, 0, 0, 0);
        b.put_bytes(1, &[0; 70000]);
        assert_eq!(b.finish(), Err(EMSGSIZE));
        let mut b = MsgBuilder::new(0x17, 0, 0, 0);
        b.nest_end();
        assert_eq!(b.finish(), Err(EINVAL));
        let mut b = MsgBuilder::new(0x17, 0, 0, 0);
        b.nest_start(1);
        assert_eq!(b.finish(), Err(EINVAL));
        let mut b = MsgBuilder::new(0x17, 0, 0, 0);
        for _ in 0..=MAX_NEST_DEPTH {
            b.nest_start(1);
        }
        assert_eq!(b.finish(), Err(EINVAL));
        // A nest whose content outgrows its u16 length.
        let mut b = MsgBuilder::new(0x17, 0, 0, 0);
        b.nest_start(1).put_bytes(2, &[0; 40000]).put_bytes(2, &[0; 40000]).nest_end();
        assert_eq!(b.finish(), Err(EMSGSIZE));
    }

    #[test]
    fn messages_walks_concatenated_and_stops_at_bad_frames() {
        let a = MsgBuilder::genl(0x10, 1, 1, 0, 3, 1).finish().unwrap();
        let mut buf = a.clone();
        buf.extend_from_slice(&a);
        buf.extend_from_slice(&[1, 2, 3]);
        let v: Vec<_> = Messages::new(&buf).collect();
        assert_eq!(v.len(), 3);
        assert!(v[0].is_ok() && v[1].is_ok());
        assert_eq!(v[2], Err(FrameError::Truncated { offset: 40, remaining: 3 }));
        // nlmsg_len too small, and past the end.
        for len in [0u32, 15, 21, u32::MAX] {
            let mut b = a.clone();
            b[0..4].copy_from_slice(&len.to_le_bytes());
            let v: Vec<_> = Messages::new(&b).collect();
            assert!(matches!(v[..], [Err(FrameError::BadLength { offset: 0, .. })]), "{len}");
        }
        // An unpadded last message is accepted.
        let mut b = MsgBuilder::new(0x10, 1, 1, 0);
        b.put_raw(&[7]);
        let mut one = b.finish().unwrap();
        one.truncate(17);
        assert_eq!(Messages::new(&one).count(), 1);
    }

    #[test]
    fn error_replies_echo_like_linux() {
        let req = NlMsgHdr { nlmsg_len: 24, nlmsg_type: 0x30, nlmsg_flags: 5, nlmsg_seq: 77, nlmsg_pid: 123 };
        let e = error_message(&req, Some(&[1, 2, 3, 4, 5, 6, 7, 8]), ENOENT, 4000);
        let m = first_message(&e).unwrap();
        assert_eq!(m.header.nlmsg_type, NLMSG_ERROR);
        assert_eq!((m.header.nlmsg_seq, m.header.nlmsg_pid, m.header.nlmsg_flags), (77, 4000, 0));
        assert_eq!(m.error(), Some((ENOENT, req)));
        assert_eq!(&e[16..20], &(-ENOENT).to_le_bytes());
        assert_eq!(e.len(), 16 + 4 + 16 + 8);
        let ack = error_message(&req, Some(&[1, 2, 3, 4, 5, 6, 7, 8]), 0, 4000);
        let m = first_message(&ack).unwrap();
        assert_eq!(m.header.nlmsg_flags, NLM_F_CAPPED);
        assert_eq!(m.error(), Some((0, req)));
        assert_eq!(ack.len(), 36);
        let big = alloc::vec![0u8; ERR_ECHO_MAX + 1];
        let e = error_message(&req, Some(&big), ENOENT, 1);
        assert_eq!(e.len(), 36);
        assert_eq!(first_message(&e).unwrap().header.nlmsg_flags, NLM_F_CAPPED);
        let e = error_message(&req, None, EINVAL, 1);
        assert_eq!(e.len(), 36);
    }
}
