//! # Kernel statistics (kstat) — the records a `kstat -p` reader sees
//!
//! Solaris exports kernel statistics as a *chain* of kstats. Every kstat has a common
//! header (who made it: `module:instance:name`, its `class`, its data `type`, when it was
//! created and last read) and a type-specific *data section* made of fixed-size records:
//!
//! | `ks_type`             | data section                          | `ks_ndata`           |
//! |-----------------------|---------------------------------------|----------------------|
//! | `KSTAT_TYPE_RAW`   0  | bytes, meaning known to the reader    | number of bytes      |
//! | `KSTAT_TYPE_NAMED` 1  | [`KstatNamed`] name=value pairs       | number of pairs      |
//! | `KSTAT_TYPE_INTR`  2  | one [`KstatIntr`] (five counters)     | 1                    |
//! | `KSTAT_TYPE_IO`    3  | one [`KstatIo`] (queue statistics)    | 1                    |
//! | `KSTAT_TYPE_TIMER` 4  | [`KstatTimer`] event timers           | number of timers     |
//!
//! How a reader walks it (the flow `tally-kstat` implements on the kernel side):
//!
//! 1. Read KID 0, `unix:0:kstat_headers`: its data section is one [`KstatHeader`] per kstat,
//!    in increasing KID order. Remember the chain id (KCID) the read returned.
//! 2. Pick kstats from that list, e.g. with a [`KstatFilter`] built from `m:i:n:s`.
//! 3. Read each one by KID; decode its data section with [`records`].
//! 4. If a later read reports a different KCID, kstats were added or removed: go to 1.
//!
//! Every record here is `#[repr(C)]` with the layout Solaris gives the same structure on an
//! LP64 machine, minus the kernel pointers (`ks_next`, `ks_data`, ...) that mean nothing to
//! user space. Records cross the boundary as bytes: [`KstatRecord::encode_into`] writes the
//! little-endian image of the struct (identical to its memory image on x86_64, padding
//! zeroed) and [`KstatRecord::decode`] reads it back; any byte string of the right length
//! decodes, so a reader can never be crashed by what it reads.
//!
//! Times (`hrtime_t`) are signed 64-bit nanoseconds since boot, as in Solaris.

use core::fmt;
use core::mem::{align_of, offset_of, size_of};

/// `hrtime_t`: nanoseconds since boot. Signed, as in Solaris, so differences are natural.
pub type Hrtime = i64;

/// `kid_t`: a kstat id, and also the type of the chain id (KCID).
///
/// Solaris 2.5.1 declared it `long`, later releases `int`. Tally uses 64 bits so that a
/// system creating and deleting per-task kstats for years never runs out of ids.
pub type KidT = i64;

/// Bytes in a kstat name field, including the terminating NUL: names hold at most
/// `KSTAT_STRLEN - 1` = 30 bytes.
pub const KSTAT_STRLEN: usize = 31;

pub const KSTAT_TYPE_RAW: u8 = 0;
pub const KSTAT_TYPE_NAMED: u8 = 1;
pub const KSTAT_TYPE_INTR: u8 = 2;
pub const KSTAT_TYPE_IO: u8 = 3;
pub const KSTAT_TYPE_TIMER: u8 = 4;
pub const KSTAT_NUM_TYPES: u8 = 5;

pub const KSTAT_DATA_CHAR: u8 = 0;
pub const KSTAT_DATA_INT32: u8 = 1;
pub const KSTAT_DATA_UINT32: u8 = 2;
pub const KSTAT_DATA_INT64: u8 = 3;
pub const KSTAT_DATA_UINT64: u8 = 4;
/// Solaris stores a pointer and a length here; Tally stores the string inline in the
/// 16-byte value, NUL-terminated, so at most [`KSTAT_NAMED_STRING_MAX`] bytes.
pub const KSTAT_DATA_STRING: u8 = 9;

/// Longest `KSTAT_DATA_STRING` value carried inline in a [`KstatNamed`].
pub const KSTAT_NAMED_STRING_MAX: usize = 15;
/// Size of the value union (`char c[16]`, "enough for 128-bit ints").
pub const KSTAT_NAMED_VALUE_LEN: usize = 16;

pub const KSTAT_INTR_HARD: usize = 0;
pub const KSTAT_INTR_SOFT: usize = 1;
pub const KSTAT_INTR_WATCHDOG: usize = 2;
pub const KSTAT_INTR_SPURIOUS: usize = 3;
pub const KSTAT_INTR_MULTSVC: usize = 4;
pub const KSTAT_NUM_INTRS: usize = 5;

/// Statistic names `kstat -p` prints for the five interrupt counters, by index.
pub const KSTAT_INTR_NAMES: [&str; KSTAT_NUM_INTRS] = ["hard", "soft", "watchdog", "spurious", "multiple_service"];

/// The five kinds of interrupt, numbered as `KSTAT_INTR_*` (the index into
/// [`KstatIntr::intrs`]). The interrupt accounting counts by these kinds and the kstat layer
/// publishes them, so both use this one definition.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntrKind {
    /// A device interrupt that a handler claimed (the clock tick's included).
    Hard = KSTAT_INTR_HARD as u32,
    /// A software interrupt (deferred work raised by the kernel itself).
    Soft = KSTAT_INTR_SOFT as u32,
    /// From a periodic timer call: a driver's watchdog routine (illumos' "watchdog"). Not
    /// the clock tick, which a device raises and is [`IntrKind::Hard`], as in Solaris.
    Watchdog = KSTAT_INTR_WATCHDOG as u32,
    /// An interrupt no handler claimed.
    Spurious = KSTAT_INTR_SPURIOUS as u32,
    /// One entry that serviced more than one device on a shared line.
    MultSvc = KSTAT_INTR_MULTSVC as u32,
}

impl IntrKind {
    /// Every kind, in index order.
    pub const ALL: [IntrKind; KSTAT_NUM_INTRS] =
        [IntrKind::Hard, IntrKind::Soft, IntrKind::Watchdog, IntrKind::Spurious, IntrKind::MultSvc];

