//! # The kstat chain: creating, finding, reading and deleting kstats
//!
//! The registry is the kernel's one list of kstats, kept in increasing KID order, and the
//! only way in or out of it. It follows Solaris' `kstat_fr.c`:
//!
//! * **One counter, two jobs.** `kstat_chain_id` (the KCID) is bumped by every create and
//!   every delete, and each new kstat takes the counter's value as its KID before the
//!   bump. So KIDs are unique, never reused and increasing, and a reader who remembers the
//!   KCID of its copy of the chain knows the chain changed the moment the KCID differs.
//!   `install` does not change the KCID: the kstat was already in the chain.
//! * **Create, initialise, install.** [`KstatRegistry::create`] allocates a zeroed data
//!   section and links the kstat in, flagged `KSTAT_FLAG_INVALID`: readers can see its
//!   header but not read its data while the provider names its statistics
//!   (`named_init`, `timer_init`). [`KstatRegistry::install`] clears the flag.
//! * **KID 0 is the chain.** The first kstat, `unix:0:kstat_headers`, has the headers of
//!   all kstats (itself included) as its data, in KID order; reading it is how user space
//!   lists the chain, so no second interface is needed. KID 1, `unix:0:kstat_types`, is a
//!   named kstat giving the number of each kstat type.
//! * **A read is a snapshot.** [`KstatRegistry::read`] copies the data section out and
//!   stamps `ks_snaptime` with the caller's `now`; I/O kstats are first brought up to
//!   `now` (see `io.rs`). A buffer too small is refused with the size needed, before
//!   anything changes.
//!
//! Names are `module:instance:name`, unique as a triple; module and name are 1..=30
//! bytes, class 0..=30, instance non-negative. Over-long names are refused, not truncated.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::intr::IntrStats;
use crate::io::IoStats;
use crate::named::NamedStats;
use crate::raw::RawStats;
use crate::timer::TimerStats;
use crate::{name_field, KstatError};
use tally_uapi::kstat::{
    kstat_set_string, Hrtime, KidT, KstatHeader, KstatIntr, KstatIo, KstatNamed, KstatRecord, KstatTimer, KstatValue,
    KSTAT_DATA_UINT64, KSTAT_FLAG_INVALID, KSTAT_FLAG_VAR_SIZE, KSTAT_FLAG_VIRTUAL, KSTAT_HEADERS_KID, KSTAT_STRLEN,
    KSTAT_TYPE_INTR, KSTAT_TYPE_IO, KSTAT_TYPE_NAMED, KSTAT_TYPE_RAW, KSTAT_TYPE_TIMER,
};

/// Largest data section a kstat may have (1 MiB). Solaris allows `INT_MAX` records; a
/// small kernel heap should refuse absurd sizes at `create` instead of running dry.
pub const KSTAT_MAX_DATA_SIZE: usize = 1 << 20;

/// The type-specific data of a kstat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KstatData {
    Raw(RawStats),
    Named(NamedStats),
    Intr(IntrStats),
    Io(IoStats),
    Timer(TimerStats),
    /// KID 0's virtual data: generated from the chain at each read.
    Headers,
}

impl KstatData {
    /// Zeroed data for a new kstat of `ks_type` with `ndata` records.
    fn new(ks_type: u8, ndata: usize) -> Result<Self, KstatError> {
        let size =
            record_size(ks_type).ok_or(KstatError::InvalidType)?.checked_mul(ndata).ok_or(KstatError::InvalidNdata)?;
        if size > KSTAT_MAX_DATA_SIZE {
            return Err(KstatError::InvalidNdata);
        }
        Ok(match ks_type {
            KSTAT_TYPE_RAW => KstatData::Raw(RawStats::new(ndata)?),
            KSTAT_TYPE_NAMED => KstatData::Named(NamedStats::new(ndata)?),
            KSTAT_TYPE_INTR | KSTAT_TYPE_IO if ndata != 1 => return Err(KstatError::InvalidNdata),
            KSTAT_TYPE_INTR => KstatData::Intr(IntrStats::new()),
            KSTAT_TYPE_IO => KstatData::Io(IoStats::new()),
            _ => KstatData::Timer(TimerStats::new(ndata)?),
        })
    }

    /// Number of records (bytes for raw).
    fn ndata(&self) -> usize {
        match self {
            KstatData::Raw(r) => r.len(),
            KstatData::Named(n) => n.len(),
            KstatData::Intr(_) | KstatData::Io(_) => 1,
            KstatData::Timer(t) => t.len(),
            KstatData::Headers => 0,
        }
    }
}

