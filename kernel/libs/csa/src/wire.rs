//! Little-endian fields at fixed offsets: the two helpers every encoder and decoder of this
//! crate uses, so that each record's layout reads as a table of `(offset, field)` lines.
//!
//! Writers take a slice as long as the record and never grow it; readers take a slice the
//! parser has already checked to be long enough, so an offset past the end is a bug in a
//! layout table (the tests check every table), not something a file can cause.

/// Writes fields into a zeroed record image.
pub(crate) struct Put<'a>(pub(crate) &'a mut [u8]);

impl Put<'_> {
    pub(crate) fn u8(&mut self, at: usize, v: u8) {
        self.0[at] = v;
    }
    pub(crate) fn u16(&mut self, at: usize, v: u16) {
        self.0[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u32(&mut self, at: usize, v: u32) {
        self.0[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, at: usize, v: u64) {
        self.0[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn bytes(&mut self, at: usize, v: &[u8]) {
        self.0[at..at + v.len()].copy_from_slice(v);
    }
}

/// Reads fields of a record image.
pub(crate) struct Get<'a>(pub(crate) &'a [u8]);

impl Get<'_> {
    pub(crate) fn u8(&self, at: usize) -> u8 {
        self.0[at]
    }
    pub(crate) fn u16(&self, at: usize) -> u16 {
        u16::from_le_bytes([self.0[at], self.0[at + 1]])
    }
    pub(crate) fn u32(&self, at: usize) -> u32 {
        let mut a = [0u8; 4];
        a.copy_from_slice(&self.0[at..at + 4]);
        u32::from_le_bytes(a)
    }
    pub(crate) fn u64(&self, at: usize) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&self.0[at..at + 8]);
        u64::from_le_bytes(a)
    }
    pub(crate) fn array<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&self.0[at..at + N]);
        a
    }
}
