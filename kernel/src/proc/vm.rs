//! # A process's memory map: which user addresses it may use, and demand-zero paging
//!
//! The page tables (`hal::address_space`) say what is mapped *now*; this module says what a
//! process is *allowed* to have mapped — its regions, or VMAs ("virtual memory areas", as
//! Linux calls them): the program image, the heap that `brk` moves, the stack, anonymous
//! `mmap`s. The difference is what makes **demand-zero paging** work: a heap or stack page
//! costs nothing until the program first touches it; the page fault that follows asks
//! [`Vm::fault`] whether a region allows that access, and if so a zeroed frame is mapped and
//! the instruction restarted — a *minor* fault, charged to ONCPU_TRAP. Anything else is a
//! real fault: SIGSEGV. The user half's layout is ABI (`tally_uapi::layout`). A program on
//! `/var` has file-backed regions instead of loaded ones (`VmaKind::File`): a fault there is
//! answered `FilePage`, and `vm_file.rs` reads the page from the file (a major fault).
//!
//! The map also keeps the process's memory numbers (`tally_memacct`): every change of RSS
//! or VM takes `cpu`, the process's CPU time now (TSC ticks, from `cputime.rs`), so the
//! integrals are exact. The region list sits behind a lock taken with interrupts off, so the
//! page-fault handler can never find it held. Layout, faults and `brk`/`mmap` in detail:
//! `docs/user-mode.md`.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use spin::Mutex;
use tally_uapi::errno::{EACCES, EEXIST, EINVAL, ENOMEM};

use tally_memacct::{MemAcct, MemUsage};

use hal::address_space::{is_user_range, AddressSpace, CowBreak, SpaceError, PAGE_SIZE};

use super::vm_file::FileSegment;
pub use hal::address_space::{Prot, USER_END};

// The user half's layout is ABI (`mmap` refuses the guard page, programs name these
// addresses): `tally_uapi::layout` defines it, for the kernel and user space alike.
pub use tally_uapi::layout::{
    USER_HEAP_MAX, USER_IMAGE_BASE, USER_MIN_ADDR, USER_MMAP_BASE, USER_STACK_GUARD, USER_STACK_MAX, USER_STACK_TOP,
};
pub use tally_uapi::msa::vvar::{VVAR_BASE, VVAR_END};
const _: () = assert!(USER_STACK_GUARD == USER_STACK_TOP - USER_STACK_MAX - PAGE_SIZE);
/// Copy-on-write faults served since boot (copies and take-overs): `unix:0:vm`'s
/// `cow_fault`, Solaris' name for them.
static COW_FAULTS: AtomicU64 = AtomicU64::new(0);

/// Copy-on-write faults served since boot.
pub fn cow_faults() -> u64 {
    COW_FAULTS.load(Ordering::Relaxed)
}

/// Most regions a process may have (each `mmap` adds one; Linux's `vm.max_map_count` is
/// 65530): beyond it `mmap` fails with `ENOMEM`.
pub const MAX_REGIONS: usize = 1024;

const fn page_down(a: u64) -> u64 {
    a & !(PAGE_SIZE - 1)
}

/// `a` rounded up to a page boundary, `None` on overflow.
fn page_up(a: u64) -> Option<u64> {
    Some(a.checked_add(PAGE_SIZE - 1)? & !(PAGE_SIZE - 1))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmaKind {
    /// A loaded segment: mapped when loaded, never demand-zero.
    Image,
    /// `[heap start, brk)`, page-rounded: demand-zero.
    Heap,
    /// The stack: demand-zero.
    Stack,
    /// Anonymous memory from `mmap`: demand-zero.
    Anon,
    /// A segment of a program on `/var`: each page is read from the file at its first
    /// touch (a major fault, PAGING_SLEEP), or zero-filled if it lies wholly in the `.bss`.
    /// Its file and offsets: `vm_file.rs`.
    File,
}

/// One region: `[start, end)`, page-aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vma {
    pub start: u64,
    pub end: u64,
    pub prot: Prot,
    pub kind: VmaKind,
    /// False for a `PROT_NONE` region: reserved, but every access faults.
    pub accessible: bool,
}

impl Vma {
    fn contains(&self, addr: u64) -> bool {
        self.start <= addr && addr < self.end
    }

    fn overlaps(&self, start: u64, end: u64) -> bool {
        self.start < end && start < self.end
    }
}

