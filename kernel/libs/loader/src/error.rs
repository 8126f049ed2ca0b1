//! # Why a program could not be started
//!
//! One error type for the whole exec path, so the kernel's `spawn` can use `?` from the
//! archive lookup to the stack image and turn the result into `-errno` at the end with
//! [`ExecError::errno`]. Each variant names *what* was wrong, so a kernel log line (the
//! `Display` text) tells a student which rule the file broke. The errno follows Linux:
//!
//! | errno     | meaning here                                                            |
//! |-----------|-------------------------------------------------------------------------|
//! | `ENOENT`  | no such file in the ramdisk                                             |
//! | `EIO`     | the ramdisk archive itself is corrupt                                   |
//! | `ENOEXEC` | not an x86_64 ELF executable we can run (bad magic, wrong class/arch/type, truncated, needs an interpreter) |
//! | `EINVAL`  | an ELF breaking the address-space rules (kernel half, overlap, alignment), or a bad argument |
//! | `E2BIG`   | over a size limit: too many segments, an image too large, arguments too long |

use core::fmt;

use tally_uapi::errno::{E2BIG, EINVAL, EIO, ENOENT, ENOEXEC};

/// Everything that can go wrong between "spawn this path" and "jump to the entry point".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecError {
    // --- the ramdisk (cpio) ----------------------------------------------------------
    /// The archive ends inside a header, a name or a file's data (byte offset given).
    ArchiveTruncated { offset: usize },
    /// An entry does not start with a newc magic (`070701` or `070702`).
    ArchiveBadMagic { offset: usize },
    /// A header field is not 8 hexadecimal digits.
    ArchiveBadField { offset: usize },
    /// An entry's name is empty, lacks its NUL terminator or is not UTF-8.
    ArchiveBadName { offset: usize },
    /// A `070702` entry whose data does not add up to its checksum.
    ArchiveBadChecksum { offset: usize },
    /// The archive ends without the `TRAILER!!!` entry.
    ArchiveNoTrailer,
    /// No entry with that name (or the name is a directory, not a file).
    NotFound,

    // --- the ELF file ----------------------------------------------------------------
    /// Not an ELF file, or its headers are cut short or inconsistent.
    NotElf,
    /// An ELF, but not 64-bit little-endian x86_64.
    WrongArch,
    /// An ELF x86_64 file, but neither an executable (`ET_EXEC`) nor a static PIE
    /// (`ET_DYN`): a relocatable object or a core file.
    NotExecutable,
    /// It asks for an interpreter (`PT_INTERP`): dynamically linked.
    Dynamic,
    /// No `PT_LOAD` segment: nothing to run.
    NoSegments,
    /// A segment's file bytes lie (partly) outside the file.
    SegmentOutsideFile { index: usize },
    /// The entry point is not inside an executable segment.
    BadEntry,
    /// A segment declares more file bytes than memory (`p_filesz > p_memsz`).
    FileszOverMemsz { index: usize },
    /// `p_vaddr` and `p_offset` are not congruent modulo the page size (or `p_align` is
    /// not a power of two), so the file cannot be mapped page by page.
    Misaligned { index: usize },
    /// A segment reaches outside the user part of the address space (or wraps around).
    OutsideUser { index: usize },
    /// Two segments share a page.
    Overlap { first: usize, second: usize },
    /// A segment is both writable and executable, and the limits forbid it.
    WritableAndExecutable { index: usize },
    /// More `PT_LOAD` segments (or program headers) than the limits allow.
    TooManySegments,
    /// The memory image (sum of the segments' pages) is larger than the limits allow.
    ImageTooLarge,

    // --- the initial stack -----------------------------------------------------------
    /// The argument and environment strings (with their pointers) exceed the limit.
    ArgsTooLong,
    /// An argument or environment string contains a NUL byte, which would cut it short.
    NulInArgument,
    /// The stack top is not 16-byte aligned, not a user address, or too low for the image.
    BadStackTop,
}

impl ExecError {
    /// The errno a system call returns for this error (positive; the syscall returns the
    /// negation).
    pub const fn errno(self) -> i32 {
        use ExecError::*;
        match self {
            ArchiveTruncated { .. }
            | ArchiveBadMagic { .. }
            | ArchiveBadField { .. }
            | ArchiveBadName { .. }
            | ArchiveBadChecksum { .. }
            | ArchiveNoTrailer => EIO,
            NotFound => ENOENT,
            NotElf | WrongArch | NotExecutable | Dynamic | NoSegments | SegmentOutsideFile { .. } | BadEntry => ENOEXEC,
            FileszOverMemsz { .. }
            | Misaligned { .. }
            | OutsideUser { .. }
            | Overlap { .. }
            | WritableAndExecutable { .. }
            | NulInArgument
            | BadStackTop => EINVAL,
            TooManySegments | ImageTooLarge | ArgsTooLong => E2BIG,
        }
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ExecError::*;
        match *self {
            ArchiveTruncated { offset } => write!(f, "ramdisk: archive truncated at byte {offset}"),
            ArchiveBadMagic { offset } => write!(f, "ramdisk: no cpio newc magic at byte {offset}"),
            ArchiveBadField { offset } => write!(f, "ramdisk: bad hex field in header at byte {offset}"),
            ArchiveBadName { offset } => write!(f, "ramdisk: bad entry name at byte {offset}"),
            ArchiveBadChecksum { offset } => write!(f, "ramdisk: checksum mismatch in entry at byte {offset}"),
            ArchiveNoTrailer => f.write_str("ramdisk: archive ends without TRAILER!!!"),
            NotFound => f.write_str("no such file in the ramdisk"),
            NotElf => f.write_str("not an ELF file (or its headers are cut short)"),
            WrongArch => f.write_str("not a 64-bit little-endian x86_64 ELF"),
            NotExecutable => f.write_str("not an executable (ET_EXEC or ET_DYN)"),
            Dynamic => f.write_str("dynamically linked (PT_INTERP): only static executables and static PIEs run"),
            NoSegments => f.write_str("no PT_LOAD segment"),
            SegmentOutsideFile { index } => write!(f, "segment {index}: file bytes outside the file"),
            BadEntry => f.write_str("entry point is not in an executable segment"),
            FileszOverMemsz { index } => write!(f, "segment {index}: p_filesz > p_memsz"),
            Misaligned { index } => write!(f, "segment {index}: p_vaddr and p_offset differ modulo the page size"),
            OutsideUser { index } => write!(f, "segment {index}: outside the user address range"),
            Overlap { first, second } => write!(f, "segments {first} and {second} share a page"),
            WritableAndExecutable { index } => write!(f, "segment {index}: writable and executable"),
            TooManySegments => f.write_str("too many segments"),
            ImageTooLarge => f.write_str("memory image too large"),
            ArgsTooLong => f.write_str("arguments and environment too long"),
            NulInArgument => f.write_str("NUL byte inside an argument"),
            BadStackTop => f.write_str("bad stack top"),
        }
    }
}
