//! # Reading an ELF executable into a loading plan
//!
//! A user program is an ELF file. Its *program headers* are the loader's view of it (the
//! section headers are the linker's, and are ignored here): each `PT_LOAD` header says
//! "map `p_filesz` bytes of the file, starting at `p_offset`, at user address `p_vaddr`,
//! followed by zeros up to `p_memsz` bytes, with permissions `p_flags`". The extra zeros are
//! the program's `.bss`. `e_entry` is where the first instruction is.
//!
//! ```text
//!   file                                   user address space
//!   +--------+                              0x40_0000 +----------------+ R--  headers
//!   | ELF hdr|---- PT_LOAD #0 (R--) ----------------> | ELF hdr, phdrs |  (AT_PHDR points here)
//!   | phdrs  |                              0x40_1000 +----------------+ R-X  .text
//!   | .text  |---- PT_LOAD #1 (R-X) ----------------> |  code          |
//!   | .rodata|---- PT_LOAD #2 (R--) ----------------> +----------------+ R--  .rodata
//!   | .data  |---- PT_LOAD #3 (RW-) --+     0x40_3fd0 +----------------+ RW-  .data
//!   +--------+                        +-------------> | file bytes     |
//!                                                     | zeros (.bss)   |  p_memsz > p_filesz
//!                                                     +----------------+
//!                                          brk_start  (page after the last segment: the heap)
//! ```
//!
//! (That is `musl-gcc -static` output: the first, read-only `PT_LOAD` covers the ELF header
//! and the program headers, which the C library reads back through `AT_PHDR` to find its
//! `PT_TLS` template.)
//!
//! Two kinds of executable are accepted, as Linux's `binfmt_elf` accepts them when there is
//! no interpreter:
//!
//! * **`ET_EXEC`**, linked at fixed addresses (0x40_0000 by default): loaded where it says.
//! * **`ET_DYN` without `PT_INTERP`: a static PIE** (`-static-pie`), linked at 0 and
//!   position-independent. It is loaded at [`Limits::dyn_base`] (Linux picks a random
//!   base, `ELF_ET_DYN_BASE` plus ASLR; Tally a fixed one, so addresses repeat from run to run).
//!   The program relocates itself: musl's `rcrt1.o` finds its `PT_DYNAMIC` through
//!   `AT_PHDR` and applies its own relocations before `main`. Every address in the plan has
//!   the base added ([`ElfPlan::load_bias`]).
//!
//! [`plan`] checks the file and returns an [`ElfPlan`]: the segments (each with the range of
//! file bytes to copy), the entry point, the image's extent, the initial program break and
//! what the auxiliary vector says about the headers (`AT_PHDR`, `AT_PHENT`, `AT_PHNUM`).
//! [`plan_headers`] does the same from the first bytes of a file and its length, for a file
//! that is not in memory (a program on `/var`, paged in on demand). The kernel then only
//! has to map pages and copy bytes. The rules, each a way a bad file could otherwise hurt
//! the kernel or another process:
//!
//! * 64-bit, little-endian, `EM_X86_64`, `ET_EXEC` or `ET_DYN`, no `PT_INTERP`: there is no
//!   dynamic loader to hand the file to. `PT_DYNAMIC` (a static PIE's own relocations),
//!   `PT_TLS`, `PT_GNU_RELRO`, `PT_GNU_STACK`, `PT_NOTE`, `PT_PHDR` are accepted: they map
//!   nothing of their own. `PT_TLS` is recorded ([`ElfPlan::tls`]) for the reader; the C
//!   library sets its thread pointer up from it, the kernel does not.
//! * Every segment lies inside `[limits.user_start, limits.user_end)` — never in the kernel
//!   half — and its arithmetic does not overflow.
//! * `p_filesz <= p_memsz`, and the file bytes are inside the file.
//! * `p_vaddr ≡ p_offset (mod 4096)` and `p_align` is 0 or a power of two: pages of the file
//!   map onto pages of memory.
//! * No two segments touch the same page (each page gets exactly one set of permissions),
//!   and, unless the limits allow it, no segment is both writable and executable (W^X).
//! * The entry point is inside an executable segment.
//! * At most `limits.max_segments` segments, at most `limits.max_image_bytes` of pages.

use alloc::vec::Vec;

use elf::abi;
use elf::endian::AnyEndian;
use elf::ElfBytes;

use crate::{page_ceil, page_floor, ExecError, PAGE_SIZE};

