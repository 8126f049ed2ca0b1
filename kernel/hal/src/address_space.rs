//! # Address spaces: one level-4 page table per user process
//!
//! A user process sees the machine through its own page tables. Its [`AddressSpace`] is a
//! level-4 table (the frame CR3 points to while the process runs) whose two halves play
//! different parts:
//!
//! ```text
//!   0x0000_0000_0000_0000 ┌──────────────────────────────┐
//!                         │ user half: entries 0..256     │  this process's own tables and
//!                         │ (pages mapped USER, NX on     │  frames, built on demand, freed
//!                         │  everything but code)         │  by `clear_user` / drop
//!   0x0000_8000_0000_0000 ├──────────────────────────────┤  (non-canonical hole)
//!   0xffff_8000_0000_0000 │ kernel half: entries 256..512 │  copied from the kernel's table:
//!                         │ (supervisor only)             │  the *same* level-3 tables, so
//!                         └──────────────────────────────┘  every kernel mapping is shared
//! ```
//!
//! The kernel half is copied once at creation; `paging::populate_kernel_half` gave every one
//! of those 256 slots a level-3 table at boot, so they never change and the copies never go
//! stale. Kernel code therefore runs unchanged whichever address space is active — a system
//! call runs on the caller's CR3 — while user code can reach only the user half: the copied
//! entries lack the USER bit, and with SMEP/SMAP (`uaccess.rs`) the kernel in turn cannot
//! run user pages or touch them by accident.
//!
//! Where it sits in the flow: the safe memory map in the kernel's `proc/vm.rs` decides
//! *what* may be mapped where (regions, demand-zero faults, `brk`) and calls the page-level
//! operations here; `context::switch` loads the next thread's [`AddressSpace::root`] into
//! CR3; `uaccess.rs` checks user pointers against [`AddressSpace::translate`]. Every frame a
//! space takes — user pages and the page tables of the user half — comes from the frame pool
//! ([`crate::frames`]) and goes back to it when the space is cleared or dropped, so the
//! frames-in-use counter returns to its baseline after a process is gone.
//!
//! All edits happen under the page-table lock with interrupts disabled (`paging::with_lock`).

use core::sync::atomic::{AtomicU64, Ordering};
use x86_64::registers::control::{Cr3, Cr3Flags};
use x86_64::structures::paging::page_table::PageTableEntry;
use x86_64::structures::paging::{PageTable, PageTableFlags, PhysFrame};
use x86_64::PhysAddr;

use super::paging;

/// First address above the user half (the lower canonical half ends just below it).
pub const USER_END: u64 = tally_uapi::layout::USER_END;
pub const PAGE_SIZE: u64 = 4096;

/// What user code may do with a page. Every user page is readable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prot {
    pub write: bool,
    pub exec: bool,
}

impl Prot {
    pub const READ: Prot = Prot { write: false, exec: false };
    pub const READ_WRITE: Prot = Prot { write: true, exec: false };
    pub const READ_EXEC: Prot = Prot { write: false, exec: true };

    /// The union of two protections (a page shared by two ELF segments gets both).
    pub fn union(self, other: Prot) -> Prot {
        Prot { write: self.write || other.write, exec: self.exec || other.exec }
    }

    fn flags(self) -> PageTableFlags {
        let mut f = PageTableFlags::PRESENT | PageTableFlags::USER_ACCESSIBLE;
        if self.write {
            f |= PageTableFlags::WRITABLE;
        }
        if !self.exec {
            f |= PageTableFlags::NO_EXECUTE;
        }
        f
    }

    fn from_flags(f: PageTableFlags) -> Prot {
        Prot { write: f.contains(PageTableFlags::WRITABLE), exec: !f.contains(PageTableFlags::NO_EXECUTE) }
    }
}

/// A mapped user page, as [`AddressSpace::translate`] finds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserPage {
    /// Physical address of the frame.
    pub phys: u64,
    /// What user code may do with it now (a copy-on-write page is not writable yet).
    pub prot: Prot,
    /// A private writable page shared copy-on-write since a `fork`: the first write copies
    /// it (or takes it over, if nobody else refers to the frame any more).
    pub cow: bool,
}

