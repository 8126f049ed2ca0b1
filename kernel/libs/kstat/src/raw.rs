//! # Raw kstats (`KSTAT_TYPE_RAW`): bytes whose meaning the reader already knows
//!
//! Solaris uses raw kstats to export whole well-known structures (`sysinfo`, `vminfo`,
//! `var`) without describing them field by field; the reader casts the bytes to the same
//! struct. In a raw kstat `ks_ndata` is the number of bytes (each byte is a "record").
//!
//! The size is fixed at creation; [`RawStats::write`] replaces a byte range and refuses
//! ranges past the end. A provider typically keeps its structure elsewhere and writes
//! its encoded bytes here before a read.

use alloc::vec::Vec;

use crate::{try_vec, KstatError};

/// The data of a raw kstat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawStats {
    bytes: Vec<u8>,
}

impl RawStats {
    /// `size` zero bytes.
    pub fn new(size: usize) -> Result<Self, KstatError> {
        Ok(RawStats { bytes: try_vec(size, 0u8)? })
    }
    pub fn len(&self) -> usize {
        self.bytes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
    /// The bytes, for in-place updates (the length cannot change).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }
    /// Copies `data` to `offset..offset + data.len()`; refused if that runs past the end.
    pub fn write(&mut self, offset: usize, data: &[u8]) -> Result<(), KstatError> {
        let end = offset.checked_add(data.len()).ok_or(KstatError::IndexOutOfRange)?;
        let dst = self.bytes.get_mut(offset..end).ok_or(KstatError::IndexOutOfRange)?;
        dst.copy_from_slice(data);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_in_range_only() {
        let mut r = RawStats::new(8).unwrap();
        r.write(2, &[1, 2, 3]).unwrap();
        r.write(8, &[]).unwrap();
        assert_eq!(r.bytes(), &[0, 0, 1, 2, 3, 0, 0, 0]);
        assert_eq!(r.write(6, &[9, 9, 9]), Err(KstatError::IndexOutOfRange));
        assert_eq!(r.write(usize::MAX, &[9]), Err(KstatError::IndexOutOfRange));
        assert_eq!(r.bytes(), &[0, 0, 1, 2, 3, 0, 0, 0]);
        r.bytes_mut()[7] = 7;
        assert_eq!(r.bytes()[7], 7);
        assert!(RawStats::new(0).unwrap().is_empty());
    }
}