/// The part of the address space (and the sizes) a program may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Lowest user address a segment may occupy. Above zero so that the first pages stay
    /// unmapped and a null pointer dereference faults (Linux's `mmap_min_addr`).
    pub user_start: u64,
    /// One past the highest user address a segment may occupy: the end of the lower
    /// (user) half of the 48-bit address space, or lower to keep room for the stack.
    pub user_end: u64,
    /// Most `PT_LOAD` segments accepted.
    pub max_segments: usize,
    /// Most bytes of memory (whole pages, summed over the segments) accepted.
    pub max_image_bytes: u64,
    /// Accept segments that are both writable and executable.
    pub allow_wx: bool,
    /// Where a static PIE (`ET_DYN`) is loaded: added to every address in it. Page-aligned.
    pub dyn_base: u64,
}

/// The lower half of the canonical 48-bit address space: `0 .. 0x0000_8000_0000_0000`.
pub const USER_HALF_END: u64 = 1 << 47;

/// Where a static PIE goes by default: the address `ld` links `ET_EXEC` programs at, so
/// the two kinds look alike in a debugger (Linux without ASLR uses `0x5555_5555_4000`,
/// which lies in Tally's `mmap` area).
pub const DEFAULT_DYN_BASE: u64 = 0x40_0000;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            user_start: 0x1_0000,
            user_end: USER_HALF_END,
            max_segments: 16,
            max_image_bytes: 64 << 20,
            allow_wx: false,
            dyn_base: DEFAULT_DYN_BASE,
        }
    }
}

/// Permissions of a segment (`p_flags`: `PF_R` 4, `PF_W` 2, `PF_X` 1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    pub read: bool,
    pub write: bool,
    pub exec: bool,
}

impl Flags {
    pub const fn from_p_flags(p_flags: u32) -> Self {
        Flags { read: p_flags & abi::PF_R != 0, write: p_flags & abi::PF_W != 0, exec: p_flags & abi::PF_X != 0 }
    }
}

impl core::fmt::Display for Flags {
    /// `rwx` the way `readelf -l` and `/proc/self/maps` show them (`r-x`, `rw-`).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let c = |on, ch| if on { ch } else { '-' };
        write!(f, "{}{}{}", c(self.read, 'r'), c(self.write, 'w'), c(self.exec, 'x'))
    }
}

/// One `PT_LOAD` segment, checked: map `[vaddr, vaddr + memsz)` with `flags`, copy the
/// file's `filesz` bytes from `offset` to `vaddr`, and fill the rest with zeros. (`vaddr`
/// includes the load bias of a static PIE.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Index of the program header this came from.
    pub index: usize,
    pub vaddr: u64,
    pub memsz: u64,
    pub filesz: u64,
    /// Where the `filesz` bytes start in the file (checked: inside the file).
    pub offset: u64,
    pub flags: Flags,
}

impl Segment {
    /// First page the segment touches.
    pub const fn page_start(&self) -> u64 {
        page_floor(self.vaddr)
    }

    /// One past the last page the segment touches (page aligned). Cannot overflow: [`plan`]
    /// checked that `vaddr + memsz` stays below `Limits::user_end`.
    pub fn page_end(&self) -> u64 {
        page_ceil(self.vaddr + self.memsz).unwrap_or(!(PAGE_SIZE - 1))
    }

    /// Number of pages to map.
    pub fn pages(&self) -> u64 {
        (self.page_end() - self.page_start()) / PAGE_SIZE
    }

    /// The segment's file bytes within `file` (the file [`plan`] checked): empty if `file`
    /// is not that file.
    pub fn data<'a>(&self, file: &'a [u8]) -> &'a [u8] {
        let (Ok(off), Ok(len)) = (usize::try_from(self.offset), usize::try_from(self.filesz)) else { return &[] };
        off.checked_add(len).and_then(|end| file.get(off..end)).unwrap_or(&[])
    }

    /// What page `page` (page-aligned, inside the segment) holds: `(skip, offset, len)` —
    /// `len` bytes of the file from `offset` go to `page + skip`, the rest of the page is
    /// zero. `len` is 0 for a page wholly in the `.bss` (a demand-zero page).
    pub fn file_part(&self, page: u64) -> (u64, u64, u64) {
        let file_end = self.vaddr + self.filesz;
        let lo = page.max(self.vaddr);
        let hi = page.saturating_add(PAGE_SIZE).min(file_end);
        if hi <= lo {
            return (0, 0, 0);
        }
        (lo - page, self.offset + (lo - self.vaddr), hi - lo)
    }
}

/// The program's `PT_TLS` header (addresses with the load bias): the template of each
/// thread's thread-local storage, which the C library copies (the kernel only reports it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tls {
    pub vaddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

