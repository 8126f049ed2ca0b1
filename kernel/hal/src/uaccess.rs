//! # User memory access: the only way the kernel touches user memory
//!
//! A system call's pointer arguments come from user space and may point anywhere: into the
//! kernel, at nothing, at a read-only page the call would write. The kernel must never fault
//! on one (a kernel-mode fault is fatal) and never let one make it read or write memory the
//! caller could not. So every access to user memory goes through [`copy_from_user`] /
//! [`copy_to_user`], which, *before touching anything*:
//!
//! 1. check the whole range lies in the user half (no wrap-around, nothing above
//!    `USER_END`: a kernel pointer fails here);
//! 2. walk the page tables of the caller's (active) address space for every page of the
//!    range: present, user-accessible, and writable if the kernel is to write. A page that
//!    is not yet mapped is handed to the caller's `resolve` callback, which maps it if the
//!    process's memory map allows (a demand-zero page, see the kernel's `proc/vm.rs`) —
//!    the same decision the page-fault handler would make; if it cannot, the access fails;
//!
//! and only then copy, one page at a time, with interrupts off between the re-check of the
//! page and the copy, so nothing can unmap it in between. The copy itself is bracketed by
//! `stac`/`clac`: with **SMAP** on, the CPU refuses any kernel access to a user page unless
//! the AC flag is set, so a stray kernel dereference of a user pointer faults at once
//! instead of silently working. **SMEP** likewise makes the CPU refuse to *execute* a user
//! page in ring 0. Both are enabled by [`init`] when CPUID says the CPU has them (QEMU's
//! `-cpu max` does).
//!
//! Failure is reported as [`Fault`]; the kernel's system calls (`syscall/usercopy.rs`) turn
//! it into `-EFAULT`.
//!
//! **The direct path.** Most copies are small and land on pages the process has already
//! touched, so the checks above would only confirm what the MMU is about to check anyway.
//! [`copy_to_user_direct`] / [`copy_from_user_direct`] therefore just copy — when the range
//! lies in the user half, spans at most [`DIRECT_MAX`] bytes, and the CPU is on a user
//! address space — and let a page fault say no: the routine's faulting instructions (the
//! probes and `rep movsq`/`rep movsb` of the routines below) are known to the
//! page-fault handler, which resumes a fault there at a label that reports failure
//! ([`fixup`], called from `idt.rs`; Linux's exception table, with a few entries). The
//! caller then takes the checked path above, which maps a demand-zero page or says `EFAULT`
//! exactly as before. A copy *to* user memory is all or nothing: with interrupts off, it
//! first *probes* every page it will write after the first with `lock or byte [p], 0` — a
//! write that changes nothing — and copies only once every page has taken one (a fault on
//! the first page comes with the copy's first write), so a failed direct copy to user
//! memory has written nothing (a copy *from* user memory may fail halfway; only the kernel's
//! buffer then holds part of the bytes, and the checked path copies again).
//! [`probe_user_direct`] is the probe alone, for system calls that check a buffer before
//! they sleep and fill it later. It is safe because on a user address space everything
//! mapped in the user half is the process's own user memory
//! (`address_space::user_space_active`), read-only pages stay read-only for the kernel
//! (CR0.WP), a single CPU with interrupts off cannot unmap a probed page before the copy,
//! and interrupts are off while AC is set, as above.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use x86_64::registers::control::{Cr4, Cr4Flags};

use super::address_space::{self, is_user_range, AddressSpace, PAGE_SIZE, USER_END};

static SMAP_ON: AtomicBool = AtomicBool::new(false);

/// A user pointer that does not name memory the caller may access that way (`EFAULT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault;

/// Maps a missing page on demand: `resolve(page_address, write)` returns true if it mapped
/// the page (or made it writable) because the process may use it that way.
pub type Resolve<'a> = &'a mut dyn FnMut(u64, bool) -> bool;

/// CPUID leaf 7 (structured extended features), EBX.
fn cpuid7_ebx() -> u32 {
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86_64 CPU and only reads identification registers.
    let (max, ebx) = unsafe {
        let max = core::arch::x86_64::__cpuid(0).eax;
        (max, if max >= 7 { core::arch::x86_64::__cpuid_count(7, 0).ebx } else { 0 })
    };
    if max >= 7 {
        ebx
    } else {
        0
    }
}

/// Turn on SMEP and SMAP if the CPU has them. Returns (smep, smap).
pub fn init() -> (bool, bool) {
    let ebx = cpuid7_ebx();
    let smep = ebx & (1 << 7) != 0;
    let smap = ebx & (1 << 20) != 0;
    let mut add = Cr4Flags::empty();
    if smep {
        add |= Cr4Flags::SUPERVISOR_MODE_EXECUTION_PROTECTION;
    }
    if smap {
        add |= Cr4Flags::SUPERVISOR_MODE_ACCESS_PREVENTION;
    }
    // SAFETY: the kernel never executes user pages and touches user memory only here,
    // between stac and clac; nothing of the kernel lives in user-accessible pages (the
    // kernel half is supervisor-only in every address space).
    unsafe { Cr4::update(|f| *f |= add) };
    SMAP_ON.store(smap, Ordering::Relaxed);
    (smep, smap)
}

