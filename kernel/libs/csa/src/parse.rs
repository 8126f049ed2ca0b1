//! Reading a CSA file back: a walk over its records that follows `ah_size` and AMORE.
//!
//! ```text
//!   offset 0     header → type CSA, size 136, AMORE ─┐ a base record, then its chain:
//!   offset 136   header → type MEM, size 112, AMORE  │ follow AMORE from record to record,
//!   offset 248   header → type IO,  size 56          ┘ check hdr2's size against the chain
//!   offset 304   header → type EOJ, size 120           one record
//!   offset 424   header → type 0122 (a daemon's)       returned as it is, skipped by ah_size
//! ```
//!
//! The walk trusts nothing: a header with the wrong magic, a size that does not match its
//! type, a record cut short by the end of the file, a continuation record with no base
//! record before it, or a chain whose length disagrees with its second header ends the walk
//! with a [`ParseError`] that says where — never a panic, never a read past the end. Since
//! records have no resynchronisation marker, nothing after a bad record can be trusted, so
//! the walk stops there. (Tally's kernel never leaves a partial record: it appends records
//! whole or not at all.)

use tally_uapi::csa::{
    ACCTCFG_SIZE, ACCTCSA_SIZE, ACCTDELAY_SIZE, ACCTEOJ_SIZE, ACCTIO_SIZE, ACCTMEM_SIZE, ACCTSOJ_SIZE, ACCT_DELAY,
    ACCT_IO, ACCT_KERNEL_CFG, ACCT_KERNEL_CSA, ACCT_KERNEL_DELAY, ACCT_KERNEL_EOJ, ACCT_KERNEL_IO, ACCT_KERNEL_MEM,
    ACCT_KERNEL_SOJ, ACCT_MAGIC, ACCT_MAGIC_HDR2, ACCT_MEM, AMORE,
};

use crate::config_record::CfgRecord;
use crate::header::Header;
use crate::job_record::{EojRecord, SojRecord};
use crate::process::{BaseRecord, DelayRecord, IoRecord, MemRecord, ProcessRecord};
use crate::wire::Get;

/// One record of a file (a base record with its whole chain counts as one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record<'a> {
    Process(ProcessRecord),
    Soj(SojRecord),
    Eoj(EojRecord),
    Cfg(CfgRecord),
    /// A record of a type the kernel does not write itself (a daemon's or a site's, from
    /// `AC_WRACCT`): its header and all its bytes.
    Other {
        header: Header,
        bytes: &'a [u8],
    },
}

/// What was wrong, and at which byte offset of the file the bad record (or header) starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub kind: ParseErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// Fewer bytes left than a header, or than the header's `ah_size`.
    Truncated,
    /// `ah_magic` is not 030512.
    BadMagic(u16),
    /// `ah_size` is not the size of a record of this type (or less than a header).
    BadSize { ah_type: u8, size: u16 },
    /// A base or end-of-job record whose second header is wrong: not the inverted magic,
    /// or (base records) an `ah_size` that is not the length of the chain that follows.
    BadSecondHeader,
    /// A record after AMORE that is not a memory, I/O or delay record, or one of those
    /// twice in one chain.
    BadContinuation { ah_type: u8 },
    /// A memory, I/O or delay record with no base record before it.
    OrphanContinuation { ah_type: u8 },
}

impl core::fmt::Display for ParseError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "bad CSA record at byte {}: ", self.offset)?;
        match self.kind {
            ParseErrorKind::Truncated => write!(f, "the file ends inside it"),
            ParseErrorKind::BadMagic(m) => write!(f, "magic {m:#o}, not 030512"),
            ParseErrorKind::BadSize { ah_type, size } => write!(f, "type {ah_type:#o} cannot be {size} bytes"),
            ParseErrorKind::BadSecondHeader => write!(f, "its second header does not match its chain"),
            ParseErrorKind::BadContinuation { ah_type } => write!(f, "type {ah_type:#o} cannot continue a chain"),
            ParseErrorKind::OrphanContinuation { ah_type } => {
                write!(f, "continuation record (type {ah_type:#o}) without a base record")
            }
        }
    }
}

