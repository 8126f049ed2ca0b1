//! The frame allocator: bump over the boot memory map, then a free stack.
//!
//! Freed frames go on a stack (a `Vec`), so allocation and freeing are both O(1). The stack
//! needs the heap, and the heap needs frames, so the first frames (those that back the heap
//! itself) come from the bump pointer alone; [`FrameAllocator::free`] is only ever called
//! once the heap exists.

use alloc::vec::Vec;

pub const FRAME_SIZE: u64 = 4096;
/// How many usable ranges of the boot memory map are kept (PCs report a handful).
pub const MAX_REGIONS: usize = 64;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Region {
    start: u64,
    end: u64,
}

/// Counters a test compares before and after a workload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameStats {
    /// Frames the memory map offered.
    pub total: u64,
    /// Frames currently handed out.
    pub in_use: u64,
    /// Allocations since boot.
    pub allocated: u64,
    /// Frees since boot.
    pub freed: u64,
    /// Frees refused (unaligned, outside RAM, or of a frame not in use).
    pub bad_frees: u64,
}

#[derive(Debug)]
pub struct FrameAllocator {
    regions: [Region; MAX_REGIONS],
    nregions: usize,
    /// Index of the region the bump pointer is in, and the next never-used frame.
    bump_region: usize,
    bump_next: u64,
    free_stack: Vec<u64>,
    stats: FrameStats,
}

impl Default for FrameAllocator {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameAllocator {
    pub const fn new() -> Self {
        Self {
            regions: [Region { start: 0, end: 0 }; MAX_REGIONS],
            nregions: 0,
            bump_region: 0,
            bump_next: 0,
            free_stack: Vec::new(),
            stats: FrameStats { total: 0, in_use: 0, allocated: 0, freed: 0, bad_frees: 0 },
        }
    }

    /// Offer the usable physical range `[start, end)`. Partial frames at either end are
    /// dropped. Ranges beyond [`MAX_REGIONS`] are ignored (returns false).
    pub fn add_region(&mut self, start: u64, end: u64) -> bool {
        let start = start.div_ceil(FRAME_SIZE) * FRAME_SIZE;
        let end = end / FRAME_SIZE * FRAME_SIZE;
        if end <= start || self.nregions == MAX_REGIONS {
            return false;
        }
        self.regions[self.nregions] = Region { start, end };
        if self.nregions == 0 {
            self.bump_next = start;
        }
        self.nregions += 1;
        self.stats.total += (end - start) / FRAME_SIZE;
        true
    }

    /// Give the free stack room for every frame, so that freeing never allocates: the heap's
    /// usage then does not depend on how many frames were ever freed. Call once the heap
    /// exists (it costs 8 bytes per frame).
    pub fn reserve_free_stack(&mut self) {
        let room = self.stats.total as usize;
        self.free_stack.reserve_exact(room.saturating_sub(self.free_stack.len()));
    }

    /// The physical address of a free frame, or `None` when memory is exhausted.
    pub fn alloc(&mut self) -> Option<u64> {
        let frame = match self.free_stack.pop() {
            Some(f) => f,
            None => self.bump()?,
        };
        self.stats.in_use += 1;
        self.stats.allocated += 1;
        Some(frame)
    }

    fn bump(&mut self) -> Option<u64> {
        while self.bump_region < self.nregions {
            let r = self.regions[self.bump_region];
            if self.bump_next < r.end {
                let f = self.bump_next;
                self.bump_next += FRAME_SIZE;
                return Some(f);
            }
            self.bump_region += 1;
            if self.bump_region < self.nregions {
                self.bump_next = self.regions[self.bump_region].start;
            }
        }
        None
    }

    /// Return a frame. A frame that was never handed out (unaligned, outside the map, or
    /// beyond the bump pointer) is refused and counted rather than corrupting the pool.
    /// (A double free of a recycled frame is not detected: that check would cost
    /// O(free frames); the in-use counter still exposes it in leak tests.)
    pub fn free(&mut self, frame: u64) -> bool {
        if !self.was_handed_out(frame) || self.stats.in_use == 0 {
            self.stats.bad_frees += 1;
            return false;
        }
        self.free_stack.push(frame);
        self.stats.in_use -= 1;
        self.stats.freed += 1;
        true
    }

    fn was_handed_out(&self, frame: u64) -> bool {
        if !frame.is_multiple_of(FRAME_SIZE) {
            return false;
        }
        self.regions[..self.nregions].iter().enumerate().any(|(i, r)| {
            frame >= r.start
                && frame < r.end
                && (i < self.bump_region || (i == self.bump_region && frame < self.bump_next))
        })
    }

    pub fn stats(&self) -> FrameStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn bumps_through_regions_in_order_then_runs_out() {
        let mut a = FrameAllocator::new();
        assert!(a.add_region(0x1000, 0x3000));
        assert!(a.add_region(0x10_0800, 0x10_2000)); // unaligned start: first partial frame dropped
        assert_eq!(a.stats().total, 3);
        assert_eq!(a.alloc(), Some(0x1000));
        assert_eq!(a.alloc(), Some(0x2000));
        assert_eq!(a.alloc(), Some(0x10_1000));
        assert_eq!(a.alloc(), None);
        assert_eq!(a.stats().in_use, 3);
    }

    #[test]
    fn freed_frames_are_reused_and_counted() {
        let mut a = FrameAllocator::new();
        a.add_region(0, 0x10_000);
        let f = a.alloc().unwrap();
        assert!(a.free(f));
        assert_eq!(a.stats().in_use, 0);
        assert_eq!(a.alloc(), Some(f));
    }

    #[test]
    fn a_reserved_free_stack_never_grows() {
        let mut a = FrameAllocator::new();
        a.add_region(0, 64 * FRAME_SIZE);
        a.reserve_free_stack();
        let cap = a.free_stack.capacity();
        let frames: Vec<u64> = (0..64).map(|_| a.alloc().unwrap()).collect();
        for f in frames {
            a.free(f);
        }
        assert_eq!(a.free_stack.capacity(), cap);
    }

    #[test]
    fn bogus_frees_are_refused() {
        let mut a = FrameAllocator::new();
        a.add_region(0x1000, 0x10_000);
        a.alloc().unwrap();
        assert!(!a.free(0x1001), "unaligned");
        assert!(!a.free(0x20_0000), "outside RAM");
        assert!(!a.free(0x5000), "never handed out");
        assert_eq!(a.stats().bad_frees, 3);
        assert_eq!(a.stats().in_use, 1);
    }

    proptest! {
        #[test]
        fn no_frame_is_handed_out_twice(ops in proptest::collection::vec(any::<(bool, u8)>(), 1..400)) {
            let mut a = FrameAllocator::new();
            a.add_region(0x1000, 0x40_000);
            a.add_region(0x100_000, 0x120_000);
            let mut live: Vec<u64> = Vec::new();
            for (alloc, pick) in ops {
                if alloc || live.is_empty() {
                    if let Some(f) = a.alloc() {
                        prop_assert!(!live.contains(&f));
                        live.push(f);
                    }
                } else {
                    let f = live.swap_remove(pick as usize % live.len());
                    prop_assert!(a.free(f));
                }
                prop_assert_eq!(a.stats().in_use, live.len() as u64);
                prop_assert_eq!(a.stats().allocated - a.stats().freed, live.len() as u64);
            }
            let distinct: BTreeSet<_> = live.iter().collect();
            prop_assert_eq!(distinct.len(), live.len());
        }
    }
}