    /// The kind with `KSTAT_INTR_*` number `i`, if there is one.
    pub fn from_index(i: usize) -> Option<Self> {
        Self::ALL.get(i).copied()
    }

    /// Its `KSTAT_INTR_*` number.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The statistic name `kstat -p` prints ("hard", "soft", ...).
    pub fn name(self) -> &'static str {
        KSTAT_INTR_NAMES[self.index()]
    }
}

/// `ks_flags` bits (Solaris values). Tally's framework sets only `VIRTUAL`, `VAR_SIZE`
/// (on KID 0, whose data is generated from the chain) and `INVALID` (created, not yet
/// installed: the header is listed but the data cannot be read).
pub const KSTAT_FLAG_VIRTUAL: u8 = 0x01;
pub const KSTAT_FLAG_VAR_SIZE: u8 = 0x02;
pub const KSTAT_FLAG_WRITABLE: u8 = 0x04;
pub const KSTAT_FLAG_PERSISTENT: u8 = 0x08;
pub const KSTAT_FLAG_DORMANT: u8 = 0x10;
pub const KSTAT_FLAG_INVALID: u8 = 0x20;

/// KID of `unix:0:kstat_headers`, whose data section is the whole chain of headers.
pub const KSTAT_HEADERS_KID: KidT = 0;

// ---------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------

/// Copies `src` into a fixed name field, NUL-padded, as Solaris' `kstat_set_string` does:
/// at most `dst.len() - 1` bytes are kept so the field stays NUL-terminated. Truncation
/// happens at a UTF-8 character boundary. Returns `true` if `src` had to be truncated.
pub fn kstat_set_string(dst: &mut [u8], src: &str) -> bool {
    dst.fill(0);
    let cap = dst.len().saturating_sub(1);
    let n = str_prefix_len(src, cap);
    dst[..n].copy_from_slice(&src.as_bytes()[..n]);
    n < src.len()
}

/// The text of a NUL-terminated name field: the bytes before the first NUL, cut at the
/// first invalid UTF-8 sequence (a reader never fails on a bad name, it sees less of it).
pub fn kstat_str(field: &[u8]) -> &str {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let bytes = &field[..end];
    match core::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => core::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""),
    }
}

/// Length of the longest prefix of `s` that is at most `cap` bytes and ends on a char
/// boundary.
fn str_prefix_len(s: &str, cap: usize) -> usize {
    if s.len() <= cap {
        return s.len();
    }
    let mut n = cap;
    while n > 0 && !s.is_char_boundary(n) {
        n -= 1;
    }
    n
}

