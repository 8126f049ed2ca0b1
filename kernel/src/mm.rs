//! Memory management glue: the frame pool and the heap, set up from the boot memory map.
//!
//! The bookkeeping is `tally_frames::FrameAllocator` (safe, host-tested); page-table edits and
//! the heap's backing pages are in `arch::paging` and `arch::heap`. [`MemStats`] is what
//! tests compare before and after a workload to prove nothing leaked.

use bootloader_api::info::MemoryRegionKind;
use bootloader_api::BootInfo;
use spin::{Mutex, MutexGuard};
use tally_frames::FrameAllocator;

use crate::arch;

static FRAMES: Mutex<FrameAllocator> = Mutex::new(FrameAllocator::new());

/// The frame pool. Lock order: page tables (arch::paging) before frames.
pub fn frames() -> MutexGuard<'static, FrameAllocator> {
    FRAMES.lock()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemStats {
    pub frames_in_use: u64,
    pub frames_total: u64,
    pub heap_bytes: usize,
}

pub fn stats() -> MemStats {
    let f = arch::cpu::without_interrupts(|| frames().stats());
    MemStats { frames_in_use: f.in_use, frames_total: f.total, heap_bytes: arch::heap::used_bytes() }
}

pub fn init(boot_info: &'static mut BootInfo) {
    let offset = boot_info.physical_memory_offset.into_option().expect("boot loader did not map physical memory");
    arch::paging::init(offset);
    {
        let mut frames = frames();
        for r in boot_info.memory_regions.iter().filter(|r| r.kind == MemoryRegionKind::Usable) {
            // Leave the first MiB alone: BIOS data and legacy devices live there.
            let start = r.start.max(0x10_0000);
            if !frames.add_region(start, r.end) && r.end > start {
                log::warn!("memory region {:#x}..{:#x} ignored (too many regions)", start, r.end);
            }
        }
    }
    if let Err(e) = arch::heap::init() {
        panic!("cannot map the kernel heap: {e:?}");
    }
    frames().reserve_free_stack();
    let s = stats();
    log::info!(
        "memory: {} MiB usable in 4 KiB frames, {} in use after mapping the {} MiB heap",
        s.frames_total * 4096 >> 20,
        s.frames_in_use,
        arch::heap::HEAP_SIZE >> 20
    );
}
