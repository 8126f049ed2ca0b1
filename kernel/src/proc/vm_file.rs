//! # Programs on `/var`, paged in on demand: major faults and PAGING_SLEEP
//!
//! A program on the ramdisk is in memory already, so `exec.rs` copies its segments into
//! fresh pages at load. A program on `/var` is on the disk: loading it reads only its ELF
//! headers, and each segment becomes a *file-backed* region (`VmaKind::File`, backed by a
//! [`FileSegment`]). Nothing of it is mapped until the program touches it; the first touch
//! of a page faults, and [`page_in`]:
//!
//! 1. asks the memory map what backs the address (`Vm::file_backing`) and which bytes of the
//!    file the page holds (`tally_loader::elf::Segment::file_part`);
//! 2. a page wholly in the `.bss` needs no disk: a zeroed frame, a **minor** fault, as
//!    Linux's anonymous `.bss` mapping gives;
//! 3. otherwise reads those bytes through `fsd` (`fs::VarFile::read_at`), the thread
//!    sleeping in `SleepKind::Paging` — the **PAGING_SLEEP** microstate — until the disk has
//!    answered: a **major** fault (`sched::note_major_fault`: Linux's `maj_flt`, `wait4`'s
//!    `ru_majflt`, taskstats' `ac_majflt`, acct's `ac_majflt`), and the sectors count in
//!    the task's `inblock` as any read of it does;
//! 4. maps a zeroed frame with the bytes copied in (`Vm::install_file_page`), checking
//!    again, since it slept, that the region is still there and the page not mapped by
//!    another thread meanwhile.
//!
//! There is no page cache: every page-in is a private copy of the file's bytes, so a
//! writable page (`.data`) simply is the process's own from the start — what Linux's
//! `MAP_PRIVATE` copy-on-write reaches after the first write — and two processes running the
//! same file each read it. A read error, or a file that shrank under the program, ends the
//! process with SIGBUS, as on Linux. The file stays open (one `fsd` node, shared) until the
//! process's memory is torn down.
//!
//! The fault path sleeps: the page-fault handler runs with interrupts off, on the faulting
//! thread's own kernel stack, holding no lock (the fault came from ring 3, or from a system
//! call's copy, which holds none either); it enables interrupts for the read and disables
//! them again before it returns (`trap/mod.rs`). See `docs/user-mode.md` (section 2).

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};

use tally_loader::elf::Segment;
use tally_loader::PAGE_SIZE;
use tally_runqueue::SleepKind;

use super::vm::{FaultOutcome, Vm};
use crate::fs::VarFile;
use crate::sched;

/// One `PT_LOAD` segment of a program on `/var`: the open file and where the segment's
/// bytes are in it. The region it backs is the segment's pages.
pub struct FileSegment {
    file: Arc<VarFile>,
    seg: Segment,
}

impl FileSegment {
    pub fn new(file: Arc<VarFile>, seg: Segment) -> FileSegment {
        FileSegment { file, seg }
    }

    /// First page of the region.
    pub fn start(&self) -> u64 {
        self.seg.page_start()
    }

    /// One past its last page.
    pub fn end(&self) -> u64 {
        self.seg.page_end()
    }
}

/// Pages read from files since boot (major faults), and file-region pages zero-filled.
static PAGE_INS: AtomicU64 = AtomicU64::new(0);
static ZERO_FILLS: AtomicU64 = AtomicU64::new(0);

/// (pages read from files by faults, `.bss` pages of file regions zero-filled) since boot.
pub fn counts() -> (u64, u64) {
    (PAGE_INS.load(Ordering::Relaxed), ZERO_FILLS.load(Ordering::Relaxed))
}

/// What [`page_in`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageIn {
    /// The page is mapped now (counted as a major or minor fault), or already was: retry.
    Fixed,
    /// No file-backed region allows it (gone meanwhile): SIGSEGV.
    Denied,
    /// No frame can be had: the OOM killer.
    OutOfMemory,
    /// The file could not give the page's bytes (a disk error, or it shrank): SIGBUS.
    IoError,
}

/// Fill the page at `addr` of a file-backed region of `vm` (see the module documentation).
/// Sleeps in PAGING_SLEEP while the disk works: call it with interrupts on and no lock
/// held, from the faulting task. The fault is counted here (major or minor).
pub fn page_in(vm: &Vm, addr: u64) -> PageIn {
    let Some((seg, _prot)) = vm.file_backing(addr) else { return PageIn::Denied };
    let page = addr & !(PAGE_SIZE - 1);
    let (skip, offset, len) = seg.seg.file_part(page);
    let bytes = if len == 0 {
        alloc::vec::Vec::new()
    } else {
        match seg.file.read_at(offset, len as usize, SleepKind::Paging) {
            Ok(b) if b.len() as u64 == len => b,
            Ok(_) | Err(_) => return PageIn::IoError,
        }
    };
    match vm.install_file_page(&seg, page, skip, &bytes, super::current_process_cpu_ticks()) {
        FaultOutcome::Mapped if len > 0 => {
            PAGE_INS.fetch_add(1, Ordering::Relaxed);
            sched::note_major_fault();
            PageIn::Fixed
        }
        FaultOutcome::Mapped => {
            ZERO_FILLS.fetch_add(1, Ordering::Relaxed);
            sched::note_minor_fault();
            PageIn::Fixed
        }
        // Another thread of the process got there first (`install_file_page` never copies).
        FaultOutcome::Present | FaultOutcome::CopiedOnWrite => PageIn::Fixed,
        FaultOutcome::OutOfMemory => PageIn::OutOfMemory,
        FaultOutcome::Denied | FaultOutcome::FilePage => PageIn::Denied,
    }
}
