//! The two records of a job: start-of-job (`struct acctsoj`, 40 bytes), written when a job
//! is created, and end-of-job (`struct accteoj`, 120 bytes), written when its last process
//! has exited.
//!
//! Between them, the records of the job's processes. A reader that sees a job's SOJ and EOJ
//! knows it has all of that job's process records (thresholds aside): `csabuild` in SGI's
//! toolset uses exactly this to decide which jobs of an accounting period are complete.
//!
//! The end-of-job record carries the job's totals, computed by the job table
//! ([`crate::jobs`]): the sums of its processes' user and system times (µs, the sums of the
//! values in their base records) and the largest core and virtual high-water mark of any one
//! process (KB). Its `ac_etime` is not a duration but the job's end time (s since 1970).

use tally_uapi::csa::{ACCTEOJ_SIZE, ACCTSOJ_SIZE, ACCT_KERNEL_EOJ, ACCT_KERNEL_SOJ, AC_SOJ, REV_EOJ, REV_SOJ};

use crate::header::Header;
use crate::wire::{Get, Put};

/// `struct acctsoj`.
///
/// ```text
///   0 hdr · 8 ac_type u8 (AC_SOJ 1, AC_ROJ 2) · 9 ac_init u8 · 12 ac_uid u32 ·
///  16 ac_jid u64 · 24 ac_btime (s) · 32 ac_rstime (s, restarts only)
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SojRecord {
    /// [`AC_SOJ`] for a new job.
    pub soj_type: u8,
    /// Who started the job (`AC_INIT_LOGIN` 0, …): unused, 0.
    pub init: u8,
    pub uid: u32,
    pub jid: u64,
    /// Job start, s since 1970.
    pub btime: u64,
    /// Restart time (0: never restarted).
    pub rstime: u64,
}

/// `struct accteoj`.
///
/// ```text
///   0 hdr1 · 8 hdr2 · 16 ac_sbu · 24 ac_init u8 · 25 ac_nice u8 · 28 ac_uid · 32 ac_gid ·
///  40 ac_ash · 48 ac_jid · 56 ac_prid · 64 ac_btime (s) · 72 ac_etime (end, s) ·
///  80 ac_corehimem KB · 88 ac_virthimem KB · 96 ac_utime µs · 104 ac_stime µs · 112 ac_spare u32
/// ```
///
/// The second header has the inverted magic and no continuation records (type 0, size 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EojRecord {
    pub sbu: u64,
    pub init: u8,
    pub nice: u8,
    pub uid: u32,
    pub gid: u32,
    pub ash: u64,
    pub jid: u64,
    pub prid: u64,
    /// Job start and end, s since 1970.
    pub btime: u64,
    pub etime: u64,
    /// The largest high-water marks of any one process of the job, KB.
    pub corehimem: u64,
    pub virthimem: u64,
    /// The summed CPU times of the job's processes, µs.
    pub utime: u64,
    pub stime: u64,
    pub spare: u32,
}

impl SojRecord {
    /// The start-of-job record of a new job.
    pub fn new(jid: u64, uid: u32, btime: u64) -> SojRecord {
        SojRecord { soj_type: AC_SOJ, init: 0, uid, jid, btime, rstime: 0 }
    }

    /// The 40-byte image.
    pub fn encode(&self) -> [u8; ACCTSOJ_SIZE] {
        let mut b = [0u8; ACCTSOJ_SIZE];
        let mut p = Put(&mut b);
        Header::first(REV_SOJ, ACCT_KERNEL_SOJ, ACCTSOJ_SIZE).put(&mut p, 0);
        p.u8(8, self.soj_type);
        p.u8(9, self.init);
        p.u32(12, self.uid);
        p.u64(16, self.jid);
        p.u64(24, self.btime);
        p.u64(32, self.rstime);
        b
    }

    pub(crate) fn get(b: &Get<'_>) -> SojRecord {
        SojRecord {
            soj_type: b.u8(8),
            init: b.u8(9),
            uid: b.u32(12),
            jid: b.u64(16),
            btime: b.u64(24),
            rstime: b.u64(32),
        }
    }
}