/// Bytes per data record of each type (`kstat_data_type[].size` in Solaris).
fn record_size(ks_type: u8) -> Option<usize> {
    match ks_type {
        KSTAT_TYPE_RAW => Some(1),
        KSTAT_TYPE_NAMED => Some(KstatNamed::SIZE),
        KSTAT_TYPE_INTR => Some(KstatIntr::SIZE),
        KSTAT_TYPE_IO => Some(KstatIo::SIZE),
        KSTAT_TYPE_TIMER => Some(KstatTimer::SIZE),
        _ => None,
    }
}

/// One kstat: its header and its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kstat {
    hdr: KstatHeader,
    data: KstatData,
}

impl Kstat {
    pub fn kid(&self) -> KidT {
        self.hdr.ks_kid
    }
    pub fn module(&self) -> &str {
        self.hdr.module()
    }
    pub fn instance(&self) -> i32 {
        self.hdr.ks_instance
    }
    pub fn name(&self) -> &str {
        self.hdr.name()
    }
    pub fn class(&self) -> &str {
        self.hdr.class()
    }
    pub fn ks_type(&self) -> u8 {
        self.hdr.ks_type
    }
    pub fn crtime(&self) -> Hrtime {
        self.hdr.ks_crtime
    }
    pub fn snaptime(&self) -> Hrtime {
        self.hdr.ks_snaptime
    }
    pub fn flags(&self) -> u8 {
        self.hdr.ks_flags
    }
    /// Installed, i.e. readable.
    pub fn is_installed(&self) -> bool {
        self.hdr.is_valid()
    }
    /// The stored header. For KID 0 `ks_ndata`/`ks_data_size` are filled in only by
    /// [`KstatRegistry::header`] and reads, since they depend on the chain.
    pub fn header(&self) -> KstatHeader {
        self.hdr
    }
    pub fn data(&self) -> &KstatData {
        &self.data
    }
    pub fn data_mut(&mut self) -> &mut KstatData {
        &mut self.data
    }
    pub fn named_mut(&mut self) -> Result<&mut NamedStats, KstatError> {
        match &mut self.data {
            KstatData::Named(n) => Ok(n),
            _ => Err(KstatError::WrongKind),
        }
    }
    pub fn intr_mut(&mut self) -> Result<&mut IntrStats, KstatError> {
        match &mut self.data {
            KstatData::Intr(i) => Ok(i),
            _ => Err(KstatError::WrongKind),
        }
    }
    pub fn io_mut(&mut self) -> Result<&mut IoStats, KstatError> {
        match &mut self.data {
            KstatData::Io(i) => Ok(i),
            _ => Err(KstatError::WrongKind),
        }
    }
    pub fn timer_mut(&mut self) -> Result<&mut TimerStats, KstatError> {
        match &mut self.data {
            KstatData::Timer(t) => Ok(t),
            _ => Err(KstatError::WrongKind),
        }
    }
    pub fn raw_mut(&mut self) -> Result<&mut RawStats, KstatError> {
        match &mut self.data {
            KstatData::Raw(r) => Ok(r),
            _ => Err(KstatError::WrongKind),
        }
    }
}

/// A copy of one kstat's data, as a reader gets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SnapshotData {
    Raw(Vec<u8>),
    Named(Vec<KstatNamed>),
    Intr(KstatIntr),
    Io(KstatIo),
    Timer(Vec<KstatTimer>),
    /// KID 0: every kstat's header, in KID order.
    Headers(Vec<KstatHeader>),
}

impl SnapshotData {
    pub fn as_io(&self) -> Option<KstatIo> {
        match self {
            SnapshotData::Io(io) => Some(*io),
            _ => None,
        }
    }
    pub fn as_intr(&self) -> Option<KstatIntr> {
        match self {
            SnapshotData::Intr(i) => Some(*i),
            _ => None,
        }
    }
    pub fn as_named(&self) -> Option<&[KstatNamed]> {
        match self {
            SnapshotData::Named(n) => Some(n),
            _ => None,
        }
    }
    pub fn as_timers(&self) -> Option<&[KstatTimer]> {
        match self {
            SnapshotData::Timer(t) => Some(t),
            _ => None,
        }
    }
    pub fn as_raw(&self) -> Option<&[u8]> {
        match self {
            SnapshotData::Raw(r) => Some(r),
            _ => None,
        }
    }
    pub fn as_headers(&self) -> Option<&[KstatHeader]> {
        match self {
            SnapshotData::Headers(h) => Some(h),
            _ => None,
        }
    }
}

