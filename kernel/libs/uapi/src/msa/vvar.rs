//! The *vvar* pages: a thread's microstate clocks read in user space, without a system call.
//!
//! Linux reads the time of day without entering the kernel: the kernel maps a read-only
//! data page (the *vvar*) into every process and keeps the clock's last reading and its
//! TSC→ns conversion there, and a small library the kernel also maps (the *vDSO*) reads
//! the TSC and does the arithmetic. Tally does the same for `msa(MSA_THREAD)`: each
//! thread's microstate clock *lives* in a page that its process can read (the kernel
//! does not copy anything out; the scheduler's clock is that memory), and the runtime
//! (`tally_rt::msa`) adds the running span and converts to nanoseconds. There is no
//! vDSO: the reader is ordinary runtime code, compiled into every program.
//!
//! ```text
//!   VVAR_END                      the 2 MiB boundary below the stack's guard page
//!   VVAR_BASE + 4096 × (1 + i)    ThreadClock of the    the thread whose scheduler slot is `i`
//!                                 thread in slot i      (only this process's threads are mapped)
//!   VVAR_BASE = VVAR_END − 6 MiB  VvarHeader            one frame for the whole system
//! ```
//!
//! The area lies in the gigabyte whose page directory the stack already has, and starts on a
//! page table's boundary: the header and the pages of slots 0..511 share one page table, so a
//! process's clock pages usually cost it that one table (zeroed when the first page is
//! mapped, walked entry by entry at exit), not the page directory and pointer table an area
//! elsewhere would bring. A thread in a higher slot (after more than 510 tasks were alive
//! at once) costs its process a second table.
//!
//! Everything is read-only (and not executable) for user code: a write is a protection
//! fault and the process gets `SIGSEGV`.
//!
//! How a thread finds its page: [`VvarHeader::current`] names the slot of the thread on
//! the CPU. The kernel stores it at every switch-in, so on Tally's one CPU the word always
//! names the reader itself (no other thread runs while it reads). With several CPUs the
//! word would have to be per CPU, found the way Linux's `getcpu()` vDSO finds its CPU:
//! `RDTSCP` or `RDPID` return the CPU number the kernel put in `IA32_TSC_AUX`.
//!
//! How a read stays consistent: see [`ThreadClock::seq`]. The TSC→ns conversion is the
//! system call's own (`tally_clock::TscClock::ticks_to_ns` with [`VvarHeader::tsc_hz`]),
//! so a read at TSC `t` gives exactly what `msa(MSA_THREAD)` would report at `t`.

use super::{MicroState, NR_MICROSTATES};
use crate::layout::{USER_MMAP_BASE, USER_STACK_GUARD};

/// Bytes in a page.
pub const PAGE: u64 = 4096;
/// Thread slots with a page: the scheduler's slots, below the task limit (1024). (A thread
/// in a higher slot would have no page, and [`VvarHeader::current`] would say [`NO_PAGE`].)
pub const VVAR_THREADS: u32 = 1024;
/// How much address space one page table maps.
const PAGE_TABLE_REACH: u64 = 512 * PAGE;
/// First address above the vvar area: the 2 MiB boundary below the stack's guard page.
pub const VVAR_END: u64 = USER_STACK_GUARD & !(PAGE_TABLE_REACH - 1);
/// Where the header page is mapped in every user process (the thread pages follow): the
/// header and every slot's page, in whole page tables.
pub const VVAR_BASE: u64 = VVAR_END - (1 + VVAR_THREADS as u64).div_ceil(PAGE_TABLE_REACH / PAGE) * PAGE_TABLE_REACH;

const _: () = assert!(VVAR_BASE.is_multiple_of(PAGE_TABLE_REACH));
// Within the 1 GiB the stack's page directory maps, above the mmap area.
const _: () = assert!(VVAR_BASE >> 30 == (USER_STACK_GUARD >> 30) && USER_MMAP_BASE < VVAR_BASE);
const _: () = assert!(VVAR_END <= USER_STACK_GUARD);
/// [`VvarHeader::current`] for a thread without a page (a kernel thread, or no room).
pub const NO_PAGE: u32 = u32::MAX;
/// [`VvarHeader::magic`]: "TVV1", a vvar header of this layout.
pub const VVAR_MAGIC: u32 = u32::from_le_bytes(*b"TVV1");

/// The address of the page of the thread in scheduler slot `slot`.
pub const fn thread_page(slot: u32) -> u64 {
    VVAR_BASE + PAGE * (1 + slot as u64)
}

/// The header page at [`VVAR_BASE`].
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VvarHeader {
    /// [`VVAR_MAGIC`].
    pub magic: u32,
    /// The scheduler slot of the thread running now ([`NO_PAGE`] for one without a page):
    /// its clock is at [`thread_page`]`(current)`.
    pub current: u32,
    /// The TSC's frequency, the divisor of the conversion to nanoseconds.
    pub tsc_hz: u64,
    /// 1 if the kernel keeps microstate clocks (the `accounting` feature), 0 if not: then
    /// the thread pages stay zero and every clock reads 0, as the system call reports.
    pub accounting: u32,
    pub _reserved: u32,
}