/// What [`Vm::fault`] did about a fault at some address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultOutcome {
    /// A zeroed page was mapped: a minor fault (demand-zero).
    Mapped,
    /// A write to a page `fork` shared: the page was copied, or taken over by its last
    /// user (a minor fault too, as Linux counts `do_wp_page`).
    CopiedOnWrite,
    /// The page is already there with the needed access (a stale TLB entry, or another
    /// thread got there first): just retry.
    Present,
    /// Not allowed: outside every region, or the region forbids the access.
    Denied,
    /// Allowed, but no frame can be had (`oom.rs`: the process is OOM-killed).
    OutOfMemory,
    /// Allowed, in a file-backed region: the page must be read from the file first
    /// (`vm_file::page_in`, which may sleep), so the caller must be able to sleep.
    FilePage,
}

struct Map {
    vmas: Vec<Vma>,
    /// Where the heap starts (page after the image) and its current end (`brk`, unrounded).
    heap_start: u64,
    brk: u64,
    /// User pages mapped now (the resident set).
    rss: u64,
    /// Lowest page of the stack region that has been mapped (its grown extent).
    stack_low: u64,
    acct: MemAcct,
    /// What the process's earlier programs left (an `execve` replaced their maps): their
    /// integrals, and their high-water marks (Linux keeps `maxrss` across an exec too). Every
    /// reading adds them, so the process's numbers span its whole life.
    carried: MemUsage,
    /// What backs each `VmaKind::File` region (by its start): the file and its offsets.
    files: Vec<Arc<FileSegment>>,
}

/// `now` with what earlier programs left: integrals add up, high-water marks take the larger.
fn with_carried(mut now: MemUsage, c: &MemUsage) -> MemUsage {
    now.rss_page_ticks = now.rss_page_ticks.wrapping_add(c.rss_page_ticks);
    now.vm_page_ticks = now.vm_page_ticks.wrapping_add(c.vm_page_ticks);
    now.hiwater_rss_pages = now.hiwater_rss_pages.max(c.hiwater_rss_pages);
    now.hiwater_vm_pages = now.hiwater_vm_pages.max(c.hiwater_vm_pages);
    now
}

impl Map {
    /// The virtual size in pages: every region, the stack only as far as it has grown.
    fn vm_pages(&self) -> u64 {
        self.vmas
            .iter()
            .map(|v| match v.kind {
                VmaKind::Stack => (v.end.saturating_sub(self.stack_low.max(v.start))) / PAGE_SIZE,
                _ => (v.end - v.start) / PAGE_SIZE,
            })
            .sum()
    }

    /// A segment of the program ending at `end` is in place: the heap follows the image
    /// (programs are loaded before they run, so the heap is still empty), and the sizes are
    /// recorded at CPU time 0 (the process has not run).
    fn image_loaded(&mut self, end: u64) {
        if end > self.heap_start {
            self.heap_start = end;
            self.brk = end;
            self.vmas.retain(|v| v.kind != VmaKind::Heap);
        }
        self.account(0);
    }

    /// Record the sizes after a change at process CPU time `cpu`.
    fn account(&mut self, cpu: u64) {
        let vm = self.vm_pages();
        self.acct.set(cpu, self.rss, vm);
    }
}

/// What `mmap` was asked for, already decoded by the system call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmapRequest {
    /// A hint, or with `fixed` the exact address (page-aligned).
    pub addr: u64,
    /// Bytes, > 0 (rounded up to pages here).
    pub len: u64,
    pub prot: Prot,
    /// `PROT_NONE`: reserve the range, allow no access.
    pub none: bool,
    /// `MAP_FIXED`: exactly at `addr`, replacing earlier `mmap` regions there.
    pub fixed: bool,
    /// `MAP_FIXED_NOREPLACE`: exactly at `addr`, fail with `EEXIST` if anything is there.
    pub noreplace: bool,
    /// `MAP_NORESERVE`: not checked against the memory the machine has (`oom.rs`).
    pub noreserve: bool,
}

/// A process's memory: its address space and its regions. Shared (`Arc`) by the process's
/// threads; the last reference frees everything.
pub struct Vm {
    space: Arc<AddressSpace>,
    map: Mutex<Map>,
    /// Processes using this map (Linux's `mm_users`): 1, plus one per `vfork` or
    /// `clone(CLONE_VM)` child still using it. (A process's threads share it under one count.)
    /// The last process to let go ([`Vm::release`]) frees the pages.
    users: AtomicUsize,
}