/// Is user page `page` mapped in `space` so that the kernel may access it (`write` or read)?
fn accessible(space: &AddressSpace, page: u64, write: bool) -> bool {
    space.translate(page).is_some_and(|p| !write || p.prot.write)
}

/// Step 1 and 2 of the module comment for `[addr, addr+len)`: every page accessible,
/// resolving missing ones.
fn validate(space: &AddressSpace, addr: u64, len: u64, write: bool, resolve: Resolve) -> Result<(), Fault> {
    if !is_user_range(addr, len) || !space.is_active() {
        return Err(Fault);
    }
    if len == 0 {
        return Ok(());
    }
    let mut page = addr & !(PAGE_SIZE - 1);
    while page < addr + len {
        if !accessible(space, page, write) && !(resolve(page, write) && accessible(space, page, write)) {
            return Err(Fault);
        }
        page += PAGE_SIZE;
    }
    Ok(())
}

/// Validate the range, then call `copy(user_address, offset, len)` for each page-sized
/// piece, with interrupts off, the page re-checked, and user access allowed (stac).
fn copy_pages(
    space: &AddressSpace,
    addr: u64,
    len: u64,
    write: bool,
    resolve: Resolve,
    mut copy: impl FnMut(u64, usize, usize),
) -> Result<(), Fault> {
    validate(space, addr, len, write, resolve)?;
    let mut at = addr;
    while at < addr + len {
        let page = at & !(PAGE_SIZE - 1);
        let n = (page + PAGE_SIZE).min(addr + len) - at;
        super::cpu::without_interrupts(|| {
            if !space.is_active() || !accessible(space, page, write) {
                return Err(Fault);
            }
            let smap = SMAP_ON.load(Ordering::Relaxed);
            if smap {
                // SAFETY: sets RFLAGS.AC, allowing supervisor access to user pages until the
                // clac below; interrupts are off, so no handler runs with AC set.
                unsafe { core::arch::asm!("stac", options(nostack)) };
            }
            copy(at, (at - addr) as usize, n as usize);
            if smap {
                // SAFETY: clears RFLAGS.AC again.
                unsafe { core::arch::asm!("clac", options(nostack)) };
            }
            Ok(())
        })?;
        at += n;
    }
    Ok(())
}

/// Check (steps 1 and 2) that `[addr, addr+len)` of `space` may be read, or written with
/// `write`, without copying anything: for calls that then copy piecemeal.
pub fn check(space: &AddressSpace, addr: u64, len: u64, write: bool, resolve: Resolve) -> Result<(), Fault> {
    validate(space, addr, len, write, resolve)
}

/// Copy `dst.len()` bytes from user address `src` of `space` (the active address space).
pub fn copy_from_user(space: &AddressSpace, src: u64, dst: &mut [u8], resolve: Resolve) -> Result<(), Fault> {
    let out = dst.as_mut_ptr();
    copy_pages(space, src, dst.len() as u64, false, resolve, |user, off, n| {
        // SAFETY: `user..user+n` is within one user page just checked present and
        // user-accessible in the active address space, with interrupts off so it stays so;
        // AC is set; `out+off..out+off+n` is inside `dst`, exclusively borrowed.
        unsafe { core::ptr::copy_nonoverlapping(user as *const u8, out.add(off), n) }
    })
}

/// Copy `src` to user address `dst` of `space` (the active address space).
pub fn copy_to_user(space: &AddressSpace, dst: u64, src: &[u8], resolve: Resolve) -> Result<(), Fault> {
    copy_pages(space, dst, src.len() as u64, true, resolve, |user, off, n| {
        // SAFETY: as in `copy_from_user`, and the page was checked writable; the kernel
        // never maps its own data in the user half, so this cannot alias kernel memory.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr().add(off), user as *mut u8, n) }
    })
}