fn write_lossy(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    for chunk in bytes[..end].utf8_chunks() {
        f.write_str(chunk.valid())?;
        if !chunk.invalid().is_empty() {
            f.write_str("\u{FFFD}")?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Byte encoding
// ---------------------------------------------------------------------------------------

/// A fixed-size record that crosses the user/kernel boundary as little-endian bytes.
pub trait KstatRecord: Copy + Sized {
    /// Encoded size in bytes; equal to `size_of::<Self>()`.
    const SIZE: usize;
    /// Writes the record into the first `SIZE` bytes of `out`. Returns `Some(SIZE)`, or
    /// `None` (and writes nothing) if `out` is too short.
    fn encode_into(&self, out: &mut [u8]) -> Option<usize>;
    /// Reads a record from the first `SIZE` bytes of `bytes`; `None` if too short.
    /// Every byte pattern decodes: fields are taken as they are, never validated.
    fn decode(bytes: &[u8]) -> Option<Self>;
}

/// Decodes consecutive records from a data section. A trailing partial record is ignored.
pub fn records<'a, T: KstatRecord + 'a>(bytes: &'a [u8]) -> impl Iterator<Item = T> + 'a {
    bytes.chunks_exact(T::SIZE).filter_map(T::decode)
}

/// Encodes `recs` back to back into `out`. Returns the bytes written, or `None` (having
/// written nothing) if `out` cannot hold them all.
pub fn encode_records<T: KstatRecord>(recs: &[T], out: &mut [u8]) -> Option<usize> {
    let total = recs.len().checked_mul(T::SIZE)?;
    let out = out.get_mut(..total)?;
    for (r, chunk) in recs.iter().zip(out.chunks_exact_mut(T::SIZE)) {
        r.encode_into(chunk)?;
    }
    Some(total)
}

// Helpers for the fixed-offset images below. Callers have already checked the length
// against SIZE, so the ranges are always in bounds.
fn put(out: &mut [u8], off: usize, bytes: &[u8]) {
    out[off..off + bytes.len()].copy_from_slice(bytes);
}
fn get<const N: usize>(b: &[u8], off: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[off..off + N]);
    a
}
fn get_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(get(b, off))
}
fn get_i32(b: &[u8], off: usize) -> i32 {
    i32::from_le_bytes(get(b, off))
}
fn get_u64(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(get(b, off))
}
fn get_i64(b: &[u8], off: usize) -> i64 {
    i64::from_le_bytes(get(b, off))
}

macro_rules! record_impl {
    ($t:ty, $size:expr) => {
        impl $t {
            /// Encoded (and in-memory) size in bytes.
            pub const SIZE: usize = $size;
            /// The little-endian image of this record.
            pub fn to_bytes(&self) -> [u8; $size] {
                let mut out = [0u8; $size];
                self.write_image(&mut out);
                out
            }
            /// Rebuilds a record from its image.
            pub fn from_bytes(bytes: &[u8; $size]) -> Self {
                Self::read_image(bytes)
            }
        }
        impl KstatRecord for $t {
            const SIZE: usize = $size;
            fn encode_into(&self, out: &mut [u8]) -> Option<usize> {
                let out = out.get_mut(..$size)?;
                out.fill(0);
                self.write_image(out);
                Some($size)
            }
            fn decode(bytes: &[u8]) -> Option<Self> {
                let b: &[u8; $size] = bytes.get(..$size)?.try_into().ok()?;
                Some(Self::read_image(b))
            }
        }
        const _: () = assert!(size_of::<$t>() == $size);
    };
}

// ---------------------------------------------------------------------------------------
// The system calls: kstat_chain and kstat_read
// ---------------------------------------------------------------------------------------

/// What `kstat_read` (and `kstat_chain`) report besides the data: the chain id at the
/// instant of the read and the kstat's header as of that read (fresh `ks_snaptime`,
/// `ks_ndata`, `ks_data_size`). 144 bytes: `kcid` then a [`KstatHeader`].
///
/// ## The two calls (`SYS_KSTAT_CHAIN` = 503, `SYS_KSTAT_READ` = 504)
///
/// ```text
/// long kstat_chain(void *buf, size_t len, uint64_t *needed);           // -> KCID
/// long kstat_read(kid_t kid, void *buf, size_t len, kstat_read_info_t *info); // -> bytes
/// ```
///
/// * `kstat_chain` reads KID 0: `buf` receives one [`KstatHeader`] per kstat in increasing
///   KID order, and the call returns the chain id (KCID, `>= 0`). If `needed` is not NULL
///   the number of bytes the list takes is stored there, whether or not it fit. A `buf`
///   shorter than that is refused with `-ENOMEM` and nothing is written to it — so a
///   reader sizes its buffer with `kstat_chain(NULL, 0, &needed)` (which answers
///   `-ENOMEM`), allocates, and retries while `-ENOMEM` comes back (kstats may appear in
///   between), exactly as libkstat grows its buffer against `/dev/kstat`.
/// * `kstat_read` copies kstat `kid`'s data section (ABI records, decode with [`records`])
///   into `buf`, stamps its `ks_snaptime` with the time of the read, and returns the number
///   of bytes written (= `ks_data_size`). If `info` is not NULL it receives a
///   [`KstatReadInfo`]: on success, and also on `-ENOMEM` (the header then says in
///   `ks_data_size` how big `buf` must be).
/// * **Stale chains.** A reader keeps the KCID its list came with. `kstat_read` of a KID
///   that no longer exists (deleted) or never existed answers `-ENXIO` (Solaris' answer);
///   a kstat still being set up answers `-EAGAIN`. And every successful read reports the
///   current KCID in `info.kcid`: when it differs from the reader's, kstats were created
///   or deleted since its `kstat_chain`, and it should re-read the chain.
/// * Errors: `-EFAULT` for a `buf`, `needed` or `info` the caller cannot write (checked
///   before anything is read, so a bad pointer changes no `ks_snaptime`), `-ENXIO` for a
///   negative KID.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KstatReadInfo {
    /// The chain id when the read happened.
    pub kcid: KidT,
    /// The kstat's header as of the read.
    pub header: KstatHeader,
}

const _: () = assert!(size_of::<KstatReadInfo>() == 144);

impl KstatReadInfo {
    fn write_image(&self, o: &mut [u8]) {
        put(o, 0, &self.kcid.to_le_bytes());
        self.header.write_image(&mut o[8..]);
    }
    fn read_image(b: &[u8]) -> Self {
        KstatReadInfo { kcid: get_i64(b, 0), header: KstatHeader::read_image(&b[8..]) }
    }
}
record_impl!(KstatReadInfo, 144);

// ---------------------------------------------------------------------------------------
// The chain entry: kstat_t's public header
// ---------------------------------------------------------------------------------------

/// One entry of the kstat chain: `kstat_t` without its kernel pointers, in Solaris'
/// field order. This is the record KID 0 returns for every kstat, and the header any read
/// returns with fresh `ks_snaptime`, `ks_ndata` and `ks_data_size`.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KstatHeader {
    /// Creation time: rates are "since creation", not "since boot".
    pub ks_crtime: Hrtime,
    /// Unique, never reused; increases with creation order.
    pub ks_kid: KidT,
    pub ks_module: [u8; KSTAT_STRLEN],
    pub ks_resv: u8,
    /// Which instance of the module (0 when there can be only one).
    pub ks_instance: i32,
    /// Unique within `(module, instance)`.
    pub ks_name: [u8; KSTAT_STRLEN],
    /// One of `KSTAT_TYPE_*`.
    pub ks_type: u8,
    /// Broad grouping for filtering: "disk", "net", "misc", "kstat", ...
    pub ks_class: [u8; KSTAT_STRLEN],
    /// `KSTAT_FLAG_*`.
    pub ks_flags: u8,
    /// Number of data records (bytes, for a raw kstat).
    pub ks_ndata: u32,
    /// Size of the data section in bytes.
    pub ks_data_size: u64,
    /// When the data was last copied out: `rate = Δcount / Δsnaptime`.
    pub ks_snaptime: Hrtime,
}

const _: () = {
    assert!(offset_of!(KstatHeader, ks_crtime) == 0);
    assert!(offset_of!(KstatHeader, ks_kid) == 8);
    assert!(offset_of!(KstatHeader, ks_module) == 16);
    assert!(offset_of!(KstatHeader, ks_resv) == 47);
    assert!(offset_of!(KstatHeader, ks_instance) == 48);
    assert!(offset_of!(KstatHeader, ks_name) == 52);
    assert!(offset_of!(KstatHeader, ks_type) == 83);
    assert!(offset_of!(KstatHeader, ks_class) == 84);
    assert!(offset_of!(KstatHeader, ks_flags) == 115);
    assert!(offset_of!(KstatHeader, ks_ndata) == 116);
    assert!(offset_of!(KstatHeader, ks_data_size) == 120);
    assert!(offset_of!(KstatHeader, ks_snaptime) == 128);
    assert!(align_of::<KstatHeader>() == 8);
};
record_impl!(KstatHeader, 136);

impl KstatHeader {
    /// An all-zero header (KID 0, empty names, raw type).
    pub const ZERO: KstatHeader = KstatHeader {
        ks_crtime: 0,
        ks_kid: 0,
        ks_module: [0; KSTAT_STRLEN],
        ks_resv: 0,
        ks_instance: 0,
        ks_name: [0; KSTAT_STRLEN],
        ks_type: 0,
        ks_class: [0; KSTAT_STRLEN],
        ks_flags: 0,
        ks_ndata: 0,
        ks_data_size: 0,
        ks_snaptime: 0,
    };

