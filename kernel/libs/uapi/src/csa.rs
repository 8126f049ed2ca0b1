//! SGI CSA (Comprehensive System Accounting): the numbers and control structures shared by
//! the kernel and the CSA tools (`csaswitch`, `ja`, `csacom`, `newjob`).
//!
//! CSA adds *jobs* to process accounting. A job is a group of processes started by one
//! login (`newjob` in Tally): every process a job's member spawns is in the job too, and the
//! job ends when its last process exits. The kernel writes binary records to files on
//! `/var`: one per process that exits inside a job (a base record, optionally chained to
//! memory, I/O and delay records), a start-of-job and an end-of-job record per job, and a
//! configuration record whenever the accounting is switched. The record layouts and the
//! encoders live in `tally-csa` (they are a file format, not a system-call ABI); this module
//! holds what crosses the system-call boundary and what both sides must agree on:
//!
//! * the record-header constants (magic, revisions, types, flags), so a tool can recognise a
//!   record without the encoder crate;
//! * the *indices* of what can be switched on and off ([`ACCT_KERN_CSA`] … [`ACCT_RCD_SITE2`]),
//!   their *states* ([`ACS_OFF`], [`ACS_ERROFF`], [`ACS_ON`]) and the *request codes* of
//!   `csa_ctl` ([`AC_START`] … [`AC_AUTH`]);
//! * the structures `csa_ctl` reads and writes: [`ActStat`] (16 bytes), [`ActCtl`]
//!   (328 bytes) and [`ActWra`] (1040 bytes), byte for byte CSA's `struct actstat`,
//!   `struct actctl` and `struct actwra` on x86_64;
//! * how a job id is made ([`JOB_HOST_ID`], [`jid_of`]).
//!
//! All values are those of CSA 4's `csa.h` (the userland header of the SGI CSA design's
//! Linux implementation); octal numbers are written in octal, as CSA writes them. The
//! system calls that use them are described in [`crate::syscall`] (`SYS_JOB_CREATE`,
//! `SYS_JOB_GETJID`, `SYS_CSA_CTL`).

// ---------------------------------------------------------------------------------------
// Record headers (struct achead)
// ---------------------------------------------------------------------------------------

/// `ah_magic` of every record's first header on a little-endian machine (CSA's
/// `ACCT_MAGIC_LITTLE`, octal 030512 = 0x314A).
pub const ACCT_MAGIC: u16 = 0o30512;
/// `ah_magic` a big-endian machine writes (`ACCT_MAGIC_BIG`); Tally never writes it, a
/// reader seeing it knows the file came from elsewhere.
pub const ACCT_MAGIC_BIG: u16 = 0o30510;
/// `ah_magic` of the *second* header of a base or end-of-job record: the inverse of
/// [`ACCT_MAGIC`] (0xCEB5), so a reader can tell the two headers apart.
pub const ACCT_MAGIC_HDR2: u16 = !ACCT_MAGIC;

/// Bytes of one `struct achead`.
pub const ACHEAD_SIZE: usize = 8;

/// Record types: `ah_type` of a record's first header.
pub const ACCT_KERNEL_CSA: u8 = 0o1;
pub const ACCT_KERNEL_MEM: u8 = 0o2;
pub const ACCT_KERNEL_IO: u8 = 0o4;
pub const ACCT_KERNEL_DELAY: u8 = 0o10;
pub const ACCT_KERNEL_SOJ: u8 = 0o12;
pub const ACCT_KERNEL_EOJ: u8 = 0o14;
pub const ACCT_KERNEL_CFG: u8 = 0o20;
/// Record types reserved for sites and daemons (written with `AC_WRACCT`, never by the
/// kernel itself).
pub const ACCT_KERNEL_SITE0: u8 = 0o100;
pub const ACCT_KERNEL_SITE1: u8 = 0o101;
pub const ACCT_DAEMON_WKMG: u8 = 0o122;
pub const ACCT_DAEMON_SITE0: u8 = 0o200;
pub const ACCT_DAEMON_SITE1: u8 = 0o201;

