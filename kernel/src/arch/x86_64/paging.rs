//! Page tables: mapping kernel virtual memory onto physical frames.
//!
//! The boot loader maps all of physical memory at a fixed offset in the upper half, so the
//! kernel can reach any page-table frame through that window; the `x86_64` crate's
//! `OffsetPageTable` walks and edits the tables that way. Frames come from the
//! hardware-independent `tally_mm::FrameAllocator` held in `crate::mm`.

use spin::{Mutex, Once};
use x86_64::registers::control::Cr3;
use x86_64::structures::paging::mapper::MapToError;
use x86_64::structures::paging::{
    FrameAllocator, Mapper, OffsetPageTable, Page, PageTable, PageTableFlags, PhysFrame, Size4KiB,
};
use x86_64::{PhysAddr, VirtAddr};

static PHYS_OFFSET: Once<u64> = Once::new();
/// Serialises page-table edits (one `OffsetPageTable` alive at a time).
static MAPPER_LOCK: Mutex<()> = Mutex::new(());

/// Adapts the safe frame bookkeeping to the `x86_64` crate's allocator trait.
struct Frames<'a>(&'a mut tally_mm::FrameAllocator);

// SAFETY: `tally_mm::FrameAllocator` hands out only frames of usable RAM from the boot memory
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

/// Record where the boot loader mapped physical memory. Call once, before any mapping.
pub fn init(physical_memory_offset: u64) {
    PHYS_OFFSET.call_once(|| physical_memory_offset);
}

fn with_mapper<R>(f: impl FnOnce(&mut OffsetPageTable<'static>) -> R) -> R {
    let offset = *PHYS_OFFSET.get().expect("paging::init not called");
    let _guard = MAPPER_LOCK.lock();
    // SAFETY: the boot loader maps all physical memory at `offset`, so the active level-4
    // table is reachable there; MAPPER_LOCK guarantees this is the only live reference.
    let table = unsafe {
        let (frame, _) = Cr3::read();
        let virt = offset + frame.start_address().as_u64();
        &mut *(virt as *mut PageTable)
    };
    // SAFETY: same invariant: every physical frame is mapped at `offset`.
    let mut mapper = unsafe { OffsetPageTable::new(table, VirtAddr::new(offset)) };
    f(&mut mapper)
}

/// Map `count` fresh, zeroed frames at `start` (page-aligned) with `flags` | PRESENT.
pub fn map_zeroed(start: u64, count: u64, flags: PageTableFlags) -> Result<(), MapError> {
    with_mapper(|mapper| {
        let mut frames = crate::mm::frames();
        for i in 0..count {
            let page = Page::<Size4KiB>::containing_address(VirtAddr::new(start + i * 4096));
            let phys = frames.alloc().ok_or(MapError::OutOfFrames)?;
            zero_frame(phys);
            let frame = PhysFrame::containing_address(PhysAddr::new(phys));
            // SAFETY: the frame was just allocated and zeroed, so mapping it aliases nothing.
            let flush = unsafe {
                mapper.map_to(page, frame, flags | PageTableFlags::PRESENT, &mut Frames(&mut frames))
            };
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
        let mut frames = crate::mm::frames();
        for i in 0..count {
            let page = Page::<Size4KiB>::containing_address(VirtAddr::new(start + i * 4096));
            if let Ok((frame, flush)) = mapper.unmap(page) {
                flush.flush();
                frames.free(frame.start_address().as_u64());
            }
        }
    })
}

fn zero_frame(phys: u64) {
    let offset = *PHYS_OFFSET.get().expect("paging::init not called");
    // SAFETY: `phys` is a frame just taken from the allocator (owned by no one), reachable
    // through the physical-memory window.
    unsafe { core::ptr::write_bytes((offset + phys) as *mut u8, 0, 4096) };
}