    pub fn module(&self) -> &str {
        kstat_str(&self.ks_module)
    }
    pub fn name(&self) -> &str {
        kstat_str(&self.ks_name)
    }
    pub fn class(&self) -> &str {
        kstat_str(&self.ks_class)
    }
    /// False while the kstat is created but not yet installed: its data is not readable.
    pub fn is_valid(&self) -> bool {
        self.ks_flags & KSTAT_FLAG_INVALID == 0
    }

    fn write_image(&self, o: &mut [u8]) {
        put(o, 0, &self.ks_crtime.to_le_bytes());
        put(o, 8, &self.ks_kid.to_le_bytes());
        put(o, 16, &self.ks_module);
        o[47] = self.ks_resv;
        put(o, 48, &self.ks_instance.to_le_bytes());
        put(o, 52, &self.ks_name);
        o[83] = self.ks_type;
        put(o, 84, &self.ks_class);
        o[115] = self.ks_flags;
        put(o, 116, &self.ks_ndata.to_le_bytes());
        put(o, 120, &self.ks_data_size.to_le_bytes());
        put(o, 128, &self.ks_snaptime.to_le_bytes());
    }
    fn read_image(b: &[u8]) -> Self {
        KstatHeader {
            ks_crtime: get_i64(b, 0),
            ks_kid: get_i64(b, 8),
            ks_module: get(b, 16),
            ks_resv: b[47],
            ks_instance: get_i32(b, 48),
            ks_name: get(b, 52),
            ks_type: b[83],
            ks_class: get(b, 84),
            ks_flags: b[115],
            ks_ndata: get_u32(b, 116),
            ks_data_size: get_u64(b, 120),
            ks_snaptime: get_i64(b, 128),
        }
    }
}

// ---------------------------------------------------------------------------------------
// KSTAT_TYPE_NAMED
// ---------------------------------------------------------------------------------------

/// A decoded `kstat_named_t` value: the union member selected by `data_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KstatValue {
    /// `KSTAT_DATA_CHAR`: 16 bytes of text, NUL-padded (no terminator when all 16 are used).
    Char([u8; KSTAT_NAMED_VALUE_LEN]),
    Int32(i32),
    Uint32(u32),
    Int64(i64),
    Uint64(u64),
    /// `KSTAT_DATA_STRING`, inline: at most 15 bytes then NUL. Encoding forces byte 15 to
    /// NUL whatever the array holds.
    String([u8; KSTAT_NAMED_VALUE_LEN]),
}

impl KstatValue {
    /// A `KSTAT_DATA_CHAR` value holding up to 16 bytes of `s` (truncated at a char
    /// boundary).
    pub fn chars(s: &str) -> Self {
        let mut c = [0u8; KSTAT_NAMED_VALUE_LEN];
        let n = str_prefix_len(s, KSTAT_NAMED_VALUE_LEN);
        c[..n].copy_from_slice(&s.as_bytes()[..n]);
        KstatValue::Char(c)
    }
    /// A `KSTAT_DATA_STRING` value holding up to 15 bytes of `s` (truncated at a char
    /// boundary).
    pub fn string(s: &str) -> Self {
        let mut c = [0u8; KSTAT_NAMED_VALUE_LEN];
        kstat_set_string(&mut c, s);
        KstatValue::String(c)
    }
    /// The zero value of a data type; `None` for types Tally does not carry (the obsolete
    /// FLOAT/DOUBLE 5/6, the kernel-only LONG/ULONG 7/8, anything unknown).
    pub fn zero(data_type: u8) -> Option<Self> {
        Self::decode(data_type, &[0; KSTAT_NAMED_VALUE_LEN])
    }
    /// The `KSTAT_DATA_*` number of this value.
    pub fn data_type(&self) -> u8 {
        match self {
            KstatValue::Char(_) => KSTAT_DATA_CHAR,
            KstatValue::Int32(_) => KSTAT_DATA_INT32,
            KstatValue::Uint32(_) => KSTAT_DATA_UINT32,
            KstatValue::Int64(_) => KSTAT_DATA_INT64,
            KstatValue::Uint64(_) => KSTAT_DATA_UINT64,
            KstatValue::String(_) => KSTAT_DATA_STRING,
        }
    }
    /// The 16-byte union image: integers little-endian at offset 0, the rest zero.
    pub fn encode(&self) -> [u8; KSTAT_NAMED_VALUE_LEN] {
        let mut v = [0u8; KSTAT_NAMED_VALUE_LEN];
        match *self {
            KstatValue::Char(c) => v = c,
            KstatValue::Int32(x) => v[..4].copy_from_slice(&x.to_le_bytes()),
            KstatValue::Uint32(x) => v[..4].copy_from_slice(&x.to_le_bytes()),
            KstatValue::Int64(x) => v[..8].copy_from_slice(&x.to_le_bytes()),
            KstatValue::Uint64(x) => v[..8].copy_from_slice(&x.to_le_bytes()),
            KstatValue::String(c) => {
                v[..KSTAT_NAMED_STRING_MAX].copy_from_slice(&c[..KSTAT_NAMED_STRING_MAX]);
            }
        }
        v
    }
    /// Reads the union member `data_type` selects; `None` for an unsupported type.
    pub fn decode(data_type: u8, v: &[u8; KSTAT_NAMED_VALUE_LEN]) -> Option<Self> {
        Some(match data_type {
            KSTAT_DATA_CHAR => KstatValue::Char(*v),
            KSTAT_DATA_INT32 => KstatValue::Int32(get_i32(v, 0)),
            KSTAT_DATA_UINT32 => KstatValue::Uint32(get_u32(v, 0)),
            KSTAT_DATA_INT64 => KstatValue::Int64(get_i64(v, 0)),
            KSTAT_DATA_UINT64 => KstatValue::Uint64(get_u64(v, 0)),
            KSTAT_DATA_STRING => {
                let mut c = *v;
                c[KSTAT_NAMED_STRING_MAX] = 0;
                KstatValue::String(c)
            }
            _ => return None,
        })
    }
    /// The integer value, widened; `None` for text.
    pub fn as_i128(&self) -> Option<i128> {
        match *self {
            KstatValue::Int32(x) => Some(x.into()),
            KstatValue::Uint32(x) => Some(x.into()),
            KstatValue::Int64(x) => Some(x.into()),
            KstatValue::Uint64(x) => Some(x.into()),
            KstatValue::Char(_) | KstatValue::String(_) => None,
        }
    }
}

