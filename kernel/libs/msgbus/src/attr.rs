//! # Attributes: type-length-value records
//!
//! After the fixed headers, a generic-netlink message carries its arguments as a run of
//! *attributes* (Linux's `struct nlattr`), each a 4-byte header and a payload:
//!
//! ```text
//!   +--------+--------+----------------------+-----+
//!   | len u16| type u16| payload (len - 4 B)  | pad |   next attribute at align4(len)
//!   +--------+--------+----------------------+-----+
//! ```
//!
//! `len` counts the header and the payload but not the padding. The top two bits of `type`
//! are flags: `NLA_F_NESTED` (the payload is itself a run of attributes) and
//! `NLA_F_NET_BYTEORDER`; [`Attr::ty`] has them masked off, as Linux's `nla_type()` does.
//! A *nest* is an attribute whose payload is more attributes — that is how a TASKSTATS
//! reply groups `PID` and `STATS` inside `AGGR_PID`.
//!
//! Everything here reads bytes that came from a user program, so every length is checked
//! before it is used:
//!
//! * a header that does not fit in what is left, or `len < 4` → `EINVAL`;
//! * `len` running past the end of the enclosing message — or, inside a nest, past the end
//!   of its parent — → `EINVAL` (a nested run is iterated over exactly its parent's payload,
//!   so a child can never see its parent's neighbours);
//! * 1-3 bytes left over that cannot hold a header → `EINVAL` (Linux's legacy validation only
//!   warns "bytes leftover after parsing attributes"; Tally's bus is strict about structure);
//! * the last attribute may omit its padding (Linux's `nla_next()` accepts that too).
//!
//! The iterator stops at the first error and yields it once. Typed getters
//! ([`Attr::u32`], ...) insist on the exact payload size (`EINVAL` otherwise): Linux's legacy
//! policy is laxer (a short `u32` is `-ERANGE`, a long one only warns), Tally's is simply exact.

use tally_uapi::netlink::{nla_align, NlAttr, NLA_F_NESTED, NLA_F_NET_BYTEORDER, NLA_HDRLEN, NLA_TYPE_MASK};

use crate::error::EINVAL;

/// Deepest nesting [`validate`] follows before calling the input malformed (Linux's policy
/// recursion stops at 10 too).
pub const MAX_NEST_DEPTH: usize = 10;

/// One attribute, borrowed from the message it lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr<'a> {
    /// The type with the flag bits masked off.
    pub ty: u16,
    /// The raw `nla_type` (flags included).
    pub raw_type: u16,
    /// The payload: `len - 4` bytes, without padding.
    pub payload: &'a [u8],
}

impl<'a> Attr<'a> {
    /// `NLA_F_NESTED` was set by the sender.
    pub fn is_nested_flagged(&self) -> bool {
        self.raw_type & NLA_F_NESTED != 0
    }

    /// `NLA_F_NET_BYTEORDER` was set by the sender.
    pub fn is_net_byteorder(&self) -> bool {
        self.raw_type & NLA_F_NET_BYTEORDER != 0
    }

    fn exact<const N: usize>(&self) -> Result<[u8; N], i32> {
        self.payload.try_into().map_err(|_| EINVAL)
    }

    pub fn u8(&self) -> Result<u8, i32> {
        Ok(u8::from_le_bytes(self.exact::<1>()?))
    }

    pub fn u16(&self) -> Result<u16, i32> {
        Ok(u16::from_le_bytes(self.exact::<2>()?))
    }

    pub fn u32(&self) -> Result<u32, i32> {
        Ok(u32::from_le_bytes(self.exact::<4>()?))
    }

    pub fn u64(&self) -> Result<u64, i32> {
        Ok(u64::from_le_bytes(self.exact::<8>()?))
    }

    /// The payload of a string attribute up to (not including) its first NUL — the whole
    /// payload if there is none (`NLA_STRING`, which may or may not be terminated).
    pub fn str_bytes(&self) -> &'a [u8] {
        match self.payload.iter().position(|&b| b == 0) {
            Some(n) => self.payload.get(..n).unwrap_or(self.payload),
            None => self.payload,
        }
    }

    /// A NUL-terminated string (`NLA_NUL_STRING`): the NUL must occur within the first
    /// `max_with_nul` bytes, else `EINVAL`. Returns the bytes before the NUL.
    pub fn nul_str(&self, max_with_nul: usize) -> Result<&'a [u8], i32> {
        let window = self.payload.get(..max_with_nul).unwrap_or(self.payload);
        let n = window.iter().position(|&b| b == 0).ok_or(EINVAL)?;
        self.payload.get(..n).ok_or(EINVAL)
    }

    /// The attributes inside this one (a nest), iterated over exactly this payload.
    pub fn nested(&self) -> AttrIter<'a> {
        AttrIter::new(self.payload)
    }
}

/// Iterates the attributes of a byte run; yields `Err(EINVAL)` once at the first malformed
/// header and then stops.
#[derive(Clone, Debug)]
pub struct AttrIter<'a> {
    rest: &'a [u8],
    done: bool,
}

impl<'a> AttrIter<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        AttrIter { rest: bytes, done: false }
    }
}