/// The result of [`KstatRegistry::snapshot`]: the header at snapshot time and the data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KstatSnapshot {
    pub header: KstatHeader,
    pub data: SnapshotData,
}

/// What [`KstatRegistry::read`] reports besides the bytes it wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KstatRead {
    /// The KCID at the time of the read; differs from the reader's copy → re-read KID 0.
    pub chain_id: KidT,
    /// The kstat's header, with this read's `ks_snaptime`.
    pub header: KstatHeader,
    /// Bytes of data written at the start of the caller's buffer (`ks_data_size`).
    pub len: usize,
}

type NameKey = ([u8; KSTAT_STRLEN], i32, [u8; KSTAT_STRLEN]);

/// The kstat chain. See the module docs. Not synchronised: the kernel wraps it in a lock.
#[derive(Clone, Debug)]
pub struct KstatRegistry {
    chain: BTreeMap<KidT, Kstat>,
    by_name: BTreeMap<NameKey, KidT>,
    chain_id: KidT,
}

/// Names of the kstat types, by number, as `unix:0:kstat_types` lists them.
const TYPE_NAMES: [&str; 5] = ["raw", "name=value", "interrupt", "i/o", "event_timer"];

impl KstatRegistry {
    /// A chain holding the two system kstats, created at `now` (Solaris' `kstat_init`):
    /// KID 0 `unix:0:kstat_headers` and KID 1 `unix:0:kstat_types`. The KCID is then 2.
    pub fn new(now: Hrtime) -> Self {
        let mut reg = KstatRegistry { chain: BTreeMap::new(), by_name: BTreeMap::new(), chain_id: 0 };
        let mut hdr = KstatHeader::ZERO;
        kstat_set_string(&mut hdr.ks_module, "unix");
        kstat_set_string(&mut hdr.ks_name, "kstat_headers");
        kstat_set_string(&mut hdr.ks_class, "kstat");
        hdr.ks_type = KSTAT_TYPE_RAW;
        hdr.ks_flags = KSTAT_FLAG_VIRTUAL | KSTAT_FLAG_VAR_SIZE;
        hdr.ks_crtime = now;
        hdr.ks_snaptime = now;
        reg.link(Kstat { hdr, data: KstatData::Headers });

        // Cannot fail: fixed, valid names and a five-record named kstat in a fresh chain.
        if let Ok(kid) = reg.create("unix", 0, "kstat_types", "kstat", KSTAT_TYPE_NAMED, TYPE_NAMES.len() as u32, now) {
            if let Ok(n) = reg.named_mut(kid) {
                for (i, name) in TYPE_NAMES.iter().enumerate() {
                    let _ = n.named_init(i, name, KSTAT_DATA_UINT64);
                    let _ = n.set(i, KstatValue::Uint64(i as u64));
                }
            }
            let _ = reg.install(kid);
        }
        reg
    }

    /// The current chain id (KCID). It changes exactly when a kstat is created or deleted.
    pub fn chain_id(&self) -> KidT {
        self.chain_id
    }

    /// Number of kstats in the chain, KID 0 included.
    pub fn len(&self) -> usize {
        self.chain.len()
    }
    /// Never true: KID 0 is always there.
    pub fn is_empty(&self) -> bool {
        self.chain.is_empty()
    }