/// Prints the value as `kstat -p` does: integers in decimal, text as text.
impl fmt::Display for KstatValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KstatValue::Char(c) => write_lossy(f, c),
            KstatValue::String(c) => write_lossy(f, &c[..KSTAT_NAMED_STRING_MAX]),
            KstatValue::Int32(x) => write!(f, "{x}"),
            KstatValue::Uint32(x) => write!(f, "{x}"),
            KstatValue::Int64(x) => write!(f, "{x}"),
            KstatValue::Uint64(x) => write!(f, "{x}"),
        }
    }
}

/// `kstat_named_t`: one name=value statistic.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KstatNamed {
    pub name: [u8; KSTAT_STRLEN],
    /// `KSTAT_DATA_*`: which member of `value` is live.
    pub data_type: u8,
    /// The value union as bytes; see [`KstatValue::encode`].
    pub value: [u8; KSTAT_NAMED_VALUE_LEN],
}

const _: () = {
    assert!(offset_of!(KstatNamed, name) == 0);
    assert!(offset_of!(KstatNamed, data_type) == 31);
    assert!(offset_of!(KstatNamed, value) == 32);
    assert!(align_of::<KstatNamed>() == 8);
};
record_impl!(KstatNamed, 48);

impl KstatNamed {
    /// `kstat_named_init`: a statistic called `name` (truncated to 30 bytes) holding the
    /// zero of `data_type`.
    pub fn init(name: &str, data_type: u8) -> Self {
        let mut n = KstatNamed { name: [0; KSTAT_STRLEN], data_type, value: [0; 16] };
        kstat_set_string(&mut n.name, name);
        n
    }
    /// A statistic called `name` (truncated to 30 bytes) holding `value`.
    pub fn new(name: &str, value: KstatValue) -> Self {
        let mut n = Self::init(name, value.data_type());
        n.value = value.encode();
        n
    }
    pub fn name(&self) -> &str {
        kstat_str(&self.name)
    }
    /// The live union member; `None` if `data_type` is not one Tally carries.
    pub fn value(&self) -> Option<KstatValue> {
        KstatValue::decode(self.data_type, &self.value)
    }
    /// Stores `value` and makes its type the record's `data_type`.
    pub fn set_value(&mut self, value: KstatValue) {
        self.data_type = value.data_type();
        self.value = value.encode();
    }

    fn write_image(&self, o: &mut [u8]) {
        put(o, 0, &self.name);
        o[31] = self.data_type;
        put(o, 32, &self.value);
    }
    fn read_image(b: &[u8]) -> Self {
        KstatNamed { name: get(b, 0), data_type: b[31], value: get(b, 32) }
    }
}

// ---------------------------------------------------------------------------------------
// KSTAT_TYPE_INTR
// ---------------------------------------------------------------------------------------

/// `kstat_intr_t`: how many interrupts of each kind (`KSTAT_INTR_*` indexes) were taken.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KstatIntr {
    pub intrs: [u32; KSTAT_NUM_INTRS],
}

const _: () = assert!(offset_of!(KstatIntr, intrs) == 0);
record_impl!(KstatIntr, 20);

