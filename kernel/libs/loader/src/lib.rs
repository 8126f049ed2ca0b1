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
//!    System V x86_64 ABI (and so Linux) does, and computes the initial `rsp`;
//!    [`initial_stack`] fills the auxiliary vector as Linux's `create_elf_tables` does, so a
//!    C library (musl) finds its program headers, its random canary and its ids.
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
    pub plan: elf::ElfPlan,
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

/// The environment a program gets when its starter passes none (`spawn`, init's programs):
/// a search path for `execvp`, a home, and a terminal type. `TERM=vt100`: the console is a
/// serial line whose other end (QEMU on the host's terminal) understands VT100 escapes,
/// and every curses database knows that name (Linux's `agetty` passes `linux` or `vt102`).
pub const DEFAULT_ENV: &[&[u8]] = &[b"PATH=/bin", b"HOME=/", b"TERM=vt100"];

/// What the auxiliary vector says that is not in the file: who the program runs as, what
/// the CPU offers, 16 random bytes, and the name it was started by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartInfo<'a> {
    pub uid: u32,
    pub euid: u32,
    pub gid: u32,
    pub egid: u32,
    /// `AT_HWCAP`: CPUID leaf 1's EDX, as Linux gives on x86_64.
    pub hwcap: u64,
    /// `AT_RANDOM`'s bytes (from the kernel's random source).
    pub random: [u8; 16],
    /// `AT_EXECFN`: the path as the caller gave it (without NUL).
    pub execfn: &'a [u8],
}

/// The initial stack for `plan`'s program, as Linux's `create_elf_tables` lays it out: `argc`,
/// `argv`, `envp`, then the auxiliary vector in Linux's order — `AT_HWCAP`, `AT_PAGESZ`,
/// `AT_CLKTCK` (100), `AT_PHDR`, `AT_PHENT`, `AT_PHNUM`, `AT_BASE` (0: no interpreter),
/// `AT_FLAGS` (0), `AT_ENTRY`, `AT_UID`, `AT_EUID`, `AT_GID`, `AT_EGID`, `AT_SECURE` (0:
/// nothing runs set-uid), then `AT_RANDOM`, `AT_EXECFN` and `AT_PLATFORM` ("x86_64"), whose
/// bytes are placed on the stack below the strings. The stack must lie above the image.
pub fn initial_stack(
    stack_top: u64,
    argv: &[&[u8]],
    envp: &[&[u8]],
    plan: &elf::ElfPlan,
    info: &StartInfo<'_>,
) -> Result<stack::StackImage, ExecError> {
    use stack::*;
    if info.execfn.contains(&0) {
        return Err(ExecError::NulInArgument);
    }
    if info.execfn.len() > stack::ARG_MAX {
        return Err(ExecError::ArgsTooLong);
    }
    let auxv = [
        (AT_HWCAP, info.hwcap),
        (AT_PAGESZ, PAGE_SIZE),
        (AT_CLKTCK, USER_HZ),
        (AT_PHDR, plan.phdr),
        (AT_PHENT, plan.phent),
        (AT_PHNUM, plan.phnum),
        (AT_BASE, 0),
        (AT_FLAGS, 0),
        (AT_ENTRY, plan.entry),
        (AT_UID, u64::from(info.uid)),
        (AT_EUID, u64::from(info.euid)),
        (AT_GID, u64::from(info.gid)),
        (AT_EGID, u64::from(info.egid)),
        (AT_SECURE, 0),
    ];
    let mut execfn = alloc::vec::Vec::with_capacity(info.execfn.len() + 1);
    execfn.extend_from_slice(info.execfn);
    execfn.push(0);
    let mut platform = [0u8; PLATFORM.len() + 1];
    platform[..PLATFORM.len()].copy_from_slice(PLATFORM);
    let placed: [(u64, &[u8]); 3] = [(AT_RANDOM, &info.random), (AT_EXECFN, &execfn), (AT_PLATFORM, &platform)];
    let image = StackImage::build_with(stack_top, argv, envp, &auxv, &placed)?;
    if image.rsp < plan.image_end {
        return Err(ExecError::BadStackTop);
    }
    Ok(image)
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