/// What [`AddressSpace::break_cow`] did about a write to a copy-on-write page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CowBreak {
    /// The frame was still shared: the page now has a copy of its own.
    Copied,
    /// Nobody else referred to the frame any more: the page simply became writable again.
    TookOver,
    /// The page is not copy-on-write (or not mapped): nothing done.
    NotCow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpaceError {
    /// The frame pool is empty.
    OutOfFrames,
    /// There is already a page at that address.
    AlreadyMapped,
    /// There is no page at that address.
    NotMapped,
    /// The address is not page-aligned or not in the user half.
    BadAddress,
}

/// Is `[addr, addr + len)` inside the user half (and not wrapping around)?
#[inline]
pub fn is_user_range(addr: u64, len: u64) -> bool {
    addr.checked_add(len).is_some_and(|end| end <= USER_END)
}

/// A process's page tables. Dropping it frees every frame it holds (switching to the
/// kernel's table first if it is the active one).
pub struct AddressSpace {
    /// Physical address of the level-4 table: the CR3 value.
    root: u64,
}

/// Level-4 .. level-1 indexes of a virtual address.
fn indexes(va: u64) -> [usize; 4] {
    [(va >> 39) as usize & 511, (va >> 30) as usize & 511, (va >> 21) as usize & 511, (va >> 12) as usize & 511]
}

/// The page table in frame `phys`.
///
/// # Safety
/// `phys` must be a page-table frame owned by an address space (or the kernel's root), the
/// page-table lock must be held for as long as the reference lives, and no other reference
/// to that table may exist meanwhile.
unsafe fn table_at<'a>(phys: u64) -> &'a mut PageTable {
    // SAFETY: the caller's contract; every frame is reachable through the physical window.
    unsafe { &mut *(paging::phys_to_virt(phys) as *mut PageTable) }
}

/// Parent entries of the user half allow everything; the leaf decides (the CPU ANDs the
/// permission bits of all four levels).
/// A leaf entry mapping a frame the space does not own: a [`crate::shared_page::SharedPage`]
/// (one of the bits the CPU leaves to the OS). Such a frame is never freed nor counted as
/// the process's memory here, and its protection never changes; its owner unmaps it.
const SHARED: PageTableFlags = PageTableFlags::BIT_9;
/// A leaf entry of a private writable page that `fork` shared: mapped read-only in every
/// space that refers to the frame (whose reference count, `tally_frames`, says how many), and
/// copied at the first write ([`AddressSpace::break_cow`]). Linux keeps this in the VMA
/// (`VM_WRITE` without the PTE's write bit); Tally keeps it in the entry, one of the bits the
/// CPU leaves to the OS, so the page tables alone say which pages must be copied.
const COW: PageTableFlags = PageTableFlags::BIT_10;

const PARENT_FLAGS: PageTableFlags =
    PageTableFlags::PRESENT.union(PageTableFlags::WRITABLE).union(PageTableFlags::USER_ACCESSIBLE);

impl AddressSpace {
    /// A new, empty user half with the kernel half shared.
    pub fn new() -> Result<AddressSpace, SpaceError> {
        paging::with_lock(|| {
            let root = crate::frames::lock().alloc().ok_or(SpaceError::OutOfFrames)?;
            paging::zero_frame(root);
            // SAFETY: `root` was just allocated (nobody else refers to it); the kernel's root
            // is only edited under the page-table lock, which is held.
            let (new, kernel) = unsafe { (table_at(root), table_at(paging::kernel_root())) };
            for i in 256..512 {
                let mut flags = kernel[i].flags();
                flags.remove(PageTableFlags::USER_ACCESSIBLE);
                new[i].set_addr(kernel[i].addr(), flags);
            }
            Ok(AddressSpace { root })
        })
    }

    /// The value to load into CR3 to run in this address space.
    pub fn root(&self) -> u64 {
        self.root
    }

    /// Is this the address space the CPU is using now?
    pub fn is_active(&self) -> bool {
        current_root() == self.root
    }

