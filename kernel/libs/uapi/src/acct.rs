//! BSD process accounting: Linux's `struct acct_v3`, the record `acct(2)` appends to a file
//! each time a process ends.
//!
//! Process accounting is the oldest accounting Unix has: with it on (`acct(path)`, see
//! [`crate::syscall::SYS_ACCT`]), the kernel writes one fixed-size record per process to a
//! file, at the moment the process's last thread exits. Nothing else happens: no daemon, no
//! aggregation. The user tools (`lastcomm`, `sa`, `dump-acct` from GNU acct) read the file
//! afterwards. Because those tools exist and are exact about bytes, Tally writes Linux's
//! **version 3** layout, byte for byte (`/usr/include/linux/acct.h`, x86_64, little-endian):
//!
//! ```text
//!  off  size  field        type     what
//!    0    1   ac_flag      u8       AFORK | ASU | ACORE | AXSIG
//!    1    1   ac_version   u8       3 (| 0x80 would mean a big-endian file)
//!    2    2   ac_tty       u16      controlling terminal, old_encode_dev (major << 8 | minor)
//!    4    4   ac_exitcode  u32      the wait status
//!    8    4   ac_uid       u32
//!   12    4   ac_gid       u32
//!   16    4   ac_pid       u32      the thread group id
//!   20    4   ac_ppid      u32      the parent's thread group id
//!   24    4   ac_btime     u32      begin time, seconds since 1970
//!   28    4   ac_etime     f32      elapsed time, AHZ ticks, as an IEEE float
//!   32    2   ac_utime     comp_t   user CPU time, AHZ ticks
//!   34    2   ac_stime     comp_t   system CPU time, AHZ ticks
//!   36    2   ac_mem       comp_t   memory, KB
//!   38    2   ac_io        comp_t   characters transferred (Linux: always 0)
//!   40    2   ac_rw        comp_t   blocks read or written (Linux: always 0)
//!   42    2   ac_minflt    comp_t   minor page faults
//!   44    2   ac_majflt    comp_t   major page faults
//!   46    2   ac_swaps     comp_t   swaps (Linux: always 0)
//!   48   16   ac_comm      [u8;16]  command name, NUL-terminated (15 bytes at most)
//!   64        (end)
//! ```
//!
//! The two odd number formats — [`comp_t`], a 16-bit float with a base-8 exponent, and the
//! integral IEEE float of `ac_etime` — are encoded by the `tally-pacct` crate, which also
//! builds a record from Tally's accounting and prints files the way GNU acct does. This
//! module only fixes the layout and the constants, so that the kernel that writes records
//! and the programs that read them share one definition.

/// The version Tally writes in `ac_version` (Linux's `ACCT_VERSION` when the kernel is
/// built with `CONFIG_BSD_PROCESS_ACCT_V3`; the installed header says 2, the v1/v2 layout).
pub const ACCT_VERSION: u8 = 3;
/// The bit of `ac_version` that marks a big-endian file. Tally's files are little-endian,
/// so it is never set: `ac_version` is exactly [`ACCT_VERSION`].
pub const ACCT_BYTEORDER_BIG: u8 = 0x80;
/// Length of `ac_comm`, NUL included.
pub const ACCT_COMM: usize = 16;
/// Ticks per second of every time in the record. Linux's `AHZ` is its `HZ` for the old
/// layouts, but a v3 record is always in hundredths of a second (GNU acct assumes 100 for
/// v3 and cannot be told otherwise), whatever the kernel's own tick rate.
pub const AHZ: u32 = 100;

/// A 16-bit "floating point" count: 3-bit base-8 exponent over a 13-bit mantissa,
/// `value = (c & 0x1fff) << (3 * (c >> 13))` (Linux's name and type).
#[allow(non_camel_case_types)]
pub type comp_t = u16;
/// The 24-bit variant with a 5-bit base-2 exponent (v1/v2 records only; v3 does not use it).
#[allow(non_camel_case_types)]
pub type comp2_t = u32;

/// `ac_flag` bits: the process forked but did not exec (Linux `PF_FORKNOEXEC`, of the
/// group leader).
pub const AFORK: u8 = 0x01;
/// The process used super-user privileges (Linux `PF_SUPERPRIV`, of any thread).
pub const ASU: u8 = 0x02;
/// Used a compatibility mode (VAX only; never set).
pub const ACOMPAT: u8 = 0x04;
/// The process dumped core (Linux `PF_DUMPCORE`).
pub const ACORE: u8 = 0x08;
/// The process was killed by a signal (Linux `PF_SIGNALED`).
pub const AXSIG: u8 = 0x10;
/// The record is a thread group's: used by taskstats only, never in an acct record.
pub const AGROUP: u8 = 0x20;

