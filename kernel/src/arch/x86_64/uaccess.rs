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
//!    process's memory map allows (a demand-zero page, see `crate::task::vm`) — the same
//!    decision the page-fault handler would make; if it cannot, the access fails;
//!
//! and only then copy, one page at a time, with interrupts off between the re-check of the
//! page and the copy, so nothing can unmap it in between. The copy itself is bracketed by
//! `stac`/`clac`: with **SMAP** on, the CPU refuses any kernel access to a user page unless
//! the AC flag is set, so a stray kernel dereference of a user pointer faults at once
//! instead of silently working. **SMEP** likewise makes the CPU refuse to *execute* a user
//! page in ring 0. Both are enabled by [`init`] when CPUID says the CPU has them (QEMU's
//! `-cpu max` does).
//!
//! Failure is reported as [`Fault`]; the system-call layer turns it into `-EFAULT`.

use core::sync::atomic::{AtomicBool, Ordering};
use x86_64::registers::control::{Cr4, Cr4Flags};

use super::address_space::{is_user_range, AddressSpace, PAGE_SIZE};

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
    if max >= 7 { ebx } else { 0 }
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
