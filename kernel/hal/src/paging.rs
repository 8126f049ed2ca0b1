//! Page tables: mapping kernel virtual memory onto physical frames.
//!
//! The boot loader maps all of physical memory at a fixed offset in the upper half, so the
//! kernel can reach any page-table frame through that window; the `x86_64` crate's
//! `OffsetPageTable` walks and edits the tables that way. Frames come from the
//! hardware-independent `tally_frames::FrameAllocator` the kernel hands down at boot
//! ([`crate::frames`]).
//!
//! Everything here edits the *kernel's* level-4 table (the one the boot loader built, read
//! from CR3 at [`init`]), whichever table is active: the upper half of every user address
//! space (`address_space.rs`) points to the same lower-level tables, so a kernel mapping made
//! here is seen by all of them. `populate_kernel_half` therefore gives every upper-half
//! level-4 slot its level-3 table up front: the 256 upper-half entries never change
//! afterwards, and copying them once into a new address space is enough.

use spin::{Mutex, Once};
use x86_64::registers::control::Cr3;
use x86_64::structures::paging::mapper::MapToError;
use x86_64::structures::paging::{FrameAllocator, Mapper, OffsetPageTable, Page, PageTable, PhysFrame, Size4KiB};
use x86_64::{PhysAddr, VirtAddr};

pub use x86_64::structures::paging::PageTableFlags;

static PHYS_OFFSET: Once<u64> = Once::new();
/// Physical address of the kernel's level-4 table (the boot loader's, never freed).
static KERNEL_ROOT: Once<u64> = Once::new();
/// Serialises page-table edits (one `OffsetPageTable` alive at a time).
static MAPPER_LOCK: Mutex<()> = Mutex::new(());

/// Adapts the safe frame bookkeeping to the `x86_64` crate's allocator trait.
pub(super) struct Frames<'a>(pub(super) &'a mut tally_frames::FrameAllocator);

// SAFETY: `tally_frames::FrameAllocator` hands out only frames of usable RAM from the boot memory
// map, and never one that is currently allocated (property-tested in that crate).
unsafe impl FrameAllocator<Size4KiB> for Frames<'_> {
    fn allocate_frame(&mut self) -> Option<PhysFrame<Size4KiB>> {
        self.0.alloc().map(|a| PhysFrame::containing_address(PhysAddr::new(a)))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapError {
    OutOfFrames,
    AlreadyMapped,
}

/// Record where the boot loader mapped physical memory and which level-4 table is the
/// kernel's. Call once, before any mapping, with the boot loader's table active.
pub fn init(physical_memory_offset: u64) {
    PHYS_OFFSET.call_once(|| physical_memory_offset);
    KERNEL_ROOT.call_once(|| Cr3::read().0.start_address().as_u64());
}

/// Give every empty upper-half slot of the kernel's level-4 table a zeroed level-3 table
/// (see the module comment). Call once the frame pool is filled, before the first address
/// space is created. Returns how many tables it added.
pub(super) fn populate_kernel_half() -> u64 {
    let mut added = 0;
    with_lock(|| {
        let mut frames = crate::frames::lock();
        // SAFETY: the kernel's level-4 table is reachable through the physical-memory window
        // and MAPPER_LOCK (held) makes this the only reference to it.
        let root = unsafe { &mut *(phys_to_virt(kernel_root()) as *mut PageTable) };
        for entry in root.iter_mut().skip(256) {
            if entry.is_unused() {
                let Some(phys) = frames.alloc() else { panic!("no frames for the kernel's page tables") };
                zero_frame(phys);
                entry.set_addr(PhysAddr::new(phys), PageTableFlags::PRESENT | PageTableFlags::WRITABLE);
                added += 1;
            }
        }
    });
    added
}

/// Where physical address `phys` can be reached in the kernel's virtual address space.
#[inline]
pub(super) fn phys_to_virt(phys: u64) -> u64 {
    *PHYS_OFFSET.get().expect("paging::init not called") + phys
}

/// Physical address of the kernel's level-4 table: the CR3 of kernel threads.
#[inline]
pub fn kernel_root() -> u64 {
    *KERNEL_ROOT.get().expect("paging::init not called")
}

/// Run `f` on the kernel's page tables. Interrupts are off meanwhile: a task preempted while
/// holding MAPPER_LOCK or the frame lock would leave the next task that maps spinning forever.
fn with_mapper<R>(f: impl FnOnce(&mut OffsetPageTable<'static>) -> R) -> R {
    super::cpu::without_interrupts(|| {
        let offset = *PHYS_OFFSET.get().expect("paging::init not called");
        let _guard = MAPPER_LOCK.lock();
        // SAFETY: the boot loader maps all physical memory at `offset`, so the kernel's
        // level-4 table is reachable there; MAPPER_LOCK guarantees this is the only live
        // reference (address spaces only copy its upper half, under the same lock).
        let table = unsafe { &mut *((offset + kernel_root()) as *mut PageTable) };
        // SAFETY: same invariant: every physical frame is mapped at `offset`.
        let mut mapper = unsafe { OffsetPageTable::new(table, VirtAddr::new(offset)) };
        f(&mut mapper)
    })
}

/// Run `f` holding the page-table lock (for `address_space.rs`, which edits other tables).
pub(super) fn with_lock<R>(f: impl FnOnce() -> R) -> R {
    super::cpu::without_interrupts(|| {
        let _guard = MAPPER_LOCK.lock();
        f()
    })
}

/// Map `count` fresh, zeroed frames at `start` (page-aligned) with `flags` | PRESENT.
pub fn map_zeroed(start: u64, count: u64, flags: PageTableFlags) -> Result<(), MapError> {
    with_mapper(|mapper| {
        let mut frames = crate::frames::lock();
        for i in 0..count {
            let page = Page::<Size4KiB>::containing_address(VirtAddr::new(start + i * 4096));
            let phys = frames.alloc().ok_or(MapError::OutOfFrames)?;
            zero_frame(phys);
            let frame = PhysFrame::containing_address(PhysAddr::new(phys));
            // SAFETY: the frame was just allocated and zeroed, so mapping it aliases nothing.
            let flush =
                unsafe { mapper.map_to(page, frame, flags | PageTableFlags::PRESENT, &mut Frames(&mut frames)) };
            match flush {
                Ok(f) => f.flush(),
                Err(MapToError::PageAlreadyMapped(_)) => {
                    frames.free(phys);
                    return Err(MapError::AlreadyMapped);
                }
                Err(_) => {
                    frames.free(phys);
                    return Err(MapError::OutOfFrames);
                }
            }
        }
        Ok(())
    })
}

/// Unmap `count` pages at `start` and return their frames. Unmapped pages are skipped.
pub fn unmap_and_free(start: u64, count: u64) {
    with_mapper(|mapper| {
        let mut frames = crate::frames::lock();
        for i in 0..count {
            let page = Page::<Size4KiB>::containing_address(VirtAddr::new(start + i * 4096));
            if let Ok((frame, flush)) = mapper.unmap(page) {
                flush.flush();
                frames.free(frame.start_address().as_u64());
            }
        }
    })
}

pub(super) fn zero_frame(phys: u64) {
    let offset = *PHYS_OFFSET.get().expect("paging::init not called");
    // SAFETY: `phys` is a frame just taken from the allocator (owned by no one), reachable
    // through the physical-memory window.
    unsafe { core::ptr::write_bytes((offset + phys) as *mut u8, 0, 4096) };
}