impl<'a> Iterator for AttrIter<'a> {
    type Item = Result<Attr<'a>, i32>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.rest.is_empty() {
            return None;
        }
        let parsed = (|| {
            let h = NlAttr::from_bytes(self.rest).ok_or(EINVAL)?;
            let len = usize::from(h.nla_len);
            if len < NLA_HDRLEN || len > self.rest.len() {
                return Err(EINVAL);
            }
            let payload = self.rest.get(NLA_HDRLEN..len).ok_or(EINVAL)?;
            // The last attribute may lack its padding: never step past the end.
            let step = nla_align(len).min(self.rest.len());
            let rest = self.rest.get(step..).ok_or(EINVAL)?;
            Ok((Attr { ty: h.nla_type & NLA_TYPE_MASK, raw_type: h.nla_type, payload }, rest))
        })();
        match parsed {
            Ok((a, rest)) => {
                self.rest = rest;
                Some(Ok(a))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Checks the structure of an attribute run: every header sound, nothing left over, and
/// every attribute the sender flagged `NLA_F_NESTED` itself a sound run inside its parent,
/// at most [`MAX_NEST_DEPTH`] levels deep. (Nests sent without the flag — as the TASKSTATS
/// replies are, for old readers — are checked when read, by [`Attr::nested`].)
pub fn validate(bytes: &[u8]) -> Result<(), i32> {
    validate_depth(bytes, 0)
}

fn validate_depth(bytes: &[u8], depth: usize) -> Result<(), i32> {
    if depth > MAX_NEST_DEPTH {
        return Err(EINVAL);
    }
    for a in AttrIter::new(bytes) {
        let a = a?;
        if a.is_nested_flagged() {
            validate_depth(a.payload, depth.checked_add(1).ok_or(EINVAL)?)?;
        }
    }
    Ok(())
}

/// The last attribute of type `ty` in a run (Linux's `nla_parse` keeps the last of
/// duplicates), or `Ok(None)`. Errors if the run is malformed up to the end.
pub fn find(bytes: &[u8], ty: u16) -> Result<Option<Attr<'_>>, i32> {
    let mut found = None;
    for a in AttrIter::new(bytes) {
        let a = a?;
        if a.ty == ty {
            found = Some(a);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn attr(ty: u16, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&((payload.len() + 4) as u16).to_le_bytes());
        v.extend_from_slice(&ty.to_le_bytes());
        v.extend_from_slice(payload);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    #[test]
    fn iterates_and_masks_flags() {
        let mut b = attr(1, &7u32.to_le_bytes());
        b.extend(attr(NLA_F_NESTED | 4, &attr(2, &[1, 2])));
        let v: Vec<_> = AttrIter::new(&b).collect::<Result<_, _>>().unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].ty, 1);
        assert_eq!(v[0].u32(), Ok(7));
        assert_eq!(v[0].u16(), Err(EINVAL));
        assert_eq!(v[1].ty, 4);
        assert!(v[1].is_nested_flagged());
        let inner: Vec<_> = v[1].nested().collect::<Result<_, _>>().unwrap();
        assert_eq!(inner[0].payload, &[1, 2]);
        assert_eq!(validate(&b), Ok(()));
    }

    #[test]
    fn rejects_short_long_and_leftover() {
        assert_eq!(validate(&[3, 0, 1, 0]), Err(EINVAL)); // nla_len < 4
        assert_eq!(validate(&[9, 0, 1, 0, 0, 0, 0, 0]), Err(EINVAL)); // past the end
        assert_eq!(validate(&[4, 0, 1, 0, 0, 0]), Err(EINVAL)); // 2 bytes left over
        assert_eq!(validate(&[4, 0, 1]), Err(EINVAL)); // a cut header
        assert_eq!(validate(&[]), Ok(()));
        // The last attribute may omit its padding.
        assert_eq!(validate(&[5, 0, 1, 0, 9]), Ok(()));
        let mut it = AttrIter::new(&[3, 0, 1, 0, 4, 0, 1, 0]);
        assert_eq!(it.next(), Some(Err(EINVAL)));
        assert_eq!(it.next(), None);
    }

    #[test]
    fn nesting_beyond_the_parent_is_rejected() {
        // The parent claims 12 bytes (8 of payload); its child claims 12 — past the parent,
        // though still inside the whole buffer.
        let mut b = Vec::new();
        b.extend_from_slice(&12u16.to_le_bytes());
        b.extend_from_slice(&(NLA_F_NESTED | 4).to_le_bytes());
        b.extend_from_slice(&12u16.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&[0; 8]);
        assert_eq!(validate(&b), Err(EINVAL));
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let mut b = attr(1, &[]);
        for _ in 0..MAX_NEST_DEPTH {
            b = attr(NLA_F_NESTED | 1, &b);
        }
        assert_eq!(validate(&b), Ok(()));
        let b = attr(NLA_F_NESTED | 1, &b);
        assert_eq!(validate(&b), Err(EINVAL));
    }

    #[test]
    fn strings_and_find() {
        let mut b = attr(2, b"abc\0");
        b.extend(attr(2, b"xyz"));
        let a = find(&b, 2).unwrap().unwrap();
        assert_eq!(a.payload, b"xyz");
        assert_eq!(a.str_bytes(), b"xyz");
        assert_eq!(a.nul_str(16), Err(EINVAL));
        let first = AttrIter::new(&b).next().unwrap().unwrap();
        assert_eq!(first.nul_str(16), Ok(&b"abc"[..]));
        assert_eq!(first.nul_str(3), Err(EINVAL));
        assert_eq!(find(&b, 9), Ok(None));
    }
}
