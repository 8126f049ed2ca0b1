//! # Reaching user memory from a system call
//!
//! The safe face of `hal::uaccess` for handlers: copies to and from the *calling*
//! task's memory, with any not-yet-touched page of a demand-zero region faulted in first
//! (and counted as a minor fault, as if user code had touched it; a page of a program on
//! `/var` is read from the disk, a major fault). Every function checks
//! the whole range before copying anything and fails with `EFAULT` — never a kernel fault —
//! for a pointer into the kernel, at nothing, or (for copies out) at read-only memory.
//! A copy or check of up to four pages first tries the direct path (`hal::uaccess`'s module
//! comment: touch or copy, and let a page fault say no), which needs neither the memory map
//! nor a page-table walk; if it fails, nothing has been written to user memory and the
//! checked path decides.

use alloc::vec::Vec;
use tally_uapi::errno::{E2BIG, EFAULT};
use tally_uapi::syscall::Timespec;

use crate::proc;
use hal::uaccess;

fn with_user<R>(
    f: impl FnOnce(&hal::address_space::AddressSpace, uaccess::Resolve) -> Result<R, uaccess::Fault>,
) -> Result<R, i32> {
    let vm = proc::current_vm().ok_or(EFAULT)?;
    let mut resolve =
        |page: u64, write: bool| proc::resolve_for_copy(&vm, page, write, proc::current_process_cpu_ticks());
    f(vm.space(), &mut resolve).map_err(|_| EFAULT)
}

/// Check that `len` bytes at user address `addr` may be read (or written, with `write`),
/// faulting in demand-zero pages, without copying.
pub fn check(addr: u64, len: u64, write: bool) -> Result<(), i32> {
    if uaccess::probe_user_direct(addr, len, write) {
        return Ok(());
    }
    check_slow(addr, len, write)
}

#[inline(never)]
fn check_slow(addr: u64, len: u64, write: bool) -> Result<(), i32> {
    with_user(|space, resolve| uaccess::check(space, addr, len, write, resolve))
}

/// Copy `buf.len()` bytes from user address `addr`. (On failure `buf` holds nothing
/// meaningful.)
#[inline]
pub fn copy_from_user(addr: u64, buf: &mut [u8]) -> Result<(), i32> {
    if uaccess::copy_from_user_direct(addr, buf) {
        return Ok(());
    }
    copy_from_user_checked(addr, buf)
}

#[inline(never)]
fn copy_from_user_checked(addr: u64, buf: &mut [u8]) -> Result<(), i32> {
    with_user(|space, resolve| uaccess::copy_from_user(space, addr, buf, resolve))
}

/// Copy `buf` to user address `addr`.
#[inline]
pub fn copy_to_user(addr: u64, buf: &[u8]) -> Result<(), i32> {
    if uaccess::copy_to_user_direct(addr, buf) {
        return Ok(());
    }
    copy_to_user_checked(addr, buf)
}

/// The direct path of [`copy_to_user`] alone: `true` if `buf` was copied, `false` if it
/// could not be (nothing written; use [`copy_to_user`]). It never blocks and takes no lock,
/// so it may run under a spinlock with interrupts off.
#[inline]
pub fn copy_to_user_direct(addr: u64, buf: &[u8]) -> bool {
    uaccess::copy_to_user_direct(addr, buf)
}

/// The direct path of [`copy_from_user`] alone, as [`copy_to_user_direct`] is of
/// [`copy_to_user`]: `false` if `buf` could not be filled (it may hold part of the bytes).
/// It never blocks and takes no lock, so it may run under a spinlock with interrupts off.
#[inline]
pub fn copy_from_user_direct(addr: u64, buf: &mut [u8]) -> bool {
    uaccess::copy_from_user_direct(addr, buf)
}

#[inline(never)]
fn copy_to_user_checked(addr: u64, buf: &[u8]) -> Result<(), i32> {
    with_user(|space, resolve| uaccess::copy_to_user(space, addr, buf, resolve))
}

/// A NUL-terminated string at user address `addr`, without its NUL, at most `max` bytes
/// long (`E2BIG` if there is no NUL within `max + 1` bytes). Reads page by page, so a string
/// that ends just before an unmapped page is fine.
/// (`open` takes its path this way; `spawn` takes (pointer, length) pairs.)
pub fn str_from_user(addr: u64, max: usize) -> Result<Vec<u8>, i32> {
    let mut out = Vec::new();
    let mut at = addr;
    loop {
        let page_left = 4096 - (at % 4096) as usize;
        let want = page_left.min(max.saturating_add(1) - out.len());
        let mut chunk = [0u8; 4096];
        copy_from_user(at, &mut chunk[..want])?;
        if let Some(nul) = chunk[..want].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..nul]);
            return Ok(out);
        }
        out.extend_from_slice(&chunk[..want]);
        if out.len() > max {
            return Err(E2BIG);
        }
        at = at.checked_add(want as u64).ok_or(EFAULT)?;
    }
}

/// Read `N` bytes at user address `addr` into an array.
pub fn read_array<const N: usize>(addr: u64) -> Result<[u8; N], i32> {
    let mut b = [0u8; N];
    copy_from_user(addr, &mut b)?;
    Ok(b)
}

/// Read an `i32` (a C `int`) from user memory.
pub fn read_i32(addr: u64) -> Result<i32, i32> {
    read_array::<4>(addr).map(i32::from_le_bytes)
}

/// Write an `i32` to user memory.
pub fn write_i32(addr: u64, v: i32) -> Result<(), i32> {
    copy_to_user(addr, &v.to_le_bytes())
}

/// Write a `u64` to user memory.
pub fn write_u64(addr: u64, v: u64) -> Result<(), i32> {
    copy_to_user(addr, &v.to_le_bytes())
}

/// Write `words` to user memory as consecutive `u64`s (a C `uint64_t[]`).
#[inline]
pub fn write_u64s(addr: u64, words: &[u64]) -> Result<(), i32> {
    copy_to_user(addr, uaccess::u64s_as_bytes(words))
}

/// Read a `struct timespec` from user memory.
pub fn read_timespec(addr: u64) -> Result<Timespec, i32> {
    let mut b = [0u8; 16];
    copy_from_user(addr, &mut b)?;
    let word =
        |i: usize| i64::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7]]);
    Ok(Timespec { tv_sec: word(0), tv_nsec: word(8) })
}

/// Write a `struct timespec` to user memory.
pub fn write_timespec(addr: u64, ts: &Timespec) -> Result<(), i32> {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&ts.tv_sec.to_ne_bytes());
    b[8..].copy_from_slice(&ts.tv_nsec.to_ne_bytes());
    copy_to_user(addr, &b)
}
