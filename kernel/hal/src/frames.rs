//! The pool of physical frames the page tables draw from.
//!
//! What is free RAM, and which frame to hand out next, is bookkeeping: the kernel builds a
//! `tally_frames::FrameAllocator` from the boot loader's memory map (`base/memory.rs`)
//! and hands it down once with [`install`]. From then on this module owns it behind a lock,
//! because the HAL takes frames for page tables, kernel stacks and the heap, and must not
//! call up into the kernel to get them. The kernel reads its counters with [`with`].
//!
//! Lock order: the page-table lock (`paging`) before this one.

use spin::{Mutex, MutexGuard, Once};
use tally_frames::FrameAllocator;

static FRAMES: Once<Mutex<FrameAllocator>> = Once::new();

/// Take over the kernel's frame allocator. Call once, before anything is mapped; later
/// calls are ignored (and return `false`).
pub fn install(frames: FrameAllocator) -> bool {
    let mut taken = false;
    FRAMES.call_once(|| {
        taken = true;
        Mutex::new(frames)
    });
    taken
}

/// The pool, locked. For the HAL's own page-table code, which already runs with interrupts
/// disabled (`paging::with_lock`).
pub(crate) fn lock() -> MutexGuard<'static, FrameAllocator> {
    FRAMES.get().expect("frames::install not called").lock()
}

/// Run `f` on the pool with interrupts disabled (counters, `reserve_free_stack`).
pub fn with<R>(f: impl FnOnce(&mut FrameAllocator) -> R) -> R {
    super::cpu::without_interrupts(|| f(&mut lock()))
}