/// What the kernel needs to load a program: see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfPlan {
    /// Where user mode starts executing (`AT_ENTRY`).
    pub entry: u64,
    /// The `PT_LOAD` segments with `memsz > 0`, in increasing address order.
    pub segments: Vec<Segment>,
    /// First page of the lowest segment.
    pub image_start: u64,
    /// One past the last page of the highest segment; also the initial program break
    /// (`brk`): the heap starts right above the image, as on Linux.
    pub image_end: u64,
    /// Total pages to map (sum over the segments).
    pub pages: u64,
    /// What was added to every address of the file: 0 for `ET_EXEC`, the base for a
    /// static PIE.
    pub load_bias: u64,
    /// `ET_DYN`: a static PIE.
    pub pie: bool,
    /// `AT_PHDR`: the user address of the program headers, if a loaded segment holds them
    /// (found as Linux finds them: the segment whose file bytes include `e_phoff`), else 0.
    pub phdr: u64,
    /// `AT_PHENT`, `AT_PHNUM`: the size of one program header (56) and how many there are.
    pub phent: u64,
    pub phnum: u64,
    /// `PT_TLS`, if the program has thread-local storage.
    pub tls: Option<Tls>,
}

impl ElfPlan {
    /// The initial program break: the first page after the image.
    pub const fn brk_start(&self) -> u64 {
        self.image_end
    }
}

/// Most program headers looked at (a real static program has 4-10).
pub const MAX_PROGRAM_HEADERS: usize = 64;

/// The most bytes [`plan_headers`] can need from the start of a file: the ELF header and
/// [`MAX_PROGRAM_HEADERS`] program headers right after it. A file whose headers lie
/// further in needs its first `e_phoff + e_phnum * 56` bytes ([`headers_len`]).
pub const HEADERS_MAX: usize = 64 + MAX_PROGRAM_HEADERS * 56;

/// How many bytes from the start of the file [`plan_headers`] needs to see: the ELF header
/// and the program header table. `None` if `head` is not even an ELF header, or the table
/// is absurd (then [`plan_headers`] would refuse the file anyway).
pub fn headers_len(head: &[u8]) -> Option<usize> {
    let ehdr = head.get(..64)?;
    let phoff = u64::from_le_bytes(ehdr[32..40].try_into().ok()?);
    let phnum = u64::from(u16::from_le_bytes(ehdr[56..58].try_into().ok()?));
    let end = phoff.checked_add(phnum.min(MAX_PROGRAM_HEADERS as u64 + 1) * 56)?.max(64);
    usize::try_from(end).ok().filter(|&n| n <= 1 << 20)
}

/// Checks `file` against the rules in the module documentation and returns its loading plan.
pub fn plan(file: &[u8], limits: &Limits) -> Result<ElfPlan, ExecError> {
    plan_headers(file, file.len() as u64, limits)
}