/// Bits of the *second* header's `ah_type`: which continuation records follow a base
/// record (its `ah_size` is their summed size).
pub const ACCT_MEM: u8 = 1 << 0;
pub const ACCT_IO: u8 = 1 << 1;
pub const ACCT_DELAY: u8 = 1 << 2;

/// Record revisions (`ah_revision`).
pub const REV_CSA: u16 = 0o6000;
pub const REV_MEM: u16 = 0o6000;
pub const REV_IO: u16 = 0o7000;
pub const REV_DELAY: u16 = 0o7000;
pub const REV_SOJ: u16 = 0o6000;
pub const REV_EOJ: u16 = 0o6000;
pub const REV_CFG: u16 = 0o6000;

/// `ah_flag` bits of a base record's first header. The first four are the process flags of
/// `acct(2)` (same values as [`crate::taskstats::AFORK`] and friends); [`AMORE`] says that
/// a continuation record follows this one.
pub const AFORK: u8 = 0x01;
pub const ASU: u8 = 0x02;
/// Checkpointed/restarted (never set by Tally: no checkpointing).
pub const ACKPT: u8 = 0x04;
pub const ACORE: u8 = 0x08;
pub const AXSIG: u8 = 0x10;
pub const AMORE: u8 = 0x20;

/// Record sizes in bytes (CSA 4, x86_64, `time_t` of 8 bytes).
pub const ACCTCSA_SIZE: usize = 136;
pub const ACCTMEM_SIZE: usize = 112;
pub const ACCTIO_SIZE: usize = 56;
pub const ACCTDELAY_SIZE: usize = 72;
pub const ACCTSOJ_SIZE: usize = 40;
pub const ACCTEOJ_SIZE: usize = 120;
pub const ACCTCFG_SIZE: usize = 216;

/// `ac_type` of a start-of-job record: a new job, or one restarted (never by Tally).
pub const AC_SOJ: u8 = 1;
pub const AC_ROJ: u8 = 2;

/// `ac_event` of a configuration record: what changed.
pub const AC_CONFCHG_BOOT: u8 = 0;
pub const AC_CONFCHG_FILE: u8 = 1;
pub const AC_CONFCHG_ON: u8 = 2;
pub const AC_CONFCHG_OFF: u8 = 3;
/// Incremental accounting (not in Linux CSA; Tally never writes these two).
pub const AC_CONFCHG_INC_DELTA: u8 = 4;
pub const AC_CONFCHG_INC_EVENT: u8 = 5;

// ---------------------------------------------------------------------------------------
// What can be switched: kernel/daemon kinds, record kinds, thresholds
// ---------------------------------------------------------------------------------------

/// Kernel and daemon accounting kinds (`ac_kdrcd` 0..5). Bit `i` of a configuration
/// record's `ac_kdmask` is kind `i`.
pub const ACCT_KERN_CSA: u32 = 0;
/// "Job process summary" accounting: a state CSA keeps but Linux CSA never writes records
/// for (its `csaswitch` does not even list it); Tally does the same.
pub const ACCT_KERN_JOB_PROC: u32 = 1;
/// Workload management daemon (e.g. a batch system) records, written with `AC_WRACCT`.
pub const ACCT_DMD_WKMG: u32 = 2;
pub const ACCT_DMD_SITE1: u32 = 3;
pub const ACCT_DMD_SITE2: u32 = 4;
/// One past the last kernel/daemon kind: not an index (`EINVAL`).
pub const ACCT_MAXKDS: u32 = 5;

