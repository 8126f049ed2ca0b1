//! The frame allocator: bump over the boot memory map, then a free stack; and a reference
//! count per frame, so that `fork` can share a page between two processes.
//!
//! Freed frames go on a stack (a `Vec`), so allocation and freeing are both O(1). The stack
//! needs the heap, and the heap needs frames, so the first frames (those that back the heap
//! itself) come from the bump pointer alone; [`FrameAllocator::free`] is only ever called
//! once the heap exists.
//!
//! ## Reference counts (copy-on-write)
//!
//! Once the heap exists, [`FrameAllocator::reserve_free_stack`] also makes a table of one
//! `u16` per frame: how many mappings refer to it (0: free). `alloc` sets it to 1;
//! [`FrameAllocator::share`] adds one (a forked child maps the same frame as its parent,
//! Linux's `page_dup_rmap`); [`FrameAllocator::free`] takes one away and returns the frame to
//! the pool only when the last reference goes. The in-use counter therefore counts *frames*,
//! not mappings: a page shared by two processes is one frame in use, and the counter is back
//! to its baseline once both have let go. The table also makes a double free detectable in
//! O(1): freeing a frame whose count is 0 is refused and counted (`bad_frees`).
//!
//! ```text
//!   count   0 ──alloc──► 1 ──share──► 2 ──share──► 3 …
//!           ▲            │  ◄──free──    ◄──free──
//!           └────free────┘   (the frame goes back to the pool only from 1)
//! ```

use alloc::vec::Vec;

pub const FRAME_SIZE: u64 = 4096;
/// How many usable ranges of the boot memory map are kept (PCs report a handful).
pub const MAX_REGIONS: usize = 64;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Region {
    start: u64,
    end: u64,
}

/// What a write to a page mapped copy-on-write on a frame takes
/// ([`FrameAllocator::copy_on_write`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CowWrite {
    /// Nobody else refers to the frame any more: the writer takes it over as it is.
    TakeOver,
    /// The frame is still shared: copy it into `new` (just allocated, count 1), map `new`
    /// instead, then drop the writer's reference to the old frame with `free`.
    Copy { new: u64 },
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
    /// Frames referred to by more than one mapping now (shared by `fork`, copy-on-write).
    pub shared: u64,
    /// References added by [`FrameAllocator::share`] since boot.
    pub shares: u64,
}

#[derive(Debug)]
pub struct FrameAllocator {
    regions: [Region; MAX_REGIONS],
    nregions: usize,
    /// Index of the region the bump pointer is in, and the next never-used frame.
    bump_region: usize,
    bump_next: u64,
    free_stack: Vec<u64>,
    /// References per frame, indexed by [`FrameAllocator::index`] (empty until
    /// `reserve_free_stack`: before the heap, nothing is counted and nothing can be shared).
    refs: Vec<u16>,
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
            refs: Vec::new(),
            stats: FrameStats { total: 0, in_use: 0, allocated: 0, freed: 0, bad_frees: 0, shared: 0, shares: 0 },
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
    ///
    /// It also starts the reference counts (2 bytes per frame): every frame handed out so far
    /// and not on the free stack counts 1, every other 0. Called again, it changes nothing.
    pub fn reserve_free_stack(&mut self) {
        let room = self.stats.total as usize;
        self.free_stack.reserve_exact(room.saturating_sub(self.free_stack.len()));
        if self.refs.is_empty() {
            let mut refs = alloc::vec![0u16; room];
            for (i, r) in self.regions[..self.nregions].iter().enumerate() {
                let used_end = match i.cmp(&self.bump_region) {
                    core::cmp::Ordering::Less => r.end,
                    core::cmp::Ordering::Equal => self.bump_next.min(r.end),
                    core::cmp::Ordering::Greater => r.start,
                };
                let mut f = r.start;
                while f < used_end {
                    if let Some(ix) = self.index(f) {
                        refs[ix] = 1;
                    }
                    f += FRAME_SIZE;
                }
            }
            for &f in &self.free_stack {
                if let Some(ix) = self.index(f) {
                    refs[ix] = 0;
                }
            }
            self.refs = refs;
        }
    }

