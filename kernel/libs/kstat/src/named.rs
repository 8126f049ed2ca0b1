//! # Named kstats (`KSTAT_TYPE_NAMED`): a list of name=value statistics
//!
//! The general-purpose kind: a fixed array of [`KstatNamed`] records, each a name (at most
//! 30 bytes), a data type and a 16-byte value. `unix:0:system_misc` (`ncpus`, `nproc`,
//! `boot_time`...) is one. The provider creates the kstat with `ndata` records, names each
//! with [`NamedStats::named_init`] (Solaris' `kstat_named_init`), installs it, and from
//! then on sets or adds to values by index (fast) or by name (a linear search, like
//! libkstat's `kstat_data_lookup`).
//!
//! Types are enforced: a value must have its statistic's data type, and [`NamedStats::add`]
//! works on the four integer types only. Integer arithmetic wraps, as counters in C do.
//! Text values are inline: `KSTAT_DATA_CHAR` holds 16 bytes, `KSTAT_DATA_STRING` 15 (see
//! `tally_uapi::kstat`); longer text is truncated by [`KstatValue::chars`] and
//! [`KstatValue::string`].

use alloc::vec::Vec;

use crate::{name_field, try_vec, KstatError};
use tally_uapi::kstat::{
    KstatNamed, KstatValue, KSTAT_DATA_INT32, KSTAT_DATA_INT64, KSTAT_DATA_UINT32, KSTAT_DATA_UINT64, KSTAT_STRLEN,
};

/// The data of a named kstat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedStats {
    recs: Vec<KstatNamed>,
}

const BLANK: KstatNamed = KstatNamed { name: [0; KSTAT_STRLEN], data_type: 0, value: [0; 16] };

impl NamedStats {
    /// `ndata` unnamed records (empty name, `KSTAT_DATA_CHAR`, zero), as `kstat_create`
    /// leaves them.
    pub fn new(ndata: usize) -> Result<Self, KstatError> {
        Ok(NamedStats { recs: try_vec(ndata, BLANK)? })
    }

    pub fn len(&self) -> usize {
        self.recs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }
    /// All records, in index order.
    pub fn records(&self) -> &[KstatNamed] {
        &self.recs
    }

    /// `kstat_named_init`: names record `index` and gives it `data_type`, value zero.
    /// The name must be 1..=30 bytes without NUL; the type CHAR, INT32, UINT32, INT64,
    /// UINT64 or STRING.
    pub fn named_init(&mut self, index: usize, name: &str, data_type: u8) -> Result<(), KstatError> {
        let field = name_field(name, false)?;
        let zero = KstatValue::zero(data_type).ok_or(KstatError::InvalidDataType)?;
        let rec = self.recs.get_mut(index).ok_or(KstatError::IndexOutOfRange)?;
        rec.name = field;
        rec.set_value(zero);
        Ok(())
    }

    /// Index of the first statistic called `name` (`kstat_data_lookup`).
    pub fn lookup(&self, name: &str) -> Option<usize> {
        if name.is_empty() {
            return None;
        }
        self.recs.iter().position(|r| r.name() == name)
    }

    pub fn get(&self, index: usize) -> Option<&KstatNamed> {
        self.recs.get(index)
    }
    pub fn value(&self, index: usize) -> Option<KstatValue> {
        self.recs.get(index)?.value()
    }
    pub fn value_by_name(&self, name: &str) -> Option<KstatValue> {
        self.value(self.lookup(name)?)
    }

    /// Stores `value` in record `index`; its type must be the record's data type.
    pub fn set(&mut self, index: usize, value: KstatValue) -> Result<(), KstatError> {
        let rec = self.recs.get_mut(index).ok_or(KstatError::IndexOutOfRange)?;
        if rec.data_type != value.data_type() {
            return Err(KstatError::TypeMismatch);
        }
        rec.set_value(value);
        Ok(())
    }
    pub fn set_by_name(&mut self, name: &str, value: KstatValue) -> Result<(), KstatError> {
        let i = self.lookup(name).ok_or(KstatError::NoSuchStatistic)?;
        self.set(i, value)
    }

    /// Adds `delta` (may be negative) to an integer statistic, wrapping modulo its width.
    pub fn add(&mut self, index: usize, delta: i64) -> Result<(), KstatError> {
        let rec = self.recs.get_mut(index).ok_or(KstatError::IndexOutOfRange)?;
        let new = match rec.value() {
            // `as` truncates to the low bits, which is exactly addition modulo 2^32.
            Some(KstatValue::Int32(x)) => KstatValue::Int32(x.wrapping_add(delta as i32)),
            Some(KstatValue::Uint32(x)) => KstatValue::Uint32(x.wrapping_add(delta as u32)),
            Some(KstatValue::Int64(x)) => KstatValue::Int64(x.wrapping_add(delta)),
            Some(KstatValue::Uint64(x)) => KstatValue::Uint64(x.wrapping_add(delta as u64)),
            _ => return Err(KstatError::TypeMismatch),
        };
        rec.set_value(new);
        Ok(())
    }
    pub fn add_by_name(&mut self, name: &str, delta: i64) -> Result<(), KstatError> {
        let i = self.lookup(name).ok_or(KstatError::NoSuchStatistic)?;
        self.add(i, delta)
    }
}