/// Record kinds: whether a base record carries a memory, I/O or delay continuation record
/// in the system file. Bit `i - ACCT_RCDS` of a configuration record's `ac_rmask`.
pub const ACCT_RCD_MEM: u32 = 6;
pub const ACCT_RCD_IO: u32 = 7;
pub const ACCT_RCD_DELAY: u32 = 8;
/// Threshold on the virtual-memory high-water mark, in KB: a process below it gets no
/// record in the system file. The value is the `ac_param` of the entry.
pub const ACCT_THD_MEM: u32 = 9;
/// Threshold on CPU time (user + system), in µs.
pub const ACCT_THD_TIME: u32 = 10;
/// Site-reserved record kinds (a state is kept; no record uses them).
pub const ACCT_RCD_SITE1: u32 = 11;
pub const ACCT_RCD_SITE2: u32 = 12;
/// One past the last record kind.
pub const ACCT_MAXRCDS: u32 = 13;

/// The first record-kind index.
pub const ACCT_RCDS: u32 = ACCT_RCD_MEM;
/// How many kernel/daemon kinds, record kinds, and both.
pub const NUM_KDS: usize = (ACCT_MAXKDS - ACCT_KERN_CSA) as usize;
pub const NUM_RCDS: usize = (ACCT_MAXRCDS - ACCT_RCDS) as usize;
pub const NUM_KDRCDS: usize = NUM_KDS + NUM_RCDS;

/// Is `ind` an index `csa_ctl` accepts (a kind, a record kind or a threshold)? The gap
/// [`ACCT_MAXKDS`] is not one.
pub const fn valid_index(ind: u32) -> bool {
    ind < ACCT_MAXKDS || (ind >= ACCT_RCDS && ind < ACCT_MAXRCDS)
}

/// States of an entry (`ac_state`).
pub const ACS_OFF: u32 = 0;
/// Turned off by the kernel because writing its file failed.
pub const ACS_ERROFF: u32 = 1;
pub const ACS_ON: u32 = 2;

// ---------------------------------------------------------------------------------------
// csa_ctl requests
// ---------------------------------------------------------------------------------------

/// Start kinds, record kinds or thresholds (privileged). Argument: [`ActCtl`].
pub const AC_START: u32 = 0;
/// Stop them (privileged). Argument: [`ActCtl`].
pub const AC_STOP: u32 = 1;
/// Stop everything and close the system file (privileged). No argument.
pub const AC_HALT: u32 = 2;
/// The state of one entry. Argument: [`ActStat`].
pub const AC_CHECK: u32 = 3;
/// The states of the kernel/daemon kinds and the file's path. Argument: [`ActCtl`].
pub const AC_KDSTAT: u32 = 4;
/// The states of the record kinds and thresholds and the file's path. Argument: [`ActCtl`].
pub const AC_RCDSTAT: u32 = 5;
/// Start user job accounting (`ja`) for the caller's job. Argument: [`ActCtl`] (its path).
pub const AC_JASTART: u32 = 6;
/// Stop user job accounting for the caller's job. Argument: [`ActCtl`] (ignored).
pub const AC_JASTOP: u32 = 7;
/// Write a daemon's record (privileged). Argument: [`ActWra`].
pub const AC_WRACCT: u32 = 8;
/// Succeeds only for a caller allowed to change the accounting (`EPERM` otherwise).
pub const AC_AUTH: u32 = 9;
/// One past the last request code.
pub const AC_MREQ: u32 = 10;

/// Bytes of an accounting file path, the NUL included (`ACCT_PATH`).
pub const ACCT_PATH: usize = 128;
/// Most bytes one `AC_WRACCT` writes (`MAX_WRACCT`).
pub const MAX_WRACCT: usize = 1024;

/// Which structure `csa_ctl(request, arg)` reads and writes for `request`, by its size:
/// [`ActCtl::SIZE`], [`ActStat::SIZE`], [`ActWra::SIZE`], or 0 for the requests that take
/// no argument (`arg` is then ignored and may be NULL). `None` for an unknown request.
pub const fn ctl_arg_size(request: u32) -> Option<usize> {
    match request {
        AC_START | AC_STOP | AC_KDSTAT | AC_RCDSTAT | AC_JASTART | AC_JASTOP => Some(ActCtl::SIZE),
        AC_CHECK => Some(ActStat::SIZE),
        AC_WRACCT => Some(ActWra::SIZE),
        AC_HALT | AC_AUTH => Some(0),
        _ => None,
    }
}