impl KstatIntr {
    /// `(statistic name, value)` pairs in the order `kstat -p` prints them.
    pub fn statistics(&self) -> [(&'static str, KstatValue); KSTAT_NUM_INTRS] {
        core::array::from_fn(|i| (KSTAT_INTR_NAMES[i], KstatValue::Uint32(self.intrs[i])))
    }
    fn write_image(&self, o: &mut [u8]) {
        for (i, c) in self.intrs.iter().enumerate() {
            put(o, 4 * i, &c.to_le_bytes());
        }
    }
    fn read_image(b: &[u8]) -> Self {
        KstatIntr { intrs: core::array::from_fn(|i| get_u32(b, 4 * i)) }
    }
}

// ---------------------------------------------------------------------------------------
// KSTAT_TYPE_IO
// ---------------------------------------------------------------------------------------

/// `kstat_io_t`, field for field.
///
/// Two queues are tracked: the *wait* queue (accepted, not yet being served) and the
/// *run* queue (being served). For each, `*cnt` is its current length, `*time` the time it
/// was non-empty ("busy time"), `*lentime` the integral of its length over time (a Riemann
/// sum, in length × ns) and `*lastupdate` when its length last changed. From two
/// snapshots a reader gets, e.g., average wait-queue length `Δwlentime / Δsnaptime`,
/// utilisation `Δrtime / Δsnaptime`, and mean response time `Δ(wlentime + rlentime) /
/// Δ(reads + writes)` (Little's law).
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KstatIo {
    pub nread: u64,
    pub nwritten: u64,
    pub reads: u32,
    pub writes: u32,
    pub wtime: Hrtime,
    pub wlentime: Hrtime,
    pub wlastupdate: Hrtime,
    pub rtime: Hrtime,
    pub rlentime: Hrtime,
    pub rlastupdate: Hrtime,
    pub wcnt: u32,
    pub rcnt: u32,
}

const _: () = {
    assert!(offset_of!(KstatIo, nread) == 0);
    assert!(offset_of!(KstatIo, nwritten) == 8);
    assert!(offset_of!(KstatIo, reads) == 16);
    assert!(offset_of!(KstatIo, writes) == 20);
    assert!(offset_of!(KstatIo, wtime) == 24);
    assert!(offset_of!(KstatIo, wlentime) == 32);
    assert!(offset_of!(KstatIo, wlastupdate) == 40);
    assert!(offset_of!(KstatIo, rtime) == 48);
    assert!(offset_of!(KstatIo, rlentime) == 56);
    assert!(offset_of!(KstatIo, rlastupdate) == 64);
    assert!(offset_of!(KstatIo, wcnt) == 72);
    assert!(offset_of!(KstatIo, rcnt) == 76);
    assert!(align_of::<KstatIo>() == 8);
};
record_impl!(KstatIo, 80);

impl KstatIo {
    /// `(statistic name, value)` pairs in field order, named as `kstat -p` names them.
    pub fn statistics(&self) -> [(&'static str, KstatValue); 12] {
        use KstatValue::{Int64 as T, Uint32 as C, Uint64 as B};
        [
            ("nread", B(self.nread)),
            ("nwritten", B(self.nwritten)),
            ("reads", C(self.reads)),
            ("writes", C(self.writes)),
            ("wtime", T(self.wtime)),
            ("wlentime", T(self.wlentime)),
            ("wlastupdate", T(self.wlastupdate)),
            ("rtime", T(self.rtime)),
            ("rlentime", T(self.rlentime)),
            ("rlastupdate", T(self.rlastupdate)),
            ("wcnt", C(self.wcnt)),
            ("rcnt", C(self.rcnt)),
        ]
    }
    fn write_image(&self, o: &mut [u8]) {
        put(o, 0, &self.nread.to_le_bytes());
        put(o, 8, &self.nwritten.to_le_bytes());
        put(o, 16, &self.reads.to_le_bytes());
        put(o, 20, &self.writes.to_le_bytes());
        put(o, 24, &self.wtime.to_le_bytes());
        put(o, 32, &self.wlentime.to_le_bytes());
        put(o, 40, &self.wlastupdate.to_le_bytes());
        put(o, 48, &self.rtime.to_le_bytes());
        put(o, 56, &self.rlentime.to_le_bytes());
        put(o, 64, &self.rlastupdate.to_le_bytes());
        put(o, 72, &self.wcnt.to_le_bytes());
        put(o, 76, &self.rcnt.to_le_bytes());
    }
    fn read_image(b: &[u8]) -> Self {
        KstatIo {
            nread: get_u64(b, 0),
            nwritten: get_u64(b, 8),
            reads: get_u32(b, 16),
            writes: get_u32(b, 20),
            wtime: get_i64(b, 24),
            wlentime: get_i64(b, 32),
            wlastupdate: get_i64(b, 40),
            rtime: get_i64(b, 48),
            rlentime: get_i64(b, 56),
            rlastupdate: get_i64(b, 64),
            wcnt: get_u32(b, 72),
            rcnt: get_u32(b, 76),
        }
    }
}

// ---------------------------------------------------------------------------------------
// KSTAT_TYPE_TIMER
// ---------------------------------------------------------------------------------------

/// `kstat_timer_t`: counts and times one kind of event (start ... stop).
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KstatTimer {
    pub name: [u8; KSTAT_STRLEN],
    pub resv: u8,
    pub num_events: u64,
    /// Sum of all event durations.
    pub elapsed_time: Hrtime,
    /// Shortest event duration.
    pub min_time: Hrtime,
    /// Longest event duration.
    pub max_time: Hrtime,
    /// When the last event started.
    pub start_time: Hrtime,
    /// When the last event stopped.
    pub stop_time: Hrtime,
}

const _: () = {
    assert!(offset_of!(KstatTimer, name) == 0);
    assert!(offset_of!(KstatTimer, resv) == 31);
    assert!(offset_of!(KstatTimer, num_events) == 32);
    assert!(offset_of!(KstatTimer, elapsed_time) == 40);
    assert!(offset_of!(KstatTimer, min_time) == 48);
    assert!(offset_of!(KstatTimer, max_time) == 56);
    assert!(offset_of!(KstatTimer, start_time) == 64);
    assert!(offset_of!(KstatTimer, stop_time) == 72);
    assert!(align_of::<KstatTimer>() == 8);
};
record_impl!(KstatTimer, 80);

impl KstatTimer {
    /// `kstat_timer_init`: a zeroed timer called `name` (truncated to 30 bytes).
    pub fn init(name: &str) -> Self {
        let mut t = KstatTimer {
            name: [0; KSTAT_STRLEN],
            resv: 0,
            num_events: 0,
            elapsed_time: 0,
            min_time: 0,
            max_time: 0,
            start_time: 0,
            stop_time: 0,
        };
        kstat_set_string(&mut t.name, name);
        t
    }
    pub fn name(&self) -> &str {
        kstat_str(&self.name)
    }
    /// `(field, value)` pairs for the numeric fields, in field order.
    pub fn statistics(&self) -> [(&'static str, KstatValue); 6] {
        [
            ("num_events", KstatValue::Uint64(self.num_events)),
            ("elapsed_time", KstatValue::Int64(self.elapsed_time)),
            ("min_time", KstatValue::Int64(self.min_time)),
            ("max_time", KstatValue::Int64(self.max_time)),
            ("start_time", KstatValue::Int64(self.start_time)),
            ("stop_time", KstatValue::Int64(self.stop_time)),
        ]
    }
    fn write_image(&self, o: &mut [u8]) {
        put(o, 0, &self.name);
        o[31] = self.resv;
        put(o, 32, &self.num_events.to_le_bytes());
        put(o, 40, &self.elapsed_time.to_le_bytes());
        put(o, 48, &self.min_time.to_le_bytes());
        put(o, 56, &self.max_time.to_le_bytes());
        put(o, 64, &self.start_time.to_le_bytes());
        put(o, 72, &self.stop_time.to_le_bytes());
    }
    fn read_image(b: &[u8]) -> Self {
        KstatTimer {
            name: get(b, 0),
            resv: b[31],
            num_events: get_u64(b, 32),
            elapsed_time: get_i64(b, 40),
            min_time: get_i64(b, 48),
            max_time: get_i64(b, 56),
            start_time: get_i64(b, 64),
            stop_time: get_i64(b, 72),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Selecting statistics: `kstat -p module:instance:name:statistic`
// ---------------------------------------------------------------------------------------

/// Why a `m:i:n:s` specifier was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterError {
    /// More than four `:`-separated fields.
    TooManyFields,
}

/// A `module:instance:name:statistic` selector, as `kstat -p` takes on its command line.
///
/// Each field is a shell-style pattern (`*` any run of bytes, `?` any one byte, everything
/// else literal). An empty field, or a field left off the end (`unix:0`), matches
/// anything. The instance is matched against its decimal text, so `1*` selects 1, 10, 11...
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KstatFilter<'a> {
    pub module: &'a str,
    pub instance: &'a str,
    pub name: &'a str,
    pub statistic: &'a str,
}

impl<'a> KstatFilter<'a> {
    /// Matches every statistic of every kstat.
    pub const ALL: KstatFilter<'static> = KstatFilter { module: "", instance: "", name: "", statistic: "" };

    /// Parses `module:instance:name:statistic`; fewer fields leave the rest as wildcards.
    pub fn parse(spec: &'a str) -> Result<Self, FilterError> {
        let mut f = KstatFilter { module: "", instance: "", name: "", statistic: "" };
        let mut fields = spec.split(':');
        let slots = [&mut f.module, &mut f.instance, &mut f.name, &mut f.statistic];
        for slot in slots {
            match fields.next() {
                Some(s) => *slot = s,
                None => break,
            }
        }
        if fields.next().is_some() {
            return Err(FilterError::TooManyFields);
        }
        Ok(f)
    }

    /// Does the kstat `module:instance:name` pass the first three fields?
    pub fn matches_kstat(&self, module: &str, instance: i32, name: &str) -> bool {
        let mut buf = [0u8; 11];
        field_matches(self.module, module.as_bytes())
            && field_matches(self.instance, fmt_i32(instance, &mut buf))
            && field_matches(self.name, name.as_bytes())
    }

    /// [`Self::matches_kstat`] applied to a chain entry.
    pub fn matches_header(&self, h: &KstatHeader) -> bool {
        self.matches_kstat(h.module(), h.ks_instance, h.name())
    }

    /// Does a statistic called `statistic` pass the fourth field?
    pub fn matches_statistic(&self, statistic: &str) -> bool {
        field_matches(self.statistic, statistic.as_bytes())
    }

    /// All four fields at once.
    pub fn matches(&self, module: &str, instance: i32, name: &str, statistic: &str) -> bool {
        self.matches_kstat(module, instance, name) && self.matches_statistic(statistic)
    }
}

fn field_matches(pattern: &str, text: &[u8]) -> bool {
    pattern.is_empty() || glob_match(pattern.as_bytes(), text)
}

/// Decimal text of `v` in `buf` (11 bytes hold any i32).
fn fmt_i32(v: i32, buf: &mut [u8; 11]) -> &[u8] {
    let mut n = v.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// Shell-style match of the whole of `text` against `pattern`: `*` matches any run of
/// bytes (including none), `?` exactly one byte, every other byte itself.
///
/// Linear backtracking to the last `*` only, so the cost is O(|pattern| × |text|) at worst
/// and there is no recursion.
pub fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None; // (pattern index after '*', text index)
    while t < text.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p + 1, t));
                p += 1;
            }
            Some(&c) if c == b'?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    #[test]
    fn read_info_is_kcid_then_header() {
        let mut h = KstatHeader::ZERO;
        h.ks_kid = 7;
        h.ks_data_size = 80;
        let i = KstatReadInfo { kcid: 42, header: h };
        let b = i.to_bytes();
        assert_eq!(&b[0..8], &42i64.to_le_bytes());
        assert_eq!(&b[8..], &h.to_bytes()[..]);
        assert_eq!(KstatReadInfo::from_bytes(&b), i);
    }

