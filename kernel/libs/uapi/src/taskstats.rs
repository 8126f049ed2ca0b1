//! `struct taskstats` and the numbers of the TASKSTATS generic-netlink family.
//!
//! Linux's `<linux/taskstats.h>` is the reference: the commands, attribute types and the
//! structure's layout are Linux's, byte for byte, so a Linux `getdelays` reads Tally's
//! records. (The structure itself is defined further down this file.)

/// The family's name as the controller resolves it, and its version.
pub const TASKSTATS_GENL_NAME: &str = "TASKSTATS";
pub const TASKSTATS_GENL_VERSION: u8 = 1;
/// Length of `ac_comm`.
pub const TS_COMM_LEN: usize = 32;

/// Commands: GET (user → kernel, answered by a NEW), NEW (kernel → user).
pub const TASKSTATS_CMD_UNSPEC: u8 = 0;
pub const TASKSTATS_CMD_GET: u8 = 1;
pub const TASKSTATS_CMD_NEW: u8 = 2;

/// Attribute types of replies and exit messages.
pub const TASKSTATS_TYPE_UNSPEC: u16 = 0;
/// `u32` pid.
pub const TASKSTATS_TYPE_PID: u16 = 1;
/// `u32` tgid.
pub const TASKSTATS_TYPE_TGID: u16 = 2;
/// A `struct taskstats`.
pub const TASKSTATS_TYPE_STATS: u16 = 3;
/// Nested: PID then STATS.
pub const TASKSTATS_TYPE_AGGR_PID: u16 = 4;
/// Nested: TGID then STATS.
pub const TASKSTATS_TYPE_AGGR_TGID: u16 = 5;
pub const TASKSTATS_TYPE_NULL: u16 = 6;
/// Tally's extension, by the second way of extending taskstats that Linux's
/// `Documentation/accounting/taskstats.rst` names (an attribute of its own): the microstate
/// clocks as `[u64; NR_MICROSTATES]` nanoseconds in `msa()` order, inside each
/// AGGR_PID/AGGR_TGID nest after STATS. Linux does not use this number, so its readers skip
/// the attribute.
pub const TASKSTATS_TYPE_MSA: u16 = 0x4d; // 'M'

/// Attribute types of commands.
pub const TASKSTATS_CMD_ATTR_UNSPEC: u16 = 0;
/// `u32` pid to GET.
pub const TASKSTATS_CMD_ATTR_PID: u16 = 1;
/// `u32` tgid to GET.
pub const TASKSTATS_CMD_ATTR_TGID: u16 = 2;
/// A cpulist string ("1-3,5,7-8", NUL-terminated or not).
pub const TASKSTATS_CMD_ATTR_REGISTER_CPUMASK: u16 = 3;
pub const TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK: u16 = 4;

/// Longest cpumask string accepted: Linux's `100 + 6 * NR_CPUS`, with Tally's NR_CPUS of 64.
pub const TASKSTATS_CPUMASK_MAXLEN: usize = 100 + 6 * 64;

/// Accounting flags (`ac_flag`, `<linux/acct.h>`), shared with process accounting's
/// records and defined there. In taskstats, [`AGROUP`] marks a thread group's record (the
/// last task of the process, or a tgid query).
pub use crate::acct::{ACOMPAT, ACORE, AFORK, AGROUP, ASU, AXSIG};

// ---------------------------------------------------------------------------------------
// struct taskstats
// ---------------------------------------------------------------------------------------