impl Vm {
    /// An empty user half (the kernel half shared), no regions, the heap at the image base.
    pub fn new() -> Result<Arc<Vm>, i32> {
        let space = AddressSpace::new().map_err(|_| ENOMEM)?;
        Ok(Arc::new(Vm {
            space: Arc::new(space),
            map: Mutex::new(Map {
                vmas: Vec::new(),
                heap_start: USER_MIN_ADDR,
                brk: USER_MIN_ADDR,
                rss: 0,
                stack_low: USER_STACK_TOP,
                acct: MemAcct::default(),
                carried: MemUsage::default(),
                files: Vec::new(),
            }),
            users: AtomicUsize::new(1),
        }))
    }

    /// A copy of this memory map for a forked child (`fork.rs`): the same regions, heap and
    /// stack extent, and every page shared copy-on-write (`AddressSpace::fork_cow`). The
    /// child's resident set is the parent's — the pages it maps, shared ones included, as
    /// Linux counts RSS — and its accounting starts fresh: its integrals at its own CPU time
    /// 0, its high-water marks at its sizes (Linux's `dup_mm` sets `hiwater_rss` and
    /// `hiwater_vm` to the parent's current sizes). The parent's numbers do not change.
    /// `ENOMEM` if the child's page tables cannot be had, or only the kernel's reserve of
    /// frames is left.
    pub fn fork(&self) -> Result<Arc<Vm>, i32> {
        // Only the kernel's reserve left (`oom.rs`): the child's page tables would eat into
        // what kernel stacks and page tables need; refused as Linux's fork is when memory is
        // short.
        if !super::oom::frame_available() {
            return Err(ENOMEM);
        }
        self.with_map(|m| {
            let space = self.space.fork_cow().map_err(|_| ENOMEM)?;
            let mut child = Map {
                vmas: m.vmas.clone(),
                heap_start: m.heap_start,
                brk: m.brk,
                rss: m.rss,
                stack_low: m.stack_low,
                acct: MemAcct::default(),
                carried: MemUsage::default(),
                // A `/var` program's regions: the pages mapped so far are shared copy-on-write
                // like anonymous ones (each is already a private copy of the file's bytes);
                // those not read yet are read by each process on its own first touch.
                files: m.files.clone(),
            };
            child.account(0);
            Ok(Arc::new(Vm { space: Arc::new(space), map: Mutex::new(child), users: AtomicUsize::new(1) }))
        })
    }

    /// One more process uses this map (a `vfork` or `clone(CLONE_VM)` child).
    pub fn add_user(&self) {
        self.users.fetch_add(1, Ordering::Relaxed);
    }

    /// A process lets go of this map (its last thread exits, or it execs another program):
    /// the last one frees every page ([`Vm::teardown`]) and gets the final numbers; one that
    /// only borrowed it (a `vfork` child) frees nothing and gets the sizes and high-water
    /// marks without integrals — those belong to the map's owner, whose CPU time they
    /// integrate, and must not be counted twice. `cpu`: the process's CPU time now.
    pub fn release(&self, cpu: u64) -> MemUsage {
        if self.users.fetch_sub(1, Ordering::Relaxed) <= 1 {
            self.users.store(0, Ordering::Relaxed);
            return self.teardown(cpu);
        }
        let u = self.with_map(|m| m.acct.usage(0));
        MemUsage { rss_page_ticks: 0, vm_page_ticks: 0, ..u }
    }

    /// This map replaces one whose final numbers were `old` (`execve`): its readings from now
    /// on include `old`'s integrals and high-water marks (not its sizes: that map is gone).
    pub fn carry(&self, old: &MemUsage) {
        self.with_map(|m| {
            let c = with_carried(m.carried, &MemUsage { rss_pages: 0, vm_pages: 0, ..*old });
            m.carried = MemUsage { rss_pages: 0, vm_pages: 0, ..c };
        });
    }

    /// The page tables (for `Thread::spawn_user` and `uaccess`).
    pub fn space(&self) -> &Arc<AddressSpace> {
        &self.space
    }

    fn with_map<R>(&self, f: impl FnOnce(&mut Map) -> R) -> R {
        hal::cpu::without_interrupts(|| f(&mut self.map.lock()))
    }

