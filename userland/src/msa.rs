//! A thread's microstate clocks without a system call: the reader of the vvar pages.
//!
//! The kernel keeps every user thread's microstate clock in a page that it also maps,
//! read-only, into the thread's process (`tally_uapi::msa::vvar` has the layout and the
//! addresses). Reading one's own clocks is then a few loads, a `rdtsc` and the TSC→ns
//! conversion — the way Linux's vDSO reads the time of day — instead of a round trip into
//! the kernel. [`msa`] is the runtime's `msa()`: `MSA_THREAD` is answered here, every other
//! `which` (and a thread without a page) by the system call.
//!
//! The memory changes behind the compiler's back (the kernel writes it whenever the thread
//! changes state — an interrupt is enough), so every load is a *volatile* read through the
//! `volatile` crate: the compiler may neither cache a value across the loop nor drop or
//! merge a read. A read is consistent when the page's sequence count was the same before
//! and after it; otherwise the kernel changed the page meanwhile and the read starts over
//! (counted in [`retries`]): see [`read_consistent`].
//!
//! What it costs is the conversion: 13 exact divisions, `floor(ticks × 10⁹ / hz)` as the
//! kernel does them. But the *settled* clocks (all but the running state's) only change when
//! the sequence count does, so [`ThreadClocks`] keeps their conversion and, while the count
//! stands, converts one clock per read: the running one, with its open span added.

use core::cell::UnsafeCell;
use core::ptr::NonNull;
use core::sync::atomic::{compiler_fence, AtomicBool, AtomicU64, Ordering};
use tally_clock::TscClock;
use tally_uapi::msa::vvar::{thread_page, ThreadClock, VvarHeader, NO_PAGE, VVAR_BASE, VVAR_THREADS};
use tally_uapi::msa::{ClkT, MSA_THREAD, NR_MICROSTATES};
use volatile::access::ReadOnly;
use volatile::{map_field, VolatilePtr};

use crate::{sys, Errno};

/// A clock page, read through volatile pointers.
type Page = VolatilePtr<'static, ThreadClock, ReadOnly>;

/// Reads that saw the page change and started over (for tests: a retry must happen).
static RETRIES: AtomicU64 = AtomicU64::new(0);

/// How many reads of this process had to start over so far.
pub fn retries() -> u64 {
    RETRIES.load(Ordering::Relaxed)
}

/// The vvar header.
fn header() -> VolatilePtr<'static, VvarHeader, ReadOnly> {
    // SAFETY: the kernel maps the header at VVAR_BASE into every user process before its
    // first thread runs, for the process's whole life, read-only: it is valid for reads,
    // aligned (a page), and no code in this process can write it. The kernel's writes are
    // why every access is volatile.
    unsafe { VolatilePtr::new_read_only(NonNull::new_unchecked(VVAR_BASE as *mut VvarHeader)) }
}

/// The clock page of the thread in slot `slot` (`slot < VVAR_THREADS`, named by the header).
fn clock_page(slot: u32) -> Page {
    // SAFETY: the header names the slot of the running thread only when that thread's page
    // is mapped (NO_PAGE otherwise, refused by the caller); it stays mapped, read-only, as
    // long as the thread lives — and the thread reading it is alive. Page-aligned.
    unsafe { VolatilePtr::new_read_only(NonNull::new_unchecked(thread_page(slot) as *mut ThreadClock)) }
}

/// The TSC, read after every load before it (`lfence`, as Linux's vDSO's `rdtsc_ordered`).
#[inline(always)]
fn rdtsc_ordered() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: LFENCE and RDTSC only order loads and read the time-stamp counter (the
    // kernel leaves CR4.TSD clear, so ring 3 may); they touch no memory.
    unsafe { core::arch::asm!("lfence", "rdtsc", out("eax") lo, out("edx") hi, options(nostack, preserves_flags)) };
    (hi as u64) << 32 | lo as u64
}

/// Clock `i` (< 13) of a clock page.
#[inline(always)]
fn clock_at(page: Page, i: usize) -> VolatilePtr<'static, u64, ReadOnly> {
    debug_assert!(i < NR_MICROSTATES);
    // SAFETY: `clocks` is an array of NR_MICROSTATES u64 inside the page and `i` is below
    // that (every caller indexes with a bound of NR_MICROSTATES): the pointer stays in it.
    unsafe { map_field!(page.clocks).map(|p| NonNull::new_unchecked(p.as_ptr().cast::<u64>().add(i))) }
}