// The direct path (module comment). Each routine runs with interrupts off and — if its
// `smap` argument is nonzero — AC set; `popfq` puts IF and AC back as they were (AC clear:
// the kernel never runs with it set). DF is clear (the ABI's default; SFMASK clears it on
// `syscall`). Each returns 0, or 1 if one of its labelled instructions faulted, through the
// page-fault handler's [`fixup`].
//
// * `tally_uaccess_copy(dst, src, len, smap)` copies `len` bytes, eight at a time then the
//   rest.
// * `tally_uaccess_copy_out(dst, src, len, smap)` first probes for writing every page of
//   `[dst, dst + len)` after the first (a fault on the first page comes with the copy's
//   first write, before any other), then copies as above.
// * `tally_uaccess_probe(addr, len, smap, write)` only probes `[addr, addr + len)`, every
//   page: for writing if `write`, else for reading.
//
// A probe touches one byte of each page: for writing `lock or byte [p], 0` (a write that
// changes nothing), for reading a load. The probe loop (`r9` = address, `r10` = end, `r8d`
// bit 0 = write, bit 1 = copy afterwards) is shared, entered and left by jumps.
core::arch::global_asm!(
    ".global tally_uaccess_copy",
    ".global tally_uaccess_copy_out",
    ".global tally_uaccess_probe",
    ".global tally_uaccess_copy_words",
    ".global tally_uaccess_copy_bytes",
    ".global tally_uaccess_probe_write",
    ".global tally_uaccess_probe_read",
    ".global tally_uaccess_copy_fault",
    // Every routine's entry: save RFLAGS, interrupts off, AC set if `smap` (a register) is
    // nonzero.
    ".macro uaccess_enter smap",
    "pushfq",
    "cli",
    "test \\smap, \\smap",
    "jz 2f",
    "stac",
    "2:",
    ".endm",
    // tally_uaccess_copy(rdi = dst, rsi = src, rdx = len, ecx = smap)
    "tally_uaccess_copy:",
    "uaccess_enter ecx",
    "tally_uaccess_copy_body:",
    "mov rcx, rdx",
    "shr rcx, 3",
    "tally_uaccess_copy_words:",
    "rep movsq",
    "mov ecx, edx",
    "and ecx, 7",
    "tally_uaccess_copy_bytes:",
    "rep movsb",
    "tally_uaccess_ok:",
    "xor eax, eax",
    "3:",
    "popfq",
    "ret",
    "tally_uaccess_copy_fault:",
    "mov eax, 1",
    "jmp 3b",
    // tally_uaccess_copy_out(rdi = dst, rsi = src, rdx = len, ecx = smap)
    "tally_uaccess_copy_out:",
    "uaccess_enter ecx",
    "mov r8d, 3", // probe for writing, then copy
    "mov r9, rdi",
    "and r9, -4096",
    "add r9, 4096",
    "lea r10, [rdi + rdx]",
    "jmp tally_uaccess_probe_pages",
    // tally_uaccess_probe(rdi = addr, rsi = len, edx = smap, ecx = write)
    "tally_uaccess_probe:",
    "uaccess_enter edx",
    "mov r8d, ecx",
    "and r8d, 1", // probe only
    "mov r9, rdi",
    "lea r10, [rdi + rsi]",
    "tally_uaccess_probe_pages:",
    "cmp r9, r10",
    "jae 6f",
    "test r8d, 1",
    "jz 5f",
    "tally_uaccess_probe_write:",
    "lock or byte ptr [r9], 0",
    "jmp 4f",
    "5:",
    "tally_uaccess_probe_read:",
    "mov al, byte ptr [r9]",
    "4:",
    "and r9, -4096",
    "add r9, 4096",
    "jmp tally_uaccess_probe_pages",
    "6:",
    "test r8d, 2",
    "jnz tally_uaccess_copy_body",
    "jmp tally_uaccess_ok",
);

unsafe extern "C" {
    fn tally_uaccess_copy(dst: *mut u8, src: *const u8, len: usize, smap: u32) -> u64;
    fn tally_uaccess_copy_out(dst: *mut u8, src: *const u8, len: usize, smap: u32) -> u64;
    fn tally_uaccess_probe(addr: u64, len: u64, smap: u32, write: u32) -> u64;
    // Labels inside them (only their addresses are used).
    static tally_uaccess_copy_words: u8;
    static tally_uaccess_copy_bytes: u8;
    static tally_uaccess_probe_write: u8;
    static tally_uaccess_probe_read: u8;
    static tally_uaccess_copy_fault: u8;
}

/// Clear RFLAGS.AC if SMAP is on: called first by every interrupt and exception handler,
/// as Linux's entry code does (`ASM_CLAC`). The CPU does not clear AC on an interrupt or an
/// exception, and both a user program (AC is a user flag: `popf` sets it) and a fault inside
/// the direct copy can arrive with it set: a handler — or a thread switched to from one —
/// must not run with user access allowed. `iretq` restores the interrupted RFLAGS, AC
/// included. (`syscall` clears it through SFMASK.)
#[inline]
pub fn clear_ac() {
    if SMAP_ON.load(Ordering::Relaxed) {
        // SAFETY: `clac` only clears RFLAGS.AC; it exists (no #UD) because SMAP is on.
        unsafe { core::arch::asm!("clac", options(nostack)) };
    }
}