    /// Load one program segment (an ELF `PT_LOAD`): `[vaddr, vaddr + memsz)` gets fresh
    /// pages with `prot`, the first `data.len()` bytes are copied in, the rest stays zero
    /// (`.bss`). A page shared with a previous segment keeps its contents and gets both
    /// protections. The heap then starts at the first page after the highest segment.
    /// Errors: `EINVAL` (range outside `USER_MIN_ADDR..USER_MMAP_BASE`, `data` longer than
    /// `memsz`), `EEXIST` (overlaps a non-image region), `ENOMEM`.
    pub fn load_segment(&self, vaddr: u64, data: &[u8], memsz: u64, prot: Prot) -> Result<(), i32> {
        if (data.len() as u64) > memsz || memsz == 0 {
            return Err(EINVAL);
        }
        let end = vaddr.checked_add(memsz).ok_or(EINVAL)?;
        if vaddr < USER_MIN_ADDR || end > USER_MMAP_BASE {
            return Err(EINVAL);
        }
        let (start, end) = (page_down(vaddr), page_up(end).ok_or(EINVAL)?);
        self.with_map(|m| {
            if m.vmas.iter().any(|v| v.kind != VmaKind::Image && v.overlaps(start, end)) {
                return Err(EEXIST);
            }
            let mut page = start;
            while page < end {
                match self.space.map_zeroed(page, prot) {
                    Ok(()) => m.rss += 1,
                    Err(SpaceError::AlreadyMapped) => {
                        let old = self.space.translate(page).map_or(prot, |p| p.prot);
                        self.space.protect(page, old.union(prot));
                    }
                    Err(_) => return Err(ENOMEM),
                }
                page += PAGE_SIZE;
            }
            self.space.write(vaddr, data).map_err(|_| EINVAL)?;
            m.vmas.push(Vma { start, end, prot, kind: VmaKind::Image, accessible: true });
            m.image_loaded(end);
            Ok(())
        })
    }

    /// Create the stack region and map its top pages with `initial` (arguments, environment,
    /// auxiliary vector: the loader's business) copied to the very top, 16-byte aligned.
    /// Returns the initial stack pointer, `(USER_STACK_TOP - initial.len()) & !15`, which the
    /// loader can compute beforehand to build pointers into `initial` — it is exactly the
    /// `rsp` of `tally_loader::stack::StackImage::build(USER_STACK_TOP, ..)`, whose bytes end
    /// at the stack top. At least one page is mapped even for an empty `initial`.
    pub fn setup_stack(&self, initial: &[u8]) -> Result<u64, i32> {
        let len = initial.len() as u64;
        if len > USER_STACK_MAX / 2 {
            return Err(EINVAL);
        }
        let rsp = (USER_STACK_TOP - len) & !15;
        let start = USER_STACK_TOP - USER_STACK_MAX;
        self.with_map(|m| {
            if m.vmas.iter().any(|v| v.overlaps(start - PAGE_SIZE, USER_STACK_TOP)) {
                return Err(EEXIST);
            }
            let low = page_down(rsp.min(USER_STACK_TOP - PAGE_SIZE));
            let mut page = low;
            while page < USER_STACK_TOP {
                self.space.map_zeroed(page, Prot::READ_WRITE).map_err(|_| ENOMEM)?;
                m.rss += 1;
                page += PAGE_SIZE;
            }
            self.space.write(rsp, initial).map_err(|_| ENOMEM)?;
            m.vmas.push(Vma {
                start,
                end: USER_STACK_TOP,
                prot: Prot::READ_WRITE,
                kind: VmaKind::Stack,
                accessible: true,
            });
            m.stack_low = m.stack_low.min(low);
            m.account(0);
            Ok(rsp)
        })
    }

    /// Copy `bytes` to `va` in this process's memory (pages must be mapped; any protection).
    /// For loaders building a process before it runs.
    #[allow(dead_code)] // for loaders
    pub fn write(&self, va: u64, bytes: &[u8]) -> Result<(), i32> {
        self.space.write(va, bytes).map_err(|_| EINVAL)
    }

    /// Read from this process's memory (pages must be mapped). For tests and loaders.
    pub fn read(&self, va: u64, buf: &mut [u8]) -> Result<(), i32> {
        self.space.read(va, buf).map_err(|_| EINVAL)
    }