/// Does `request` write its argument back to the caller? (START and STOP return the new
/// states of the entries they changed, the three status requests their answer.)
pub const fn ctl_copies_out(request: u32) -> bool {
    matches!(request, AC_START | AC_STOP | AC_CHECK | AC_KDSTAT | AC_RCDSTAT)
}

// ---------------------------------------------------------------------------------------
// Job ids
// ---------------------------------------------------------------------------------------

/// The host id in the upper half of every job id Tally makes: `jid = JOB_HOST_ID << 32 |
/// pid`. SGI's job package takes it from `gethostid()`, so that jobs of the machines of a
/// cluster never collide in a merged accounting file; Tally runs on one machine, and this
/// documented constant (0x7A11, "Tally") plays that part. The kernel passes it to
/// `tally_csa::Jobs::new`; a kernel built for a cluster would make it a configuration value.
pub const JOB_HOST_ID: u32 = 0x7A11;

/// The job id a process `pid` gets when it creates a job on host `host_id`.
pub const fn jid_of(host_id: u32, pid: u32) -> u64 {
    ((host_id as u64) << 32) | pid as u64
}

// ---------------------------------------------------------------------------------------
// struct actstat, struct actctl, struct actwra
// ---------------------------------------------------------------------------------------

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// `struct actstat`: one entry's index, state and parameter (16 bytes).
///
/// | offset | field | |
/// |---|---|---|
/// | 0 | `ac_ind` u32 | an index ([`ACCT_KERN_CSA`] … [`ACCT_RCD_SITE2`]) |
/// | 4 | `ac_state` u32 | [`ACS_OFF`], [`ACS_ERROFF`], [`ACS_ON`] |
/// | 8 | `ac_param` i64 | a threshold's value (KB or µs); 0 for the others |
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActStat {
    pub ac_ind: u32,
    pub ac_state: u32,
    pub ac_param: i64,
}

const _: () = assert!(core::mem::size_of::<ActStat>() == ActStat::SIZE);
const _: () = assert!(core::mem::offset_of!(ActStat, ac_state) == 4);
const _: () = assert!(core::mem::offset_of!(ActStat, ac_param) == 8);

impl ActStat {
    pub const SIZE: usize = 16;

    /// The little-endian bytes user space sees.
    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        b[0..4].copy_from_slice(&self.ac_ind.to_le_bytes());
        b[4..8].copy_from_slice(&self.ac_state.to_le_bytes());
        b[8..16].copy_from_slice(&self.ac_param.to_le_bytes());
        b
    }

    /// Decode the bytes of [`ActStat::to_bytes`] (any 16 bytes decode).
    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        ActStat { ac_ind: le_u32(b, 0), ac_state: le_u32(b, 4), ac_param: le_u64(b, 8) as i64 }
    }
}

/// `struct actctl`: a list of entries and a path (328 bytes).
///
/// | offset | field | |
/// |---|---|---|
/// | 0 | `ac_sttnum` i32 | how many entries of `ac_stat` are meant |
/// | 4 | `ac_path` [u8; 128] | a file path, NUL-terminated (empty: none) |
/// | 132 | (4 bytes of C padding) | |
/// | 136 | `ac_stat` [[`ActStat`]; 12] | the entries |
///
/// The C structure's padding is the explicit `_pad` field here, zero in everything Tally
/// writes, so no stale kernel byte can leak into user memory.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActCtl {
    pub ac_sttnum: i32,
    pub ac_path: [u8; ACCT_PATH],
    pub _pad: [u8; 4],
    pub ac_stat: [ActStat; NUM_KDRCDS],
}