/// The user-visible beginning of a thread's microstate clock (the kernel's
/// `tally_microstate::MsaClock` starts with these fields, at these offsets: checked at
/// compile time there; the kernel's fields after them are not part of the ABI).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadClock {
    /// Sequence count: one more at every change of the fields below. A reader reads it,
    /// the fields, and it again; if it moved (the reader was interrupted and the kernel
    /// charged a transition meanwhile — the interrupt itself is one), the fields may be a
    /// mix of two states and the reader starts over. The reader is the thread itself, which
    /// never runs while the kernel changes its clock, so a change is never seen half done.
    pub seq: u32,
    /// The microstate the thread is in ([`MicroState`] number).
    pub state: u32,
    /// TSC value of the last change of state.
    pub last_change: u64,
    /// TSC ticks spent in each state up to `last_change`.
    pub clocks: [u64; NR_MICROSTATES],
}

impl VvarHeader {
    /// The header's bytes as a structure (see [`ThreadClock::from_bytes`]).
    pub fn from_bytes(b: &[u8; core::mem::size_of::<VvarHeader>()]) -> VvarHeader {
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        VvarHeader {
            magic: u32_at(0),
            current: u32_at(4),
            tsc_hz: u64::from_le_bytes(core::array::from_fn(|k| b[8 + k])),
            accounting: u32_at(16),
            _reserved: u32_at(20),
        }
    }
}

impl ThreadClock {
    /// The clocks in TSC ticks at TSC `now`: the settled clocks plus the open span of the
    /// current state — `MsaClock::snapshot(now)` computed from the page. (A state number
    /// out of range adds nothing; a `now` before `last_change` adds nothing.)
    pub fn ticks_at(&self, now: u64) -> [u64; NR_MICROSTATES] {
        let mut t = self.clocks;
        if let Some(c) = t.get_mut(self.state as usize) {
            *c = c.wrapping_add(now.saturating_sub(self.last_change));
        }
        t
    }

    /// The page's bytes as a structure (little-endian, as the CPU stores them): how a
    /// kernel test reads a page through a process's mapping.
    pub fn from_bytes(b: &[u8; core::mem::size_of::<ThreadClock>()]) -> ThreadClock {
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| u64::from_le_bytes(core::array::from_fn(|k| b[i + k]));
        ThreadClock {
            seq: u32_at(0),
            state: u32_at(4),
            last_change: u64_at(8),
            clocks: core::array::from_fn(|k| u64_at(16 + 8 * k)),
        }
    }

    /// The current state, if the number is one.
    pub fn microstate(&self) -> Option<MicroState> {
        MicroState::from_index(self.state as usize)
    }
}

const _: () = assert!(core::mem::size_of::<VvarHeader>() == 24);
const _: () = assert!(core::mem::size_of::<ThreadClock>() == 16 + 8 * NR_MICROSTATES);
const _: () = assert!(VVAR_BASE.is_multiple_of(PAGE) && VVAR_BASE > crate::layout::USER_IMAGE_BASE);
const _: () = assert!(VVAR_BASE == 0x0000_7fff_ff00_0000 && VVAR_END == 0x0000_7fff_ff60_0000); // as the layout pictures show it

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_at_adds_the_open_span_to_the_current_state_only() {
        let mut c = ThreadClock { seq: 2, state: 1, last_change: 100, clocks: [0; NR_MICROSTATES] };
        c.clocks[0] = 7;
        let t = c.ticks_at(130);
        assert_eq!(t[0], 7);
        assert_eq!(t[1], 30);
        assert_eq!(t.iter().sum::<u64>(), 37);
        assert_eq!(c.ticks_at(90)[1], 0, "a `now` before the last change adds nothing");
        c.state = 99;
        assert_eq!(c.ticks_at(130), c.clocks, "an unknown state adds nothing");
    }

    #[test]
    fn from_bytes_reads_the_repr_c_layout() {
        let mut b = [0u8; core::mem::size_of::<ThreadClock>()];
        b[0] = 6; // seq
        b[4] = 3; // state
        b[8..16].copy_from_slice(&0x1122_3344_5566_7788u64.to_le_bytes());
        b[16 + 8 * 12..].copy_from_slice(&9u64.to_le_bytes());
        let c = ThreadClock::from_bytes(&b);
        assert_eq!((c.seq, c.state, c.last_change), (6, 3, 0x1122_3344_5566_7788));
        assert_eq!((c.clocks[0], c.clocks[12]), (0, 9));
        assert_eq!(c.microstate(), Some(MicroState::InterruptibleSleep));
        assert_eq!(core::mem::offset_of!(ThreadClock, clocks), 16);
        let mut h = [0u8; core::mem::size_of::<VvarHeader>()];
        h[..4].copy_from_slice(&VVAR_MAGIC.to_le_bytes());
        h[4..8].copy_from_slice(&NO_PAGE.to_le_bytes());
        h[8..16].copy_from_slice(&1_000_000_000u64.to_le_bytes());
        h[16] = 1;
        let h = VvarHeader::from_bytes(&h);
        assert_eq!((h.magic, h.current, h.tsc_hz, h.accounting), (VVAR_MAGIC, NO_PAGE, 1_000_000_000, 1));
        assert_eq!(core::mem::offset_of!(VvarHeader, tsc_hz), 8);
    }

    #[test]
    fn pages_sit_between_the_mmap_area_and_the_stack_guard() {
        assert_eq!(thread_page(0), VVAR_BASE + PAGE);
        assert!(thread_page(VVAR_THREADS - 1) + PAGE <= VVAR_END);
        // The header and slots 0..511 share one page table (2 MiB, 512 pages).
        assert_eq!(VVAR_BASE % (512 * PAGE), 0);
        assert_eq!((thread_page(510) - VVAR_BASE) / (512 * PAGE), 0);
        assert_eq!((thread_page(511) - VVAR_BASE) / (512 * PAGE), 1);
    }
}