    /// A fault at user address `addr` (a `write`, an instruction fetch: `exec`, else a
    /// read): map a zeroed page if a demand-zero region allows that access. `cpu`: the
    /// process's CPU time now (for the memory integrals).
    pub fn fault(&self, addr: u64, write: bool, exec: bool, cpu: u64) -> FaultOutcome {
        if !is_user_range(addr, 1) {
            return FaultOutcome::Denied;
        }
        let page = page_down(addr);
        self.with_map(|m| {
            let Some(vma) = m.vmas.iter().find(|v| v.contains(addr)) else {
                return FaultOutcome::Denied;
            };
            if !vma.accessible || (write && !vma.prot.write) || (exec && !vma.prot.exec) {
                return FaultOutcome::Denied;
            }
            if let Some(p) = self.space.translate(page) {
                if write && p.cow {
                    // A write to a page `fork` shared: copy it, or take it over if the other
                    // side has let go (a minor fault either way, as Linux's do_wp_page).
                    // RSS does not change: the page was, and stays, mapped here.
                    if !super::oom::frame_available() {
                        return FaultOutcome::OutOfMemory;
                    }
                    return match self.space.break_cow(page) {
                        Ok(CowBreak::Copied | CowBreak::TookOver) => {
                            COW_FAULTS.fetch_add(1, Ordering::Relaxed);
                            FaultOutcome::CopiedOnWrite
                        }
                        Ok(CowBreak::NotCow) => FaultOutcome::Present,
                        Err(_) => FaultOutcome::OutOfMemory,
                    };
                }
                // Present and allowed (the region's protection is the page's): stale TLB.
                return FaultOutcome::Present;
            }
            if vma.kind == VmaKind::Image {
                // Image pages are mapped at load time; one missing means it was never part of
                // a segment's page range.
                return FaultOutcome::Denied;
            }
            if vma.kind == VmaKind::File {
                return FaultOutcome::FilePage;
            }
            let kind = vma.kind;
            // Only the kernel's reserve left: this page cannot be had (`oom.rs`).
            if !super::oom::frame_available() {
                return FaultOutcome::OutOfMemory;
            }
            match self.space.map_zeroed(page, vma.prot) {
                Ok(()) => {
                    m.rss += 1;
                    if kind == VmaKind::Stack {
                        m.stack_low = m.stack_low.min(page);
                    }
                    m.account(cpu);
                    FaultOutcome::Mapped
                }
                Err(SpaceError::AlreadyMapped) => FaultOutcome::Present,
                // No frame for the page (or for a page table on the way to it).
                Err(_) => FaultOutcome::OutOfMemory,
            }
        })
    }

    /// Add a file-backed region for `seg` (a `/var` program's segment, `vm_file.rs`) with
    /// `prot`; no page is mapped until touched. The heap then starts after it, as after
    /// [`Vm::load_segment`]. Errors: `EINVAL` (outside `USER_MIN_ADDR..USER_MMAP_BASE`),
    /// `EEXIST` (overlaps a region).
    pub fn map_file(&self, seg: Arc<FileSegment>, prot: Prot) -> Result<(), i32> {
        let (start, end) = (seg.start(), seg.end());
        if start < USER_MIN_ADDR || end > USER_MMAP_BASE || start >= end {
            return Err(EINVAL);
        }
        self.with_map(|m| {
            if m.vmas.iter().any(|v| v.overlaps(start, end)) {
                return Err(EEXIST);
            }
            m.vmas.push(Vma { start, end, prot, kind: VmaKind::File, accessible: true });
            m.files.push(seg);
            m.image_loaded(end);
            Ok(())
        })
    }

    /// The file-backed region holding `addr`: what backs it and its protection.
    pub fn file_backing(&self, addr: u64) -> Option<(Arc<FileSegment>, Prot)> {
        self.with_map(|m| {
            let vma = m.vmas.iter().find(|v| v.contains(addr) && v.kind == VmaKind::File)?;
            let seg = m.files.iter().find(|f| f.start() == vma.start)?;
            Some((Arc::clone(seg), vma.prot))
        })
    }