const _: () = assert!(core::mem::size_of::<ActCtl>() == ActCtl::SIZE);
const _: () = assert!(core::mem::offset_of!(ActCtl, ac_path) == 4);
const _: () = assert!(core::mem::offset_of!(ActCtl, ac_stat) == 136);

impl Default for ActCtl {
    fn default() -> Self {
        ActCtl { ac_sttnum: 0, ac_path: [0; ACCT_PATH], _pad: [0; 4], ac_stat: [ActStat::default(); NUM_KDRCDS] }
    }
}

impl ActCtl {
    pub const SIZE: usize = 328;
    /// Offset of `ac_stat[0]`.
    pub const STAT_OFFSET: usize = 136;

    /// The path: the bytes of `ac_path` before its first NUL, or `None` if it has none (a
    /// path of 128 bytes without a terminator, which `csa_ctl` refuses with `EINVAL`).
    pub fn path(&self) -> Option<&[u8]> {
        let n = self.ac_path.iter().position(|&c| c == 0)?;
        Some(&self.ac_path[..n])
    }

    /// Set the path (cut to 127 bytes), NUL-padded.
    pub fn set_path(&mut self, path: &[u8]) {
        self.ac_path = [0; ACCT_PATH];
        let n = path.len().min(ACCT_PATH - 1);
        self.ac_path[..n].copy_from_slice(&path[..n]);
    }

    /// The little-endian bytes user space sees (padding zero).
    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        b[0..4].copy_from_slice(&self.ac_sttnum.to_le_bytes());
        b[4..4 + ACCT_PATH].copy_from_slice(&self.ac_path);
        for (i, s) in self.ac_stat.iter().enumerate() {
            let at = Self::STAT_OFFSET + i * ActStat::SIZE;
            b[at..at + ActStat::SIZE].copy_from_slice(&s.to_bytes());
        }
        b
    }

    /// Decode the bytes of [`ActCtl::to_bytes`] (any 328 bytes decode; the padding is
    /// ignored).
    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        let mut c = ActCtl { ac_sttnum: le_u32(b, 0) as i32, ..ActCtl::default() };
        c.ac_path.copy_from_slice(&b[4..4 + ACCT_PATH]);
        for (i, s) in c.ac_stat.iter_mut().enumerate() {
            let at = Self::STAT_OFFSET + i * ActStat::SIZE;
            let mut e = [0u8; ActStat::SIZE];
            e.copy_from_slice(&b[at..at + ActStat::SIZE]);
            *s = ActStat::from_bytes(&e);
        }
        c
    }
}

/// `struct actwra`: a daemon's record for `AC_WRACCT` (1040 bytes).
///
/// | offset | field | |
/// |---|---|---|
/// | 0 | `ac_did` i32 | the daemon kind ([`ACCT_DMD_WKMG`], …; any index below [`ACCT_MAXKDS`]) |
/// | 4 | `ac_len` i32 | bytes of `ac_buf` to write, 1..=[`MAX_WRACCT`] |
/// | 8 | `ac_jid` u64 | the job the record belongs to (0: none) |
/// | 16 | `ac_buf` [u8; 1024] | the record(s), each with its own CSA header |
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActWra {
    pub ac_did: i32,
    pub ac_len: i32,
    pub ac_jid: u64,
    pub ac_buf: [u8; MAX_WRACCT],
}

const _: () = assert!(core::mem::size_of::<ActWra>() == ActWra::SIZE);
const _: () = assert!(core::mem::offset_of!(ActWra, ac_jid) == 8);
const _: () = assert!(core::mem::offset_of!(ActWra, ac_buf) == 16);

impl Default for ActWra {
    fn default() -> Self {
        ActWra { ac_did: 0, ac_len: 0, ac_jid: 0, ac_buf: [0; MAX_WRACCT] }
    }
}

impl ActWra {
    pub const SIZE: usize = 1040;