/// [`plan`] for a file of `file_len` bytes of which only the first bytes, `head`, are at
/// hand: they must hold the ELF header and the program headers ([`headers_len`]). Segment
/// ranges are checked against `file_len`.
pub fn plan_headers(head: &[u8], file_len: u64, limits: &Limits) -> Result<ElfPlan, ExecError> {
    // Only the ELF header and the program headers are read: a copy of them with the
    // section-header fields cleared (e_shoff, e_shnum, e_shstrndx), since the parser would
    // otherwise look for the section table — usually at the end of the file, not at hand,
    // and of no use to a loader (Linux's `binfmt_elf` never reads it either).
    // (A table further than 1 MiB into the file, or absurd, is not copied: the parse fails.)
    let n = headers_len(head).unwrap_or(HEADERS_MAX).min(head.len());
    let mut headers = head[..n].to_vec();
    if headers.len() >= 64 {
        headers[40..48].fill(0);
        headers[60..64].fill(0);
    }
    let elf = ElfBytes::<AnyEndian>::minimal_parse(&headers).map_err(|_| ExecError::NotElf)?;
    let h = &elf.ehdr;
    if h.class != elf::file::Class::ELF64 || h.e_machine != abi::EM_X86_64 || !matches!(h.endianness, AnyEndian::Little)
    {
        return Err(ExecError::WrongArch);
    }
    let pie = match h.e_type {
        abi::ET_EXEC => false,
        abi::ET_DYN => true,
        _ => return Err(ExecError::NotExecutable),
    };
    if pie && !limits.dyn_base.is_multiple_of(PAGE_SIZE) {
        return Err(ExecError::OutsideUser { index: 0 });
    }
    let bias = if pie { limits.dyn_base } else { 0 };
    let phdrs = elf.segments().ok_or(ExecError::NoSegments)?;
    if phdrs.len() > MAX_PROGRAM_HEADERS {
        return Err(ExecError::TooManySegments);
    }

    let mut segments: Vec<Segment> = Vec::new();
    let mut tls = None;
    for index in 0..phdrs.len() {
        let ph = phdrs.get(index).map_err(|_| ExecError::NotElf)?;
        match ph.p_type {
            abi::PT_INTERP => return Err(ExecError::Dynamic),
            abi::PT_LOAD => {}
            abi::PT_TLS => {
                // Only reported; a hostile one can only hurt the program that reads it.
                let vaddr = ph.p_vaddr.wrapping_add(bias);
                tls = Some(Tls { vaddr, filesz: ph.p_filesz, memsz: ph.p_memsz, align: ph.p_align });
                continue;
            }
            _ => continue, // PT_DYNAMIC, PT_NOTE, PT_GNU_STACK, PT_GNU_RELRO, PT_PHDR...: nothing to map
        }
        if ph.p_filesz > ph.p_memsz {
            return Err(ExecError::FileszOverMemsz { index });
        }
        if !(ph.p_align == 0 || ph.p_align.is_power_of_two()) || ph.p_vaddr % PAGE_SIZE != ph.p_offset % PAGE_SIZE {
            return Err(ExecError::Misaligned { index });
        }
        if ph.p_offset.checked_add(ph.p_filesz).is_none_or(|end| end > file_len) {
            return Err(ExecError::SegmentOutsideFile { index });
        }
        if ph.p_memsz == 0 {
            continue; // legal, but occupies nothing
        }
        let vaddr = ph.p_vaddr.checked_add(bias).ok_or(ExecError::OutsideUser { index })?;
        let end = vaddr.checked_add(ph.p_memsz).ok_or(ExecError::OutsideUser { index })?;
        if vaddr < limits.user_start || end > limits.user_end || page_ceil(end).is_none() {
            return Err(ExecError::OutsideUser { index });
        }
        let flags = Flags::from_p_flags(ph.p_flags);
        if flags.write && flags.exec && !limits.allow_wx {
            return Err(ExecError::WritableAndExecutable { index });
        }
        if segments.len() == limits.max_segments {
            return Err(ExecError::TooManySegments);
        }
        segments.push(Segment { index, vaddr, memsz: ph.p_memsz, filesz: ph.p_filesz, offset: ph.p_offset, flags });
    }
    if segments.is_empty() {
        return Err(ExecError::NoSegments);
    }

    // Sorted by address, two segments share a page exactly when one starts on a page
    // below the previous one's end page.
    segments.sort_unstable_by_key(|s| s.vaddr);
    for w in segments.windows(2) {
        if w[1].page_start() < w[0].page_end() {
            let (a, b) = (w[0].index.min(w[1].index), w[0].index.max(w[1].index));
            return Err(ExecError::Overlap { first: a, second: b });
        }
    }
    let mut pages: u64 = 0;
    for s in &segments {
        pages = pages.checked_add(s.pages()).ok_or(ExecError::ImageTooLarge)?;
    }
    if pages.checked_mul(PAGE_SIZE).is_none_or(|bytes| bytes > limits.max_image_bytes) {
        return Err(ExecError::ImageTooLarge);
    }
    let entry = h.e_entry.checked_add(bias).ok_or(ExecError::BadEntry)?;
    if !segments.iter().any(|s| s.flags.exec && entry >= s.vaddr && entry - s.vaddr < s.memsz) {
        return Err(ExecError::BadEntry);
    }
    // AT_PHDR: the program headers as loaded, found as Linux's `binfmt_elf` finds them
    // (the segment whose file bytes hold `e_phoff`); 0 if no segment holds all of them.
    let (phent, phnum) = (u64::from(h.e_phentsize), phdrs.len() as u64);
    let table = h.e_phoff.checked_add(phent * phnum);
    let phdr = segments
        .iter()
        .find(|s| table.is_some_and(|end| s.offset <= h.e_phoff && end <= s.offset + s.filesz))
        .map_or(0, |s| s.vaddr + (h.e_phoff - s.offset));
    let image_start = segments.first().map_or(0, Segment::page_start);
    let image_end = segments.last().map_or(0, Segment::page_end);
    Ok(ElfPlan { entry, segments, image_start, image_end, pages, load_bias: bias, pie, phdr, phent, phnum, tls })
}

/// Building ELF files for tests: a minimal valid header and program headers, so the tests
/// (here and in `tests/`) can state exactly which field they break.
#[doc(hidden)]
pub mod testelf {
    use alloc::vec::Vec;

    /// One program header to write: `(p_type, p_flags, p_offset, p_vaddr, p_filesz, p_memsz, p_align)`.
    pub type Phdr = (u32, u32, u64, u64, u64, u64, u64);