    /// Map the page at `page` of the file-backed region `seg` (as [`Vm::file_backing`] gave
    /// it): a zeroed frame with `bytes` copied in at `page + skip`. Checked again under the
    /// lock, since the caller slept reading `bytes`: `Present` if the page got there
    /// meanwhile (another thread's fault), `Denied` if the region is gone.
    pub fn install_file_page(
        &self,
        seg: &Arc<FileSegment>,
        page: u64,
        skip: u64,
        bytes: &[u8],
        cpu: u64,
    ) -> FaultOutcome {
        if skip.saturating_add(bytes.len() as u64) > PAGE_SIZE || !page.is_multiple_of(PAGE_SIZE) {
            return FaultOutcome::Denied;
        }
        self.with_map(|m| {
            let Some(vma) = m.vmas.iter().find(|v| v.contains(page) && v.kind == VmaKind::File) else {
                return FaultOutcome::Denied;
            };
            if !m.files.iter().any(|f| Arc::ptr_eq(f, seg)) || vma.start != seg.start() {
                return FaultOutcome::Denied;
            }
            if self.space.translate(page).is_some() {
                return FaultOutcome::Present;
            }
            if !super::oom::frame_available() {
                return FaultOutcome::OutOfMemory;
            }
            match self.space.map_zeroed(page, vma.prot) {
                Ok(()) => {
                    m.rss += 1;
                    if !bytes.is_empty() && self.space.write(page + skip, bytes).is_err() {
                        return FaultOutcome::Denied;
                    }
                    m.account(cpu);
                    FaultOutcome::Mapped
                }
                Err(SpaceError::AlreadyMapped) => FaultOutcome::Present,
                Err(_) => FaultOutcome::OutOfMemory,
            }
        })
    }

    /// `brk(addr)`: move the heap's end. `addr == 0` (or any invalid value) just returns the
    /// current end; on success returns the new one. Shrinking unmaps the pages given back.
    /// `cpu`: the process's CPU time now.
    pub fn brk(&self, addr: u64, cpu: u64) -> u64 {
        self.with_map(|m| {
            if addr < m.heap_start || addr - m.heap_start > USER_HEAP_MAX {
                return m.brk;
            }
            let Some(new_end) = page_up(addr) else { return m.brk };
            let old_end = page_up(m.brk).unwrap_or(m.brk);
            let others = |v: &Vma| v.kind != VmaKind::Heap && v.overlaps(m.heap_start, new_end);
            if new_end > old_end && (m.vmas.iter().any(others) || new_end > USER_MMAP_BASE) {
                return m.brk;
            }
            // More than the machine could ever give: refused, as Linux's overcommit check
            // refuses it (`oom.rs`).
            if new_end > old_end && !super::oom::may_commit((new_end - old_end) / PAGE_SIZE, super::oom::Growth::Brk) {
                return m.brk;
            }
            if new_end < old_end {
                m.rss -= self.space.unmap_range(new_end, old_end).min(m.rss);
            }
            m.vmas.retain(|v| v.kind != VmaKind::Heap);
            if new_end > m.heap_start {
                m.vmas.push(Vma {
                    start: m.heap_start,
                    end: new_end,
                    prot: Prot::READ_WRITE,
                    kind: VmaKind::Heap,
                    accessible: true,
                });
            }
            m.brk = addr;
            m.account(cpu);
            addr
        })
    }

    /// The regions, in no particular order.
    pub fn regions(&self) -> Vec<Vma> {
        self.with_map(|m| m.vmas.clone())
    }

    /// User pages mapped now.
    pub fn mapped_pages(&self) -> u64 {
        self.space.mapped_pages()
    }

    /// User pages mapped now, as counted at every map and unmap (equal to
    /// [`Vm::mapped_pages`], which walks the page tables to find out).
    pub fn rss(&self) -> u64 {
        self.with_map(|m| m.rss)
    }

    /// The memory numbers as of process CPU time `cpu` (see `tally_memacct`).
    pub fn usage(&self, cpu: u64) -> MemUsage {
        self.with_map(|m| with_carried(m.acct.usage(cpu), &m.carried))
    }

    /// The program loaded here runs from process CPU time `cpu` on (an exec in place: see
    /// `MemAcct::start_at`).
    pub fn start_accounting_at(&self, cpu: u64) {
        self.with_map(|m| m.acct.start_at(cpu));
    }

    /// The process is gone (its last thread exits at process CPU time `cpu`): free every
    /// user page and user page table now, rather than when the zombie is reaped. Returns the
    /// final memory numbers (sizes as they were just before, integrals up to `cpu`).
    pub fn teardown(&self, cpu: u64) -> MemUsage {
        self.with_map(|m| {
            let usage = with_carried(m.acct.usage(cpu), &m.carried);
            m.vmas.clear();
            // The files' last references: each posts its close to fsd, without waiting.
            m.files.clear();
            m.brk = m.heap_start;
            m.stack_low = USER_STACK_TOP;
            self.space.clear_user();
            m.rss = 0;
            m.account(cpu);
            usage
        })
    }

