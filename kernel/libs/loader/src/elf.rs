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
//!   +--------+                              0x40_0000 +----------------+ R-X  .text
//!   | ELF hdr|                                        |  code          |
//!   | phdrs  |---- PT_LOAD #0 (R-X) ----------------> +----------------+
//!   | .text  |                              0x40_3000 +----------------+ R--  .rodata
//!   | .rodata|---- PT_LOAD #1 (R--) ----------------> |                |
//!   | .data  |---- PT_LOAD #2 (RW-) --+     0x40_5000 +----------------+ RW-  .data
//!   +--------+                        +-------------> | file bytes     |
//!                                                     | zeros (.bss)   |  p_memsz > p_filesz
//!                                                     +----------------+
//!                                          brk_start  (page after the last segment: the heap)
//! ```
//!
//! [`plan`] checks the file and returns an [`ElfPlan`]: the segments (each with the exact
//! slice of file bytes to copy), the entry point, the image's extent and the initial program
//! break. The kernel then only has to map pages and copy bytes. The rules, each a way a bad
//! file could otherwise hurt the kernel or another process:
//!
//! * 64-bit, little-endian, `EM_X86_64`, `ET_EXEC` (static, not position-independent), no
//!   `PT_INTERP`/`PT_DYNAMIC`: there is no dynamic loader to hand the file to.
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
}

/// The lower half of the canonical 48-bit address space: `0 .. 0x0000_8000_0000_0000`.
pub const USER_HALF_END: u64 = 1 << 47;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            user_start: 0x1_0000,
            user_end: USER_HALF_END,
            max_segments: 16,
            max_image_bytes: 64 << 20,
            allow_wx: false,
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

/// One `PT_LOAD` segment, checked: map `[vaddr, vaddr + memsz)` with `flags`, copy `data`
/// (the file's `filesz` bytes) to `vaddr`, and fill the rest with zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment<'a> {
    /// Index of the program header this came from.
    pub index: usize,
    pub vaddr: u64,
    pub memsz: u64,
    pub filesz: u64,
    /// The bytes to copy to `vaddr`: exactly `filesz` bytes of the file.
    pub data: &'a [u8],
    pub flags: Flags,
}

impl Segment<'_> {
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
}

/// What the kernel needs to load a program: see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfPlan<'a> {
    /// Where user mode starts executing.
    pub entry: u64,
    /// The `PT_LOAD` segments with `memsz > 0`, in increasing address order.
    pub segments: Vec<Segment<'a>>,
    /// First page of the lowest segment.
    pub image_start: u64,
    /// One past the last page of the highest segment; also the initial program break
    /// (`brk`): the heap starts right above the image, as on Linux.
    pub image_end: u64,
    /// Total pages to map (sum over the segments).
    pub pages: u64,
}

impl ElfPlan<'_> {
    /// The initial program break: the first page after the image.
    pub const fn brk_start(&self) -> u64 {
        self.image_end
    }
}

/// Most program headers looked at (a real static program has 4-8).
pub const MAX_PROGRAM_HEADERS: usize = 64;

/// Checks `file` against the rules in the module documentation and returns its loading plan.
pub fn plan<'a>(file: &'a [u8], limits: &Limits) -> Result<ElfPlan<'a>, ExecError> {
    let elf = ElfBytes::<AnyEndian>::minimal_parse(file).map_err(|_| ExecError::NotElf)?;
    let h = &elf.ehdr;
    if h.class != elf::file::Class::ELF64 || h.e_machine != abi::EM_X86_64 || !matches!(h.endianness, AnyEndian::Little)
    {
        return Err(ExecError::WrongArch);
    }
    if h.e_type != abi::ET_EXEC {
        return Err(ExecError::NotExecutable);
    }
    let phdrs = elf.segments().ok_or(ExecError::NoSegments)?;
    if phdrs.len() > MAX_PROGRAM_HEADERS {
        return Err(ExecError::TooManySegments);
    }

    let mut segments: Vec<Segment<'a>> = Vec::new();
    for index in 0..phdrs.len() {
        let ph = phdrs.get(index).map_err(|_| ExecError::NotElf)?;
        match ph.p_type {
            abi::PT_INTERP | abi::PT_DYNAMIC => return Err(ExecError::Dynamic),
            abi::PT_LOAD => {}
            _ => continue, // PT_NOTE, PT_GNU_STACK, PT_PHDR...: nothing to map
        }
        if ph.p_filesz > ph.p_memsz {
            return Err(ExecError::FileszOverMemsz { index });
        }
        if !(ph.p_align == 0 || ph.p_align.is_power_of_two()) || ph.p_vaddr % PAGE_SIZE != ph.p_offset % PAGE_SIZE {
            return Err(ExecError::Misaligned { index });
        }
        let data = usize::try_from(ph.p_offset)
            .ok()
            .zip(usize::try_from(ph.p_filesz).ok())
            .and_then(|(off, len)| file.get(off..off.checked_add(len)?))
            .ok_or(ExecError::SegmentOutsideFile { index })?;
        if ph.p_memsz == 0 {
            continue; // legal, but occupies nothing
        }
        let end = ph.p_vaddr.checked_add(ph.p_memsz).ok_or(ExecError::OutsideUser { index })?;
        if ph.p_vaddr < limits.user_start || end > limits.user_end || page_ceil(end).is_none() {
            return Err(ExecError::OutsideUser { index });
        }
        let flags = Flags::from_p_flags(ph.p_flags);
        if flags.write && flags.exec && !limits.allow_wx {
            return Err(ExecError::WritableAndExecutable { index });
        }
        if segments.len() == limits.max_segments {
            return Err(ExecError::TooManySegments);
        }
        segments.push(Segment { index, vaddr: ph.p_vaddr, memsz: ph.p_memsz, filesz: ph.p_filesz, data, flags });
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
    let entry = h.e_entry;
    if !segments.iter().any(|s| s.flags.exec && entry >= s.vaddr && entry - s.vaddr < s.memsz) {
        return Err(ExecError::BadEntry);
    }
    let image_start = segments.first().map_or(0, Segment::page_start);
    let image_end = segments.last().map_or(0, Segment::page_end);
    Ok(ElfPlan { entry, segments, image_start, image_end, pages })
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

    fn plan_of(f: &[u8]) -> Result<ElfPlan<'_>, ExecError> {
        plan(f, &Limits::default())
    }

    #[test]
    fn typical_program() {
        let f = typical();
        let p = plan_of(&f).unwrap();
        assert_eq!(p.entry, 0x40_0100);
        assert_eq!(p.segments.len(), 3);
        let s = &p.segments;
        assert_eq!((s[0].vaddr, s[0].memsz, s[0].data.len()), (0x40_0000, 0x1800, 0x1800));
        assert_eq!(s[0].flags, Flags { read: true, write: false, exec: true });
        assert_eq!(std::format!("{}", s[0].flags), "r-x");
        assert_eq!(s[1].data.as_ptr(), f[0x2000..].as_ptr(), "data borrows the file");
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
        assert_eq!(one(3, 0x40_0000, load, 0x1000), Err(ExecError::NotExecutable), "ET_DYN (PIE)");
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
}