/// The version of [`Taskstats`] Tally sends: Linux's **17**.
///
/// The header installed on the build machines stops at version 13 (416 bytes), which is the
/// byte-level reference checked below. Linux then grew the structure four more times, and
/// Tally follows it exactly:
///
/// * **v14** appended `irq_count` and `irq_delay_total`;
/// * **v15** inserted `*_delay_max`/`*_delay_min` pairs in the *middle* of the structure —
///   which moved every later field and broke every reader compiled against v14 (the rule
///   "only append" exists for exactly this reason);
/// * **v16** repaired that by moving the pairs to the end, in the order cpu, blkio, swapin,
///   freepages, thrashing, compact, wpcopy, irq (max before min) — so v16 is v14 plus a tail,
///   and v15 is a version no reader should trust;
/// * **v17** appended the eight `*_delay_max_ts`: the wall-clock time each maximum was seen.
///
/// A reader built against an older header reads its prefix and ignores the rest; a newer
/// reader given an older record must treat the missing tail as zero
/// ([`Taskstats::from_bytes`] does).
pub const TASKSTATS_VERSION: u16 = 17;

/// Size of the version-13 structure, the layout of `/usr/include/linux/taskstats.h`.
pub const TASKSTATS_V13_SIZE: usize = 416;

/// `struct __kernel_timespec`: the 64-bit-safe time Linux uses in new ABIs.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KernelTimespec {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

impl KernelTimespec {
    pub const ZERO: KernelTimespec = KernelTimespec { tv_sec: 0, tv_nsec: 0 };

    /// Nanoseconds since 1970 as a timespec (`tv_nsec` in `0..1e9`).
    pub const fn from_unix_ns(ns: u64) -> Self {
        KernelTimespec { tv_sec: (ns / 1_000_000_000) as i64, tv_nsec: (ns % 1_000_000_000) as i64 }
    }
}