    /// An ELF64 x86_64 file of type `e_type` with entry `entry`, the given program headers
    /// right after the 64-byte header, and `size` bytes in all (content bytes are 0xCC).
    pub fn build(e_type: u16, entry: u64, phdrs: &[Phdr], size: usize) -> Vec<u8> {
        let mut f = Vec::new();
        f.extend_from_slice(b"\x7fELF");
        f.extend_from_slice(&[2, 1, 1, 0]); // ELFCLASS64, little-endian, EV_CURRENT, SYSV ABI
        f.extend_from_slice(&[0; 8]);
        f.extend_from_slice(&e_type.to_le_bytes());
        f.extend_from_slice(&62u16.to_le_bytes()); // EM_X86_64
        f.extend_from_slice(&1u32.to_le_bytes()); // e_version
        f.extend_from_slice(&entry.to_le_bytes());
        f.extend_from_slice(&64u64.to_le_bytes()); // e_phoff
        f.extend_from_slice(&0u64.to_le_bytes()); // e_shoff: no section headers
        f.extend_from_slice(&0u32.to_le_bytes()); // e_flags
        f.extend_from_slice(&64u16.to_le_bytes()); // e_ehsize
        f.extend_from_slice(&56u16.to_le_bytes()); // e_phentsize
        f.extend_from_slice(&(phdrs.len() as u16).to_le_bytes());
        f.extend_from_slice(&64u16.to_le_bytes()); // e_shentsize
        f.extend_from_slice(&0u16.to_le_bytes()); // e_shnum
        f.extend_from_slice(&0u16.to_le_bytes()); // e_shstrndx
        for &(t, fl, off, va, fsz, msz, al) in phdrs {
            f.extend_from_slice(&t.to_le_bytes());
            f.extend_from_slice(&fl.to_le_bytes());
            for v in [off, va, va, fsz, msz, al] {
                f.extend_from_slice(&v.to_le_bytes());
            }
        }
        if f.len() < size {
            f.resize(size, 0xCC);
        }
        f
    }

    pub const PT_LOAD: u32 = 1;
    pub const R: u32 = 4;
    pub const W: u32 = 2;
    pub const X: u32 = 1;

