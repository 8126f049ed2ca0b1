//! Memory management glue: the frame pool and the heap, set up from the boot memory map.
//!
//! The bookkeeping is `tally_frames::FrameAllocator` (safe, host-tested): [`init`] fills one
//! from the boot loader's memory map and hands it to the HAL (`hal::frames`), which owns it
//! from then on because its page-table code (`hal::paging`, the heap, kernel stacks) takes
//! frames. [`MemStats`] is what tests compare before and after a workload to prove nothing
//! leaked.

use core::sync::atomic::{AtomicU64, Ordering};

use bootloader_api::info::MemoryRegionKind;
use bootloader_api::BootInfo;
use tally_frames::FrameAllocator;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemStats {
    pub frames_in_use: u64,
    pub frames_total: u64,
    pub heap_bytes: usize,
}

/// Frames in use when [`init`] was done: the kernel's own (page tables of the kernel half,
/// the whole premapped heap), never available to user processes — what Linux leaves out of
/// `totalram_pages` as reserved at boot.
static FRAMES_AT_BOOT: AtomicU64 = AtomicU64::new(0);

/// Frames user memory could ever have: the frames managed less those the kernel took at
/// boot (Linux's `totalram_pages`, here without swap). The overcommit check's bound
/// (`proc/oom.rs`).
pub fn frames_for_users() -> u64 {
    let total = hal::frames::with(|f| f.stats()).total;
    total.saturating_sub(FRAMES_AT_BOOT.load(Ordering::Relaxed))
}

/// Frames free now.
pub fn free_frames() -> u64 {
    let f = hal::frames::with(|f| f.stats());
    f.total.saturating_sub(f.in_use)
}

pub fn stats() -> MemStats {
    let f = hal::frames::with(|f| f.stats());
    MemStats { frames_in_use: f.in_use, frames_total: f.total, heap_bytes: hal::heap::used_bytes() }
}

pub fn init(boot_info: &'static mut BootInfo) {
    let offset = boot_info.physical_memory_offset.into_option().expect("boot loader did not map physical memory");
    hal::paging::init(offset);
    {
        let mut frames = FrameAllocator::new();
        for r in boot_info.memory_regions.iter().filter(|r| r.kind == MemoryRegionKind::Usable) {
            // Leave the first MiB alone: BIOS data and legacy devices live there.
            let start = r.start.max(0x10_0000);
            if !frames.add_region(start, r.end) && r.end > start {
                log::warn!("memory region {:#x}..{:#x} ignored (too many regions)", start, r.end);
            }
        }
        hal::frames::install(frames);
    }
    if let Err(e) = hal::heap::init() {
        panic!("cannot map the kernel heap: {e:?}");
    }
    hal::frames::with(|f| f.reserve_free_stack());
    let s = stats();
    FRAMES_AT_BOOT.store(s.frames_in_use, Ordering::Relaxed);
    log::info!(
        "memory: {} MiB usable in 4 KiB frames, {} in use after mapping the {} MiB heap",
        (s.frames_total * 4096) >> 20,
        s.frames_in_use,
        hal::heap::HEAP_SIZE >> 20
    );
}