    /// `kstat_create`: adds a kstat with a zeroed data section and returns its KID. It is
    /// listed at once but flagged invalid (unreadable) until [`Self::install`].
    ///
    /// `ndata` is the number of records: bytes for `KSTAT_TYPE_RAW`, exactly 1 for INTR
    /// and IO, any number for NAMED and TIMER, within [`KSTAT_MAX_DATA_SIZE`] bytes.
    /// `crtime` becomes both `ks_crtime` and the initial `ks_snaptime`.
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        &mut self,
        module: &str,
        instance: i32,
        name: &str,
        class: &str,
        ks_type: u8,
        ndata: u32,
        crtime: Hrtime,
    ) -> Result<KidT, KstatError> {
        let mut hdr = KstatHeader::ZERO;
        hdr.ks_module = name_field(module, false)?;
        hdr.ks_name = name_field(name, false)?;
        hdr.ks_class = name_field(class, true)?;
        if instance < 0 {
            return Err(KstatError::InvalidName);
        }
        hdr.ks_instance = instance;
        if self.by_name.contains_key(&(hdr.ks_module, instance, hdr.ks_name)) {
            return Err(KstatError::Exists);
        }
        if self.chain_id < 0 || self.chain_id == KidT::MAX {
            return Err(KstatError::KidsExhausted);
        }
        let data = KstatData::new(ks_type, ndata as usize)?;
        hdr.ks_kid = self.chain_id;
        hdr.ks_type = ks_type;
        hdr.ks_flags = KSTAT_FLAG_INVALID;
        hdr.ks_crtime = crtime;
        hdr.ks_snaptime = crtime;
        Ok(self.link(Kstat { hdr, data }))
    }

    /// [`Self::create`] for a named kstat, naming its statistics too: one record per
    /// `(name, KSTAT_DATA_*)` pair. Everything is checked before anything is created.
    #[allow(clippy::too_many_arguments)]
    pub fn create_named(
        &mut self,
        module: &str,
        instance: i32,
        name: &str,
        class: &str,
        stats: &[(&str, u8)],
        crtime: Hrtime,
    ) -> Result<KidT, KstatError> {
        let mut named = NamedStats::new(stats.len())?;
        for (i, (n, t)) in stats.iter().enumerate() {
            named.named_init(i, n, *t)?;
        }
        let ndata = u32::try_from(stats.len()).map_err(|_| KstatError::InvalidNdata)?;
        let kid = self.create(module, instance, name, class, KSTAT_TYPE_NAMED, ndata, crtime)?;
        if let Some(ks) = self.chain.get_mut(&kid) {
            ks.data = KstatData::Named(named);
        }
        Ok(kid)
    }

    /// `kstat_install`: makes a created kstat readable. Installing twice is harmless.
    pub fn install(&mut self, kid: KidT) -> Result<(), KstatError> {
        let ks = self.chain.get_mut(&kid).ok_or(KstatError::NoSuchKstat)?;
        ks.hdr.ks_flags &= !KSTAT_FLAG_INVALID;
        Ok(())
    }

    /// `kstat_delete`: removes a kstat and bumps the KCID. Its KID is never reused.
    /// KID 0 cannot be deleted.
    pub fn delete(&mut self, kid: KidT) -> Result<(), KstatError> {
        if kid == KSTAT_HEADERS_KID {
            return Err(KstatError::Permanent);
        }
        let ks = self.chain.remove(&kid).ok_or(KstatError::NoSuchKstat)?;
        self.by_name.remove(&(ks.hdr.ks_module, ks.hdr.ks_instance, ks.hdr.ks_name));
        self.chain_id = self.chain_id.wrapping_add(1);
        Ok(())
    }

    /// `kstat_lookup_byname`: the KID of `module:instance:name`, installed or not.
    pub fn lookup(&self, module: &str, instance: i32, name: &str) -> Option<KidT> {
        let m = name_field(module, false).ok()?;
        let n = name_field(name, false).ok()?;
        self.by_name.get(&(m, instance, n)).copied()
    }

    /// `kstat_lookup_bykid`.
    pub fn get(&self, kid: KidT) -> Option<&Kstat> {
        self.chain.get(&kid)
    }
    pub fn get_mut(&mut self, kid: KidT) -> Option<&mut Kstat> {
        self.chain.get_mut(&kid)
    }

    /// The chain, in increasing KID order.
    pub fn iter(&self) -> impl Iterator<Item = &Kstat> + '_ {
        self.chain.values()
    }

    /// The header of `kid` as a reader would see it in the chain (KID 0's size fields
    /// filled in from the chain).
    pub fn header(&self, kid: KidT) -> Option<KstatHeader> {
        self.chain.get(&kid).map(|ks| self.public_header(ks))
    }

    /// Every header, in KID order: KID 0's data.
    pub fn headers(&self) -> impl Iterator<Item = KstatHeader> + '_ {
        self.chain.values().map(|ks| self.public_header(ks))
    }

    /// The data section size of `kid` now, in bytes: the buffer [`Self::read`] needs.
    pub fn data_size(&self, kid: KidT) -> Result<usize, KstatError> {
        let ks = self.chain.get(&kid).ok_or(KstatError::NoSuchKstat)?;
        Ok(self.public_header(ks).ks_data_size as usize)
    }

    pub fn named_mut(&mut self, kid: KidT) -> Result<&mut NamedStats, KstatError> {
        self.kstat_mut(kid)?.named_mut()
    }
    pub fn intr_mut(&mut self, kid: KidT) -> Result<&mut IntrStats, KstatError> {
        self.kstat_mut(kid)?.intr_mut()
    }
    pub fn io_mut(&mut self, kid: KidT) -> Result<&mut IoStats, KstatError> {
        self.kstat_mut(kid)?.io_mut()
    }
    pub fn timer_mut(&mut self, kid: KidT) -> Result<&mut TimerStats, KstatError> {
        self.kstat_mut(kid)?.timer_mut()
    }
    pub fn raw_mut(&mut self, kid: KidT) -> Result<&mut RawStats, KstatError> {
        self.kstat_mut(kid)?.raw_mut()
    }

    /// Copies `kid`'s data for a reader and stamps `ks_snaptime = now` (kernel-side, owned
    /// form of [`Self::read`]). Not-yet-installed kstats are refused.
    pub fn snapshot(&mut self, kid: KidT, now: Hrtime) -> Result<KstatSnapshot, KstatError> {
        self.stamp(kid, now)?;
        let ks = self.chain.get(&kid).ok_or(KstatError::NoSuchKstat)?;
        let data = match &ks.data {
            KstatData::Raw(r) => SnapshotData::Raw(copy_vec(r.bytes())?),
            KstatData::Named(n) => SnapshotData::Named(copy_vec(n.records())?),
            KstatData::Intr(i) => SnapshotData::Intr(i.record()),
            KstatData::Io(io) => SnapshotData::Io(io.snapshot(now)),
            KstatData::Timer(t) => SnapshotData::Timer(copy_vec(t.records())?),
            KstatData::Headers => {
                let mut v = Vec::new();
                v.try_reserve_exact(self.chain.len()).map_err(|_| KstatError::NoMemory)?;
                v.extend(self.headers());
                SnapshotData::Headers(v)
            }
        };
        Ok(KstatSnapshot { header: self.public_header(ks), data })
    }

    /// The read system call's work (`KSTAT_IOC_READ`): encodes `kid`'s data section into
    /// the start of `out` as little-endian records (`tally_uapi::kstat::records` decodes
    /// them) and stamps `ks_snaptime = now`. No allocation.
    ///
    /// Refused with `BufferTooSmall { needed }` (ENOMEM) before any change if `out` is
    /// short, and with `NotInstalled` (EAGAIN) for a kstat still being initialised.
    pub fn read(&mut self, kid: KidT, now: Hrtime, out: &mut [u8]) -> Result<KstatRead, KstatError> {
        let needed = self.data_size(kid)?;
        if !self.chain.get(&kid).is_some_and(Kstat::is_installed) {
            return Err(KstatError::NotInstalled);
        }
        if out.len() < needed {
            return Err(KstatError::BufferTooSmall { needed });
        }
        self.stamp(kid, now)?;
        let ks = self.chain.get(&kid).ok_or(KstatError::NoSuchKstat)?;
        let out = &mut out[..needed];
        let written = match &ks.data {
            KstatData::Raw(r) => {
                out.copy_from_slice(r.bytes());
                Some(needed)
            }
            KstatData::Named(n) => tally_uapi::kstat::encode_records(n.records(), out),
            KstatData::Intr(i) => i.record().encode_into(out),
            KstatData::Io(io) => io.snapshot(now).encode_into(out),
            KstatData::Timer(t) => tally_uapi::kstat::encode_records(t.records(), out),
            KstatData::Headers => {
                for (h, chunk) in self.headers().zip(out.as_chunks_mut::<{ KstatHeader::SIZE }>().0) {
                    h.encode_into(chunk);
                }
                Some(needed)
            }
        };
        // `needed` was computed from the same data, so the encoders always fit.
        let len = written.ok_or(KstatError::BufferTooSmall { needed })?;
        Ok(KstatRead { chain_id: self.chain_id, header: self.public_header(ks), len })
    }

    fn kstat_mut(&mut self, kid: KidT) -> Result<&mut Kstat, KstatError> {
        self.chain.get_mut(&kid).ok_or(KstatError::NoSuchKstat)
    }

    /// Links a fully built kstat under the current KCID and bumps it.
    fn link(&mut self, ks: Kstat) -> KidT {
        let kid = self.chain_id;
        self.by_name.insert((ks.hdr.ks_module, ks.hdr.ks_instance, ks.hdr.ks_name), kid);
        self.chain.insert(kid, ks);
        self.chain_id += 1;
        kid
    }

    /// Checks `kid` is readable and sets its snapshot time.
    fn stamp(&mut self, kid: KidT, now: Hrtime) -> Result<(), KstatError> {
        let ks = self.kstat_mut(kid)?;
        if !ks.is_installed() {
            return Err(KstatError::NotInstalled);
        }
        ks.hdr.ks_snaptime = now;
        Ok(())
    }

    fn public_header(&self, ks: &Kstat) -> KstatHeader {
        let mut h = ks.hdr;
        let (ndata, size) = match ks.data {
            KstatData::Headers => (self.chain.len(), self.chain.len() * KstatHeader::SIZE),
            ref d => {
                let n = d.ndata();
                (n, n * record_size(ks.hdr.ks_type).unwrap_or(0))
            }
        };
        h.ks_ndata = u32::try_from(ndata).unwrap_or(u32::MAX);
        h.ks_data_size = size as u64;
        h
    }
}