/// `struct taskstats`, version [`TASKSTATS_VERSION`], field for field and byte for byte
/// Linux's (x86_64, little-endian).
///
/// The C structure has *implicit* padding in five places (after `version`, after `ac_nice`
/// before the `aligned(8)` delay block, after `ac_pad`, after `ac_btime` and after
/// `ac_tgid`). Here each hole is an explicit `_padN` field, so the Rust struct has no
/// implicit padding at all: every byte of the image is some field's, and a record built from
/// [`Taskstats::zeroed`] can never leak stale kernel memory to user space. The offset of
/// every field is pinned by a compile-time assertion below.
///
/// Units follow Linux: delays in ns, `ac_etime`/`ac_utime`/`ac_stime` in µs, `coremem` and
/// `virtmem` in MB·µs, `hiwater_*` in KB, `ac_btime` in seconds since 1970. (How Tally
/// fills each field is the `tally-taskstats` crate's documentation.)
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taskstats {
    // ---- offset 0: common fields
    /// Always [`TASKSTATS_VERSION`] in a record Tally sends.
    pub version: u16,
    pub _pad0: [u8; 2],
    /// The wait status (as `wait4` reports it).
    pub ac_exitcode: u32,
    /// [`AFORK`] | [`ASU`] | [`ACOMPAT`] | [`ACORE`] | [`AXSIG`] | [`AGROUP`].
    pub ac_flag: u8,
    /// `task_nice()` stored in a `u8` (so nice -5 reads 251).
    pub ac_nice: u8,
    pub _pad1: [u8; 6],

    // ---- offset 16: delay accounting (version 1)
    /// Run-queue waits: how many, and their total in ns.
    pub cpu_count: u64,
    pub cpu_delay_total: u64,
    /// Waits for synchronous block I/O.
    pub blkio_count: u64,
    pub blkio_delay_total: u64,
    /// Waits for a page from swap.
    pub swapin_count: u64,
    pub swapin_delay_total: u64,
    /// Time on the CPU, ns: "real" may be corrected for time stolen by a hypervisor,
    /// "virtual" is what the kernel saw.
    pub cpu_run_real_total: u64,
    pub cpu_run_virtual_total: u64,

    // ---- offset 80: basic accounting
    /// Command name, NUL-padded.
    pub ac_comm: [u8; TS_COMM_LEN],
    /// Scheduling policy (SCHED_NORMAL 0, FIFO 1, RR 2, BATCH 3).
    pub ac_sched: u8,
    pub ac_pad: [u8; 3],
    pub _pad2: [u8; 4],
    pub ac_uid: u32,
    pub ac_gid: u32,
    pub ac_pid: u32,
    pub ac_ppid: u32,
    /// Begin time, seconds since 1970 (a `u32`: wraps in 2106; see `ac_btime64`).
    pub ac_btime: u32,
    pub _pad3: [u8; 4],
    /// Elapsed (wall) time, µs.
    pub ac_etime: u64,
    /// User and system CPU time, µs.
    pub ac_utime: u64,
    pub ac_stime: u64,
    pub ac_minflt: u64,
    pub ac_majflt: u64,

    // ---- offset 184: extended accounting
    /// RSS and virtual size integrated over CPU time, MB·µs.
    pub coremem: u64,
    pub virtmem: u64,
    /// High-water marks, KB.
    pub hiwater_rss: u64,
    pub hiwater_vm: u64,
    /// Bytes passed to `read`/`write`, and the number of those calls.
    pub read_char: u64,
    pub write_char: u64,
    pub read_syscalls: u64,
    pub write_syscalls: u64,
    /// Bytes actually read from / written to storage.
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub cancelled_write_bytes: u64,
    /// Voluntary and involuntary context switches.
    pub nvcsw: u64,
    pub nivcsw: u64,
    /// CPU times scaled by the CPU's frequency.
    pub ac_utimescaled: u64,
    pub ac_stimescaled: u64,
    pub cpu_scaled_run_real_total: u64,
    /// Waits for memory reclaim, and for thrashing pages.
    pub freepages_count: u64,
    pub freepages_delay_total: u64,
    pub thrashing_count: u64,
    pub thrashing_delay_total: u64,
    /// v10: begin time as 64-bit seconds since 1970.
    pub ac_btime64: u64,
    /// v11: waits for memory compaction.
    pub compact_count: u64,
    pub compact_delay_total: u64,
    /// v12: the thread group, its wall time so far (µs), the executable's device and inode.
    pub ac_tgid: u32,
    pub _pad4: [u8; 4],
    pub ac_tgetime: u64,
    pub ac_exe_dev: u64,
    pub ac_exe_inode: u64,
    /// v13: waits for a write-protect copy (copy-on-write).
    pub wpcopy_count: u64,
    pub wpcopy_delay_total: u64,

    // ---- offset 416: beyond the v13 header
    /// v14: time stolen by interrupts.
    pub irq_count: u64,
    pub irq_delay_total: u64,
    /// v16: the longest and shortest single delay of each kind, ns.
    pub cpu_delay_max: u64,
    pub cpu_delay_min: u64,
    pub blkio_delay_max: u64,
    pub blkio_delay_min: u64,
    pub swapin_delay_max: u64,
    pub swapin_delay_min: u64,
    pub freepages_delay_max: u64,
    pub freepages_delay_min: u64,
    pub thrashing_delay_max: u64,
    pub thrashing_delay_min: u64,
    pub compact_delay_max: u64,
    pub compact_delay_min: u64,
    pub wpcopy_delay_max: u64,
    pub wpcopy_delay_min: u64,
    pub irq_delay_max: u64,
    pub irq_delay_min: u64,
    /// v17: wall-clock time at which each maximum was seen (zero: no delay yet).
    pub cpu_delay_max_ts: KernelTimespec,
    pub blkio_delay_max_ts: KernelTimespec,
    pub swapin_delay_max_ts: KernelTimespec,
    pub freepages_delay_max_ts: KernelTimespec,
    pub thrashing_delay_max_ts: KernelTimespec,
    pub compact_delay_max_ts: KernelTimespec,
    pub wpcopy_delay_max_ts: KernelTimespec,
    pub irq_delay_max_ts: KernelTimespec,
}

/// One fixed-size little-endian field of the image.
trait Wire: Sized {
    const LEN: usize;
    fn put(&self, out: &mut [u8]);
    fn get(b: &[u8]) -> Self;
}