/// `old_encode_dev`: a device number as the 16 bits of `ac_tty` (major and minor below 256).
pub const fn old_encode_dev(major: u32, minor: u32) -> u16 {
    (((major & 0xff) << 8) | (minor & 0xff)) as u16
}

/// The first serial port, `/dev/ttyS0` (major 4, minor 64): Tally's console.
pub const TTY_S0: u16 = old_encode_dev(4, 64);

/// `struct acct_v3`, field for field Linux's: 64 bytes, no padding (every field sits at a
/// multiple of its size). The layout table above is checked at compile time below and by
/// the tests.
///
/// `ac_etime` is a real `f32`, as in C, holding a whole number of ticks; the kernel never
/// computes with it — `tally-pacct` produces its bits with integer operations and
/// [`f32::from_bits`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AcctV3 {
    pub ac_flag: u8,
    pub ac_version: u8,
    pub ac_tty: u16,
    pub ac_exitcode: u32,
    pub ac_uid: u32,
    pub ac_gid: u32,
    pub ac_pid: u32,
    pub ac_ppid: u32,
    pub ac_btime: u32,
    pub ac_etime: f32,
    pub ac_utime: comp_t,
    pub ac_stime: comp_t,
    pub ac_mem: comp_t,
    pub ac_io: comp_t,
    pub ac_rw: comp_t,
    pub ac_minflt: comp_t,
    pub ac_majflt: comp_t,
    pub ac_swaps: comp_t,
    pub ac_comm: [u8; ACCT_COMM],
}

/// One little-endian field of the image.
trait Le: Sized {
    const LEN: usize;
    fn put(&self, out: &mut [u8]);
    fn get(b: &[u8]) -> Self;
}

macro_rules! le_num {
    ($($t:ty),*) => {$(
        impl Le for $t {
            const LEN: usize = core::mem::size_of::<$t>();
            fn put(&self, out: &mut [u8]) {
                out[..Self::LEN].copy_from_slice(&self.to_le_bytes());
            }
            fn get(b: &[u8]) -> Self {
                let mut a = [0u8; core::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..Self::LEN]);
                <$t>::from_le_bytes(a)
            }
        }
    )*};
}
le_num!(u8, u16, u32, f32);

impl Le for [u8; ACCT_COMM] {
    const LEN: usize = ACCT_COMM;
    fn put(&self, out: &mut [u8]) {
        out[..ACCT_COMM].copy_from_slice(self);
    }
    fn get(b: &[u8]) -> Self {
        let mut a = [0u8; ACCT_COMM];
        a.copy_from_slice(&b[..ACCT_COMM]);
        a
    }
}

/// The layout, written once: each field with its offset. From it come the compile-time
/// checks (`offset_of!` agrees with every number, each field ends where the next begins,
/// the last ends at 64) and the encoder and decoder.
macro_rules! acct_v3_layout {
    ($($off:literal => $field:ident: $ty:ty),* $(,)?) => {
        $( const _: () = assert!(core::mem::offset_of!(AcctV3, $field) == $off); )*

        /// (offset, length) of every field in declaration order.
        const FIELD_SPANS: &[(usize, usize)] = &[$(($off, <$ty as Le>::LEN)),*];

        impl AcctV3 {
            /// The 64-byte little-endian image, exactly what a C program reads into a
            /// `struct acct_v3`. Every byte is some field's.
            pub fn to_bytes(&self) -> [u8; AcctV3::SIZE] {
                let mut out = [0u8; AcctV3::SIZE];
                $( Le::put(&self.$field, &mut out[$off..$off + <$ty as Le>::LEN]); )*
                out
            }

            /// The record in a 64-byte image. Any bytes decode (a wrong version byte too:
            /// checking it is the reader's business, see `tally-pacct`).
            pub fn from_bytes(b: &[u8; AcctV3::SIZE]) -> AcctV3 {
                AcctV3 { $( $field: <$ty as Le>::get(&b[$off..$off + <$ty as Le>::LEN]), )* }
            }
        }
    };
}