    /// `mmap` of anonymous private memory (the request is decoded by the system call):
    /// returns the start of the new region. Errors: `EINVAL` (a fixed address not aligned
    /// or outside the user range, or a fixed range over the image, heap, stack, the stack's
    /// guard page or the vvar area), `EEXIST`
    /// (`noreplace` and something is there), `ENOMEM` (no room, too many regions, length
    /// overflows).
    pub fn mmap(&self, req: &MmapRequest, cpu: u64) -> Result<u64, i32> {
        let len = page_up(req.len).filter(|&l| l > 0).ok_or(ENOMEM)?;
        self.with_map(|m| {
            let start = if req.fixed || req.noreplace {
                let end = req.addr.checked_add(len).ok_or(ENOMEM)?;
                if !req.addr.is_multiple_of(PAGE_SIZE) || req.addr < USER_MIN_ADDR || end > USER_END {
                    return Err(EINVAL);
                }
                // The guard page is in no region, but mapping it would let a stack overflow
                // run on into the mapping instead of faulting.
                if req.addr < USER_STACK_GUARD + PAGE_SIZE && end > USER_STACK_GUARD {
                    return Err(EINVAL);
                }
                // The vvar pages (the kernel's, read-only) are in no region either.
                if req.addr < VVAR_END && end > VVAR_BASE {
                    return Err(EINVAL);
                }
                let mut overlapping = m.vmas.iter().filter(|v| v.overlaps(req.addr, end));
                if req.noreplace {
                    if overlapping.next().is_some() {
                        return Err(EEXIST);
                    }
                } else if overlapping.any(|v| v.kind != VmaKind::Anon) {
                    return Err(EINVAL);
                }
                req.addr
            } else {
                find_gap(&m.vmas, req.addr, len).ok_or(ENOMEM)?
            };
            let end = start + len;
            // Room for the worst case: the new region, and one existing region split in two.
            if m.vmas.len() + 2 > MAX_REGIONS {
                return Err(ENOMEM);
            }
            // Private writable memory is what must be backed by frames; more than the
            // machine could ever give is refused (`oom.rs`). Replaced pages are not counted
            // back: the request is judged alone, as Linux's guess mode does.
            let accounted = req.prot.write && !req.none && !req.noreserve;
            if accounted && !super::oom::may_commit(len / PAGE_SIZE, super::oom::Growth::Mmap) {
                return Err(ENOMEM);
            }
            unmap_anon(&self.space, m, start, end);
            m.vmas.push(Vma { start, end, prot: req.prot, kind: VmaKind::Anon, accessible: !req.none });
            m.account(cpu);
            Ok(start)
        })
    }

    /// `munmap(addr, len)`: remove whatever `mmap` regions lie in the range (trimming or
    /// splitting them) and free their pages. The image, heap and stack are not touched.
    /// `EINVAL` for an unaligned `addr`, `len == 0` or a range outside the user half.
    pub fn munmap(&self, addr: u64, len: u64, cpu: u64) -> Result<(), i32> {
        let end = addr.checked_add(len).and_then(page_up).ok_or(EINVAL)?;
        if !addr.is_multiple_of(PAGE_SIZE) || len == 0 || end > USER_END {
            return Err(EINVAL);
        }
        self.with_map(|m| {
            if m.vmas.len() + 1 > MAX_REGIONS {
                // A split needs one more slot; keep the limit absolute.
                return Err(ENOMEM);
            }
            unmap_anon(&self.space, m, addr, end);
            m.account(cpu);
            Ok(())
        })
    }
}