    use super::*;

    #[test]
    fn sizes_match_solaris_lp64() {
        assert_eq!(size_of::<KstatNamed>(), 48);
        assert_eq!(size_of::<KstatIntr>(), 20);
        assert_eq!(size_of::<KstatIo>(), 80);
        assert_eq!(size_of::<KstatTimer>(), 80);
        assert_eq!(size_of::<KstatHeader>(), 136);
    }

    #[test]
    fn names_truncate_to_30_bytes_at_char_boundary() {
        let mut f = [0xffu8; KSTAT_STRLEN];
        assert!(!kstat_set_string(&mut f, "cpu"));
        assert_eq!(kstat_str(&f), "cpu");
        assert!(f[3..].iter().all(|&b| b == 0));
        let long = "a".repeat(40);
        assert!(kstat_set_string(&mut f, &long));
        assert_eq!(kstat_str(&f).len(), 30);
        assert_eq!(f[30], 0);
        // 29 ASCII bytes then a 2-byte char: the char does not fit in 30 and is dropped.
        let s = ascii29_then_e_acute();
        assert!(kstat_set_string(&mut f, &s));
        assert_eq!(kstat_str(&f), &s[..29]);
    }

    fn ascii29_then_e_acute() -> std::string::String {
        let mut s = "b".repeat(29);
        s.push('é');
        s.push('x');
        s
    }

    #[test]
    fn kstat_str_stops_at_nul_and_bad_utf8() {
        assert_eq!(kstat_str(b"ab\0cd"), "ab");
        assert_eq!(kstat_str(b"ab\xffcd"), "ab");
        assert_eq!(kstat_str(b"abcd"), "abcd");
        assert_eq!(kstat_str(b""), "");
    }

