//! The kernel heap: a fixed virtual range backed by frames, managed by `linked_list_allocator`.
//!
//! The allocator is wrapped so that its lock is taken with interrupts disabled: an interrupt
//! handler that allocated while the interrupted code held the lock would otherwise spin
//! forever on one CPU.

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::NonNull;
use linked_list_allocator::Heap;
use spin::Mutex;
use x86_64::structures::paging::PageTableFlags;

use super::cpu::without_interrupts;
use super::paging::{self, MapError};

/// Where the heap lives: the start of the upper-half region the kernel manages itself
/// (the boot loader's own mappings are kept below it: [`BOOT_CONFIG`](crate::BOOT_CONFIG)).
pub const HEAP_START: u64 = 0xffff_c000_0000_0000;
pub const HEAP_SIZE: u64 = 32 * 1024 * 1024;

struct KernelHeap(Mutex<Heap>);

// SAFETY: allocation and deallocation are delegated to `linked_list_allocator::Heap`, whose
// contract is the GlobalAlloc one, under a lock so that only one CPU/context is inside it.
unsafe impl GlobalAlloc for KernelHeap {
    /// # Safety
    /// `GlobalAlloc::alloc`'s contract: `layout` has a non-zero size.
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        without_interrupts(|| self.0.lock().allocate_first_fit(layout).map_or(core::ptr::null_mut(), |p| p.as_ptr()))
    }

    /// # Safety
    /// `GlobalAlloc::dealloc`'s contract: `ptr` came from [`alloc`](Self::alloc) with `layout`.
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(p) = NonNull::new(ptr) {
            // SAFETY: GlobalAlloc's caller guarantees `ptr` came from `alloc` with `layout`.
            without_interrupts(|| unsafe { self.0.lock().deallocate(p, layout) });
        }
    }
}

#[global_allocator]
static HEAP: KernelHeap = KernelHeap(Mutex::new(Heap::empty()));

/// Map the heap's pages and hand them to the allocator.
pub fn init() -> Result<(), MapError> {
    paging::map_zeroed(HEAP_START, HEAP_SIZE / 4096, PageTableFlags::WRITABLE | PageTableFlags::NO_EXECUTE)?;
    // SAFETY: the range was just mapped writable, is used by nothing else, and init runs once.
    unsafe { HEAP.0.lock().init(HEAP_START as *mut u8, HEAP_SIZE as usize) };
    Ok(())
}

/// Bytes currently allocated from the heap (for leak checks).
pub fn used_bytes() -> usize {
    without_interrupts(|| HEAP.0.lock().used())
}