/// The records of `bytes`, in file order, each with its byte offset.
pub fn records(bytes: &[u8]) -> Records<'_> {
    Records { bytes, offset: 0, done: false }
}

/// The walk of [`records`].
#[derive(Clone, Debug)]
pub struct Records<'a> {
    bytes: &'a [u8],
    offset: usize,
    done: bool,
}

impl<'a> Records<'a> {
    /// Where the next record starts.
    pub fn offset(&self) -> usize {
        self.offset
    }

    fn err(&mut self, offset: usize, kind: ParseErrorKind) -> Option<Result<(usize, Record<'a>), ParseError>> {
        self.done = true;
        Some(Err(ParseError { offset, kind }))
    }

    /// The header at `at`, checked for magic and room.
    fn header(&self, at: usize) -> Result<Header, ParseError> {
        let h = Header::read(&self.bytes[at..]).ok_or(ParseError { offset: at, kind: ParseErrorKind::Truncated })?;
        if h.magic != ACCT_MAGIC {
            return Err(ParseError { offset: at, kind: ParseErrorKind::BadMagic(h.magic) });
        }
        if (h.size as usize) < Header::SIZE {
            return Err(ParseError { offset: at, kind: ParseErrorKind::BadSize { ah_type: h.ah_type, size: h.size } });
        }
        if self.bytes.len() - at < h.size as usize {
            return Err(ParseError { offset: at, kind: ParseErrorKind::Truncated });
        }
        Ok(h)
    }

    /// A base record at `at` (its header `h` checked) and its chain; returns the record and
    /// the offset after the chain.
    fn process_chain(&self, at: usize, h: Header) -> Result<(ProcessRecord, usize), ParseError> {
        let base = Get(&self.bytes[at..at + ACCTCSA_SIZE]);
        let hdr2 = Header::get(&base, 8);
        if hdr2.magic != ACCT_MAGIC_HDR2 {
            return Err(ParseError { offset: at, kind: ParseErrorKind::BadSecondHeader });
        }
        let mut rec = ProcessRecord { base: BaseRecord::get(&base), mem: None, io: None, delay: None };
        let mut flag = h.flag;
        let mut pos = at + ACCTCSA_SIZE;
        while flag & AMORE != 0 {
            let c = self.header(pos)?;
            let bad = ParseError { offset: pos, kind: ParseErrorKind::BadContinuation { ah_type: c.ah_type } };
            let (size, bit) = match c.ah_type {
                ACCT_KERNEL_MEM => (ACCTMEM_SIZE, ACCT_MEM),
                ACCT_KERNEL_IO => (ACCTIO_SIZE, ACCT_IO),
                ACCT_KERNEL_DELAY => (ACCTDELAY_SIZE, ACCT_DELAY),
                _ => return Err(bad),
            };
            if c.size as usize != size {
                return Err(ParseError {
                    offset: pos,
                    kind: ParseErrorKind::BadSize { ah_type: c.ah_type, size: c.size },
                });
            }
            if rec.continuations().has(bit) {
                return Err(bad);
            }
            let g = Get(&self.bytes[pos..pos + size]);
            match bit {
                ACCT_MEM => rec.mem = Some(MemRecord::get(&g)),
                ACCT_IO => rec.io = Some(IoRecord::get(&g)),
                _ => rec.delay = Some(DelayRecord::get(&g)),
            }
            flag = c.flag;
            pos += size;
        }
        if hdr2.size as usize != pos - at - ACCTCSA_SIZE {
            return Err(ParseError { offset: at, kind: ParseErrorKind::BadSecondHeader });
        }
        Ok((rec, pos))
    }