impl EojRecord {
    /// The 120-byte image.
    pub fn encode(&self) -> [u8; ACCTEOJ_SIZE] {
        let mut b = [0u8; ACCTEOJ_SIZE];
        let mut p = Put(&mut b);
        Header::first(REV_EOJ, ACCT_KERNEL_EOJ, ACCTEOJ_SIZE).put(&mut p, 0);
        Header::second(REV_EOJ).put(&mut p, 8);
        p.u64(16, self.sbu);
        p.u8(24, self.init);
        p.u8(25, self.nice);
        p.u32(28, self.uid);
        p.u32(32, self.gid);
        p.u64(40, self.ash);
        p.u64(48, self.jid);
        p.u64(56, self.prid);
        p.u64(64, self.btime);
        p.u64(72, self.etime);
        p.u64(80, self.corehimem);
        p.u64(88, self.virthimem);
        p.u64(96, self.utime);
        p.u64(104, self.stime);
        p.u32(112, self.spare);
        b
    }

    pub(crate) fn get(b: &Get<'_>) -> EojRecord {
        EojRecord {
            sbu: b.u64(16),
            init: b.u8(24),
            nice: b.u8(25),
            uid: b.u32(28),
            gid: b.u32(32),
            ash: b.u64(40),
            jid: b.u64(48),
            prid: b.u64(56),
            btime: b.u64(64),
            etime: b.u64(72),
            corehimem: b.u64(80),
            virthimem: b.u64(88),
            utime: b.u64(96),
            stime: b.u64(104),
            spare: b.u32(112),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_uapi::csa::{ACCT_MAGIC, ACCT_MAGIC_HDR2};

    fn u16_at(b: &[u8], at: usize) -> u16 {
        u16::from_le_bytes([b[at], b[at + 1]])
    }
    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }
    fn u64_at(b: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
    }

    #[test]
    fn soj_sits_at_the_reference_offsets() {
        let b = SojRecord { rstime: 9, ..SojRecord::new(0x7A11_0000_0005, 1000, 1_700_000_000) }.encode();
        assert_eq!(b.len(), 40);
        assert_eq!(u16_at(&b, 0), ACCT_MAGIC);
        assert_eq!(u16_at(&b, 2), 0o6000);
        assert_eq!((b[4], b[5]), (0o12, 0));
        assert_eq!(u16_at(&b, 6), 40);
        assert_eq!((b[8], b[9]), (1, 0), "AC_SOJ, no initiator");
        assert_eq!(u16_at(&b, 10), 0, "padding");
        assert_eq!(u32_at(&b, 12), 1000);
        assert_eq!(u64_at(&b, 16), 0x7A11_0000_0005);
        assert_eq!(u64_at(&b, 24), 1_700_000_000);
        assert_eq!(u64_at(&b, 32), 9);
    }

    #[test]
    fn eoj_sits_at_the_reference_offsets() {
        let e = EojRecord {
            nice: 5,
            uid: 1000,
            gid: 100,
            jid: 0x7A11_0000_0005,
            btime: 1_700_000_000,
            etime: 1_700_000_060,
            corehimem: 300,
            virthimem: 900,
            utime: 12_345,
            stime: 678,
            ..EojRecord::default()
        };
        let b = e.encode();
        assert_eq!(b.len(), 120);
        assert_eq!(u16_at(&b, 0), ACCT_MAGIC);
        assert_eq!((b[4], b[5], u16_at(&b, 6)), (0o14, 0, 120));
        assert_eq!(u16_at(&b, 8), ACCT_MAGIC_HDR2);
        assert_eq!(u16_at(&b, 10), 0o6000);
        assert_eq!((b[12], b[13], u16_at(&b, 14)), (0, 0, 0), "nothing follows");
        assert_eq!(u64_at(&b, 16), 0);
        assert_eq!((b[24], b[25]), (0, 5));
        assert_eq!(u32_at(&b, 28), 1000);
        assert_eq!(u32_at(&b, 32), 100);
        assert_eq!(u64_at(&b, 48), 0x7A11_0000_0005);
        assert_eq!(u64_at(&b, 64), 1_700_000_000);
        assert_eq!(u64_at(&b, 72), 1_700_000_060);
        assert_eq!(u64_at(&b, 80), 300);
        assert_eq!(u64_at(&b, 88), 900);
        assert_eq!(u64_at(&b, 96), 12_345);
        assert_eq!(u64_at(&b, 104), 678);
        assert_eq!(&b[112..120], &[0; 8]);
    }
}