    /// The frame's slot in the reference table: frames are numbered region after region.
    fn index(&self, frame: u64) -> Option<usize> {
        let mut base = 0u64;
        for r in &self.regions[..self.nregions] {
            if frame >= r.start && frame < r.end {
                return Some((base + (frame - r.start) / FRAME_SIZE) as usize);
            }
            base += (r.end - r.start) / FRAME_SIZE;
        }
        None
    }

    /// The reference count's slot of a frame that was handed out, if counts are kept.
    fn ref_slot(&mut self, frame: u64) -> Option<&mut u16> {
        let ix = self.index(frame)?;
        self.refs.get_mut(ix)
    }

    /// How many mappings refer to `frame` now: 0 for a free frame or one never handed out.
    /// (Before reference counts are kept — no heap yet, so nothing was ever freed — a frame
    /// handed out counts 1.)
    pub fn refs(&self, frame: u64) -> u16 {
        if !frame.is_multiple_of(FRAME_SIZE) || !self.was_handed_out(frame) {
            return 0;
        }
        match self.index(frame).and_then(|ix| self.refs.get(ix)) {
            Some(&n) => n,
            None => 1,
        }
    }

    /// One more mapping refers to `frame`, a frame in use (a forked child maps its parent's
    /// page). False, changing nothing, for a frame not in use, before reference counts are
    /// kept, or at the count's limit (`u16::MAX`: the fork that asked fails with `ENOMEM`).
    pub fn share(&mut self, frame: u64) -> bool {
        if !frame.is_multiple_of(FRAME_SIZE) || !self.was_handed_out(frame) {
            return false;
        }
        let Some(n) = self.ref_slot(frame) else { return false };
        if *n == 0 || *n == u16::MAX {
            return false;
        }
        *n += 1;
        let now_shared = *n == 2;
        self.stats.shares += 1;
        if now_shared {
            self.stats.shared += 1;
        }
        true
    }

