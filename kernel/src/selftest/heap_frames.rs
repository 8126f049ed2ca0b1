//! Heap and frame bookkeeping: allocate a lot, free it all, and find the counters where
//! they started.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use hal::paging::PageTableFlags;

use crate::base::memory as mm;

/// Scratch virtual range for mapping test pages (above the heap).
const SCRATCH: u64 = 0xffff_c800_0000_0000;

pub fn heap_and_frames() -> Result<(), &'static str> {
    // Map and unmap the scratch range once first: the intermediate page tables it needs stay
    // (as on Linux, they belong to the address space), so they are part of the baseline.
    hal::paging::map_zeroed(SCRATCH, 1, PageTableFlags::WRITABLE).map_err(|_| "cannot map scratch pages")?;
    hal::paging::unmap_and_free(SCRATCH, 1);
    let before = mm::stats();
    {
        let boxes: Vec<Box<[u64]>> =
            (0..5_000u64).map(|i| alloc::vec![i; (i % 64 + 1) as usize].into_boxed_slice()).collect();
        let sum: u64 = boxes.iter().map(|b| b[0]).sum();
        if sum != (0..5_000u64).sum::<u64>() {
            return Err("heap data corrupted");
        }
        let big: Vec<u8> = alloc::vec![0xa5; 8 * 1024 * 1024];
        if big.iter().any(|&b| b != 0xa5) {
            return Err("large vector corrupted");
        }
        let mut map = BTreeMap::new();
        for i in 0..10_000u32 {
            map.insert(i.wrapping_mul(2_654_435_761), i);
        }
        let during = mm::stats();
        println!("heap: {} bytes in use during the workload (baseline {})", during.heap_bytes, before.heap_bytes);
        if during.heap_bytes < before.heap_bytes + big.len() {
            return Err("heap counter did not see the allocations");
        }
    }
    hal::paging::map_zeroed(SCRATCH, 256, PageTableFlags::WRITABLE | PageTableFlags::NO_EXECUTE)
        .map_err(|_| "cannot map scratch pages")?;
    let mapped = mm::stats();
    hal::paging::unmap_and_free(SCRATCH, 256);
    let after = mm::stats();
    println!(
        "heap: bytes {} -> {}; frames in use {} -> {} with 256 pages mapped -> {}",
        before.heap_bytes, after.heap_bytes, before.frames_in_use, mapped.frames_in_use, after.frames_in_use
    );
    if mapped.frames_in_use < before.frames_in_use + 256 {
        return Err("frame counter did not see the mapped pages");
    }
    if after != before {
        return Err("heap bytes or frames did not return to baseline");
    }
    println!("heap: counters back to baseline");
    Ok(())
}