    fn one(&mut self) -> Result<(usize, Record<'a>, usize), ParseError> {
        let at = self.offset;
        let h = self.header(at)?;
        let size = h.size as usize;
        let want = |n: usize| {
            if size == n {
                Ok(())
            } else {
                Err(ParseError { offset: at, kind: ParseErrorKind::BadSize { ah_type: h.ah_type, size: h.size } })
            }
        };
        let body = Get(&self.bytes[at..at + size]);
        Ok(match h.ah_type {
            ACCT_KERNEL_CSA => {
                want(ACCTCSA_SIZE)?;
                let (rec, end) = self.process_chain(at, h)?;
                (at, Record::Process(rec), end)
            }
            ACCT_KERNEL_SOJ => {
                want(ACCTSOJ_SIZE)?;
                (at, Record::Soj(SojRecord::get(&body)), at + size)
            }
            ACCT_KERNEL_EOJ => {
                want(ACCTEOJ_SIZE)?;
                if Header::get(&body, 8).magic != ACCT_MAGIC_HDR2 {
                    return Err(ParseError { offset: at, kind: ParseErrorKind::BadSecondHeader });
                }
                (at, Record::Eoj(EojRecord::get(&body)), at + size)
            }
            ACCT_KERNEL_CFG => {
                want(ACCTCFG_SIZE)?;
                (at, Record::Cfg(CfgRecord::get(&body)), at + size)
            }
            ACCT_KERNEL_MEM | ACCT_KERNEL_IO | ACCT_KERNEL_DELAY => {
                return Err(ParseError { offset: at, kind: ParseErrorKind::OrphanContinuation { ah_type: h.ah_type } });
            }
            _ => (at, Record::Other { header: h, bytes: &self.bytes[at..at + size] }, at + size),
        })
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<(usize, Record<'a>), ParseError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.offset >= self.bytes.len() {
            return None;
        }
        match self.one() {
            Ok((at, rec, end)) => {
                self.offset = end;
                Some(Ok((at, rec)))
            }
            Err(e) => self.err(e.offset, e.kind),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::{Continuations, ProcessExit, CHAIN_MAX};
    use tally_uapi::csa::ACCT_DAEMON_WKMG;

    fn chain(kinds: Continuations) -> Vec<u8> {
        let p = ProcessExit { pid: 9, utime_ns: 5_000, ..Default::default() };
        let mut out = [0u8; CHAIN_MAX];
        let n = p.records(77).only(kinds).encode(&mut out);
        out[..n].to_vec()
    }

    #[test]
    fn walks_a_file_of_every_kind_of_record() {
        let mut f = chain(Continuations::ALL);
        f.extend(SojRecord::new(77, 0, 5).encode());
        f.extend(chain(Continuations(ACCT_IO)));
        let mut daemon = [0u8; 24];
        daemon[..2].copy_from_slice(&ACCT_MAGIC.to_le_bytes());
        daemon[4] = ACCT_DAEMON_WKMG;
        daemon[6] = 24;
        f.extend(daemon);
        f.extend(EojRecord { jid: 77, ..Default::default() }.encode());
        f.extend(CfgRecord { event: 3, ..Default::default() }.encode());
        let recs: Vec<_> = records(&f).collect::<Result<_, _>>().unwrap();
        let offsets: Vec<usize> = recs.iter().map(|r| r.0).collect();
        assert_eq!(offsets, [0, 376, 416, 608, 632, 752]);
        match recs[0].1 {
            Record::Process(p) => {
                assert_eq!(p.continuations(), Continuations::ALL);
                assert_eq!((p.base.pid, p.base.jid, p.base.utime), (9, 77, 5));
            }
            r => panic!("{r:?}"),
        }
        match recs[2].1 {
            Record::Process(p) => assert_eq!(p.continuations(), Continuations(ACCT_IO)),
            r => panic!("{r:?}"),
        }
        assert!(
            matches!(recs[3].1, Record::Other { header: Header { ah_type: ACCT_DAEMON_WKMG, .. }, bytes } if bytes.len() == 24)
        );
        assert!(matches!(recs[4].1, Record::Eoj(EojRecord { jid: 77, .. })));
        assert!(matches!(recs[5].1, Record::Cfg(CfgRecord { event: 3, .. })));
    }

    fn first_error(f: &[u8]) -> ParseError {
        records(f).find_map(Result::err).expect("an error")
    }

    #[test]
    fn refuses_what_is_not_a_csa_file() {
        let mut f = chain(Continuations::NONE);
        f[0] ^= 1;
        assert!(matches!(first_error(&f).kind, ParseErrorKind::BadMagic(_)));
        assert_eq!(first_error(&f[..5]).kind, ParseErrorKind::Truncated);
        let ok = chain(Continuations::ALL);
        assert_eq!(first_error(&ok[..300]), ParseError { offset: 248, kind: ParseErrorKind::Truncated });
        let mut zero = ok.clone();
        zero[6] = 4; // ah_size 4 < a header: must not loop
        zero[7] = 0;
        assert!(matches!(first_error(&zero).kind, ParseErrorKind::BadSize { .. }));
        let mut orphan = ok.clone();
        orphan.drain(..136);
        assert!(matches!(first_error(&orphan).kind, ParseErrorKind::OrphanContinuation { ah_type: 2 }));
        let mut hdr2 = ok.clone();
        hdr2[14] = 0; // second header's size no longer the chain's
        assert_eq!(first_error(&hdr2).kind, ParseErrorKind::BadSecondHeader);
        let mut twice = ok.clone();
        twice[248 + 4] = ACCT_KERNEL_MEM; // io header says MEM: a second memory record
        assert!(matches!(
            first_error(&twice).kind,
            ParseErrorKind::BadSize { .. } | ParseErrorKind::BadContinuation { .. }
        ));
    }

    #[test]
    fn stops_after_the_first_error() {
        let mut f = chain(Continuations::NONE);
        f.extend([0u8; 8]);
        f.extend(chain(Continuations::NONE));
        let items: Vec<_> = records(&f).collect();
        assert_eq!(items.len(), 2);
        assert!(items[0].is_ok() && items[1].is_err());
    }

    mod round_trip {
        use super::*;
        use crate::config_record::Uname;
        use crate::process::{DelayRecord, IoRecord, MemInt, MemRecord};
        use proptest::prelude::*;

        fn memint() -> impl Strategy<Value = MemInt> {
            any::<[u64; 4]>().prop_map(|m| MemInt { himem: m[0], mem1: m[1], mem2: m[2], mem3: m[3] })
        }

        prop_compose! {
            fn base()(a in any::<[u64; 10]>(), b in any::<[u32; 4]>(), c in any::<[u8; 4]>(), comm in any::<[u8; 16]>())
                -> BaseRecord {
                BaseRecord {
                    flag: c[0] & !AMORE, sbu: a[0], stat: c[1], nice: c[2], sched: c[3], uid: b[0], gid: b[1],
                    ash: a[1], jid: a[2], prid: a[3], pid: b[2], ppid: b[3], btime: a[4], comm, etime: a[5],
                    utime: a[6], stime: a[7], spare: a[8], spare1: a[9],
                }
            }
        }

        prop_compose! {
            fn process()(base in base(), core in memint(), virt in memint(), m in any::<[u64; 4]>(), io in any::<[u64; 6]>(),
                d in any::<[u64; 8]>(), keep in 0u8..8) -> ProcessRecord {
                let mem = MemRecord { sbu: m[0], core, virt, pgswap: m[1], minflt: m[2], majflt: m[3], spare: m[0] ^ 1 };
                let io = IoRecord { sbu: io[0], chr: io[1], chw: io[2], scr: io[3], scw: io[4], spare: io[5] };
                let delay = DelayRecord {
                    cpu_count: d[0], cpu_delay_total: d[1], blkio_count: d[2], blkio_delay_total: d[3],
                    swapin_count: d[4], swapin_delay_total: d[5], cpu_run_real_total: d[6], cpu_run_virtual_total: d[7],
                };
                ProcessRecord { base, mem: Some(mem), io: Some(io), delay: Some(delay) }.only(Continuations(keep))
            }
        }

        fn record() -> impl Strategy<Value = Record<'static>> {
            prop_oneof![
                process().prop_map(Record::Process),
                (any::<[u8; 2]>(), any::<u32>(), any::<[u64; 3]>()).prop_map(|(t, uid, x)| Record::Soj(SojRecord {
                    soj_type: t[0],
                    init: t[1],
                    uid,
                    jid: x[0],
                    btime: x[1],
                    rstime: x[2]
                })),
                (any::<[u8; 2]>(), any::<[u32; 3]>(), any::<[u64; 10]>()).prop_map(|(c, w, x)| Record::Eoj(
                    EojRecord {
                        sbu: x[0],
                        init: c[0],
                        nice: c[1],
                        uid: w[0],
                        gid: w[1],
                        ash: x[1],
                        jid: x[2],
                        prid: x[3],
                        btime: x[4],
                        etime: x[5],
                        corehimem: x[6],
                        virthimem: x[7],
                        utime: x[8],
                        stime: x[9],
                        spare: w[2],
                    }
                )),
                (any::<[u32; 2]>(), any::<i64>(), any::<u8>(), any::<[u64; 2]>(), any::<[u8; 26]>(), any::<[u8; 26]>())
                    .prop_map(|(m, up, ev, t, a, b)| Record::Cfg(CfgRecord {
                        kdmask: m[0],
                        rmask: m[1],
                        uptimelen: up,
                        event: ev,
                        boottime: t[0],
                        curtime: t[1],
                        uname: Uname { sysname: a, nodename: b, release: [7; 42], version: [8; 41], machine: a },
                    })),
            ]
        }

        fn encode(r: &Record<'_>) -> Vec<u8> {
            match r {
                Record::Process(p) => {
                    let mut out = [0u8; CHAIN_MAX];
                    let n = p.encode(&mut out);
                    out[..n].to_vec()
                }
                Record::Soj(s) => s.encode().to_vec(),
                Record::Eoj(e) => e.encode().to_vec(),
                Record::Cfg(c) => c.encode().to_vec(),
                Record::Other { bytes, .. } => bytes.to_vec(),
            }
        }

        proptest! {
            /// Any sequence of records, written and read back, is itself.
            #[test]
            fn records_read_back_as_written(recs in proptest::collection::vec(record(), 0..12)) {
                let file: Vec<u8> = recs.iter().flat_map(encode).collect();
                let back: Vec<Record<'_>> = records(&file).map(|r| r.unwrap().1).collect();
                prop_assert_eq!(back, recs);
            }

            /// A valid file with bytes changed or cut off parses to an error or to records,
            /// never a panic, and never reads past its end.
            #[test]
            fn damaged_files_never_panic(
                recs in proptest::collection::vec(record(), 1..6),
                hits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
                cut in any::<prop::sample::Index>(),
            ) {
                let mut file: Vec<u8> = recs.iter().flat_map(encode).collect();
                for (i, v) in hits {
                    let at = i.index(file.len());
                    file[at] = v;
                }
                let end = cut.index(file.len() + 1);
                let mut last = 0;
                for r in records(&file[..end]) {
                    match r {
                        Ok((at, _)) => { prop_assert!(at >= last && at < end); last = at; }
                        Err(e) => prop_assert!(e.offset <= end),
                    }
                }
            }

            /// Random bytes: the same.
            #[test]
            fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
                for r in records(&bytes) {
                    let _ = r;
                }
            }
        }
    }
}
