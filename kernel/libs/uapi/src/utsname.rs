//! `uname(2)`: Linux's `struct utsname` (`<sys/utsname.h>`, `new_utsname` in
//! `include/uapi/linux/utsname.h`): six NUL-terminated fields of 65 bytes each.
//!
//! Tally answers `sysname` = `"Linux"`, as other kernels that speak Linux's system-call ABI
//! do (gVisor, WSL 1): programs test `sysname` to choose Linux's code paths (build scripts,
//! language runtimes), and Tally wants exactly those. `release` names the Linux version
//! whose ABI the calls follow, with `-tally` after it so that a person (or a program that
//! cares) can tell; `version` says which kernel this really is. `docs/linux-abi.md`.

/// Bytes per field (`__NEW_UTS_LEN + 1`).
pub const UTS_FIELD: usize = 65;
/// The whole structure: six fields.
pub const UTSNAME_SIZE: usize = 6 * UTS_FIELD;

pub const SYSNAME: &str = "Linux";
pub const NODENAME: &str = "tally";
/// The Linux release whose system-call ABI Tally follows (`bench --linux` compares with 6.1).
pub const RELEASE: &str = "6.1.0-tally";
pub const VERSION: &str = "#1 Tally (accounting internals)";
pub const MACHINE: &str = "x86_64";
/// Linux's answer when no NIS domain is set.
pub const DOMAINNAME: &str = "(none)";

/// The structure as `uname` writes it: each field's text, NUL-padded to [`UTS_FIELD`].
pub fn utsname_bytes() -> [u8; UTSNAME_SIZE] {
    let mut out = [0u8; UTSNAME_SIZE];
    for (i, field) in [SYSNAME, NODENAME, RELEASE, VERSION, MACHINE, DOMAINNAME].iter().enumerate() {
        let n = field.len().min(UTS_FIELD - 1);
        out[i * UTS_FIELD..i * UTS_FIELD + n].copy_from_slice(&field.as_bytes()[..n]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_sit_at_linux_offsets_and_end_in_nul() {
        let b = utsname_bytes();
        assert_eq!(&b[..6], b"Linux\0");
        assert_eq!(&b[4 * UTS_FIELD..4 * UTS_FIELD + 7], b"x86_64\0");
        for i in 0..6 {
            assert_eq!(b[i * UTS_FIELD + UTS_FIELD - 1], 0, "field {i} is terminated");
        }
    }
}

/// `sysinfo(2)`'s `struct sysinfo` on x86_64 (112 bytes): `uptime` (s), `loads[3]` (load
/// averages, fixed point with 16 fraction bits), `totalram`, `freeram`, `sharedram`,
/// `bufferram`, `totalswap`, `freeswap` (in `mem_unit`s), `procs` (u16), `totalhigh`,
/// `freehigh`, `mem_unit` (u32). Kept beside `utsname`: both describe the machine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sysinfo {
    pub uptime: i64,
    pub loads: [u64; 3],
    pub totalram: u64,
    pub freeram: u64,
    pub sharedram: u64,
    pub bufferram: u64,
    pub totalswap: u64,
    pub freeswap: u64,
    pub procs: u16,
    pub totalhigh: u64,
    pub freehigh: u64,
    pub mem_unit: u32,
}

impl Sysinfo {
    pub const SIZE: usize = 112;

    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        let words = [
            self.uptime as u64,
            self.loads[0],
            self.loads[1],
            self.loads[2],
            self.totalram,
            self.freeram,
            self.sharedram,
            self.bufferram,
            self.totalswap,
            self.freeswap,
        ];
        for (i, w) in words.iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        b[80..82].copy_from_slice(&self.procs.to_le_bytes());
        b[88..96].copy_from_slice(&self.totalhigh.to_le_bytes());
        b[96..104].copy_from_slice(&self.freehigh.to_le_bytes());
        b[104..108].copy_from_slice(&self.mem_unit.to_le_bytes());
        b
    }
}

#[cfg(test)]
mod sysinfo_tests {
    use super::Sysinfo;

    #[test]
    fn fields_sit_at_linux_offsets() {
        let s = Sysinfo { uptime: 7, freeram: 9, procs: 3, mem_unit: 1, ..Default::default() };
        let b = s.to_bytes();
        assert_eq!(b[0], 7);
        assert_eq!(b[40], 9, "freeram after uptime, three loads and totalram");
        assert_eq!(b[80], 3, "procs");
        assert_eq!(b[104], 1, "mem_unit");
    }
}