macro_rules! wire_int {
    ($($t:ty),*) => {$(
        impl Wire for $t {
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
wire_int!(u16, u32, u64, i64);

impl Wire for u8 {
    const LEN: usize = 1;
    fn put(&self, out: &mut [u8]) {
        out[0] = *self;
    }
    fn get(b: &[u8]) -> Self {
        b[0]
    }
}

impl<const N: usize> Wire for [u8; N] {
    const LEN: usize = N;
    fn put(&self, out: &mut [u8]) {
        out[..N].copy_from_slice(self);
    }
    fn get(b: &[u8]) -> Self {
        let mut a = [0u8; N];
        a.copy_from_slice(&b[..N]);
        a
    }
}

impl Wire for KernelTimespec {
    const LEN: usize = 16;
    fn put(&self, out: &mut [u8]) {
        self.tv_sec.put(&mut out[0..8]);
        self.tv_nsec.put(&mut out[8..16]);
    }
    fn get(b: &[u8]) -> Self {
        KernelTimespec { tv_sec: i64::get(&b[0..8]), tv_nsec: i64::get(&b[8..16]) }
    }
}

/// The layout table: every field with its byte offset, written once. From it come the
/// compile-time checks (`offset_of!` must agree with each number, each field must end where
/// the next begins, the last must end at `SIZE`) and the field-by-field encoder and decoder.
/// The numbers for v13 are those `offsetof` prints for `/usr/include/linux/taskstats.h`.
macro_rules! taskstats_layout {
    ($($off:literal => $field:ident: $ty:ty),* $(,)?) => {
        $( const _: () = assert!(core::mem::offset_of!(Taskstats, $field) == $off); )*

        /// (offset, length) of every field in declaration order, for the no-gap check.
        const FIELD_SPANS: &[(usize, usize)] = &[$(($off, <$ty as Wire>::LEN)),*];

        impl Taskstats {
            fn encode(&self, out: &mut [u8; Taskstats::SIZE]) {
                $( Wire::put(&self.$field, &mut out[$off..$off + <$ty as Wire>::LEN]); )*
            }

            fn decode(b: &[u8; Taskstats::SIZE]) -> Taskstats {
                Taskstats { $( $field: <$ty as Wire>::get(&b[$off..$off + <$ty as Wire>::LEN]), )* }
            }
        }
    };
}

taskstats_layout! {
      0 => version: u16,
      2 => _pad0: [u8; 2],
      4 => ac_exitcode: u32,
      8 => ac_flag: u8,
      9 => ac_nice: u8,
     10 => _pad1: [u8; 6],
     16 => cpu_count: u64,
     24 => cpu_delay_total: u64,
     32 => blkio_count: u64,
     40 => blkio_delay_total: u64,
     48 => swapin_count: u64,
     56 => swapin_delay_total: u64,
     64 => cpu_run_real_total: u64,
     72 => cpu_run_virtual_total: u64,
     80 => ac_comm: [u8; TS_COMM_LEN],
    112 => ac_sched: u8,
    113 => ac_pad: [u8; 3],
    116 => _pad2: [u8; 4],
    120 => ac_uid: u32,
    124 => ac_gid: u32,
    128 => ac_pid: u32,
    132 => ac_ppid: u32,
    136 => ac_btime: u32,
    140 => _pad3: [u8; 4],
    144 => ac_etime: u64,
    152 => ac_utime: u64,
    160 => ac_stime: u64,
    168 => ac_minflt: u64,
    176 => ac_majflt: u64,
    184 => coremem: u64,
    192 => virtmem: u64,
    200 => hiwater_rss: u64,
    208 => hiwater_vm: u64,
    216 => read_char: u64,
    224 => write_char: u64,
    232 => read_syscalls: u64,
    240 => write_syscalls: u64,
    248 => read_bytes: u64,
    256 => write_bytes: u64,
    264 => cancelled_write_bytes: u64,
    272 => nvcsw: u64,
    280 => nivcsw: u64,
    288 => ac_utimescaled: u64,
    296 => ac_stimescaled: u64,
    304 => cpu_scaled_run_real_total: u64,
    312 => freepages_count: u64,
    320 => freepages_delay_total: u64,
    328 => thrashing_count: u64,
    336 => thrashing_delay_total: u64,
    344 => ac_btime64: u64,
    352 => compact_count: u64,
    360 => compact_delay_total: u64,
    368 => ac_tgid: u32,
    372 => _pad4: [u8; 4],
    376 => ac_tgetime: u64,
    384 => ac_exe_dev: u64,
    392 => ac_exe_inode: u64,
    400 => wpcopy_count: u64,
    408 => wpcopy_delay_total: u64,
    // v14
    416 => irq_count: u64,
    424 => irq_delay_total: u64,
    // v16
    432 => cpu_delay_max: u64,
    440 => cpu_delay_min: u64,
    448 => blkio_delay_max: u64,
    456 => blkio_delay_min: u64,
    464 => swapin_delay_max: u64,
    472 => swapin_delay_min: u64,
    480 => freepages_delay_max: u64,
    488 => freepages_delay_min: u64,
    496 => thrashing_delay_max: u64,
    504 => thrashing_delay_min: u64,
    512 => compact_delay_max: u64,
    520 => compact_delay_min: u64,
    528 => wpcopy_delay_max: u64,
    536 => wpcopy_delay_min: u64,
    544 => irq_delay_max: u64,
    552 => irq_delay_min: u64,
    // v17
    560 => cpu_delay_max_ts: KernelTimespec,
    576 => blkio_delay_max_ts: KernelTimespec,
    592 => swapin_delay_max_ts: KernelTimespec,
    608 => freepages_delay_max_ts: KernelTimespec,
    624 => thrashing_delay_max_ts: KernelTimespec,
    640 => compact_delay_max_ts: KernelTimespec,
    656 => wpcopy_delay_max_ts: KernelTimespec,
    672 => irq_delay_max_ts: KernelTimespec,
}

const _: () = assert!(Taskstats::SIZE == 688);
const _: () = assert!(core::mem::align_of::<Taskstats>() == 8);
const _: () = assert!(core::mem::offset_of!(Taskstats, irq_count) == TASKSTATS_V13_SIZE);
const _: () = assert!(core::mem::size_of::<KernelTimespec>() == 16);
// No gaps, no overlaps: each field ends where the next begins, and the last ends at SIZE —
// so the struct has no implicit padding and the image covers every byte.
const _: () = {
    let mut end = 0;
    let mut i = 0;
    while i < FIELD_SPANS.len() {
        assert!(FIELD_SPANS[i].0 == end);
        end += FIELD_SPANS[i].1;
        i += 1;
    }
    assert!(end == Taskstats::SIZE);
};

impl Taskstats {
    /// Size of the whole version-17 structure in bytes.
    pub const SIZE: usize = core::mem::size_of::<Taskstats>();

    /// Every field zero (`version` included: the filler sets it).
    pub const fn zeroed() -> Self {
        const Z: KernelTimespec = KernelTimespec::ZERO;
        Taskstats {
            version: 0,
            _pad0: [0; 2],
            ac_exitcode: 0,
            ac_flag: 0,
            ac_nice: 0,
            _pad1: [0; 6],
            cpu_count: 0,
            cpu_delay_total: 0,
            blkio_count: 0,
            blkio_delay_total: 0,
            swapin_count: 0,
            swapin_delay_total: 0,
            cpu_run_real_total: 0,
            cpu_run_virtual_total: 0,
            ac_comm: [0; TS_COMM_LEN],
            ac_sched: 0,
            ac_pad: [0; 3],
            _pad2: [0; 4],
            ac_uid: 0,
            ac_gid: 0,
            ac_pid: 0,
            ac_ppid: 0,
            ac_btime: 0,
            _pad3: [0; 4],
            ac_etime: 0,
            ac_utime: 0,
            ac_stime: 0,
            ac_minflt: 0,
            ac_majflt: 0,
            coremem: 0,
            virtmem: 0,
            hiwater_rss: 0,
            hiwater_vm: 0,
            read_char: 0,
            write_char: 0,
            read_syscalls: 0,
            write_syscalls: 0,
            read_bytes: 0,
            write_bytes: 0,
            cancelled_write_bytes: 0,
            nvcsw: 0,
            nivcsw: 0,
            ac_utimescaled: 0,
            ac_stimescaled: 0,
            cpu_scaled_run_real_total: 0,
            freepages_count: 0,
            freepages_delay_total: 0,
            thrashing_count: 0,
            thrashing_delay_total: 0,
            ac_btime64: 0,
            compact_count: 0,
            compact_delay_total: 0,
            ac_tgid: 0,
            _pad4: [0; 4],
            ac_tgetime: 0,
            ac_exe_dev: 0,
            ac_exe_inode: 0,
            wpcopy_count: 0,
            wpcopy_delay_total: 0,
            irq_count: 0,
            irq_delay_total: 0,
            cpu_delay_max: 0,
            cpu_delay_min: 0,
            blkio_delay_max: 0,
            blkio_delay_min: 0,
            swapin_delay_max: 0,
            swapin_delay_min: 0,
            freepages_delay_max: 0,
            freepages_delay_min: 0,
            thrashing_delay_max: 0,
            thrashing_delay_min: 0,
            compact_delay_max: 0,
            compact_delay_min: 0,
            wpcopy_delay_max: 0,
            wpcopy_delay_min: 0,
            irq_delay_max: 0,
            irq_delay_min: 0,
            cpu_delay_max_ts: Z,
            blkio_delay_max_ts: Z,
            swapin_delay_max_ts: Z,
            freepages_delay_max_ts: Z,
            thrashing_delay_max_ts: Z,
            compact_delay_max_ts: Z,
            wpcopy_delay_max_ts: Z,
            irq_delay_max_ts: Z,
        }
    }

    /// The little-endian image, exactly what a C program reads into a `struct taskstats`.
    pub fn to_bytes(&self) -> [u8; Taskstats::SIZE] {
        let mut out = [0u8; Taskstats::SIZE];
        self.encode(&mut out);
        out
    }

    /// The same image written into `out`, wherever the caller keeps it: the kernel writes it
    /// straight into the message that carries it, instead of returning it and copying.
    /// Every byte of `out` is written.
    pub fn write_to(&self, out: &mut [u8; Taskstats::SIZE]) {
        self.encode(out);
    }

    /// A record from its image. `b` may be a record of an older version: any prefix of at
    /// least [`TASKSTATS_V13_SIZE`] bytes is accepted and the fields it does not reach read
    /// zero (which is what "no delay of that kind recorded" looks like). Bytes beyond
    /// [`Taskstats::SIZE`] (a newer version's tail) are ignored. `None` if `b` is shorter
    /// than v13.
    pub fn from_bytes(b: &[u8]) -> Option<Taskstats> {
        if b.len() < TASKSTATS_V13_SIZE {
            return None;
        }
        let n = b.len().min(Taskstats::SIZE);
        let mut image = [0u8; Taskstats::SIZE];
        image[..n].copy_from_slice(&b[..n]);
        Some(Taskstats::decode(&image))
    }

    /// The command name up to its first NUL ("?" if it is not UTF-8).
    pub fn comm_str(&self) -> &str {
        let len = self.ac_comm.iter().position(|&c| c == 0).unwrap_or(TS_COMM_LEN);
        core::str::from_utf8(&self.ac_comm[..len]).unwrap_or("?")
    }
}

impl Default for Taskstats {
    fn default() -> Self {
        Taskstats::zeroed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record in which every field holds a different, recognisable value.
    fn sample() -> Taskstats {
        let mut comm = [0u8; TS_COMM_LEN];
        comm[..5].copy_from_slice(b"hello");
        let ts = |i: i64| KernelTimespec { tv_sec: 1_700_000_000 + i, tv_nsec: 1000 * i + 7 };
        Taskstats {
            version: TASKSTATS_VERSION,
            ac_exitcode: 0x0100,
            ac_flag: AFORK | AGROUP,
            ac_nice: (-5i32) as u8,
            cpu_count: 0x1111_2222_3333_4444,
            cpu_delay_total: 2,
            blkio_count: 3,
            blkio_delay_total: 4,
            ac_comm: comm,
            ac_sched: 1,
            ac_uid: 1000,
            ac_gid: 100,
            ac_pid: 42,
            ac_ppid: 1,
            ac_btime: 0xdead_beef,
            ac_etime: 5,
            ac_utime: 6,
            ac_stime: 7,
            coremem: 8,
            read_bytes: 9,
            nivcsw: 10,
            ac_btime64: 0xdead_beef,
            ac_tgid: 41,
            ac_tgetime: 11,
            wpcopy_count: 12,
            wpcopy_delay_total: 13,
            irq_count: 14,
            irq_delay_total: 15,
            cpu_delay_max: 16,
            cpu_delay_min: 17,
            irq_delay_min: 18,
            cpu_delay_max_ts: ts(1),
            blkio_delay_max_ts: ts(2),
            irq_delay_max_ts: ts(8),
            ..Taskstats::zeroed()
        }
    }

    fn u64_at(b: &[u8], off: usize) -> u64 {
        u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
    }

    #[test]
    fn round_trip() {
        let t = sample();
        let b = t.to_bytes();
        assert_eq!(b.len(), 688);
        assert_eq!(Taskstats::from_bytes(&b), Some(t));
        assert_eq!(Taskstats::from_bytes(&Taskstats::zeroed().to_bytes()), Some(Taskstats::zeroed()));
    }

    #[test]
    fn write_to_overwrites_every_byte_with_the_image() {
        let t = sample();
        let mut out = [0xa5u8; Taskstats::SIZE];
        t.write_to(&mut out);
        assert_eq!(out, t.to_bytes());
    }

    #[test]
    fn fields_sit_where_c_puts_them() {
        let b = sample().to_bytes();
        assert_eq!(&b[0..2], &17u16.to_le_bytes(), "version");
        assert_eq!(&b[2..4], &[0, 0], "implicit C padding is zero");
        assert_eq!(&b[4..8], &0x0100u32.to_le_bytes(), "ac_exitcode");
        assert_eq!(b[8], AFORK | AGROUP, "ac_flag");
        assert_eq!(b[9], 251, "ac_nice");
        assert_eq!(&b[10..16], &[0; 6]);
        assert_eq!(u64_at(&b, 16), 0x1111_2222_3333_4444, "cpu_count");
        assert_eq!(u64_at(&b, 32), 3, "blkio_count");
        assert_eq!(&b[80..86], b"hello\0", "ac_comm");
        assert_eq!(b[112], 1, "ac_sched");
        assert_eq!(&b[120..124], &1000u32.to_le_bytes(), "ac_uid");
        assert_eq!(&b[128..132], &42u32.to_le_bytes(), "ac_pid");
        assert_eq!(&b[136..140], &0xdead_beefu32.to_le_bytes(), "ac_btime");
        assert_eq!(u64_at(&b, 144), 5, "ac_etime");
        assert_eq!(u64_at(&b, 184), 8, "coremem");
        assert_eq!(u64_at(&b, 248), 9, "read_bytes");
        assert_eq!(u64_at(&b, 280), 10, "nivcsw");
        assert_eq!(u64_at(&b, 344), 0xdead_beef, "ac_btime64");
        assert_eq!(&b[368..372], &41u32.to_le_bytes(), "ac_tgid");
        assert_eq!(u64_at(&b, 376), 11, "ac_tgetime");
        assert_eq!(u64_at(&b, 400), 12, "wpcopy_count");
        assert_eq!(u64_at(&b, 408), 13, "wpcopy_delay_total: the last v13 field");
        assert_eq!(u64_at(&b, 416), 14, "v14 irq_count");
        assert_eq!(u64_at(&b, 424), 15, "v14 irq_delay_total");
        assert_eq!(u64_at(&b, 432), 16, "v16 cpu_delay_max");
        assert_eq!(u64_at(&b, 440), 17, "v16 cpu_delay_min");
        assert_eq!(u64_at(&b, 552), 18, "v16 irq_delay_min");
        assert_eq!(u64_at(&b, 560), 1_700_000_001, "v17 cpu_delay_max_ts.tv_sec");
        assert_eq!(u64_at(&b, 568), 1007, "v17 cpu_delay_max_ts.tv_nsec");
        assert_eq!(u64_at(&b, 576), 1_700_000_002, "v17 blkio_delay_max_ts");
        assert_eq!(u64_at(&b, 672), 1_700_000_008, "v17 irq_delay_max_ts.tv_sec");
        assert_eq!(u64_at(&b, 680), 8007, "v17 irq_delay_max_ts.tv_nsec");
    }

    #[test]
    fn every_byte_belongs_to_a_field() {
        // All-ones in every field, pads included, must give an all-ones image: no byte is
        // left to implicit padding and no two fields overlap (the decoder agrees).
        let mut ones = [0xffu8; Taskstats::SIZE];
        let t = Taskstats::from_bytes(&ones).unwrap();
        assert_eq!(t.version, u16::MAX);
        assert_eq!(t.irq_delay_max_ts.tv_nsec, -1);
        assert_eq!(t.to_bytes(), ones);
        ones[687] = 0;
        assert_eq!(
            Taskstats::from_bytes(&ones).unwrap().irq_delay_max_ts.tv_nsec,
            0x00ff_ffff_ffff_ffff,
            "last byte is the MSB"
        );
    }

    #[test]
    fn older_records_decode_with_a_zero_tail() {
        let t = sample();
        let b = t.to_bytes();
        let v13 = Taskstats::from_bytes(&b[..TASKSTATS_V13_SIZE]).unwrap();
        assert_eq!(v13.wpcopy_delay_total, 13);
        assert_eq!(v13.ac_comm, t.ac_comm);
        assert_eq!((v13.irq_count, v13.cpu_delay_max, v13.irq_delay_max_ts), (0, 0, KernelTimespec::ZERO));
        // A v14 record (432 bytes) keeps its irq pair and nothing after.
        let v14 = Taskstats::from_bytes(&b[..432]).unwrap();
        assert_eq!((v14.irq_count, v14.irq_delay_total, v14.cpu_delay_max), (14, 15, 0));
        assert_eq!(Taskstats::from_bytes(&b[..TASKSTATS_V13_SIZE - 1]), None);
        assert_eq!(Taskstats::from_bytes(&[]), None);
        // A newer kernel's longer record: the extra bytes are ignored.
        let mut longer = [0x5au8; Taskstats::SIZE + 24];
        longer[..Taskstats::SIZE].copy_from_slice(&b);
        assert_eq!(Taskstats::from_bytes(&longer), Some(t));
    }

    #[test]
    fn comm_stops_at_the_first_nul() {
        let mut t = sample();
        assert_eq!(t.comm_str(), "hello");
        t.ac_comm = [b'x'; TS_COMM_LEN];
        assert_eq!(t.comm_str().len(), TS_COMM_LEN);
        t.ac_comm[0] = 0xff;
        assert_eq!(t.comm_str(), "?");
    }

    #[test]
    fn timespec_from_unix_ns() {
        assert_eq!(
            KernelTimespec::from_unix_ns(1_700_000_000_123_456_789),
            KernelTimespec { tv_sec: 1_700_000_000, tv_nsec: 123_456_789 }
        );
    }
}
