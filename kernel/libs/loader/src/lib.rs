//! # tally-loader — what `exec` has to work out before a user program can run
//!
//! Starting a program is mostly bookkeeping, and this crate is that bookkeeping, kept apart
//! from the page tables so it can be tested on the host like the rest of the kernel's logic.
//! When the kernel is asked to `spawn("/bin/hello", ["hello", "world"])` it goes through
//! four steps; this crate does the first three and hands the kernel plain data for the fourth:
//!
//! 1. **Find the file.** The boot loader leaves a *ramdisk* in memory: one archive holding
//!    every user program (`cargo xtask` packs `target/tally/ramdisk-<profile>.cpio`).
//!    [`cpio`] reads it. The format is cpio "newc", the one Linux unpacks its initramfs from,
//!    so `cpio -t < ramdisk.cpio` on the host lists exactly what the kernel sees.
//! 2. **Check the ELF and plan the address space.** [`elf::plan`] reads the program's ELF
//!    header and program headers and answers: which byte ranges of the file go to which user
//!    addresses with which permissions (the `PT_LOAD` segments), how much zeroed memory
//!    follows each (`.bss`), where execution starts, and where the heap (`brk`) may begin.
//!    Everything a hostile or broken file could get wrong is checked here: addresses in the
//!    kernel half, overlapping segments, sizes that overflow, a file shorter than it claims.
//! 3. **Build the initial stack.** [`stack::StackImage`] lays out `argc`, the `argv` and
//!    `envp` pointer arrays, the auxiliary vector and the strings themselves, exactly as the
//!    System V x86_64 ABI (and so Linux) does, and computes the initial `rsp`.
//! 4. **Map and go** (the kernel's `proc/exec.rs` and `proc/vm.rs`, over the HAL's page
//!    tables): allocate frames, map each segment's pages with its flags, copy the file
//!    bytes, zero the rest, copy the stack image below the stack top, and return to ring 3
//!    at the entry point with `rsp` as computed.
//!
//! [`prepare`] runs steps 1-3 in one call.
//!
//! Every function takes untrusted bytes and answers with a value or an [`ExecError`]; none
//! can panic, whatever the input (the property tests in `tests/` feed them random bytes).
//! An error knows the errno the system call returns for it ([`ExecError::errno`]).
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod cpio;
pub mod elf;
mod error;
pub mod stack;

pub use error::ExecError;

/// Steps 1-3 in one call: a program ready for the kernel to map and enter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program<'a> {
    /// The ramdisk entry the program came from (its bytes are borrowed from the ramdisk).
    pub file: cpio::Entry<'a>,
    /// What to map, and where to start.
    pub plan: elf::ElfPlan<'a>,
    /// The initial stack: copy `stack.bytes` to `[stack.rsp, stack_top)`.
    pub stack: stack::StackImage,
}

/// Finds `path` in the ramdisk, checks and plans its ELF with `limits`, and builds its
/// initial stack below `stack_top` with `argv`, `envp` and an auxiliary vector holding
/// `AT_PAGESZ` and `AT_ENTRY`. The stack top must lie above the image.
pub fn prepare<'a>(
    ramdisk: &'a [u8],
    path: &str,
    argv: &[&[u8]],
    envp: &[&[u8]],
    limits: &elf::Limits,
    stack_top: u64,
) -> Result<Program<'a>, ExecError> {
    let file = cpio::Archive::new(ramdisk).find(path)?;
    let plan = elf::plan(file.data, limits)?;
    let auxv = [(stack::AT_PAGESZ, PAGE_SIZE), (stack::AT_ENTRY, plan.entry)];
    let stack = stack::StackImage::build(stack_top, argv, envp, &auxv)?;
    if stack.rsp < plan.image_end {
        return Err(ExecError::BadStackTop);
    }
    Ok(Program { file, plan, stack })
}

/// The page size every rule here is stated in (x86_64's small pages).
pub const PAGE_SIZE: u64 = 4096;

/// Rounds `x` down to a page boundary.
pub const fn page_floor(x: u64) -> u64 {
    x & !(PAGE_SIZE - 1)
}

/// Rounds `x` up to a page boundary; `None` if that overflows.
pub const fn page_ceil(x: u64) -> Option<u64> {
    match x.checked_add(PAGE_SIZE - 1) {
        Some(v) => Some(page_floor(v)),
        None => None,
    }
}