    /// The level-1 entry for `va`, creating the missing tables from `frames` if given.
    ///
    /// # Safety
    /// The page-table lock must be held while the returned reference lives.
    // The entry is not in `self` but in a page-table frame this space owns, reached through
    // the physical-memory window; the lock, not the borrow of `self`, makes it exclusive.
    #[allow(clippy::mut_from_ref)]
    unsafe fn leaf<'a>(
        &'a self,
        va: u64,
        mut frames: Option<&mut tally_frames::FrameAllocator>,
    ) -> Result<&'a mut PageTableEntry, SpaceError> {
        let idx = indexes(va);
        // SAFETY: the root is this space's own table; the caller holds the lock.
        let mut table = unsafe { table_at(self.root) };
        for &i in &idx[..3] {
            let e = &mut table[i];
            if e.is_unused() {
                let f = frames.as_deref_mut().ok_or(SpaceError::NotMapped)?;
                let phys = f.alloc().ok_or(SpaceError::OutOfFrames)?;
                paging::zero_frame(phys);
                e.set_addr(PhysAddr::new(phys), PARENT_FLAGS);
            } else if e.flags().contains(PageTableFlags::HUGE_PAGE) {
                // Never created in the user half; refuse rather than misread it.
                return Err(SpaceError::NotMapped);
            }
            // SAFETY: a present, non-huge entry of the user half points to a page-table
            // frame this space allocated; the lock is held.
            table = unsafe { table_at(e.addr().as_u64()) };
        }
        Ok(&mut table[idx[3]])
    }

    fn check(va: u64) -> Result<(), SpaceError> {
        if !va.is_multiple_of(PAGE_SIZE) || !is_user_range(va, PAGE_SIZE) {
            return Err(SpaceError::BadAddress);
        }
        Ok(())
    }

    /// Map a fresh zeroed frame at user page `va` with `prot`.
    pub fn map_zeroed(&self, va: u64, prot: Prot) -> Result<(), SpaceError> {
        self.map_free_entry(va, |frames| {
            let phys = frames.alloc().ok_or(SpaceError::OutOfFrames)?;
            paging::zero_frame(phys);
            Ok((phys, prot.flags()))
        })
    }

    /// Map the frame of a shared page (owned elsewhere) at user page `va`: readable by user
    /// code, not writable, not executable.
    pub(crate) fn map_shared_frame(&self, va: u64, phys: u64) -> Result<(), SpaceError> {
        self.map_free_entry(va, |_| Ok((phys, Prot::READ.flags() | SHARED)))
    }

    /// Point the unused entry of user page `va` (its page tables made as needed) at the frame
    /// and flags `frame` gives; `AlreadyMapped` if the page is mapped (nothing changes then).
    fn map_free_entry(
        &self,
        va: u64,
        frame: impl FnOnce(&mut tally_frames::FrameAllocator) -> Result<(u64, PageTableFlags), SpaceError>,
    ) -> Result<(), SpaceError> {
        Self::check(va)?;
        paging::with_lock(|| {
            let mut frames = crate::frames::lock();
            // SAFETY: the page-table lock is held (with_lock).
            let entry = unsafe { self.leaf(va, Some(&mut frames))? };
            if !entry.is_unused() {
                return Err(SpaceError::AlreadyMapped);
            }
            let (phys, flags) = frame(&mut frames)?;
            entry.set_addr(PhysAddr::new(phys), flags);
            // A not-present entry is never cached by the TLB: no flush needed.
            Ok(())
        })
    }

    /// Unmap user page `va` if it maps shared frame `phys` (else leave it: the space was
    /// cleared, or the address reused since). The frame is not freed: its owner does that.
    pub(crate) fn unmap_shared_frame(&self, va: u64, phys: u64) {
        if Self::check(va).is_err() {
            return;
        }
        paging::with_lock(|| {
            // SAFETY: the page-table lock is held.
            let Ok(entry) = (unsafe { self.leaf(va, None) }) else { return };
            if entry.flags().contains(SHARED) && entry.addr().as_u64() == phys {
                entry.set_unused();
                self.flush(va);
            }
        })
    }

    /// Unmap every page mapped in `[start, end)` (page-aligned user addresses) and free
    /// their frames; returns how many. Shared pages (the vvar area) stay. Walks only the page tables that exist, so a huge,
    /// sparsely touched range costs what is mapped in it, not its size. Emptied page
    /// tables stay until the space is cleared.
    pub fn unmap_range(&self, start: u64, end: u64) -> u64 {
        if start >= end
            || !start.is_multiple_of(PAGE_SIZE)
            || !end.is_multiple_of(PAGE_SIZE)
            || !is_user_range(start, end - start)
        {
            return 0;
        }
        fn level(
            phys: u64,
            depth: usize,
            base: u64,
            start: u64,
            end: u64,
            freed: &mut u64,
            frames: &mut tally_frames::FrameAllocator,
        ) {
            // Bytes covered by one entry at this depth: 512 GiB, 1 GiB, 2 MiB, 4 KiB.
            let span = 1u64 << (39 - 9 * depth);
            // SAFETY: `phys` is a page-table frame of this space (the root, or reached
            // through a present, non-huge user-half entry), and the caller holds the lock.
            let table = unsafe { table_at(phys) };
            let first = ((start.max(base) - base) / span) as usize;
            let last = ((end - 1).min(base + 512 * span - 1) - base) / span;
            for i in first..=(last as usize) {
                let e = &mut table[i];
                if e.is_unused() {
                    continue;
                }
                let lo = base + i as u64 * span;
                if depth == 3 && e.flags().contains(SHARED) {
                    continue;
                } else if depth == 3 {
                    frames.free(e.addr().as_u64());
                    e.set_unused();
                    *freed += 1;
                } else if !e.flags().contains(PageTableFlags::HUGE_PAGE) {
                    level(e.addr().as_u64(), depth + 1, lo, start, end, freed, frames);
                }
            }
        }
        let mut freed = 0;
        paging::with_lock(|| {
            let mut frames = crate::frames::lock();
            level(self.root, 0, 0, start, end, &mut freed, &mut frames);
            if freed > 0 && self.is_active() {
                reload_root();
            }
        });
        freed
    }

    /// Change the protection of mapped user page `va`. False if nothing is mapped there.
    pub fn protect(&self, va: u64, prot: Prot) -> bool {
        if Self::check(va).is_err() {
            return false;
        }
        paging::with_lock(|| {
            // SAFETY: the page-table lock is held.
            let Ok(entry) = (unsafe { self.leaf(va, None) }) else { return false };
            if entry.is_unused() || entry.flags().contains(SHARED) {
                return false;
            }
            let phys = entry.addr();
            let mut flags = prot.flags();
            if entry.flags().contains(COW) {
                // Still shared with another space: writable only once copied.
                flags.remove(PageTableFlags::WRITABLE);
                if prot.write {
                    flags.insert(COW);
                }
            }
            entry.set_addr(phys, flags);
            self.flush(va);
            true
        })
    }

    /// The page mapped at user address `va` (any address in the page), if any.
    pub fn translate(&self, va: u64) -> Option<UserPage> {
        let page = va & !(PAGE_SIZE - 1);
        Self::check(page).ok()?;
        paging::with_lock(|| {
            // SAFETY: the page-table lock is held.
            let entry = unsafe { self.leaf(page, None) }.ok()?;
            let f = entry.flags();
            if !f.contains(PageTableFlags::PRESENT | PageTableFlags::USER_ACCESSIBLE) {
                return None;
            }
            Some(UserPage { phys: entry.addr().as_u64(), prot: Prot::from_flags(f), cow: f.contains(COW) })
        })
    }

    /// Copy `bytes` into this space's memory at user address `va`, through the kernel's
    /// physical-memory window (so it works whether or not the space is active, and whatever
    /// the pages' protection: this is how a loader fills read-only code pages). Every page
    /// touched must be mapped and the space's own: a shared page (`SharedPage`, which only
    /// its owner writes) is `NotMapped` here.
    /// A copy-on-write page is copied first (the kernel writes as the space's owner: the
    /// other spaces sharing the frame must not see the bytes).
    pub fn write(&self, va: u64, bytes: &[u8]) -> Result<(), SpaceError> {
        if is_user_range(va, bytes.len() as u64) && !bytes.is_empty() {
            let mut page = va & !(PAGE_SIZE - 1);
            while page < va + bytes.len() as u64 {
                self.break_cow(page)?;
                page += PAGE_SIZE;
            }
        }
        self.each_chunk(va, bytes.len() as u64, false, |phys, done, n| {
            // SAFETY: `phys..phys+n` lies in a frame of this space (found under the lock,
            // which is still held, so it cannot be freed meanwhile); the kernel reaches it
            // through the physical window; `bytes[done..done+n]` is in bounds.
            unsafe {
                core::ptr::copy_nonoverlapping(bytes.as_ptr().add(done), paging::phys_to_virt(phys) as *mut u8, n)
            };
        })
    }

    /// Copy from this space's memory at user address `va` into `buf`, through the physical
    /// window (for loaders and tests; system calls use `uaccess`). Every page must be mapped.
    pub fn read(&self, va: u64, buf: &mut [u8]) -> Result<(), SpaceError> {
        let len = buf.len() as u64;
        let dst = buf.as_mut_ptr();
        self.each_chunk(va, len, true, |phys, done, n| {
            // SAFETY: as in `write`, with the copy going the other way; `dst` points to
            // `buf`, which is exclusively borrowed for this call.
            unsafe { core::ptr::copy_nonoverlapping(paging::phys_to_virt(phys) as *const u8, dst.add(done), n) };
        })
    }

    /// Call `f(phys, offset_in_range, len)` for each page-sized piece of `[va, va+len)`, under
    /// the page-table lock; fail (having done nothing) unless every page is mapped (and, without
    /// `shared_ok`, none is a shared page).
    fn each_chunk(
        &self,
        va: u64,
        len: u64,
        shared_ok: bool,
        mut f: impl FnMut(u64, usize, usize),
    ) -> Result<(), SpaceError> {
        if !is_user_range(va, len) {
            return Err(SpaceError::BadAddress);
        }
        paging::with_lock(|| {
            for pass in 0..2 {
                let mut addr = va;
                while addr < va + len {
                    let page = addr & !(PAGE_SIZE - 1);
                    let n = (page + PAGE_SIZE).min(va + len) - addr;
                    // SAFETY: the page-table lock is held.
                    let entry = unsafe { self.leaf(page, None) }.map_err(|_| SpaceError::NotMapped)?;
                    if entry.is_unused() || (!shared_ok && entry.flags().contains(SHARED)) {
                        return Err(SpaceError::NotMapped);
                    }
                    if pass == 1 {
                        f(entry.addr().as_u64() + (addr - page), (addr - va) as usize, n as usize);
                    }
                    addr += n;
                }
            }
            Ok(())
        })
    }

    /// A copy of this space's user half for a forked child, sharing every frame
    /// copy-on-write (Linux's `dup_mmap` → `copy_page_range`): the child gets page tables of
    /// its own whose leaves point at the same frames, each frame's reference count goes up by
    /// one (`tally_frames`), and every writable page becomes read-only and [`COW`] in *both*
    /// spaces, so whichever writes first gets a copy ([`AddressSpace::break_cow`]). Read-only
    /// pages (code) are simply shared. Shared pages owned elsewhere (the vvar clock pages) are
    /// not copied: the child's threads get their own. `OutOfFrames` if a page table for the
    /// child cannot be had (or a frame's count is at its limit); the partial copy is freed
    /// and the parent keeps working (its pages stay COW: its next write takes them over).
    pub fn fork_cow(&self) -> Result<AddressSpace, SpaceError> {
        let child = AddressSpace::new()?;
        let result = paging::with_lock(|| {
            let mut frames = crate::frames::lock();
            let mut visit = |va: u64, e: &mut PageTableEntry| -> Result<(), SpaceError> {
                let mut flags = e.flags();
                if flags.contains(SHARED) {
                    return Ok(());
                }
                let phys = e.addr();
                // SAFETY: the page-table lock is held; the child's tables are other frames than
                // the parent's entry `e` lives in (the child's were all allocated just now).
                let ce = unsafe { child.leaf(va, Some(&mut frames))? };
                if !frames.share(phys.as_u64()) {
                    return Err(SpaceError::OutOfFrames);
                }
                if flags.contains(PageTableFlags::WRITABLE) {
                    flags.remove(PageTableFlags::WRITABLE);
                    flags.insert(COW);
                    e.set_flags(flags);
                }
                ce.set_addr(phys, flags);
                Ok(())
            };
            let r = self.for_each_leaf(&mut visit);
            if self.is_active() {
                // Pages just made read-only may be cached writable in the TLB.
                reload_root();
            }
            r
        });
        // On failure `child` is dropped here, outside the lock: what it holds is given back.
        result.map(|()| child)
    }

    /// A write to copy-on-write page `va` (from a user write fault, or a system call
    /// writing user memory): if the frame is still shared, copy it into a fresh frame mapped
    /// writable here and drop this space's reference to the old one; if this space is the
    /// last to refer to it, just make the page writable again (Linux's `do_wp_page` reuse).
    /// `OutOfFrames` if a copy was needed and no frame is left (nothing changes then).
    pub fn break_cow(&self, va: u64) -> Result<CowBreak, SpaceError> {
        Self::check(va)?;
        paging::with_lock(|| {
            let mut frames = crate::frames::lock();
            // SAFETY: the page-table lock is held.
            let Ok(entry) = (unsafe { self.leaf(va, None) }) else { return Ok(CowBreak::NotCow) };
            if entry.is_unused() || !entry.flags().contains(COW) {
                return Ok(CowBreak::NotCow);
            }
            let old = entry.addr().as_u64();
            let mut flags = entry.flags();
            flags.remove(COW);
            flags.insert(PageTableFlags::WRITABLE);
            // The decision and the counts are `tally_frames`' (host-tested with a model of
            // several spaces); the copy and the entry are the page tables'.
            let outcome = match frames.copy_on_write(old).ok_or(SpaceError::OutOfFrames)? {
                tally_frames::CowWrite::TakeOver => {
                    entry.set_flags(flags);
                    CowBreak::TookOver
                }
                tally_frames::CowWrite::Copy { new } => {
                    // SAFETY: `old` is a frame this space maps (it holds a reference, so it
                    // cannot be freed meanwhile: the lock is held) and `new` was just
                    // allocated, so the two 4 KiB ranges are distinct; both are reached
                    // through the physical window.
                    unsafe {
                        core::ptr::copy_nonoverlapping(
                            paging::phys_to_virt(old) as *const u8,
                            paging::phys_to_virt(new) as *mut u8,
                            PAGE_SIZE as usize,
                        )
                    };
                    entry.set_addr(PhysAddr::new(new), flags);
                    frames.free(old);
                    CowBreak::Copied
                }
            };
            self.flush(va);
            Ok(outcome)
        })
    }

    /// Call `f(va, entry)` for every present leaf entry of the user half (shared pages
    /// included), in address order, stopping at the first error. Call with the page-table
    /// lock held.
    fn for_each_leaf(
        &self,
        f: &mut dyn FnMut(u64, &mut PageTableEntry) -> Result<(), SpaceError>,
    ) -> Result<(), SpaceError> {
        fn level(
            phys: u64,
            depth: usize,
            base: u64,
            f: &mut dyn FnMut(u64, &mut PageTableEntry) -> Result<(), SpaceError>,
            range: core::ops::Range<usize>,
        ) -> Result<(), SpaceError> {
            let span = 1u64 << (39 - 9 * depth);
            // SAFETY: `phys` is a page-table frame of this space (the root or reached through
            // a present, non-huge user-half entry) and the caller holds the lock.
            let table = unsafe { table_at(phys) };
            for i in range {
                let e = &mut table[i];
                if e.is_unused() {
                    continue;
                }
                let va = base + i as u64 * span;
                if depth == 3 {
                    f(va, e)?;
                } else if !e.flags().contains(PageTableFlags::HUGE_PAGE) {
                    level(e.addr().as_u64(), depth + 1, va, f, 0..512)?;
                }
            }
            Ok(())
        }
        level(self.root, 0, 0, f, 0..256)
    }

    /// Number of user pages mapped (walks the user half; for tests and reports).
    pub fn mapped_pages(&self) -> u64 {
        let mut count = 0;
        paging::with_lock(|| self.walk_user(&mut |_, is_leaf| count += is_leaf as u64, false));
        count
    }

    /// Free every user page and every page table of the user half, leaving an empty user
    /// half (the kernel half is untouched). Safe while the space is active: the kernel runs
    /// from the upper half, and the TLB is flushed. Returns the frames freed.
    pub fn clear_user(&self) -> u64 {
        let mut freed = 0;
        paging::with_lock(|| {
            let mut frames = crate::frames::lock();
            self.walk_user(
                &mut |phys, _| {
                    frames.free(phys);
                    freed += 1;
                },
                true,
            );
            if self.is_active() {
                // Reloading CR3 drops every non-global translation and cached table entry.
                reload_root();
            }
        });
        freed
    }

    /// Visit every frame of the user half bottom-up: `visit(phys, is_leaf_page)` for each
    /// mapped page and then for each page table below the root; with `clear`, unlink them.
    /// Shared pages are not the space's: unlinked with `clear`, never visited.
    /// Call with the page-table lock held.
    fn walk_user(&self, visit: &mut dyn FnMut(u64, bool), clear: bool) {
        fn level(
            phys: u64,
            depth: usize,
            visit: &mut dyn FnMut(u64, bool),
            clear: bool,
            range: core::ops::Range<usize>,
        ) {
            // SAFETY: `phys` is a page-table frame of this space (the root or reached through
            // a present, non-huge user-half entry) and the caller holds the lock.
            let table = unsafe { table_at(phys) };
            for i in range {
                let e = &mut table[i];
                if e.is_unused() {
                    continue;
                }
                let child = e.addr().as_u64();
                if depth == 3 && e.flags().contains(SHARED) {
                    // Not ours: unlinked below with `clear`, never freed nor counted.
                } else if depth == 3 {
                    visit(child, true);
                } else if !e.flags().contains(PageTableFlags::HUGE_PAGE) {
                    level(child, depth + 1, visit, clear, 0..512);
                    visit(child, false);
                }
                if clear {
                    e.set_unused();
                }
            }
        }
        level(self.root, 0, visit, clear, 0..256);
    }

    /// Flush the TLB entry of `va` if this space is the active one (an inactive space has no
    /// TLB entries: every CR3 load drops them).
    fn flush(&self, va: u64) {
        if self.is_active() {
            x86_64::instructions::tlb::flush(x86_64::VirtAddr::new(va));
        }
    }
}

