//! Reading an accounting file: a plain sequence of 64-byte records, oldest first.
//!
//! The file has no header and no index: record `i` is bytes `64 i .. 64 i + 64`, so a reader
//! that starts from the end (`lastcomm` prints newest first) finds records by arithmetic.
//! That is why the kernel must only ever append whole records: if the file's size is not a
//! multiple of 64, every offset counted from the end is wrong. GNU acct reads forwards in
//! `dump-acct` and `sa` (a partial record at the end is silently dropped) but backwards in
//! `lastcomm`, which then reads misaligned bytes, prints "unknown acct file format" and goes
//! wrong. [`Records`] refuses to guess: it yields only whole records and reports the
//! trailing bytes ([`Records::trailing`]) so a tool can say the file is damaged.
//!
//! Each record says what it is in its second byte. GNU acct reads v0–v3 layouts (and skips
//! the second half of a v4 pair); Tally writes and reads only v3, little-endian: a record
//! whose version byte is not exactly 3 comes out as a [`BadRecord`], which tools report and
//! skip as GNU acct does with a version it does not know.

use tally_uapi::acct::{AcctV3, ACCT_VERSION};

/// A record this reader does not decode: its position in the file and its version byte
/// (`0x83` would be a big-endian v3 record, 0–2 the older layouts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadRecord {
    /// Position in the file, counting records from 0.
    pub index: usize,
    pub version: u8,
}

/// The records of a file's bytes, in file order (and in reverse through
/// [`DoubleEndedIterator`]); each a v3 record or a [`BadRecord`].
#[derive(Clone, Debug)]
pub struct Records<'a> {
    chunks: core::slice::Iter<'a, [u8; AcctV3::SIZE]>,
    /// Index of the next record from the front, and one past the next from the back.
    front: usize,
    back: usize,
    trailing: usize,
}

/// The records in `bytes`, the contents of an accounting file.
pub fn records(bytes: &[u8]) -> Records<'_> {
    let (whole, rest) = bytes.as_chunks::<{ AcctV3::SIZE }>();
    Records { chunks: whole.iter(), front: 0, back: whole.len(), trailing: rest.len() }
}

impl Records<'_> {
    /// Bytes after the last whole record: 0 in a sound file.
    pub fn trailing(&self) -> usize {
        self.trailing
    }

    fn decode(index: usize, chunk: &[u8; AcctV3::SIZE]) -> Result<AcctV3, BadRecord> {
        let r = AcctV3::from_bytes(chunk);
        if r.ac_version == ACCT_VERSION {
            Ok(r)
        } else {
            Err(BadRecord { index, version: r.ac_version })
        }
    }
}

impl Iterator for Records<'_> {
    type Item = Result<AcctV3, BadRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        let chunk = self.chunks.next()?;
        let index = self.front;
        self.front += 1;
        Some(Self::decode(index, chunk))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl DoubleEndedIterator for Records<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let chunk = self.chunks.next_back()?;
        self.back -= 1;
        Some(Self::decode(self.back, chunk))
    }
}

impl ExactSizeIterator for Records<'_> {}

/// What is wrong with a file as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileError {
    /// The size is not a whole number of records: `records` whole ones, then `trailing`
    /// bytes of a partial one.
    PartialRecord { records: usize, trailing: usize },
}

/// Checks that `bytes` is a whole number of records, returning how many there are.
pub fn whole_records(bytes: &[u8]) -> Result<usize, FileError> {
    let records = bytes.len() / AcctV3::SIZE;
    match bytes.len() % AcctV3::SIZE {
        0 => Ok(records),
        trailing => Err(FileError::PartialRecord { records, trailing }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(pid: u32, version: u8) -> [u8; 64] {
        AcctV3 { ac_version: version, ac_pid: pid, ..AcctV3::zeroed() }.to_bytes()
    }

    fn file(parts: &[[u8; 64]], tail: usize) -> Vec<u8> {
        let mut v: Vec<u8> = parts.iter().flatten().copied().collect();
        v.extend(core::iter::repeat_n(0xaa, tail));
        v
    }

    #[test]
    fn whole_records_in_order_both_ways() {
        let f = file(&[rec(1, 3), rec(2, 3), rec(3, 3)], 0);
        let pids: Vec<u32> = records(&f).map(|r| r.unwrap().ac_pid).collect();
        assert_eq!(pids, [1, 2, 3]);
        let back: Vec<u32> = records(&f).rev().map(|r| r.unwrap().ac_pid).collect();
        assert_eq!(back, [3, 2, 1]);
        assert_eq!(records(&f).len(), 3);
        assert_eq!(whole_records(&f), Ok(3));
        assert_eq!(whole_records(&[]), Ok(0));
    }

    #[test]
    fn other_versions_are_flagged_with_their_position() {
        let f = file(&[rec(1, 3), rec(2, 2), rec(3, 0x83), rec(4, 3)], 0);
        let got: Vec<_> = records(&f).collect();
        assert_eq!(got[1], Err(BadRecord { index: 1, version: 2 }));
        assert_eq!(got[2], Err(BadRecord { index: 2, version: 0x83 }), "big-endian v3");
        assert_eq!(got[3].unwrap().ac_pid, 4);
        let back: Vec<_> = records(&f).rev().collect();
        assert_eq!(back[1], Err(BadRecord { index: 2, version: 0x83 }), "indices hold from the back too");
        assert_eq!(back[2], Err(BadRecord { index: 1, version: 2 }));
    }

    #[test]
    fn a_partial_record_is_never_read_and_always_reported() {
        for tail in 1..64 {
            let f = file(&[rec(1, 3), rec(2, 3)], tail);
            let r = records(&f);
            assert_eq!(r.trailing(), tail);
            // From the back too, the last record read is the last whole one, not bytes
            // shifted by the partial tail (what GNU lastcomm gets wrong).
            assert_eq!(r.clone().next_back().unwrap().unwrap().ac_pid, 2);
            assert_eq!(r.count(), 2);
            assert_eq!(whole_records(&f), Err(FileError::PartialRecord { records: 2, trailing: tail }));
        }
    }

    #[test]
    fn front_and_back_meet() {
        let f = file(&[rec(1, 3), rec(2, 3), rec(3, 3)], 5);
        let mut r = records(&f);
        assert_eq!(r.next().unwrap().unwrap().ac_pid, 1);
        assert_eq!(r.next_back().unwrap().unwrap().ac_pid, 3);
        assert_eq!(r.next().unwrap().unwrap().ac_pid, 2);
        assert!(r.next().is_none() && r.next_back().is_none());
    }
}
