//! The configuration record (`struct acctcfg`, 216 bytes): what was switched on when.
//!
//! CSA writes one whenever its configuration changes, so a file explains itself: a reader
//! knows from the records before a process record which record kinds were on (a missing
//! I/O record then means "I/O accounting was off", not "no I/O"), and from the boot record
//! which uptime period the records belong to. Tally writes:
//!
//! * `AC_CONFCHG_BOOT` — the first record of the first system file opened after boot;
//! * `AC_CONFCHG_FILE` — the last record of a system file that `AC_START` replaces;
//! * `AC_CONFCHG_ON` — after every `AC_START` (to the system file), and as the first record
//!   of a `ja` file (so `ja` has the machine's name);
//! * `AC_CONFCHG_OFF` — after every `AC_STOP` and `AC_HALT` (before the file is closed).
//!
//! ```text
//!   0 hdr · 8 ac_kdmask u32 · 12 ac_rmask u32 · 16 ac_uptimelen i64 · 24 ac_event u8 ·
//!  32 ac_boottime (s) · 40 ac_curtime (s) · 48 ac_uname{sysname 26, nodename 26,
//!  release 42, version 41, machine 26} · 209..216 padding
//! ```
//!
//! `ac_kdmask` has bit `i` set for each kernel/daemon kind `i` that is ON, `ac_rmask` bit
//! `i - 6` for each record kind or threshold `i` that is ON (after the change).
//! `ac_uptimelen` ("bytes from the end of the boot record to the next boot record") can only
//! be known after the next boot, by a tool; the kernel writes 0, as CSA's does.

use tally_uapi::csa::{ACCTCFG_SIZE, ACCT_KERNEL_CFG, REV_CFG};

use crate::header::Header;
use crate::wire::{Get, Put};

/// `struct ac_utsname`: the machine's `uname` condensed to fixed fields, each
/// NUL-terminated (a longer name is cut).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uname {
    pub sysname: [u8; 26],
    pub nodename: [u8; 26],
    pub release: [u8; 42],
    pub version: [u8; 41],
    pub machine: [u8; 26],
}

impl Default for Uname {
    fn default() -> Self {
        Uname { sysname: [0; 26], nodename: [0; 26], release: [0; 42], version: [0; 41], machine: [0; 26] }
    }
}

/// `src` into `dst`, cut to leave the last byte NUL.
fn fill<const N: usize>(src: &[u8]) -> [u8; N] {
    let mut d = [0u8; N];
    let n = src.len().min(N - 1);
    d[..n].copy_from_slice(&src[..n]);
    d
}

/// The bytes of a NUL-terminated field before its NUL.
pub fn field_str(f: &[u8]) -> &[u8] {
    &f[..f.iter().position(|&c| c == 0).unwrap_or(f.len())]
}

impl Uname {
    /// From the five `uname` strings (each cut to its field, the NUL kept).
    pub fn new(sysname: &[u8], nodename: &[u8], release: &[u8], version: &[u8], machine: &[u8]) -> Uname {
        Uname {
            sysname: fill(sysname),
            nodename: fill(nodename),
            release: fill(release),
            version: fill(version),
            machine: fill(machine),
        }
    }
}

/// `struct acctcfg`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CfgRecord {
    pub kdmask: u32,
    pub rmask: u32,
    pub uptimelen: i64,
    /// `AC_CONFCHG_BOOT`, `_FILE`, `_ON`, `_OFF`.
    pub event: u8,
    /// Boot and current time, s since 1970.
    pub boottime: u64,
    pub curtime: u64,
    pub uname: Uname,
}

impl CfgRecord {
    /// The 216-byte image.
    pub fn encode(&self) -> [u8; ACCTCFG_SIZE] {
        let mut b = [0u8; ACCTCFG_SIZE];
        let mut p = Put(&mut b);
        Header::first(REV_CFG, ACCT_KERNEL_CFG, ACCTCFG_SIZE).put(&mut p, 0);
        p.u32(8, self.kdmask);
        p.u32(12, self.rmask);
        p.u64(16, self.uptimelen as u64);
        p.u8(24, self.event);
        p.u64(32, self.boottime);
        p.u64(40, self.curtime);
        p.bytes(48, &self.uname.sysname);
        p.bytes(74, &self.uname.nodename);
        p.bytes(100, &self.uname.release);
        p.bytes(142, &self.uname.version);
        p.bytes(183, &self.uname.machine);
        b
    }

    pub(crate) fn get(b: &Get<'_>) -> CfgRecord {
        CfgRecord {
            kdmask: b.u32(8),
            rmask: b.u32(12),
            uptimelen: b.u64(16) as i64,
            event: b.u8(24),
            boottime: b.u64(32),
            curtime: b.u64(40),
            uname: Uname {
                sysname: b.array(48),
                nodename: b.array(74),
                release: b.array(100),
                version: b.array(142),
                machine: b.array(183),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_uapi::csa::ACCT_MAGIC;

    fn u64_at(b: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
    }

    #[test]
    fn cfg_sits_at_the_reference_offsets() {
        let c = CfgRecord {
            kdmask: 0b101,
            rmask: 0b11001,
            uptimelen: -1,
            event: 2,
            boottime: 1_700_000_000,
            curtime: 1_700_000_042,
            uname: Uname::new(b"Tally", b"tally", b"0.1.0", b"#1 SMP teaching", b"x86_64"),
        };
        let b = c.encode();
        assert_eq!(b.len(), 216);
        assert_eq!(u16::from_le_bytes([b[0], b[1]]), ACCT_MAGIC);
        assert_eq!(u16::from_le_bytes([b[2], b[3]]), 0o6000);
        assert_eq!((b[4], b[5]), (0o20, 0));
        assert_eq!(u16::from_le_bytes([b[6], b[7]]), 216);
        assert_eq!(u32::from_le_bytes(b[8..12].try_into().unwrap()), 5);
        assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 25);
        assert_eq!(u64_at(&b, 16), u64::MAX);
        assert_eq!(b[24], 2);
        assert_eq!(&b[25..32], &[0; 7], "padding after the event");
        assert_eq!(u64_at(&b, 32), 1_700_000_000);
        assert_eq!(u64_at(&b, 40), 1_700_000_042);
        assert_eq!(&b[48..54], b"Tally\0");
        assert_eq!(&b[74..80], b"tally\0");
        assert_eq!(&b[100..106], b"0.1.0\0");
        assert_eq!(&b[142..157], b"#1 SMP teaching");
        assert_eq!(&b[183..190], b"x86_64\0");
        assert_eq!(&b[209..216], &[0; 7], "tail padding");
    }

    #[test]
    fn long_names_are_cut_and_stay_terminated() {
        let u = Uname::new(&[b'a'; 100], b"", b"", b"", b"");
        assert_eq!(field_str(&u.sysname).len(), 25);
        assert_eq!(u.sysname[25], 0);
        assert_eq!(field_str(&u.nodename), b"");
    }
}