impl Drop for AddressSpace {
    fn drop(&mut self) {
        super::cpu::without_interrupts(|| {
            if self.is_active() {
                load_root(paging::kernel_root());
            }
            self.clear_user();
            paging::with_lock(|| crate::frames::lock().free(self.root));
        });
    }
}

/// CR3's address bits as last written by [`load_root`] (0 before [`init`]): reading CR3 on
/// every context switch would cost more than this comparison.
static ACTIVE_ROOT: AtomicU64 = AtomicU64::new(0);

/// Is the CPU running on a user process's address space (not the kernel's own table)? Then
/// every page mapped in the user half is a user page of that process: `AddressSpace::new`
/// leaves the user half empty and every mapping made there carries `USER_ACCESSIBLE`.
#[inline]
pub fn user_space_active() -> bool {
    let root = ACTIVE_ROOT.load(Ordering::Relaxed);
    root != 0 && root != paging::kernel_root()
}

/// The level-4 table the CPU is using.
#[inline]
pub fn current_root() -> u64 {
    match ACTIVE_ROOT.load(Ordering::Relaxed) {
        0 => Cr3::read().0.start_address().as_u64(),
        root => root,
    }
}

/// Load `root` into CR3 (no-op if it is already there: a reload would flush the TLB).
/// Call with interrupts disabled.
pub(super) fn load_root(root: u64) {
    if current_root() != root {
        ACTIVE_ROOT.store(root, Ordering::Relaxed);
        // SAFETY: `root` is the kernel's level-4 table or one made by `AddressSpace::new`,
        // both of which map the whole kernel half identically, so the code, stack and data
        // in use right now stay mapped across the switch.
        unsafe { Cr3::write(PhysFrame::containing_address(PhysAddr::new(root)), Cr3Flags::empty()) };
    }
}

/// Write CR3 with its own value: flushes every non-global TLB entry.
fn reload_root() {
    let (frame, flags) = Cr3::read();
    // SAFETY: the same level-4 table stays active; only cached translations are dropped.
    unsafe { Cr3::write(frame, flags) };
}

/// Make sure the kernel half is complete before the first address space copies it.
pub fn init() {
    ACTIVE_ROOT.store(Cr3::read().0.start_address().as_u64(), Ordering::Relaxed);
    let added = paging::populate_kernel_half();
    log::debug!("address spaces: {added} upper-half level-3 tables preallocated");
}