/// Read a clock page consistently: call `read(page, now, seq)` — which must only read the
/// page (and its own memory) and may be called more than once — between two loads of the
/// sequence count `seq`, with `now` a TSC value taken inside the same window, until the
/// count did not move. Returns what the last, consistent `read` returned.
#[inline(always)]
pub fn read_consistent<R>(page: Page, mut read: impl FnMut(Page, u64, u32) -> R) -> R {
    loop {
        let seq = map_field!(page.seq).read();
        // The loads of `read` stay between the two loads of the count (volatile accesses
        // are not reordered with each other; the fences also keep the TSC read inside).
        compiler_fence(Ordering::SeqCst);
        let r = read(page, rdtsc_ordered(), seq);
        compiler_fence(Ordering::SeqCst);
        if map_field!(page.seq).read() == seq {
            return r;
        }
        RETRIES.fetch_add(1, Ordering::Relaxed);
    }
}

/// What the header says of the calling thread's clocks.
enum Own {
    /// It has no page: ask the kernel.
    NoPage,
    /// Accounting is compiled out: every clock reads 0.
    Off,
    /// Its slot and page, and the TSC frequency.
    Page(u32, Page, u64),
}

#[inline(always)]
fn own_page() -> Own {
    let h = header();
    let slot = map_field!(h.current).read();
    if slot >= VVAR_THREADS {
        return Own::NoPage;
    }
    if map_field!(h.accounting).read() == 0 {
        return Own::Off;
    }
    Own::Page(slot, clock_page(slot), map_field!(h.tsc_hz).read())
}

/// The TSC's frequency in Hz as the kernel calibrated it (the vvar header's `tsc_hz`), for
/// programs that time with `rdtsc` and report nanoseconds (`ubench`): `ns = ticks × 10⁹ / hz`.
pub fn tsc_hz() -> u64 {
    let h = header();
    map_field!(h.tsc_hz).read()
}

/// Nanoseconds in `ticks` TSC ticks at the kernel's calibration ([`tsc_hz`]; 0 if unknown).
pub fn tsc_ticks_to_ns(ticks: u64) -> u64 {
    match tsc_hz() {
        0 => 0,
        hz => TscClock::new(hz, 0).ticks_to_ns(ticks),
    }
}

/// The user address of the calling thread's clock page, if it has one (for tests).
pub fn own_page_address() -> Option<u64> {
    let h = header();
    let slot = map_field!(h.current).read();
    (slot < VVAR_THREADS).then(|| thread_page(slot))
}

/// The calling thread's clock page image and the TSC value it was read at, with the TSC
/// frequency; `None` if it has no clock page. With accounting compiled out of the kernel
/// the image is all zero (so every clock reads 0, as the system call reports).
pub fn own_clock_page() -> Option<(ThreadClock, u64, u64)> {
    match own_page() {
        Own::NoPage => None,
        Own::Off => {
            let zero = ThreadClock { seq: 0, state: 0, last_change: 0, clocks: [0; NR_MICROSTATES] };
            let h = header();
            Some((zero, rdtsc_ordered(), map_field!(h.tsc_hz).read()))
        }
        Own::Page(_, page, hz) => {
            let (image, now) = read_consistent(page, |p, now, _| (p.read(), now));
            Some((image, now, hz))
        }
    }
}

/// The calling thread's clocks in nanoseconds, read from its page, with the conversion of
/// the settled clocks kept from one read to the next (see the module documentation). The
/// numbers are exactly what `msa(MSA_THREAD)` would report at the TSC value of the read.
pub struct ThreadClocks {
    /// (slot, sequence count, last change) of the page the settled values in `ns` were
    /// converted from; `NO_PAGE`: none yet. The last change is part of the key because a
    /// slot is reused: a new thread's clock starts its count at 0 again, but never at an
    /// earlier `last_change` than its predecessor's.
    slot: u32,
    seq: u32,
    last: u64,
    ns: [ClkT; NR_MICROSTATES],
}

impl Default for ThreadClocks {
    fn default() -> Self {
        Self::new()
    }
}

impl ThreadClocks {
    pub const fn new() -> Self {
        ThreadClocks { slot: NO_PAGE, seq: 0, last: 0, ns: [0; NR_MICROSTATES] }
    }