acct_v3_layout! {
     0 => ac_flag: u8,
     1 => ac_version: u8,
     2 => ac_tty: u16,
     4 => ac_exitcode: u32,
     8 => ac_uid: u32,
    12 => ac_gid: u32,
    16 => ac_pid: u32,
    20 => ac_ppid: u32,
    24 => ac_btime: u32,
    28 => ac_etime: f32,
    32 => ac_utime: u16,
    34 => ac_stime: u16,
    36 => ac_mem: u16,
    38 => ac_io: u16,
    40 => ac_rw: u16,
    42 => ac_minflt: u16,
    44 => ac_majflt: u16,
    46 => ac_swaps: u16,
    48 => ac_comm: [u8; ACCT_COMM],
}

const _: () = assert!(AcctV3::SIZE == 64);
const _: () = assert!(core::mem::align_of::<AcctV3>() == 4);
const _: () = {
    let mut end = 0;
    let mut i = 0;
    while i < FIELD_SPANS.len() {
        assert!(FIELD_SPANS[i].0 == end);
        end += FIELD_SPANS[i].1;
        i += 1;
    }
    assert!(end == AcctV3::SIZE);
};

impl AcctV3 {
    /// Size of one record: a file of records is a whole multiple of it.
    pub const SIZE: usize = core::mem::size_of::<AcctV3>();

    /// Every field zero, `ac_etime` included.
    pub const fn zeroed() -> AcctV3 {
        AcctV3 {
            ac_flag: 0,
            ac_version: 0,
            ac_tty: 0,
            ac_exitcode: 0,
            ac_uid: 0,
            ac_gid: 0,
            ac_pid: 0,
            ac_ppid: 0,
            ac_btime: 0,
            ac_etime: 0.0,
            ac_utime: 0,
            ac_stime: 0,
            ac_mem: 0,
            ac_io: 0,
            ac_rw: 0,
            ac_minflt: 0,
            ac_majflt: 0,
            ac_swaps: 0,
            ac_comm: [0; ACCT_COMM],
        }
    }

    /// The record at the start of `b`, if `b` holds at least [`AcctV3::SIZE`] bytes.
    pub fn from_slice(b: &[u8]) -> Option<AcctV3> {
        let image: &[u8; AcctV3::SIZE] = b.get(..AcctV3::SIZE)?.try_into().ok()?;
        Some(AcctV3::from_bytes(image))
    }