    /// The little-endian bytes user space sees.
    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        b[0..4].copy_from_slice(&self.ac_did.to_le_bytes());
        b[4..8].copy_from_slice(&self.ac_len.to_le_bytes());
        b[8..16].copy_from_slice(&self.ac_jid.to_le_bytes());
        b[16..].copy_from_slice(&self.ac_buf);
        b
    }

    /// Decode the bytes of [`ActWra::to_bytes`] (any 1040 bytes decode).
    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        let mut w = ActWra {
            ac_did: le_u32(b, 0) as i32,
            ac_len: le_u32(b, 4) as i32,
            ac_jid: le_u64(b, 8),
            ..Default::default()
        };
        w.ac_buf.copy_from_slice(&b[16..]);
        w
    }

    /// The record bytes `ac_len` names, if `ac_len` is within 1..=1024.
    pub fn record(&self) -> Option<&[u8]> {
        let n = usize::try_from(self.ac_len).ok().filter(|n| (1..=MAX_WRACCT).contains(n))?;
        Some(&self.ac_buf[..n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_constants_are_csa_s() {
        assert_eq!(ACCT_MAGIC, 0x314A);
        assert_eq!(ACCT_MAGIC_HDR2, 0xCEB5);
        assert_eq!((REV_CSA, REV_IO, REV_DELAY), (0xC00, 0xE00, 0xE00));
        assert_eq!(
            [ACCT_KERNEL_CSA, ACCT_KERNEL_MEM, ACCT_KERNEL_IO, ACCT_KERNEL_DELAY, ACCT_KERNEL_SOJ, ACCT_KERNEL_EOJ],
            [1, 2, 4, 8, 10, 12]
        );
        assert_eq!(ACCT_KERNEL_CFG, 16);
        assert_eq!([ACCT_MEM, ACCT_IO, ACCT_DELAY], [1, 2, 4]);
        assert_eq!([AFORK, ASU, ACKPT, ACORE, AXSIG, AMORE], [1, 2, 4, 8, 0x10, 0x20]);
        assert_eq!(AFORK, crate::taskstats::AFORK);
        assert_eq!(AXSIG, crate::taskstats::AXSIG);
    }

    #[test]
    fn indices_requests_and_states_are_csa_s() {
        assert_eq!([ACCT_KERN_CSA, ACCT_KERN_JOB_PROC, ACCT_DMD_WKMG, ACCT_DMD_SITE1, ACCT_DMD_SITE2], [0, 1, 2, 3, 4]);
        assert_eq!([ACCT_RCD_MEM, ACCT_RCD_IO, ACCT_RCD_DELAY, ACCT_THD_MEM, ACCT_THD_TIME], [6, 7, 8, 9, 10]);
        assert_eq!((NUM_KDS, NUM_RCDS, NUM_KDRCDS), (5, 7, 12));
        assert_eq!([ACS_OFF, ACS_ERROFF, ACS_ON], [0, 1, 2]);
        assert_eq!(
            [AC_START, AC_STOP, AC_HALT, AC_CHECK, AC_KDSTAT, AC_RCDSTAT, AC_JASTART, AC_JASTOP, AC_WRACCT, AC_AUTH],
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        );
        assert_eq!([AC_CONFCHG_BOOT, AC_CONFCHG_FILE, AC_CONFCHG_ON, AC_CONFCHG_OFF], [0, 1, 2, 3]);
        assert_eq!([AC_CONFCHG_INC_DELTA, AC_CONFCHG_INC_EVENT], [4, 5]);
        let valid: [bool; 14] = core::array::from_fn(|i| valid_index(i as u32));
        assert_eq!(valid, [true, true, true, true, true, false, true, true, true, true, true, true, true, false]);
        assert!(!valid_index(u32::MAX));
    }

    #[test]
    fn actstat_is_16_bytes_at_the_reference_offsets() {
        let s = ActStat { ac_ind: ACCT_THD_MEM, ac_state: ACS_ON, ac_param: -2 };
        let b = s.to_bytes();
        assert_eq!(&b[0..4], &9u32.to_le_bytes());
        assert_eq!(&b[4..8], &2u32.to_le_bytes());
        assert_eq!(&b[8..16], &(-2i64).to_le_bytes());
        assert_eq!(ActStat::from_bytes(&b), s);
    }

    #[test]
    fn actctl_is_328_bytes_with_its_entries_at_136() {
        let mut c = ActCtl { ac_sttnum: 2, ..Default::default() };
        c.set_path(b"/var/csa/pacct");
        c.ac_stat[0] = ActStat { ac_ind: ACCT_KERN_CSA, ac_state: ACS_ON, ac_param: 0 };
        c.ac_stat[11] = ActStat { ac_ind: ACCT_THD_TIME, ac_state: ACS_ERROFF, ac_param: 5_000 };
        let b = c.to_bytes();
        assert_eq!(b.len(), 328);
        assert_eq!(&b[0..4], &2i32.to_le_bytes());
        assert_eq!(&b[4..18], b"/var/csa/pacct");
        assert_eq!(b[18], 0, "the path is NUL-terminated");
        assert_eq!(&b[132..136], &[0; 4], "C's padding before ac_stat is zero");
        assert_eq!(&b[136..140], &0u32.to_le_bytes());
        assert_eq!(&b[140..144], &ACS_ON.to_le_bytes());
        let last = 136 + 11 * 16;
        assert_eq!(&b[last..last + 4], &10u32.to_le_bytes());
        assert_eq!(&b[last + 4..last + 8], &1u32.to_le_bytes());
        assert_eq!(&b[last + 8..last + 16], &5_000i64.to_le_bytes());
        assert_eq!(ActCtl::from_bytes(&b), c);
        assert_eq!(c.path(), Some(&b"/var/csa/pacct"[..]));
    }

    #[test]
    fn a_path_without_a_nul_is_no_path() {
        let c = ActCtl { ac_path: [b'a'; ACCT_PATH], ..Default::default() };
        assert_eq!(c.path(), None);
        let mut d = ActCtl::default();
        d.set_path(&[b'x'; 300]);
        assert_eq!(d.path().map(<[u8]>::len), Some(127), "set_path keeps room for the NUL");
    }

    #[test]
    fn actwra_is_1040_bytes() {
        let mut w =
            ActWra { ac_did: ACCT_DMD_WKMG as i32, ac_len: 3, ac_jid: jid_of(JOB_HOST_ID, 42), ..Default::default() };
        w.ac_buf[..3].copy_from_slice(b"abc");
        let b = w.to_bytes();
        assert_eq!(&b[0..4], &2i32.to_le_bytes());
        assert_eq!(&b[4..8], &3i32.to_le_bytes());
        assert_eq!(&b[8..16], &0x0000_7A11_0000_002Au64.to_le_bytes());
        assert_eq!(&b[16..19], b"abc");
        assert_eq!(ActWra::from_bytes(&b), w);
        assert_eq!(w.record(), Some(&b"abc"[..]));
        for bad in [0, -1, 1025] {
            assert_eq!(ActWra { ac_len: bad, ..w }.record(), None);
        }
    }

    #[test]
    fn argument_sizes_follow_the_request() {
        assert_eq!(ctl_arg_size(AC_START), Some(328));
        assert_eq!(ctl_arg_size(AC_CHECK), Some(16));
        assert_eq!(ctl_arg_size(AC_WRACCT), Some(1040));
        assert_eq!(ctl_arg_size(AC_HALT), Some(0));
        assert_eq!(ctl_arg_size(AC_MREQ), None);
        assert!(ctl_copies_out(AC_KDSTAT) && !ctl_copies_out(AC_JASTART));
    }

    #[test]
    fn jids_put_the_host_above_the_pid() {
        assert_eq!(jid_of(0x7A11, 1), 0x7A11_0000_0001);
        assert_eq!(jid_of(u32::MAX, u32::MAX), u64::MAX);
    }
}