    /// The physical address of a free frame, or `None` when memory is exhausted.
    pub fn alloc(&mut self) -> Option<u64> {
        let frame = match self.free_stack.pop() {
            Some(f) => f,
            None => self.bump()?,
        };
        if let Some(n) = self.ref_slot(frame) {
            *n = 1;
        }
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

    /// A write to a page mapped copy-on-write on `frame` (Linux's `do_wp_page`): take the
    /// frame over if this mapping is its only reference, else allocate the frame the copy
    /// goes to. `None` if a copy is needed and no frame is left (nothing changed then).
    pub fn copy_on_write(&mut self, frame: u64) -> Option<CowWrite> {
        if self.refs(frame) <= 1 {
            return Some(CowWrite::TakeOver);
        }
        self.alloc().map(|new| CowWrite::Copy { new })
    }

    /// Drop one reference to a frame; the frame returns to the pool when it was the last
    /// (true in both cases). A frame that was never handed out (unaligned, outside the map,
    /// or beyond the bump pointer), or — once reference counts are kept — one that is free
    /// already (a double free), is refused and counted rather than corrupting the pool.
    pub fn free(&mut self, frame: u64) -> bool {
        if !self.was_handed_out(frame) || self.stats.in_use == 0 {
            self.stats.bad_frees += 1;
            return false;
        }
        if let Some(n) = self.ref_slot(frame) {
            match *n {
                0 => {
                    self.stats.bad_frees += 1;
                    return false;
                }
                1 => *n = 0,
                _ => {
                    *n -= 1;
                    if *n == 1 {
                        self.stats.shared -= 1;
                    }
                    return true;
                }
            }
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

    #[test]
    fn a_shared_frame_goes_back_with_its_last_reference() {
        let mut a = FrameAllocator::new();
        a.add_region(0x1000, 0x10_000);
        let early = a.alloc().unwrap(); // before the table: counted 1 once it exists
        a.reserve_free_stack();
        assert_eq!(a.refs(early), 1);
        let f = a.alloc().unwrap();
        assert_eq!(a.refs(f), 1);
        assert!(a.share(f));
        assert!(a.share(f));
        assert_eq!((a.refs(f), a.stats().shared, a.stats().in_use), (3, 1, 2));
        assert!(a.free(f));
        assert!(a.free(f));
        assert_eq!((a.refs(f), a.stats().shared, a.stats().in_use), (1, 0, 2));
        assert!(a.free(f));
        assert_eq!((a.refs(f), a.stats().in_use), (0, 1));
        assert!(!a.free(f), "double free refused");
        assert!(!a.share(f), "a free frame cannot be shared");
        assert_eq!(a.stats().bad_frees, 1);
        assert!(a.free(early));
        assert_eq!(a.stats().in_use, 0);
    }

    #[test]
    fn nothing_is_shared_before_the_table_exists() {
        let mut a = FrameAllocator::new();
        a.add_region(0x1000, 0x10_000);
        let f = a.alloc().unwrap();
        assert!(!a.share(f));
        assert_eq!(a.refs(f), 1);
        assert!(a.free(f));
    }

    #[test]
    fn the_count_saturates_instead_of_wrapping() {
        let mut a = FrameAllocator::new();
        a.add_region(0x1000, 0x3000);
        a.reserve_free_stack();
        let f = a.alloc().unwrap();
        for _ in 1..u16::MAX {
            assert!(a.share(f));
        }
        assert_eq!(a.refs(f), u16::MAX);
        assert!(!a.share(f));
        assert_eq!(a.refs(f), u16::MAX);
    }

    proptest! {
        /// The reference counts as a state machine against a model: whatever the order of
        /// allocations, shares and frees (bogus ones included), each frame's count is the
        /// model's, `in_use` counts the frames with a reference, `shared` those with two or
        /// more, and a frame is handed out again only once its last reference is gone.
        #[test]
        fn reference_counts_follow_the_model(
            ops in proptest::collection::vec((0u8..4, any::<u16>()), 1..600),
            early in 0usize..4,
        ) {
            use std::collections::BTreeMap;
            let mut a = FrameAllocator::new();
            a.add_region(0x1000, 0x20_000);
            a.add_region(0x100_000, 0x108_000);
            let mut model: BTreeMap<u64, u16> = BTreeMap::new();
            for _ in 0..early {
                model.insert(a.alloc().unwrap(), 1);
            }
            a.reserve_free_stack();
            let mut gone: Vec<u64> = Vec::new();
            for (op, pick) in ops {
                let live: Vec<u64> = model.keys().copied().collect();
                match op {
                    0 => {
                        if let Some(f) = a.alloc() {
                            prop_assert!(!model.contains_key(&f), "frame {f:#x} handed out twice");
                            model.insert(f, 1);
                            gone.retain(|&g| g != f);
                        }
                    }
                    1 if !live.is_empty() => {
                        let f = live[pick as usize % live.len()];
                        prop_assert!(a.share(f));
                        *model.get_mut(&f).unwrap() += 1;
                    }
                    2 if !live.is_empty() => {
                        let f = live[pick as usize % live.len()];
                        prop_assert!(a.free(f));
                        let n = model.get_mut(&f).unwrap();
                        *n -= 1;
                        if *n == 0 {
                            model.remove(&f);
                            gone.push(f);
                        }
                    }
                    3 if !gone.is_empty() => {
                        // A double free and a share of a freed frame: both refused.
                        let f = gone[pick as usize % gone.len()];
                        let bad = a.stats().bad_frees;
                        prop_assert!(!a.free(f));
                        prop_assert!(!a.share(f));
                        prop_assert_eq!(a.stats().bad_frees, bad + 1);
                    }
                    _ => {}
                }
                let s = a.stats();
                prop_assert_eq!(s.in_use, model.len() as u64);
                prop_assert_eq!(s.shared, model.values().filter(|&&n| n >= 2).count() as u64);
                for (&f, &n) in &model {
                    prop_assert_eq!(a.refs(f), n);
                }
                for &f in &gone {
                    prop_assert_eq!(a.refs(f), 0);
                }
            }
        }

        /// Copy-on-write over several address spaces, as the HAL does it with these calls:
        /// pages mapped, written, unmapped; spaces forked (every page shared, marked COW in
        /// both) and ended. After every step each space reads what it last wrote to each page
        /// (no write ever reaches another space), a frame's count is the number of entries
        /// that map it, a page writable in place is mapped by nobody else, and the frames in
        /// use are exactly the frames mapped; once every space has ended, none is in use.
        #[test]
        fn copy_on_write_keeps_spaces_apart(
            ops in proptest::collection::vec((0u8..5, 0usize..4, 0u8..6, any::<u32>()), 1..300),
        ) {
            use std::collections::{BTreeMap, BTreeSet};
            #[derive(Clone, Copy)]
            struct Entry { frame: u64, cow: bool }
            let mut a = FrameAllocator::new();
            a.add_region(0x1000, 0x200_000);
            a.reserve_free_stack();
            // The spaces' page tables, what each frame holds, what each space last wrote.
            let mut spaces: Vec<Option<BTreeMap<u8, Entry>>> = vec![Some(BTreeMap::new())];
            let mut memory: BTreeMap<u64, u32> = BTreeMap::new();
            let mut wrote: Vec<BTreeMap<u8, u32>> = vec![BTreeMap::new()];
            for (op, s, page, val) in ops {
                let s = s % spaces.len();
                let room = spaces.len() < 8;
                let Some(space) = spaces[s].as_mut() else { continue };
                let mut forked = None;
                match op {
                    0 if !space.contains_key(&page) => {
                        let frame = a.alloc().unwrap();
                        memory.insert(frame, 0);
                        space.insert(page, Entry { frame, cow: false });
                        wrote[s].insert(page, 0);
                    }
                    1 if space.contains_key(&page) => {
                        let e = space.get_mut(&page).unwrap();
                        if e.cow {
                            match a.copy_on_write(e.frame).unwrap() {
                                CowWrite::TakeOver => {}
                                CowWrite::Copy { new } => {
                                    let v = memory[&e.frame];
                                    memory.insert(new, v);
                                    prop_assert!(a.free(e.frame));
                                    e.frame = new;
                                }
                            }
                            e.cow = false;
                        }
                        memory.insert(e.frame, val);
                        wrote[s].insert(page, val);
                    }
                    2 if space.contains_key(&page) => {
                        let e = space.remove(&page).unwrap();
                        prop_assert!(a.free(e.frame));
                        wrote[s].remove(&page);
                    }
                    3 if room => {
                        let mut child = BTreeMap::new();
                        for (&p, e) in space.iter_mut() {
                            prop_assert!(a.share(e.frame));
                            e.cow = true;
                            child.insert(p, *e);
                        }
                        forked = Some(child);
                    }
                    4 => {
                        for e in space.values() {
                            prop_assert!(a.free(e.frame));
                        }
                        spaces[s] = None;
                        wrote[s].clear();
                    }
                    _ => {}
                }
                if let Some(child) = forked {
                    spaces.push(Some(child));
                    wrote.push(wrote[s].clone());
                }
                let mut mapped: BTreeMap<u64, u16> = BTreeMap::new();
                for (i, sp) in spaces.iter().enumerate() {
                    for (p, e) in sp.iter().flatten() {
                        prop_assert_eq!(memory[&e.frame], wrote[i][p], "space {} page {} reads another's write", i, p);
                        *mapped.entry(e.frame).or_default() += 1;
                    }
                }
                for sp in spaces.iter().flatten() {
                    for e in sp.values().filter(|e| !e.cow) {
                        prop_assert_eq!(mapped[&e.frame], 1, "a writable page's frame is mapped elsewhere");
                    }
                }
                for (&f, &n) in &mapped {
                    prop_assert_eq!(a.refs(f), n);
                }
                let frames: BTreeSet<u64> = mapped.keys().copied().collect();
                prop_assert_eq!(a.stats().in_use, frames.len() as u64);
                prop_assert_eq!(a.stats().shared, mapped.values().filter(|&&n| n >= 2).count() as u64);
            }
            for sp in spaces.iter().flatten() {
                for e in sp.values() {
                    prop_assert!(a.free(e.frame));
                }
            }
            prop_assert_eq!(a.stats().in_use, 0);
            prop_assert_eq!(a.stats().shared, 0);
        }

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