/// Direct copies that faulted and were handed to the checked path, since boot.
static DIRECT_FAULTS: AtomicU64 = AtomicU64::new(0);

/// Where a kernel-mode page fault at `rip` on address `addr` resumes, if it is the direct
/// copy touching user memory (called by the page-fault handler; `None`: a real kernel fault).
pub fn fixup(rip: u64, addr: u64) -> Option<u64> {
    let labels = [
        &raw const tally_uaccess_copy_words as u64,
        &raw const tally_uaccess_copy_bytes as u64,
        &raw const tally_uaccess_probe_write as u64,
        &raw const tally_uaccess_probe_read as u64,
    ];
    if !labels.contains(&rip) || addr >= USER_END {
        return None;
    }
    DIRECT_FAULTS.fetch_add(1, Ordering::Relaxed);
    Some(&raw const tally_uaccess_copy_fault as u64)
}

/// How many direct copies have faulted (and fallen back to the checked path) since boot.
pub fn direct_faults() -> u64 {
    DIRECT_FAULTS.load(Ordering::Relaxed)
}

/// Longest range the direct path takes (four pages): it runs with interrupts off, so a
/// longer copy goes through the checked path, page by page.
pub const DIRECT_MAX: u64 = 4 * PAGE_SIZE;

/// May `[user, user + len)` be accessed directly: at most [`DIRECT_MAX`] bytes of the user
/// half, with the CPU on a user address space?
#[inline]
fn direct_ok(user: u64, len: u64) -> bool {
    len <= DIRECT_MAX && is_user_range(user, len) && address_space::user_space_active()
}

#[inline]
fn smap() -> u32 {
    SMAP_ON.load(Ordering::Relaxed) as u32
}

/// [`copy_to_user`] without the checks, for the active user address space (see the module
/// comment). `false`: nothing was written; use [`copy_to_user`].
#[inline]
pub fn copy_to_user_direct(dst: u64, src: &[u8]) -> bool {
    if !direct_ok(dst, src.len() as u64) {
        return false;
    }
    // SAFETY: `src` is readable for its length; `dst..dst+len` lies in the user half of the
    // active user address space (`direct_ok`), where every mapped page is this process's own
    // user memory and nothing of the kernel's. With interrupts off, every page of it after
    // the first is probed by a write that changes nothing before anything is copied (the
    // first page is the first written); a probe or a copy that faults does so at an
    // instruction `fixup` knows and returns 1, having written nothing. The copy writes
    // only such memory, as the pages' permissions allow (CR0.WP). AC is set only with
    // interrupts off.
    unsafe {
        if (dst & (PAGE_SIZE - 1)) + src.len() as u64 <= PAGE_SIZE {
            tally_uaccess_copy(dst as *mut u8, src.as_ptr(), src.len(), smap()) == 0
        // one page: no probe
        } else {
            tally_uaccess_copy_out(dst as *mut u8, src.as_ptr(), src.len(), smap()) == 0
        }
    }
}

/// [`copy_from_user`] without the checks, for the active user address space.
/// `false`: `dst` may hold part of the bytes; use [`copy_from_user`].
#[inline]
pub fn copy_from_user_direct(src: u64, dst: &mut [u8]) -> bool {
    if !direct_ok(src, dst.len() as u64) {
        return false;
    }
    // SAFETY: `dst` is writable for its length (exclusively borrowed); the user side is as in
    // `copy_to_user_direct`, and only read.
    unsafe { tally_uaccess_copy(dst.as_mut_ptr(), src as *const u8, dst.len(), smap()) == 0 }
}

/// [`check`] without the checks: touches every page of `[addr, addr + len)` (for writing:
/// a write that changes nothing). `true`: every page is there and may be accessed that way
/// now; `false`: ask [`check`], which may map a demand-zero page or say no.
#[inline]
pub fn probe_user_direct(addr: u64, len: u64, write: bool) -> bool {
    if !direct_ok(addr, len) {
        return false;
    }
    // SAFETY: as in `copy_to_user_direct`: only the user half of the active user address
    // space is touched, by loads or by `lock or` of zero (no byte changes), each at an
    // instruction `fixup` knows; interrupts are off while AC is set.
    unsafe { tally_uaccess_probe(addr, len, smap(), write as u32) == 0 }
}

/// `words` as the bytes they are in memory: little-endian, as `to_le_bytes` would give, so
/// arrays of `u64` (`msa()`'s clocks) can be copied out without building a byte copy first.
#[inline]
pub fn u64s_as_bytes(words: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding and every byte of it is initialised; u8 needs no alignment;
    // the byte slice covers exactly the same memory and borrows it as long as `words`.
    unsafe { core::slice::from_raw_parts(words.as_ptr().cast::<u8>(), core::mem::size_of_val(words)) }
}