    /// The calling thread's 13 clocks now; `None` if it has no clock page. With accounting
    /// compiled out of the kernel every clock is 0.
    #[inline]
    pub fn read(&mut self) -> Option<&[ClkT; NR_MICROSTATES]> {
        let (slot, page, hz) = match own_page() {
            Own::NoPage => return None,
            Own::Off => {
                *self = Self::new();
                return Some(&self.ns);
            }
            Own::Page(slot, page, hz) => (slot, page, hz),
        };
        loop {
            let seq = map_field!(page.seq).read();
            compiler_fence(Ordering::SeqCst);
            // Only the running state's clock moves while the count stands: its settled
            // ticks plus the open span, converted as one (the conversion rounds down, so
            // it is not the sum of two conversions).
            let now = rdtsc_ordered();
            let state = map_field!(page.state).read() as usize;
            let last = map_field!(page.last_change).read();
            let ticks = if state < NR_MICROSTATES { clock_at(page, state).read() } else { 0 };
            compiler_fence(Ordering::SeqCst);
            if map_field!(page.seq).read() != seq {
                RETRIES.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            if self.slot != slot || self.seq != seq || self.last != last {
                // The settled clocks changed, or they are another clock's (another thread's
                // slot, or a thread that reused this slot): convert them all, read again.
                self.convert_settled(slot, page, hz);
                continue;
            }
            if let Some(t) = self.ns.get_mut(state) {
                *t = TscClock::new(hz, 0).ticks_to_ns(ticks.wrapping_add(now.saturating_sub(last)));
            }
            return Some(&self.ns);
        }
    }

    /// Convert every clock of `page` (slot `slot`) as it stands, and remember for which
    /// sequence count: the slow path of [`ThreadClocks::read`], once per state change.
    #[cold]
    #[inline(never)]
    fn convert_settled(&mut self, slot: u32, page: Page, hz: u64) {
        let clock = TscClock::new(hz, 0);
        let ns = &mut self.ns;
        (self.seq, self.last) = read_consistent(page, |p, _, seq| {
            // Zero ticks are zero nanoseconds without a division (most clocks are zero).
            for (i, t) in ns.iter_mut().enumerate() {
                let ticks = clock_at(p, i).read();
                *t = if ticks == 0 { 0 } else { clock.ticks_to_ns(ticks) };
            }
            (seq, map_field!(p.last_change).read())
        });
        self.slot = slot;
    }
}

/// The process's [`ThreadClocks`] for [`msa`], taken by whichever thread gets `busy` (a
/// thread that finds it taken — another thread preempted inside [`msa`], or a signal handler
/// — reads without it). Its cache is per slot, so threads taking turns convert afresh.
struct Shared {
    busy: AtomicBool,
    clocks: UnsafeCell<ThreadClocks>,
}

// SAFETY: `clocks` is only accessed by the thread that set `busy` (an atomic swap) and until
// it clears it again, so never by two threads at once.
unsafe impl Sync for Shared {}

static SHARED: Shared = Shared { busy: AtomicBool::new(false), clocks: UnsafeCell::new(ThreadClocks::new()) };

/// Fill `timers` with the calling thread's first `timers.len()` (at most 13) clocks in
/// nanoseconds, from its clock page: exactly what `msa(MSA_THREAD)` would report at the
/// same TSC value (the same conversion, `TscClock::ticks_to_ns`, of the same ticks). False
/// (and nothing written) if the thread has no page or `timers` is longer than 13.
#[inline]
pub fn thread_ns(timers: &mut [ClkT]) -> bool {
    if timers.len() > NR_MICROSTATES {
        return false;
    }
    let copy = |ns: &[ClkT; NR_MICROSTATES]| match <&mut [ClkT; NR_MICROSTATES]>::try_from(&mut *timers) {
        Ok(all) => copy_all(all, ns),
        Err(_) => timers.copy_from_slice(&ns[..timers.len()]),
    };
    if !SHARED.busy.swap(true, Ordering::Acquire) {
        // SAFETY: `busy` was clear and is now ours: no other access to `clocks` until we
        // clear it (see `Shared`).
        let clocks = unsafe { &mut *SHARED.clocks.get() };
        let ok = clocks.read().map(copy).is_some();
        SHARED.busy.store(false, Ordering::Release);
        ok
    } else {
        ThreadClocks::new().read().map(copy).is_some()
    }
}

/// All 13 clocks (the common request) as a fixed-size copy, a few vector moves: kept out of
/// line so that the compiler does not fold it with the partial copy into a call to `memcpy`.
#[inline(never)]
fn copy_all(to: &mut [ClkT; NR_MICROSTATES], from: &[ClkT; NR_MICROSTATES]) {
    *to = *from;
}

/// The runtime's `msa(which, timers)`: the system call's contract (`tally_uapi::msa`), with
/// `MSA_THREAD` read from the thread's clock page when it has one — no system call.
pub fn msa(which: u32, timers: &mut [ClkT]) -> Result<usize, Errno> {
    if which == MSA_THREAD && thread_ns(timers) {
        return Ok(0);
    }
    sys::msa(which, timers)
}
