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
//! merge a read. A read is consistent when the page's sequence count was even and the same
//! before and after it ([`read_ticks`]); otherwise the kernel changed the page meanwhile and
//! the read starts over (counted in [`retries`]): see [`read_consistent`].

use core::ptr::NonNull;
use core::sync::atomic::{compiler_fence, AtomicU64, Ordering};
use tally_clock::TscClock;
use tally_uapi::msa::vvar::{thread_page, ThreadClock, VvarHeader, VVAR_BASE, VVAR_THREADS};
use tally_uapi::msa::{ClkT, MSA_THREAD, NR_MICROSTATES};
use volatile::access::ReadOnly;
use volatile::{map_field, VolatilePtr};

use crate::{sys, Errno};

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
fn thread_clock(slot: u32) -> VolatilePtr<'static, ThreadClock, ReadOnly> {
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
fn clock_at(page: VolatilePtr<'_, ThreadClock, ReadOnly>, i: usize) -> VolatilePtr<'_, u64, ReadOnly> {
    debug_assert!(i < NR_MICROSTATES);
    // SAFETY: `clocks` is an array of NR_MICROSTATES u64 inside the page and `i` is below
    // that (every caller indexes with a bound of NR_MICROSTATES): the pointer stays in it.
    unsafe { map_field!(page.clocks).map(|p| NonNull::new_unchecked(p.as_ptr().cast::<u64>().add(i))) }
}

/// Read a clock page consistently: call `read(page, now)` — which must only read the page
/// and may be called more than once — between two loads of the sequence count, with `now`
/// a TSC value taken inside the same window, until the count was even and did not move.
/// Returns what the last, consistent `read` returned.
#[inline(always)]
pub fn read_consistent<R>(
    page: VolatilePtr<'_, ThreadClock, ReadOnly>,
    mut read: impl FnMut(VolatilePtr<'_, ThreadClock, ReadOnly>, u64) -> R,
) -> R {
    loop {
        let seq = map_field!(page.seq).read();
        // The loads below stay below this one: the kernel increments `seq` before it
        // touches the fields, and again after.
        compiler_fence(Ordering::Acquire);
        let r = read(page, rdtsc_ordered());
        compiler_fence(Ordering::Acquire);
        if seq & 1 == 0 && map_field!(page.seq).read() == seq {
            return r;
        }
        RETRIES.fetch_add(1, Ordering::Relaxed);
    }
}

/// A consistent copy of a clock page and the TSC value read with it.
pub fn read_page(page: VolatilePtr<'_, ThreadClock, ReadOnly>) -> (ThreadClock, u64) {
    read_consistent(page, |p, now| (p.read(), now))
}

/// The user address of the calling thread's clock page, if it has one (for tests).
pub fn own_page_address() -> Option<u64> {
    let h = header();
    let slot = map_field!(h.current).read();
    (slot < VVAR_THREADS).then(|| tally_uapi::msa::vvar::thread_page(slot))
}

/// What the header says of the calling thread's clocks.
enum Own {
    /// It has no page: ask the kernel.
    NoPage,
    /// Accounting is compiled out: every clock reads 0.
    Off(u64),
    /// Its page, and the TSC frequency.
    Page(VolatilePtr<'static, ThreadClock, ReadOnly>, u64),
}

#[inline(always)]
fn own_page() -> Own {
    let h = header();
    let slot = map_field!(h.current).read();
    if slot >= VVAR_THREADS {
        return Own::NoPage;
    }
    let hz = map_field!(h.tsc_hz).read();
    if map_field!(h.accounting).read() == 0 {
        return Own::Off(hz);
    }
    Own::Page(thread_clock(slot), hz)
}

/// The calling thread's clock page image and the TSC value it was read at, with the TSC
/// frequency; `None` if it has no clock page. With accounting compiled out of the kernel
/// the image is all zero (so every clock reads 0, as the system call reports).
pub fn own_clock_page() -> Option<(ThreadClock, u64, u64)> {
    let zero = ThreadClock { seq: 0, state: 0, last_change: 0, clocks: [0; NR_MICROSTATES] };
    match own_page() {
        Own::NoPage => None,
        Own::Off(hz) => Some((zero, rdtsc_ordered(), hz)),
        Own::Page(page, hz) => {
            let (image, now) = read_page(page);
            Some((image, now, hz))
        }
    }
}

/// Fill `timers` with the calling thread's first `timers.len()` (at most 13) clocks in
/// nanoseconds, from its clock page: exactly what `msa(MSA_THREAD)` would report at the
/// same TSC value (the same conversion, `TscClock::ticks_to_ns`, of the same ticks). False
/// (and nothing written) if the thread has no page or `timers` is longer than 13.
///
/// The conversion runs inside the read window, straight from the page into `timers`, so
/// nothing is copied twice; the running state's clock is converted once more at the end,
/// with the open span added (cheaper than a comparison for each clock).
#[inline]
pub fn thread_ns(timers: &mut [ClkT]) -> bool {
    if timers.len() > NR_MICROSTATES {
        return false;
    }
    let (page, hz) = match own_page() {
        Own::NoPage => return false,
        Own::Off(_) => {
            timers.fill(0);
            return true;
        }
        Own::Page(page, hz) => (page, hz),
    };
    let clock = TscClock::new(hz, 0);
    read_consistent(page, |p, now| {
        for (i, t) in timers.iter_mut().enumerate() {
            let ticks = clock_at(p, i).read();
            // Zero ticks are zero nanoseconds without a division (most clocks are zero).
            *t = if ticks == 0 { 0 } else { clock.ticks_to_ns(ticks) };
        }
        let state = map_field!(p.state).read() as usize;
        if let Some(t) = timers.get_mut(state) {
            let span = now.saturating_sub(map_field!(p.last_change).read());
            *t = clock.ticks_to_ns(clock_at(p, state).read().wrapping_add(span));
        }
    });
    true
}

/// The runtime's `msa(which, timers)`: the system call's contract (`tally_uapi::msa`), with
/// `MSA_THREAD` read from the thread's clock page when it has one — no system call.
pub fn msa(which: u32, timers: &mut [ClkT]) -> Result<usize, Errno> {
    if which == MSA_THREAD && thread_ns(timers) {
        return Ok(0);
    }
    sys::msa(which, timers)
}