    #[test]
    fn named_values_encode_as_the_union() {
        let n = KstatNamed::new("ticks", KstatValue::Uint64(0x0102_0304_0506_0708));
        let b = n.to_bytes();
        assert_eq!(&b[..6], b"ticks\0");
        assert_eq!(b[31], KSTAT_DATA_UINT64);
        assert_eq!(&b[32..40], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert!(b[40..].iter().all(|&x| x == 0));
        assert_eq!(KstatNamed::from_bytes(&b), n);
        assert_eq!(n.value(), Some(KstatValue::Uint64(0x0102_0304_0506_0708)));

        let m = KstatNamed::new("delta", KstatValue::Int32(-2));
        assert_eq!(&m.to_bytes()[32..36], &(-2i32).to_le_bytes());
        assert_eq!(m.value(), Some(KstatValue::Int32(-2)));
    }

    #[test]
    fn strings_are_inline_and_nul_terminated() {
        let v = KstatValue::string("0123456789abcdefXYZ");
        let KstatValue::String(c) = v else { panic!() };
        assert_eq!(&c[..15], b"0123456789abcde");
        assert_eq!(c[15], 0);
        assert_eq!(std::format!("{v}"), "0123456789abcde");
        // A hand-built value with no terminator still encodes with one.
        assert_eq!(KstatValue::String([b'z'; 16]).encode()[15], 0);
        let c16 = KstatValue::chars("0123456789abcdefXYZ");
        assert_eq!(std::format!("{c16}"), "0123456789abcdef");
    }

    #[test]
    fn unsupported_data_types_decode_to_none() {
        for t in [5u8, 6, 7, 8, 10, 255] {
            assert_eq!(KstatValue::zero(t), None);
        }
        for t in [0u8, 1, 2, 3, 4, 9] {
            assert_eq!(KstatValue::zero(t).map(|v| v.data_type()), Some(t));
        }
    }

    #[test]
    fn short_buffers_are_refused_not_indexed() {
        let io = KstatIo::default();
        let mut small = [0u8; 79];
        assert_eq!(io.encode_into(&mut small), None);
        assert_eq!(KstatIo::decode(&small), None);
        assert_eq!(KstatHeader::decode(&[0u8; 10]), None);
        assert_eq!(encode_records(&[io, io], &mut [0u8; 100]), None);
        let mut big = [0u8; 160];
        assert_eq!(encode_records(&[io, io], &mut big), Some(160));
        assert_eq!(records::<KstatIo>(&big[..159]).count(), 1);
    }

    #[test]
    fn header_image_places_fields_at_solaris_offsets() {
        let mut h = KstatHeader::ZERO;
        h.ks_kid = 7;
        h.ks_instance = -3;
        kstat_set_string(&mut h.ks_module, "sd");
        kstat_set_string(&mut h.ks_name, "sd0");
        kstat_set_string(&mut h.ks_class, "disk");
        h.ks_type = KSTAT_TYPE_IO;
        h.ks_ndata = 1;
        h.ks_data_size = 80;
        h.ks_snaptime = 99;
        let b = h.to_bytes();
        assert_eq!(&b[8..16], &7i64.to_le_bytes());
        assert_eq!(&b[16..18], b"sd");
        assert_eq!(&b[48..52], &(-3i32).to_le_bytes());
        assert_eq!(&b[52..55], b"sd0");
        assert_eq!(b[83], KSTAT_TYPE_IO);
        assert_eq!(&b[84..88], b"disk");
        assert_eq!(&b[128..136], &99i64.to_le_bytes());
        assert_eq!(KstatHeader::from_bytes(&b), h);
        assert_eq!((h.module(), h.name(), h.class()), ("sd", "sd0", "disk"));
    }

    #[test]
    fn glob() {
        assert!(glob_match(b"", b""));
        assert!(!glob_match(b"", b"a"));
        assert!(glob_match(b"*", b""));
        assert!(glob_match(b"*", b"anything"));
        assert!(glob_match(b"cpu_stat?", b"cpu_stat0"));
        assert!(!glob_match(b"cpu_stat?", b"cpu_stat10"));
        assert!(glob_match(b"*stat*", b"cpu_stat10"));
        assert!(glob_match(b"a*b*c", b"aXXbYYbZc"));
        assert!(!glob_match(b"a*b*c", b"aXXbYYbZ"));
        assert!(glob_match(b"**a", b"a"));
        assert!(glob_match(b"*a*a*a*a*b", b"aaaaaaaaaaaaaaaaaaaaaaaaab"));
        assert!(!glob_match(b"*a*a*a*a*b", b"aaaaaaaaaaaaaaaaaaaaaaaaaa"));
    }

    #[test]
    fn filters() {
        let f = KstatFilter::parse("unix:0:system_misc:nproc").unwrap();
        assert!(f.matches("unix", 0, "system_misc", "nproc"));
        assert!(!f.matches("unix", 1, "system_misc", "nproc"));
        assert!(!f.matches("unix", 0, "system_misc", "ncpus"));

        let f = KstatFilter::parse("sd::sd*:").unwrap();
        assert!(f.matches_kstat("sd", 12, "sd12"));
        assert!(f.matches_statistic("anything"));
        assert!(!f.matches_kstat("ssd", 12, "sd12"));

        let f = KstatFilter::parse("cpu_stat:1*").unwrap();
        assert_eq!((f.name, f.statistic), ("", ""));
        assert!(f.matches_kstat("cpu_stat", 1, "x"));
        assert!(f.matches_kstat("cpu_stat", 17, "x"));
        assert!(!f.matches_kstat("cpu_stat", 2, "x"));
        assert!(KstatFilter::parse(":-1").unwrap().matches_kstat("m", -1, "n"));
        assert!(KstatFilter::parse("::").unwrap().matches("a", i32::MIN, "b", "c"));
        assert_eq!(KstatFilter::parse("a:b:c:d:e"), Err(FilterError::TooManyFields));
        assert_eq!(KstatFilter::parse("").unwrap(), KstatFilter::ALL);

        let mut h = KstatHeader::ZERO;
        kstat_set_string(&mut h.ks_module, "sched");
        h.ks_instance = 3;
        kstat_set_string(&mut h.ks_name, "runq");
        assert!(KstatFilter::parse("sched:3:runq").unwrap().matches_header(&h));
    }

    #[test]
    fn fmt_i32_extremes() {
        let mut b = [0u8; 11];
        assert_eq!(fmt_i32(i32::MIN, &mut b), b"-2147483648");
        assert_eq!(fmt_i32(0, &mut b), b"0");
        assert_eq!(fmt_i32(i32::MAX, &mut b), b"2147483647");
    }

    #[test]
    fn statistics_lists() {
        let io = KstatIo { wcnt: 2, nread: 5, ..Default::default() };
        let s = io.statistics();
        assert_eq!(s[0], ("nread", KstatValue::Uint64(5)));
        assert_eq!(s[10], ("wcnt", KstatValue::Uint32(2)));
        let i = KstatIntr { intrs: [1, 2, 3, 4, 5] };
        assert_eq!(i.statistics()[4], ("multiple_service", KstatValue::Uint32(5)));
        assert_eq!(KstatTimer::init("t").statistics()[0].0, "num_events");
    }
}
