//! # The heap: `brk` plus a free list
//!
//! Unix's oldest way for a program to get memory is to move its *program break*: the end of
//! its data, which the kernel first sets to the page after the last ELF segment
//! (`tally-loader`'s `brk_start`). `brk(addr)` moves it; the pages between the old and the new
//! break become usable (the kernel may map them lazily, on first touch — a page fault that
//! the accounting counts as `ONCPU_TRAP` time).
//!
//! [`BrkHeap`] is the global allocator. It keeps a `linked_list_allocator::Heap` (a list of
//! free blocks, first fit) over `[heap start, break)`. When no free block fits, it raises the
//! break by at least [`GROW_MIN`] bytes (whole pages) and adds the new memory to the list.
//! Memory is never given back to the kernel; freed blocks are reused. When `brk` fails the
//! allocation fails, and Rust's allocation-failure path ends in the panic handler.
//!
//! A spin flag serialises the allocator, in case a program creates threads.

use core::alloc::{GlobalAlloc, Layout};
use core::cell::UnsafeCell;
use core::ptr::{self, NonNull};
use core::sync::atomic::{AtomicBool, Ordering};

use linked_list_allocator::Heap;

/// Smallest growth of the break: 64 KiB, so that small allocations do not cost a system
/// call each.
pub const GROW_MIN: usize = 64 * 1024;
const PAGE: usize = 4096;

struct State {
    heap: Heap,
    /// First byte of the heap (the break when the program started), 0 before first use.
    start: usize,
    /// Current break: the heap is `[start, end)`.
    end: usize,
}

/// The global allocator; see the module documentation.
pub struct BrkHeap {
    locked: AtomicBool,
    state: UnsafeCell<State>,
}

// SAFETY: `state` is only touched while `locked` is held.
unsafe impl Sync for BrkHeap {}

#[global_allocator]
static HEAP: BrkHeap =
    BrkHeap { locked: AtomicBool::new(false), state: UnsafeCell::new(State { heap: Heap::empty(), start: 0, end: 0 }) };

impl BrkHeap {
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        while self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            core::hint::spin_loop();
        }
        // SAFETY: the flag gives this thread exclusive access until it is cleared below.
        let r = f(unsafe { &mut *self.state.get() });
        self.locked.store(false, Ordering::Release);
        r
    }
}

impl State {
    /// Raises the break so that at least `need` more bytes (plus bookkeeping) fit.
    fn grow(&mut self, need: usize) -> bool {
        if self.start == 0 {
            let Ok(b) = crate::sys::current_brk() else { return false };
            // Start on a page boundary: the kernel's initial break is one already.
            let Some(s) = b.checked_add(PAGE - 1).map(|x| x & !(PAGE - 1)) else { return false };
            if s == 0 {
                return false;
            }
            self.start = s;
            self.end = s;
        }
        let Some(by) = need.checked_add(GROW_MIN + PAGE - 1).map(|x| x & !(PAGE - 1)) else { return false };
        let Some(want) = self.end.checked_add(by) else { return false };
        // SAFETY: raising the break only adds memory; nothing above the old break is in use.
        match unsafe { crate::sys::brk(want) } {
            Ok(got) if got >= want => {}
            _ => return false,
        }
        if self.heap.size() == 0 {
            // SAFETY: [start, want) is fresh memory owned by nobody else, for the program's life.
            unsafe { self.heap.init(self.start as *mut u8, want - self.start) };
        } else {
            // SAFETY: the new range starts exactly at the heap's previous end.
            unsafe { self.heap.extend(want - self.end) };
        }
        self.end = want;
        true
    }
}

// SAFETY: allocation and deallocation are delegated to `linked_list_allocator::Heap`, whose
// contract is the GlobalAlloc one, under the heap's lock; the memory it manages is the
// process's own, grown with `brk` and never given back while the program runs.
unsafe impl GlobalAlloc for BrkHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.with(|s| loop {
            if s.heap.size() > 0 {
                if let Ok(p) = s.heap.allocate_first_fit(layout) {
                    return p.as_ptr();
                }
            }
            if !s.grow(layout.size().saturating_add(layout.align())) {
                return ptr::null_mut();
            }
        })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(p) = NonNull::new(ptr) {
            // SAFETY: GlobalAlloc's contract: `ptr` came from `alloc` with this layout.
            self.with(|s| unsafe { s.heap.deallocate(p, layout) });
        }
    }
}

/// The heap's extent `[start, break)` and the bytes in use, for programs that report on
/// their memory (`memhog`). `(0, 0, 0)` before the first allocation.
pub fn stats() -> (usize, usize, usize) {
    HEAP.with(|s| (s.start, s.end, s.heap.used()))
}