    /// A typical static program: text at 0x40_0000 (file offset 0), rodata at 0x40_2000,
    /// data+bss at 0x40_3000, 0x3000 bytes of file.
    pub fn typical() -> Vec<u8> {
        build(
            2,
            0x40_0100,
            &[
                (PT_LOAD, R | X, 0, 0x40_0000, 0x1800, 0x1800, 0x1000),
                (PT_LOAD, R, 0x2000, 0x40_2000, 0x200, 0x200, 0x1000),
                (PT_LOAD, R | W, 0x2200, 0x40_3200, 0x100, 0x5000, 0x1000),
                (0x6474_e551, R | W, 0, 0, 0, 0, 16), // PT_GNU_STACK: ignored
            ],
            0x3000,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::testelf::*;
    use super::*;
    use tally_uapi::errno::{E2BIG, EINVAL, ENOEXEC};

    fn plan_of(f: &[u8]) -> Result<ElfPlan, ExecError> {
        plan(f, &Limits::default())
    }

    #[test]
    fn typical_program() {
        let f = typical();
        let p = plan_of(&f).unwrap();
        assert_eq!(p.entry, 0x40_0100);
        assert_eq!(p.segments.len(), 3);
        let s = &p.segments;
        assert_eq!((s[0].vaddr, s[0].memsz, s[0].data(&f).len()), (0x40_0000, 0x1800, 0x1800));
        assert_eq!(s[0].flags, Flags { read: true, write: false, exec: true });
        assert_eq!(std::format!("{}", s[0].flags), "r-x");
        assert_eq!(s[1].data(&f).as_ptr(), f[0x2000..].as_ptr(), "data borrows the file");
        assert_eq!((p.load_bias, p.pie, p.phdr, p.phent, p.phnum, p.tls), (0, false, 0x40_0040, 56, 4, None));
        assert_eq!((s[2].filesz, s[2].memsz), (0x100, 0x5000));
        assert_eq!(std::format!("{}", s[2].flags), "rw-");
        // data+bss: 0x40_3200 .. 0x40_8200 → pages 0x40_3000 .. 0x40_9000
        assert_eq!((s[2].page_start(), s[2].page_end(), s[2].pages()), (0x40_3000, 0x40_9000, 6));
        assert_eq!((p.image_start, p.image_end, p.brk_start()), (0x40_0000, 0x40_9000, 0x40_9000));
        assert_eq!(p.pages, 2 + 1 + 6);
    }

    #[test]
    fn segments_come_out_sorted() {
        let f = build(
            2,
            0x50_0000,
            &[
                (PT_LOAD, R | W, 0x1000, 0x60_0000, 0x10, 0x10, 0x1000),
                (PT_LOAD, R | X, 0, 0x50_0000, 0x10, 0x10, 0x1000),
            ],
            0x2000,
        );
        let p = plan_of(&f).unwrap();
        assert_eq!(p.segments.iter().map(|s| s.index).collect::<Vec<_>>(), [1, 0]);
        assert_eq!((p.image_start, p.image_end), (0x50_0000, 0x60_1000));
    }

    fn one(e_type: u16, entry: u64, ph: Phdr, size: usize) -> Result<(), ExecError> {
        plan_of(&build(e_type, entry, &[ph], size)).map(|_| ())
    }

    #[test]
    fn header_checks() {
        assert_eq!(plan_of(b"").unwrap_err(), ExecError::NotElf);
        assert_eq!(plan_of(b"#!/bin/sh\n").unwrap_err(), ExecError::NotElf);
        assert_eq!(plan_of(&typical()[..40]).unwrap_err(), ExecError::NotElf);
        let mut f = typical();
        f[4] = 1; // ELFCLASS32
        assert!(plan_of(&f).is_err());
        let mut f = typical();
        f[18] = 3; // EM_386
        assert_eq!(plan_of(&f).unwrap_err(), ExecError::WrongArch);
        let mut f = typical();
        f[5] = 2; // big-endian: every field now reads differently
        assert!(plan_of(&f).is_err());
        let load = (PT_LOAD, R | X, 0, 0x40_0000, 0x100, 0x100, 0x1000);
        assert_eq!(one(1, 0x40_0000, load, 0x1000), Err(ExecError::NotExecutable), "ET_REL");
        assert_eq!(ExecError::NotExecutable.errno(), ENOEXEC);
        // Program headers past the end of the file.
        let mut f = typical();
        f.truncate(64 + 56);
        assert_eq!(plan_of(&f).unwrap_err(), ExecError::NotElf);
        assert_eq!(plan_of(&build(2, 0, &[], 0x100)).unwrap_err(), ExecError::NoSegments);
    }

    #[test]
    fn dynamic_programs_are_refused() {
        let f = build(
            2,
            0x40_0000,
            &[(3, R, 0x200, 0, 0x10, 0x10, 1), (PT_LOAD, R | X, 0, 0x40_0000, 0x100, 0x100, 0x1000)],
            0x1000,
        );
        assert_eq!(plan_of(&f).unwrap_err(), ExecError::Dynamic);
    }

    #[test]
    fn segment_rules() {
        let ok = (PT_LOAD, R | X, 0, 0x40_0000, 0x100, 0x100, 0x1000);
        assert_eq!(one(2, 0x40_0000, ok, 0x1000), Ok(()));
        // filesz > memsz
        assert_eq!(
            one(2, 0x40_0000, (PT_LOAD, R | X, 0, 0x40_0000, 0x200, 0x100, 0x1000), 0x1000),
            Err(ExecError::FileszOverMemsz { index: 0 })
        );
        // file bytes beyond the end of the file
        assert_eq!(
            one(2, 0x40_0000, (PT_LOAD, R | X, 0, 0x40_0000, 0x2000, 0x2000, 0x1000), 0x1000),
            Err(ExecError::SegmentOutsideFile { index: 0 })
        );
        assert_eq!(
            one(2, 0x40_0000, (PT_LOAD, R | X, u64::MAX, 0x40_0fff, 2, 2, 0), 0x1000),
            Err(ExecError::SegmentOutsideFile { index: 0 })
        );
        // misaligned: vaddr and offset differ mod 4096; p_align not a power of two
        assert_eq!(
            one(2, 0x40_0010, (PT_LOAD, R | X, 0x10, 0x40_0000, 0x10, 0x10, 0x1000), 0x1000),
            Err(ExecError::Misaligned { index: 0 })
        );
        assert_eq!(
            one(2, 0x40_0000, (PT_LOAD, R | X, 0, 0x40_0000, 0x10, 0x10, 0x3000), 0x1000),
            Err(ExecError::Misaligned { index: 0 })
        );
        // the kernel half, the null page, wrap-around
        let out = Err(ExecError::OutsideUser { index: 0 });
        assert_eq!(
            one(2, 0xffff_8000_0000_0000, (PT_LOAD, R | X, 0, 0xffff_8000_0000_0000, 0x10, 0x10, 0x1000), 0x1000),
            out
        );
        assert_eq!(one(2, 0, (PT_LOAD, R | X, 0, 0, 0x10, 0x10, 0x1000), 0x1000), out);
        assert_eq!(one(2, 0x7fff_ffff_f000, (PT_LOAD, R | X, 0, 0x7fff_ffff_f000, 0x10, 0x2000, 0x1000), 0x1000), out);
        assert_eq!(one(2, 0x40_0000, (PT_LOAD, R | X, 0, 0x40_0000, 0, u64::MAX, 0x1000), 0x1000), out);
        assert_eq!(ExecError::OutsideUser { index: 0 }.errno(), EINVAL);
        // W^X
        assert_eq!(
            one(2, 0x40_0000, (PT_LOAD, R | W | X, 0, 0x40_0000, 0x10, 0x10, 0x1000), 0x1000),
            Err(ExecError::WritableAndExecutable { index: 0 })
        );
        let f = build(2, 0x40_0000, &[(PT_LOAD, R | W | X, 0, 0x40_0000, 0x10, 0x10, 0x1000)], 0x1000);
        assert!(plan(&f, &Limits { allow_wx: true, ..Limits::default() }).is_ok());
        // the entry point must be in an executable segment
        assert_eq!(
            one(2, 0x40_0100, (PT_LOAD, R, 0, 0x40_0000, 0x1000, 0x1000, 0x1000), 0x1000),
            Err(ExecError::BadEntry)
        );
        assert_eq!(one(2, 0x40_1000, ok, 0x1000), Err(ExecError::BadEntry));
        // memsz 0 segments occupy nothing
        let f = build(2, 0x40_0000, &[ok, (PT_LOAD, R, 0, 0x40_0000, 0, 0, 0x1000)], 0x1000);
        assert_eq!(plan_of(&f).unwrap().segments.len(), 1);
    }

    #[test]
    fn overlap_is_page_granular() {
        let a = (PT_LOAD, R | X, 0, 0x40_0000, 0x100, 0x100, 0x1000);
        // Starts in the same page as `a` ends, at a different address: still a shared page.
        let b = (PT_LOAD, R | W, 0x800, 0x40_0800, 0x10, 0x10, 0x1000);
        let f = build(2, 0x40_0000, &[a, b], 0x1000);
        assert_eq!(plan_of(&f).unwrap_err(), ExecError::Overlap { first: 0, second: 1 });
        let c = (PT_LOAD, R | W, 0x800, 0x40_1800, 0x10, 0x10, 0x1000);
        let f = build(2, 0x40_0000, &[a, c], 0x1000);
        assert!(plan_of(&f).is_ok());
    }

    #[test]
    fn size_limits() {
        let seg = |i: u64| (PT_LOAD, R | X, 0, 0x40_0000 + i * 0x1000, 0x10, 0x10, 0x1000);
        let many: Vec<Phdr> = (0..17).map(seg).collect();
        let f = build(2, 0x40_0000, &many, 0x2000);
        assert_eq!(plan_of(&f).unwrap_err(), ExecError::TooManySegments);
        assert_eq!(ExecError::TooManySegments.errno(), E2BIG);
        assert!(plan_of(&build(2, 0x40_0000, &many[..16], 0x2000)).is_ok());
        let big = (PT_LOAD, R | X, 0, 0x40_0000, 0x10, (64 << 20) + 1, 0x1000);
        assert_eq!(one(2, 0x40_0000, big, 0x1000), Err(ExecError::ImageTooLarge));
        let fits = (PT_LOAD, R | X, 0, 0x40_0000, 0x10, 64 << 20, 0x1000);
        assert_eq!(one(2, 0x40_0000, fits, 0x1000), Ok(()));
        let too_many_headers: Vec<Phdr> = (0..65).map(|_| (4, 0, 0, 0, 0, 0, 0)).collect();
        assert_eq!(plan_of(&build(2, 0, &too_many_headers, 0)).unwrap_err(), ExecError::TooManySegments);
    }

    /// What `musl-gcc -static` makes of a C hello world (readelf -lW): a read-only first
    /// segment holding the headers, GNU_STACK, GNU_RELRO and, with `__thread`, PT_TLS.
    fn musl_static() -> Vec<u8> {
        build(
            2,
            0x40_1051,
            &[
                (PT_LOAD, R, 0, 0x40_0000, 0x1c8, 0x1c8, 0x1000),
                (PT_LOAD, R | X, 0x1000, 0x40_1000, 0x8f1, 0x8f1, 0x1000),
                (PT_LOAD, R, 0x2000, 0x40_2000, 0x4c, 0x4c, 0x1000),
                (PT_LOAD, R | W, 0x2fd0, 0x40_3fd0, 0x40, 0x2a8, 0x1000),
                (7, R, 0x2fd0, 0x40_3fd0, 0x8, 0x10, 8),            // PT_TLS
                (0x6474_e551, R | W, 0, 0, 0, 0, 16),               // PT_GNU_STACK
                (0x6474_e552, R, 0x2fd0, 0x40_3fd0, 0x30, 0x30, 1), // PT_GNU_RELRO
            ],
            0x3010,
        )
    }

    #[test]
    fn musl_static_program() {
        let f = musl_static();
        let p = plan_of(&f).unwrap();
        assert_eq!((p.entry, p.pie, p.load_bias), (0x40_1051, false, 0));
        assert_eq!(p.segments.len(), 4);
        assert_eq!(p.phdr, 0x40_0040, "the headers are in the first, read-only segment");
        assert_eq!((p.phent, p.phnum), (56, 7));
        assert_eq!(p.tls, Some(Tls { vaddr: 0x40_3fd0, filesz: 8, memsz: 0x10, align: 8 }));
        assert_eq!((p.image_start, p.image_end), (0x40_0000, 0x40_5000));
        // The data page: file bytes from 0x2fd0 at page offset 0xfd0, 0x30 of them (the
        // page ends at 0x40_4000); the next page is all .bss.
        let data = p.segments[3];
        assert_eq!(data.file_part(0x40_3000), (0xfd0, 0x2fd0, 0x30));
        assert_eq!(data.file_part(0x40_4000), (0, 0x3000, 0x10));
        let bss = Segment { filesz: 0, ..data };
        assert_eq!(bss.file_part(0x40_4000), (0, 0, 0));
        assert_eq!(p.segments[0].file_part(0x40_0000), (0, 0, 0x1c8));
    }

    #[test]
    fn static_pie_is_loaded_at_the_base() {
        // `-static-pie`: ET_DYN linked at 0, PT_DYNAMIC for its own relocations, no PT_INTERP.
        let f = build(
            3,
            0x1071,
            &[
                (PT_LOAD, R, 0, 0, 0x300, 0x300, 0x1000),
                (PT_LOAD, R | X, 0x1000, 0x1000, 0xad1, 0xad1, 0x1000),
                (PT_LOAD, R | W, 0x1e58, 0x2e58, 0x1b8, 0x420, 0x1000),
                (2, R | W, 0x1e68, 0x2e68, 0x170, 0x170, 8), // PT_DYNAMIC
            ],
            0x2100,
        );
        let p = plan_of(&f).unwrap();
        assert!(p.pie);
        assert_eq!(p.load_bias, DEFAULT_DYN_BASE);
        assert_eq!(p.entry, DEFAULT_DYN_BASE + 0x1071);
        assert_eq!(p.segments[0].vaddr, DEFAULT_DYN_BASE);
        assert_eq!(p.phdr, DEFAULT_DYN_BASE + 64);
        assert_eq!(p.image_end, DEFAULT_DYN_BASE + 0x4000);
        let other = Limits { dyn_base: 0x1000_0000, ..Limits::default() };
        assert_eq!(plan(&f, &other).unwrap().entry, 0x1000_1071);
        // The base must be page-aligned, and the biased image must stay in the user range.
        assert!(plan(&f, &Limits { dyn_base: 0x1234, ..Limits::default() }).is_err());
        let high = Limits { dyn_base: USER_HALF_END - 0x1000, ..Limits::default() };
        assert_eq!(plan(&f, &high).unwrap_err(), ExecError::OutsideUser { index: 1 });
        // A PIE at base 0 would put its first page at 0: refused like any null-page segment.
        let zero = Limits { dyn_base: 0, ..Limits::default() };
        assert_eq!(plan(&f, &zero).unwrap_err(), ExecError::OutsideUser { index: 0 });
        // With an interpreter, it is a dynamically linked program.
        let mut ph = [(3, R, 0x200, 0x200, 0x10, 0x10, 1), (PT_LOAD, R | X, 0, 0, 0x300, 0x300, 0x1000)];
        assert_eq!(plan_of(&build(3, 0x10, &ph, 0x1000)).unwrap_err(), ExecError::Dynamic);
        ph[0].0 = 4; // PT_NOTE instead: fine
        assert!(plan_of(&build(3, 0x10, &ph, 0x1000)).is_ok());
    }

    #[test]
    fn headers_alone_plan_a_file_not_in_memory() {
        let f = musl_static();
        let n = headers_len(&f).unwrap();
        assert_eq!(n, 64 + 7 * 56);
        let p = plan_headers(&f[..n], f.len() as u64, &Limits::default()).unwrap();
        assert_eq!(p, plan_of(&f).unwrap());
        // The length decides what is outside the file, not the bytes at hand.
        assert_eq!(
            plan_headers(&f[..n], 0x3000, &Limits::default()).unwrap_err(),
            ExecError::SegmentOutsideFile { index: 3 }
        );
        assert!(plan_headers(&f[..n - 1], f.len() as u64, &Limits::default()).is_err());
        assert_eq!(headers_len(b"\x7fELF"), None);
        // Section headers at the end of the file (where linkers put them), not at hand:
        // ignored, as the loader never needs them.
        let mut g = f.clone();
        g[40..48].copy_from_slice(&0x3000u64.to_le_bytes());
        g[58..60].copy_from_slice(&64u16.to_le_bytes());
        g[60..62].copy_from_slice(&25u16.to_le_bytes());
        assert_eq!(plan_headers(&g[..n], g.len() as u64, &Limits::default()).unwrap(), p);
        // A segment's data from a file that is not the planned one: empty, not a panic.
        assert_eq!(p.segments[3].data(&f[..16]), b"");
    }

    #[test]
    fn phdr_outside_every_segment_is_zero() {
        // The headers are at offset 64, but the only segment maps file bytes from 0x1000.
        let f = build(2, 0x40_1000, &[(PT_LOAD, R | X, 0x1000, 0x40_1000, 0x10, 0x10, 0x1000)], 0x2000);
        assert_eq!(plan_of(&f).unwrap().phdr, 0);
    }
}
