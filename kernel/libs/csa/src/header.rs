//! `struct achead`: the 8-byte header in front of every CSA record.
//!
//! ```text
//!   0 ah_magic u16     030512 (0x314A); the second header of a base or end-of-job record
//!                      carries its inverse 0xCEB5
//!   2 ah_revision u16  the record format's revision (REV_CSA 06000, REV_IO 07000, …)
//!   4 ah_type u8       what the record is (ACCT_KERNEL_CSA 01, _MEM 02, … _CFG 020)
//!   5 ah_flag u8       process flags, and AMORE: "a continuation record follows"
//!   6 ah_size u16      bytes of this record (the second header: of the continuations)
//! ```
//!
//! A reader needs nothing else to walk a file: read a header, check the magic, skip
//! `ah_size` bytes. That is why the kernel writes every record whole or not at all
//! (`RecordFile::post`): one torn record would hide all the records after it.

use tally_uapi::csa::{ACCT_MAGIC, ACCT_MAGIC_HDR2, ACHEAD_SIZE};

use crate::wire::{Get, Put};

/// One record header, as its fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Header {
    pub magic: u16,
    pub revision: u16,
    pub ah_type: u8,
    pub flag: u8,
    pub size: u16,
}

impl Header {
    pub const SIZE: usize = ACHEAD_SIZE;

    /// A first header: the magic, a record's revision, type and size, no flags.
    pub const fn first(revision: u16, ah_type: u8, size: usize) -> Header {
        Header { magic: ACCT_MAGIC, revision, ah_type, flag: 0, size: size as u16 }
    }

    /// A second header (base and end-of-job records): the inverted magic; `ah_type` and
    /// `ah_size` describe the continuation records that follow (none yet).
    pub const fn second(revision: u16) -> Header {
        Header { magic: ACCT_MAGIC_HDR2, revision, ah_type: 0, flag: 0, size: 0 }
    }

    pub(crate) fn put(&self, out: &mut Put<'_>, at: usize) {
        out.u16(at, self.magic);
        out.u16(at + 2, self.revision);
        out.u8(at + 4, self.ah_type);
        out.u8(at + 5, self.flag);
        out.u16(at + 6, self.size);
    }

    pub(crate) fn get(b: &Get<'_>, at: usize) -> Header {
        Header {
            magic: b.u16(at),
            revision: b.u16(at + 2),
            ah_type: b.u8(at + 4),
            flag: b.u8(at + 5),
            size: b.u16(at + 6),
        }
    }

    /// Decode the header at the start of `bytes` (`None` if there are fewer than 8).
    pub fn read(bytes: &[u8]) -> Option<Header> {
        (bytes.len() >= Self::SIZE).then(|| Header::get(&Get(bytes), 0))
    }
}