impl Vm {
    /// `mprotect(addr, len, prot)` (`none`: `PROT_NONE`): the regions of `[addr, addr + len)`
    /// (rounded up to pages) take the new protection — split where the range begins or ends
    /// inside one — and the pages already mapped there are remapped with it. As Linux:
    /// `addr` not page-aligned is `EINVAL`, a range not wholly mapped `ENOMEM`, `len` 0 does
    /// nothing. Tally's limits: only `mmap`'s regions change (`EACCES` for the image, the
    /// heap and the stack, whose protection is the loader's and `brk`'s business), and
    /// `PROT_NONE` only over pages never touched (`EINVAL` otherwise: the page tables have no
    /// present-but-inaccessible user page). What musl's `pthread_create` does — a
    /// `PROT_NONE` reservation made readable and writable above its guard page — is served.
    pub fn mprotect(&self, addr: u64, len: u64, prot: Prot, none: bool) -> Result<(), i32> {
        if !addr.is_multiple_of(PAGE_SIZE) {
            return Err(EINVAL);
        }
        let end = addr.checked_add(len).and_then(page_up).ok_or(ENOMEM)?;
        if len == 0 {
            return Ok(());
        }
        if end > USER_END {
            return Err(ENOMEM);
        }
        self.with_map(|m| {
            let mut parts: Vec<&Vma> = m.vmas.iter().filter(|v| v.overlaps(addr, end)).collect();
            parts.sort_unstable_by_key(|v| v.start);
            let mut at = addr;
            for v in &parts {
                if v.start > at {
                    return Err(ENOMEM);
                }
                at = v.end;
            }
            if at < end {
                return Err(ENOMEM);
            }
            if parts.iter().any(|v| v.kind != VmaKind::Anon) {
                return Err(EACCES);
            }
            if none && (addr..end).step_by(PAGE_SIZE as usize).any(|p| self.space.translate(p).is_some()) {
                return Err(EINVAL);
            }
            if m.vmas.len() + 2 > MAX_REGIONS {
                return Err(ENOMEM); // the two splits need room
            }
            let mut kept = Vec::with_capacity(m.vmas.len() + 2);
            for v in m.vmas.drain(..) {
                if !v.overlaps(addr, end) {
                    kept.push(v);
                    continue;
                }
                let (lo, hi) = (v.start.max(addr), v.end.min(end));
                if v.start < lo {
                    kept.push(Vma { end: lo, ..v });
                }
                kept.push(Vma { start: lo, end: hi, prot, accessible: !none, ..v });
                if hi < v.end {
                    kept.push(Vma { start: hi, ..v });
                }
                if !none {
                    for page in (lo..hi).step_by(PAGE_SIZE as usize) {
                        // False where nothing is mapped yet: the first touch maps it with
                        // the region's new protection.
                        self.space.protect(page, prot);
                    }
                }
            }
            kept.sort_unstable_by_key(|v| v.start);
            m.vmas = kept;
            Ok(())
        })
    }
}

/// Lowest free, page-aligned `len`-byte gap in the `mmap` area `[USER_MMAP_BASE,
/// VVAR_BASE)`; a free, aligned `hint` inside the area is taken as is (Linux does the same
/// with a non-fixed address).
fn find_gap(vmas: &[Vma], hint: u64, len: u64) -> Option<u64> {
    let free = |s: u64| -> bool {
        s.checked_add(len)
            .is_some_and(|e| s >= USER_MMAP_BASE && e <= VVAR_BASE && !vmas.iter().any(|v| v.overlaps(s, e)))
    };
    if hint.is_multiple_of(PAGE_SIZE) && free(hint) {
        return Some(hint);
    }
    let mut taken: Vec<(u64, u64)> =
        vmas.iter().filter(|v| v.end > USER_MMAP_BASE && v.start < VVAR_BASE).map(|v| (v.start, v.end)).collect();
    taken.sort_unstable();
    let mut at = USER_MMAP_BASE;
    for (s, e) in taken {
        if s >= at && s - at >= len {
            break;
        }
        at = at.max(e);
    }
    free(at).then_some(at)
}

/// Take `[start, end)` out of every anonymous region (trim, split or drop it) and free the
/// pages mapped there.
fn unmap_anon(space: &AddressSpace, m: &mut Map, start: u64, end: u64) {
    let mut kept = Vec::with_capacity(m.vmas.len() + 1);
    for v in m.vmas.drain(..) {
        if v.kind != VmaKind::Anon || !v.overlaps(start, end) {
            kept.push(v);
            continue;
        }
        let (lo, hi) = (v.start.max(start), v.end.min(end));
        m.rss -= space.unmap_range(lo, hi).min(m.rss);
        if v.start < lo {
            kept.push(Vma { end: lo, ..v });
        }
        if hi < v.end {
            kept.push(Vma { start: hi, ..v });
        }
    }
    m.vmas = kept;
}