fn copy_vec<T: Clone>(src: &[T]) -> Result<Vec<T>, KstatError> {
    let mut v = Vec::new();
    v.try_reserve_exact(src.len()).map_err(|_| KstatError::NoMemory)?;
    v.extend_from_slice(src);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IntrKind;
    use tally_uapi::kstat::{records, KstatFilter, KSTAT_DATA_INT64, KSTAT_DATA_UINT32};

    fn reg() -> KstatRegistry {
        KstatRegistry::new(1_000)
    }

    #[test]
    fn new_chain_has_the_system_kstats() {
        let r = reg();
        assert_eq!(r.chain_id(), 2);
        assert_eq!(r.len(), 2);
        let h0 = r.header(0).unwrap();
        assert_eq!((h0.module(), h0.ks_instance, h0.name(), h0.class()), ("unix", 0, "kstat_headers", "kstat"));
        assert_eq!(h0.ks_flags, KSTAT_FLAG_VIRTUAL | KSTAT_FLAG_VAR_SIZE);
        assert_eq!((h0.ks_ndata, h0.ks_data_size), (2, 2 * 136));
        let types = r.lookup("unix", 0, "kstat_types").unwrap();
        assert_eq!(types, 1);
        let KstatData::Named(n) = r.get(1).unwrap().data() else { panic!() };
        assert_eq!(n.value_by_name("i/o"), Some(KstatValue::Uint64(KSTAT_TYPE_IO as u64)));
        assert_eq!(n.value_by_name("event_timer"), Some(KstatValue::Uint64(4)));
        assert!(r.get(1).unwrap().is_installed());
    }

    #[test]
    fn create_install_read_delete() {
        let mut r = reg();
        let kid = r.create("sd", 0, "sd0", "disk", KSTAT_TYPE_IO, 1, 5_000).unwrap();
        assert_eq!(kid, 2);
        assert_eq!(r.chain_id(), 3);
        let h = r.header(kid).unwrap();
        assert!(!h.is_valid());
        assert_eq!((h.ks_crtime, h.ks_snaptime, h.ks_ndata, h.ks_data_size), (5_000, 5_000, 1, 80));
        let mut buf = [0u8; 80];
        assert_eq!(r.read(kid, 6_000, &mut buf), Err(KstatError::NotInstalled));
        assert_eq!(r.snapshot(kid, 6_000).map(|_| ()), Err(KstatError::NotInstalled));
        r.install(kid).unwrap();
        r.install(kid).unwrap();
        assert_eq!(r.chain_id(), 3, "install does not change the chain");
        r.io_mut(kid).unwrap().waitq_enter(6_000).unwrap();
        let got = r.read(kid, 7_000, &mut buf).unwrap();
        assert_eq!((got.chain_id, got.len, got.header.ks_snaptime), (3, 80, 7_000));
        let io = KstatIo::decode(&buf).unwrap();
        assert_eq!((io.wcnt, io.wtime, io.wlentime, io.wlastupdate), (1, 1_000, 1_000, 7_000));
        assert_eq!(r.get(kid).unwrap().snaptime(), 7_000);
        r.delete(kid).unwrap();
        assert_eq!(r.chain_id(), 4);
        assert_eq!(r.delete(kid), Err(KstatError::NoSuchKstat));
        assert_eq!(r.read(kid, 8_000, &mut buf), Err(KstatError::NoSuchKstat));
        assert_eq!(r.lookup("sd", 0, "sd0"), None);
        assert_eq!(r.chain_id(), 4, "a failed delete changes nothing");
    }

    #[test]
    fn names_collide_and_are_checked() {
        let mut r = reg();
        let a = r.create("m", 0, "n", "c", KSTAT_TYPE_INTR, 1, 0).unwrap();
        let id = r.chain_id();
        assert_eq!(r.create("m", 0, "n", "other", KSTAT_TYPE_IO, 1, 0), Err(KstatError::Exists));
        assert_eq!(r.create(&"m".repeat(31), 0, "n", "c", KSTAT_TYPE_IO, 1, 0), Err(KstatError::NameTooLong));
        assert_eq!(r.create("m", 0, &"n".repeat(31), "c", KSTAT_TYPE_IO, 1, 0), Err(KstatError::NameTooLong));
        assert_eq!(r.create("m", 0, "n2", &"c".repeat(31), KSTAT_TYPE_IO, 1, 0), Err(KstatError::NameTooLong));
        assert_eq!(r.create("", 0, "n", "c", KSTAT_TYPE_IO, 1, 0), Err(KstatError::InvalidName));
        assert_eq!(r.create("m", 0, "", "c", KSTAT_TYPE_IO, 1, 0), Err(KstatError::InvalidName));
        assert_eq!(r.create("m", -1, "n3", "c", KSTAT_TYPE_IO, 1, 0), Err(KstatError::InvalidName));
        assert_eq!(r.create("m", 0, "n4", "c", 5, 1, 0), Err(KstatError::InvalidType));
        assert_eq!(r.create("m", 0, "n5", "c", KSTAT_TYPE_IO, 2, 0), Err(KstatError::InvalidNdata));
        assert_eq!(r.create("m", 0, "n6", "c", KSTAT_TYPE_INTR, 0, 0), Err(KstatError::InvalidNdata));
        assert_eq!(r.create("m", 0, "n7", "c", KSTAT_TYPE_RAW, (1 << 20) + 1, 0), Err(KstatError::InvalidNdata));
        assert_eq!(r.create("m", 0, "n8", "c", KSTAT_TYPE_NAMED, u32::MAX, 0), Err(KstatError::InvalidNdata));
        assert_eq!(r.chain_id(), id, "refused creates do not touch the chain");
        // Same name, other instance or module: fine. Empty class: fine.
        r.create("m", 1, "n", "", KSTAT_TYPE_INTR, 1, 0).unwrap();
        r.create("m2", 0, "n", "c", KSTAT_TYPE_INTR, 1, 0).unwrap();
        // After a delete the name is free again, under a new KID.
        r.delete(a).unwrap();
        let b = r.create("m", 0, "n", "c", KSTAT_TYPE_INTR, 1, 0).unwrap();
        assert!(b > a);
        assert_eq!(r.lookup("m", 0, "n"), Some(b));
        assert_eq!(r.lookup(&"m".repeat(40), 0, "n"), None);
    }

    #[test]
    fn kid_zero_reads_the_chain() {
        let mut r = reg();
        let a = r.create("sched", 0, "runq", "sched", KSTAT_TYPE_IO, 1, 10).unwrap();
        let b = r.create("tty", 3, "intr", "controller", KSTAT_TYPE_INTR, 1, 20).unwrap();
        r.install(a).unwrap();
        let need = r.data_size(0).unwrap();
        assert_eq!(need, 4 * KstatHeader::SIZE);
        let mut small = alloc::vec![0u8; need - 1];
        assert_eq!(r.read(0, 50, &mut small), Err(KstatError::BufferTooSmall { needed: need }));
        assert_eq!(r.get(0).unwrap().snaptime(), 1_000, "a refused read changes nothing");
        let mut buf = alloc::vec![0u8; need + 7];
        let got = r.read(0, 50, &mut buf).unwrap();
        assert_eq!(got.len, need);
        let hs: Vec<KstatHeader> = records(&buf[..got.len]).collect();
        let kids: Vec<KidT> = hs.iter().map(|h| h.ks_kid).collect();
        assert_eq!(kids, [0, 1, a, b]);
        assert_eq!(hs[0].ks_snaptime, 50, "KID 0 lists itself with this read's time");
        assert!(hs[2].is_valid() && !hs[3].is_valid());
        assert_eq!((hs[3].module(), hs[3].ks_instance, hs[3].class()), ("tty", 3, "controller"));
        assert_eq!(r.delete(0), Err(KstatError::Permanent));
        let f = KstatFilter::parse("sched::").unwrap();
        assert_eq!(hs.iter().filter(|h| f.matches_header(h)).count(), 1);
        let snap = r.snapshot(0, 60).unwrap();
        assert_eq!(snap.data.as_headers().unwrap().len(), 4);
        assert_eq!(snap.header.ks_ndata, 4);
    }

    #[test]
    fn every_kind_reads_and_decodes() {
        let mut r = reg();
        let n = r
            .create_named(
                "unix",
                0,
                "system_misc",
                "misc",
                &[("nproc", KSTAT_DATA_UINT32), ("delta", KSTAT_DATA_INT64)],
                0,
            )
            .unwrap();
        let i = r.create("pit", 0, "clock", "controller", KSTAT_TYPE_INTR, 1, 0).unwrap();
        let t = r.create("vm", 0, "faults", "vm", KSTAT_TYPE_TIMER, 2, 0).unwrap();
        let w = r.create("unix", 0, "sysinfo", "misc", KSTAT_TYPE_RAW, 6, 0).unwrap();
        for k in [n, i, t, w] {
            r.install(k).unwrap();
        }
        r.named_mut(n).unwrap().add_by_name("nproc", 4).unwrap();
        r.named_mut(n).unwrap().set(1, KstatValue::Int64(-9)).unwrap();
        r.intr_mut(i).unwrap().bump(IntrKind::Spurious);
        {
            let ts = r.timer_mut(t).unwrap();
            ts.timer_init(1, "major").unwrap();
            ts.start(1, 100).unwrap();
            ts.stop(1, 175).unwrap();
        }
        r.raw_mut(w).unwrap().write(0, b"tally!").unwrap();
        assert_eq!(r.io_mut(n).map(|_| ()), Err(KstatError::WrongKind));
        assert_eq!(r.timer_mut(999).map(|_| ()), Err(KstatError::NoSuchKstat));

        let mut buf = [0u8; 256];
        let got = r.read(n, 1, &mut buf).unwrap();
        let recs: Vec<KstatNamed> = records(&buf[..got.len]).collect();
        assert_eq!(recs[0].name(), "nproc");
        assert_eq!(recs[0].value(), Some(KstatValue::Uint32(4)));
        assert_eq!(recs[1].value(), Some(KstatValue::Int64(-9)));
        assert_eq!(got.header.ks_data_size, 96);

        let got = r.read(i, 1, &mut buf).unwrap();
        assert_eq!(KstatIntr::decode(&buf[..got.len]).unwrap().intrs, [0, 0, 0, 1, 0]);

        let got = r.read(t, 1, &mut buf).unwrap();
        let ts: Vec<KstatTimer> = records(&buf[..got.len]).collect();
        assert_eq!((ts.len(), ts[1].name(), ts[1].num_events, ts[1].elapsed_time), (2, "major", 1, 75));

        let got = r.read(w, 1, &mut buf).unwrap();
        assert_eq!(&buf[..got.len], b"tally!");
        assert_eq!(got.header.ks_ndata, 6);

        let s = r.snapshot(n, 2).unwrap();
        assert_eq!(s.data.as_named().unwrap(), &recs[..]);
        assert_eq!(r.snapshot(i, 2).unwrap().data.as_intr().unwrap().intrs[3], 1);
        assert_eq!(r.snapshot(t, 2).unwrap().data.as_timers().unwrap()[1].max_time, 75);
        assert_eq!(r.snapshot(w, 2).unwrap().data.as_raw().unwrap(), b"tally!");
    }

    #[test]
    fn create_named_checks_before_creating() {
        let mut r = reg();
        let id = r.chain_id();
        assert_eq!(
            r.create_named("m", 0, "n", "c", &[("ok", KSTAT_DATA_UINT32), ("bad", 6)], 0),
            Err(KstatError::InvalidDataType)
        );
        assert_eq!(r.create_named("m", 0, "n", "c", &[("", KSTAT_DATA_UINT32)], 0), Err(KstatError::InvalidName));
        assert_eq!(r.chain_id(), id);
        assert_eq!(r.lookup("m", 0, "n"), None);
    }

    #[test]
    fn iteration_is_in_kid_order_after_deletes() {
        let mut r = reg();
        let kids: Vec<KidT> = (0..6).map(|i| r.create("m", i, "n", "c", KSTAT_TYPE_RAW, 0, 0).unwrap()).collect();
        r.delete(kids[1]).unwrap();
        r.delete(kids[4]).unwrap();
        let late = r.create("late", 0, "n", "c", KSTAT_TYPE_RAW, 0, 0).unwrap();
        let order: Vec<KidT> = r.iter().map(Kstat::kid).collect();
        assert_eq!(order, [0, 1, kids[0], kids[2], kids[3], kids[5], late]);
        assert_eq!(r.lookup("m", 5, "n"), Some(kids[5]));
        assert_eq!(r.lookup("m", 4, "n"), None);
    }
}
