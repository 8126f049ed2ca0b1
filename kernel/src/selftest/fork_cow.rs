//! Copy-on-write at the level of memory maps: `Vm::fork` shares every page, a write copies
//! it (or takes it over once the other side has let go), and the frames in use come back to
//! where they were when both maps are gone. The ring-3 side (fork from a program) is
//! `user_fork`; this test drives the same code from the kernel, page by page, so each
//! count can be checked exactly.

use crate::base::memory;
use crate::proc::vm::{FaultOutcome, MmapRequest, Prot, Vm};

const PAGES: u64 = 8;

fn in_use() -> u64 {
    memory::stats().frames_in_use
}

fn pattern(page: u64, who: u8) -> [u8; 16] {
    let mut b = [who; 16];
    b[..8].copy_from_slice(&page.to_le_bytes());
    b
}

fn read16(vm: &Vm, va: u64) -> Result<[u8; 16], &'static str> {
    let mut b = [0u8; 16];
    vm.read(va, &mut b).map_err(|_| "a page cannot be read")?;
    Ok(b)
}

fn phys(vm: &Vm, va: u64) -> Option<u64> {
    vm.space().translate(va).map(|p| p.phys)
}

pub fn fork_cow() -> Result<(), &'static str> {
    let baseline = in_use();
    {
        let parent = Vm::new().map_err(|_| "no address space")?;
        let req = MmapRequest {
            addr: 0,
            len: PAGES * 4096,
            prot: Prot::READ_WRITE,
            none: false,
            fixed: false,
            noreplace: false,
            noreserve: false,
        };
        let base = parent.mmap(&req, 0).map_err(|_| "mmap failed")?;
        for i in 0..PAGES {
            let va = base + i * 4096;
            if parent.fault(va, true, false, 0) != FaultOutcome::Mapped {
                return Err("a demand-zero page was not mapped");
            }
            parent.write(va, &pattern(i, 0xaa)).map_err(|_| "cannot write the parent's page")?;
        }
        let cow_before = crate::proc::vm::cow_faults();
        let before_fork = in_use();
        let child = parent.fork().map_err(|_| "fork of the map failed")?;
        let tables = in_use() - before_fork;
        println!("fork_cow: fork took {tables} frame(s) for the child's page tables, none for its {PAGES} pages");
        // Root + level 3 + level 2 + level 1 for one small region: 4 page-table frames.
        if tables != 4 {
            return Err("fork allocated frames other than the child's page tables");
        }
        if child.rss() != parent.rss() || child.rss() != PAGES {
            return Err("the child's RSS is not the parent's");
        }
        for i in 0..PAGES {
            let va = base + i * 4096;
            let (p, c) = (parent.space().translate(va), child.space().translate(va));
            match (p, c) {
                (Some(p), Some(c)) if p.phys == c.phys && p.cow && c.cow && !p.prot.write && !c.prot.write => {}
                _ => return Err("a page is not shared copy-on-write after fork"),
            }
            if read16(&child, va)? != pattern(i, 0xaa) {
                return Err("the child does not see the parent's data");
            }
        }
        // The child writes page 0: a copy (one more frame), the parent keeps its bytes.
        let shared0 = phys(&parent, base);
        if child.fault(base, true, false, 1) != FaultOutcome::CopiedOnWrite {
            return Err("a write to a copy-on-write page was not a (minor) fault fixed");
        }
        child.write(base, &pattern(0, 0xcc)).map_err(|_| "cannot write the child's copy")?;
        if in_use() != before_fork + tables + 1 {
            return Err("the copy did not take exactly one frame");
        }
        if phys(&child, base) == shared0 || phys(&parent, base) != shared0 {
            return Err("the copy is not the child's own frame");
        }
        if read16(&parent, base)? != pattern(0, 0xaa) || read16(&child, base)? != pattern(0, 0xcc) {
            return Err("parent and child do not see their own writes");
        }
        // The parent writes page 0 now: nobody else refers to its frame, so it takes it over.
        let before = in_use();
        if parent.fault(base, true, false, 1) != FaultOutcome::CopiedOnWrite || in_use() != before {
            return Err("the last reference to a frame did not take it over without a copy");
        }
        if phys(&parent, base) != shared0 || parent.space().translate(base).is_none_or(|p| p.cow || !p.prot.write) {
            return Err("the taken-over page is not writable in place");
        }
        // A kernel write (a loader, a system call's copy) into a shared page copies it too.
        parent.write(base + 4096, &pattern(1, 0xbb)).map_err(|_| "cannot write the parent's page 1")?;
        if read16(&child, base + 4096)? != pattern(1, 0xaa) {
            return Err("a kernel write into a shared page reached the other map");
        }
        // Reads of a shared page are no fault at all.
        if child.fault(base + 2 * 4096, false, false, 1) != FaultOutcome::Present {
            return Err("a read of a shared page was not simply present");
        }
        let shared_now = hal::frames::with(|f| f.stats().shared);
        println!("fork_cow: {shared_now} frame(s) still shared after 2 copies and 1 take-over");
        if shared_now < PAGES - 2 {
            return Err("the frames counter lost shared frames");
        }
        drop(child);
        if hal::frames::with(|f| f.stats().shared) != shared_now - (PAGES - 2) {
            return Err("the child's end did not unshare its frames");
        }
        // The parent is alone now: each write takes its page over, no copy.
        let before = in_use();
        for i in 2..PAGES {
            if parent.fault(base + i * 4096, true, false, 2) != FaultOutcome::CopiedOnWrite {
                return Err("a write after the child's end was not fixed");
            }
        }
        if in_use() != before {
            return Err("a page was copied although nobody shared it any more");
        }
        // 1 copy + 1 take-over of page 0, 6 take-overs after the child's end (the kernel's
        // own write into page 1 is no fault).
        let cow = crate::proc::vm::cow_faults() - cow_before;
        println!("fork_cow: unix:0:vm cow_fault +{cow}");
        if cow != 8 {
            return Err("cow_fault did not count each copy-on-write fault once");
        }
        parent.teardown(3);
    }
    let after = in_use();
    println!("fork_cow: frames in use {baseline} -> {after}");
    if after != baseline {
        return Err("frames in use did not return to baseline");
    }
    println!("fork_cow: frames back to baseline");
    Ok(())
}