    /// The command name: the bytes of `ac_comm` before its first NUL (all 16 if it has none).
    pub fn comm_bytes(&self) -> &[u8] {
        let len = self.ac_comm.iter().position(|&c| c == 0).unwrap_or(ACCT_COMM);
        &self.ac_comm[..len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> AcctV3 {
        let mut comm = [0u8; ACCT_COMM];
        comm[..4].copy_from_slice(b"spin");
        AcctV3 {
            ac_flag: ASU | AXSIG,
            ac_version: ACCT_VERSION,
            ac_tty: TTY_S0,
            ac_exitcode: 0x0109,
            ac_uid: 0x1122_3344,
            ac_gid: 0x5566_7788,
            ac_pid: 42,
            ac_ppid: 1,
            ac_btime: 1_764_054_120,
            ac_etime: 250.0,
            ac_utime: 0x2607,
            ac_stime: 0x2401,
            ac_mem: 0x461b,
            ac_io: 0x0101,
            ac_rw: 0x0202,
            ac_minflt: 0x0303,
            ac_majflt: 0x0404,
            ac_swaps: 0x0505,
            ac_comm: comm,
        }
    }

    fn u16_at(b: &[u8], off: usize) -> u16 {
        u16::from_le_bytes([b[off], b[off + 1]])
    }

    fn u32_at(b: &[u8], off: usize) -> u32 {
        u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
    }

    /// Every offset of REFERENCE.md's table and `/usr/include/linux/acct.h` (x86_64): a
    /// recognisable value in each field must come out at exactly that place.
    #[test]
    fn fields_sit_where_linux_puts_them() {
        let b = sample().to_bytes();
        assert_eq!(AcctV3::SIZE, 64);
        assert_eq!(b[0], 0x12, "ac_flag at 0");
        assert_eq!(b[1], 3, "ac_version at 1");
        assert_eq!(u16_at(&b, 2), 0x0440, "ac_tty at 2 (ttyS0 = 4/64)");
        assert_eq!(u32_at(&b, 4), 0x0109, "ac_exitcode at 4");
        assert_eq!(u32_at(&b, 8), 0x1122_3344, "ac_uid at 8");
        assert_eq!(u32_at(&b, 12), 0x5566_7788, "ac_gid at 12");
        assert_eq!(u32_at(&b, 16), 42, "ac_pid at 16");
        assert_eq!(u32_at(&b, 20), 1, "ac_ppid at 20");
        assert_eq!(u32_at(&b, 24), 1_764_054_120, "ac_btime at 24");
        assert_eq!(u32_at(&b, 28), 0x437a_0000, "ac_etime at 28: 250.0f32");
        assert_eq!(u16_at(&b, 32), 0x2607, "ac_utime at 32");
        assert_eq!(u16_at(&b, 34), 0x2401, "ac_stime at 34");
        assert_eq!(u16_at(&b, 36), 0x461b, "ac_mem at 36");
        assert_eq!(u16_at(&b, 38), 0x0101, "ac_io at 38");
        assert_eq!(u16_at(&b, 40), 0x0202, "ac_rw at 40");
        assert_eq!(u16_at(&b, 42), 0x0303, "ac_minflt at 42");
        assert_eq!(u16_at(&b, 44), 0x0404, "ac_majflt at 44");
        assert_eq!(u16_at(&b, 46), 0x0505, "ac_swaps at 46");
        assert_eq!(&b[48..64], b"spin\0\0\0\0\0\0\0\0\0\0\0\0", "ac_comm at 48..64");
    }

    #[test]
    fn offsets_match_the_c_header() {
        use core::mem::offset_of;
        let offsets = [
            offset_of!(AcctV3, ac_flag),
            offset_of!(AcctV3, ac_version),
            offset_of!(AcctV3, ac_tty),
            offset_of!(AcctV3, ac_exitcode),
            offset_of!(AcctV3, ac_uid),
            offset_of!(AcctV3, ac_gid),
            offset_of!(AcctV3, ac_pid),
            offset_of!(AcctV3, ac_ppid),
            offset_of!(AcctV3, ac_btime),
            offset_of!(AcctV3, ac_etime),
            offset_of!(AcctV3, ac_utime),
            offset_of!(AcctV3, ac_stime),
            offset_of!(AcctV3, ac_mem),
            offset_of!(AcctV3, ac_io),
            offset_of!(AcctV3, ac_rw),
            offset_of!(AcctV3, ac_minflt),
            offset_of!(AcctV3, ac_majflt),
            offset_of!(AcctV3, ac_swaps),
            offset_of!(AcctV3, ac_comm),
        ];
        assert_eq!(offsets, [0, 1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 34, 36, 38, 40, 42, 44, 46, 48]);
    }

    #[test]
    fn round_trip_and_every_byte_belongs_to_a_field() {
        let r = sample();
        assert_eq!(AcctV3::from_bytes(&r.to_bytes()), r);
        // Distinct bytes everywhere: decoding and re-encoding reproduces them, so no byte is
        // padding and no two fields overlap.
        let mut image = [0u8; 64];
        for (i, b) in image.iter_mut().enumerate() {
            *b = i as u8 + 1;
        }
        assert_eq!(AcctV3::from_bytes(&image).to_bytes(), image);
        assert_eq!(AcctV3::zeroed().to_bytes(), [0u8; 64]);
        assert_eq!(AcctV3::zeroed(), AcctV3::default());
    }

    #[test]
    fn from_slice_needs_a_whole_record() {
        let b = sample().to_bytes();
        assert_eq!(AcctV3::from_slice(&b), Some(sample()));
        assert_eq!(AcctV3::from_slice(&b[..63]), None);
        let mut longer = [0u8; 70];
        longer[..64].copy_from_slice(&b);
        assert_eq!(AcctV3::from_slice(&longer), Some(sample()));
    }

    #[test]
    fn comm_stops_at_the_first_nul() {
        let mut r = sample();
        assert_eq!(r.comm_bytes(), b"spin");
        r.ac_comm = [b'x'; ACCT_COMM];
        assert_eq!(r.comm_bytes().len(), 16);
    }

    #[test]
    fn flags_and_devices_are_linuxs() {
        assert_eq!((AFORK, ASU, ACOMPAT, ACORE, AXSIG, AGROUP), (1, 2, 4, 8, 0x10, 0x20));
        assert_eq!(TTY_S0, 0x0440);
        assert_eq!(old_encode_dev(136, 3), 0x8803);
        assert_eq!((ACCT_VERSION, AHZ, ACCT_COMM), (3, 100, 16));
    }
}