/// True for the data types [`NamedStats::add`] accepts.
pub fn is_integer_type(data_type: u8) -> bool {
    matches!(data_type, KSTAT_DATA_INT32 | KSTAT_DATA_UINT32 | KSTAT_DATA_INT64 | KSTAT_DATA_UINT64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_uapi::kstat::{KSTAT_DATA_CHAR, KSTAT_DATA_STRING};

    fn sample() -> NamedStats {
        let mut n = NamedStats::new(4).unwrap();
        n.named_init(0, "nproc", KSTAT_DATA_UINT32).unwrap();
        n.named_init(1, "delta", KSTAT_DATA_INT64).unwrap();
        n.named_init(2, "version", KSTAT_DATA_STRING).unwrap();
        n.named_init(3, "arch", KSTAT_DATA_CHAR).unwrap();
        n
    }

    #[test]
    fn init_set_add_lookup() {
        let mut n = sample();
        assert_eq!(n.lookup("delta"), Some(1));
        assert_eq!(n.lookup("nope"), None);
        assert_eq!(n.lookup(""), None);
        n.add_by_name("nproc", 3).unwrap();
        n.add(0, -1).unwrap();
        assert_eq!(n.value(0), Some(KstatValue::Uint32(2)));
        n.set_by_name("delta", KstatValue::Int64(-7)).unwrap();
        assert_eq!(n.value_by_name("delta"), Some(KstatValue::Int64(-7)));
        n.set(2, KstatValue::string("tally-0.1")).unwrap();
        n.set(3, KstatValue::chars("x86_64")).unwrap();
        assert_eq!(std::format!("{}", n.value(2).unwrap()), "tally-0.1");
        assert_eq!(std::format!("{}", n.value(3).unwrap()), "x86_64");
    }

    #[test]
    fn wrong_types_and_indexes_are_refused() {
        let mut n = sample();
        assert_eq!(n.set(0, KstatValue::Uint64(1)), Err(KstatError::TypeMismatch));
        assert_eq!(n.add(2, 1), Err(KstatError::TypeMismatch));
        assert_eq!(n.add(3, 1), Err(KstatError::TypeMismatch));
        assert_eq!(n.set(4, KstatValue::Uint32(1)), Err(KstatError::IndexOutOfRange));
        assert_eq!(n.add(99, 1), Err(KstatError::IndexOutOfRange));
        assert_eq!(n.named_init(4, "x", KSTAT_DATA_UINT32), Err(KstatError::IndexOutOfRange));
        assert_eq!(n.named_init(0, "x", 5), Err(KstatError::InvalidDataType));
        assert_eq!(n.named_init(0, "x", 7), Err(KstatError::InvalidDataType));
        assert_eq!(n.named_init(0, &"y".repeat(31), 1), Err(KstatError::NameTooLong));
        assert_eq!(n.named_init(0, "", 1), Err(KstatError::InvalidName));
        assert_eq!(n.set_by_name("zzz", KstatValue::Int32(0)), Err(KstatError::NoSuchStatistic));
        assert_eq!(n, sample(), "refusals change nothing");
    }

    #[test]
    fn integer_arithmetic_wraps() {
        let mut n = NamedStats::new(4).unwrap();
        for (i, t) in [KSTAT_DATA_INT32, KSTAT_DATA_UINT32, KSTAT_DATA_INT64, KSTAT_DATA_UINT64].into_iter().enumerate()
        {
            assert!(is_integer_type(t));
            n.named_init(i, "c", t).unwrap();
        }
        n.set(0, KstatValue::Int32(i32::MAX)).unwrap();
        n.add(0, 1).unwrap();
        assert_eq!(n.value(0), Some(KstatValue::Int32(i32::MIN)));
        n.add(1, -1).unwrap();
        assert_eq!(n.value(1), Some(KstatValue::Uint32(u32::MAX)));
        n.add(2, i64::MIN).unwrap();
        n.add(2, -1).unwrap();
        assert_eq!(n.value(2), Some(KstatValue::Int64(i64::MAX)));
        n.add(3, -2).unwrap();
        assert_eq!(n.value(3), Some(KstatValue::Uint64(u64::MAX - 1)));
    }

    #[test]
    fn uninitialised_records_are_blank_chars() {
        let n = NamedStats::new(2).unwrap();
        assert_eq!(n.len(), 2);
        assert_eq!(n.get(1).map(|r| r.name()), Some(""));
        assert_eq!(n.value(1), Some(KstatValue::Char([0; 16])));
        assert!(NamedStats::new(0).unwrap().is_empty());
    }
}
