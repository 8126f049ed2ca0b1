//! The user half of an address space: where programs are linked, where `mmap` places
//! anonymous memory, where the stack and its guard page are.
//!
//! These addresses are ABI in the way Linux's `TASK_SIZE`, `mmap_min_addr` and stack limit
//! are: `mmap` answers `EINVAL` for a fixed mapping over the guard page, the vvar area or
//! outside the user half, the loader refuses segments outside `USER_MIN_ADDR..USER_MMAP_BASE`,
//! and programs
//! (the runtime's contract probes, the test fixtures) name these addresses. The kernel's
//! memory map (`kernel/src/proc/vm.rs`) uses them from here.
//!
//! ```text
//!   0x0000_8000_0000_0000  USER_END          first address above the user half (non-canonical)
//!   0x0000_7fff_ffff_0000  USER_STACK_TOP    initial stack pointer just below
//!                          stack             up to USER_STACK_MAX (8 MiB), grows down on demand
//!   0x0000_7fff_ff7e_f000  USER_STACK_GUARD  one page in no region: an overflow faults
//!   0x0000_7fff_ff60_0000  VVAR_END
//!                          vvar area         read-only pages: the kernel's clocks (msa::vvar)
//!   0x0000_7fff_ff00_0000  VVAR_BASE
//!                          mmap area         anonymous regions, first fit upwards
//!   0x0000_1000_0000_0000  USER_MMAP_BASE
//!                          heap              from the page after the image, moved by brk, ≤ USER_HEAP_MAX
//!   0x0000_0000_0040_0000  USER_IMAGE_BASE   where programs are linked
//!   0x0000_0000_0001_0000  USER_MIN_ADDR     nothing mapped below: NULL (+ offsets) faults
//! ```

/// First address above the user half (the lower canonical half ends just below it).
pub const USER_END: u64 = 0x0000_8000_0000_0000;
/// Where programs are linked (`userland/link.ld`), as Linux's non-PIE x86_64 programs.
pub const USER_IMAGE_BASE: u64 = 0x40_0000;
/// Lowest address anything may be mapped at (Linux's `mmap_min_addr`): the pages below stay
/// unmapped so that a NULL pointer, even with a sizeable offset, faults.
pub const USER_MIN_ADDR: u64 = 0x1_0000;
/// Reserved for anonymous `mmap` regions; images and the heap stay below it.
pub const USER_MMAP_BASE: u64 = 0x0000_1000_0000_0000;
/// The stack's top (exclusive): the initial stack pointer is just below.
pub const USER_STACK_TOP: u64 = 0x0000_7fff_ffff_0000;
/// How far the stack may grow.
pub const USER_STACK_MAX: u64 = 8 * 1024 * 1024;
/// The page (4 KiB) just below the stack's lowest allowed page: never in any region, and
/// `mmap` refuses to map it (`EINVAL`).
pub const USER_STACK_GUARD: u64 = USER_STACK_TOP - USER_STACK_MAX - 4096;
/// How far `brk` may move the heap's end beyond its start.
pub const USER_HEAP_MAX: u64 = 1 << 30;

const _: () = assert!(USER_STACK_GUARD == 0x7fff_ff7e_f000);
const _: () = assert!(USER_MIN_ADDR <= USER_IMAGE_BASE && USER_MMAP_BASE < USER_STACK_GUARD);
const _: () = assert!(USER_STACK_TOP < USER_END);
