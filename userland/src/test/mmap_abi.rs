//! `/test/mmap_abi [prot_none]` — `mmap`/`munmap`'s contract and demand paging from ring 3:
//! the fixture of the `user_memory` self-test (`tally_uapi::fixture`).
//!
//! Checks: EINVAL for length 0 (1), `MAP_SHARED` (2), an unknown protection bit (4) and an
//! unaligned offset (5); EBADF for a file mapping without a file (3); 16 pages in the `mmap`
//! area (6), each zero when first read (20) and keeping what was written (21);
//! `MAP_FIXED_NOREPLACE` over them is EEXIST (7); `MAP_FIXED` over the program (8) or over
//! the stack's guard page (27) is EINVAL; `MAP_FIXED` over page 4 gives a fresh zero page
//! there (9, 10) and leaves page 5 alone (22); `munmap` unaligned or empty is EINVAL (11,
//! 12), of the 16 pages fine (13); mapping 16 pages again lands at the same place (first
//! fit, 14) with zeroed pages (23); `clock_gettime` into an untouched page works (24, 25) and
//! so does `nanosleep` reading one (26) — the kernel's copies fault the pages in; a 4 GiB
//! region is refused with ENOMEM (28: more than the machine has), and with `MAP_NORESERVE`
//! mapped with one page touched (15) and unmapped (16). With `prot_none`: a
//! `PROT_NONE` page (17) whose first read must kill the process (else 18). Exit status: the
//! number of the failed check, 0 if none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::Ordering::Relaxed;

use tally_rt::fixture::{check, expect_err, expect_ok, fail, usage};
use tally_rt::sys;
use tally_rt::sys::probe::{self, BadPtr, Out};
use tally_rt::sys::Mapping;
use tally_rt::uapi::errno::{EBADF, EEXIST, EINVAL, ENOMEM};
use tally_rt::uapi::fixture::MMAP_PROT_NONE;
use tally_rt::uapi::layout::{USER_IMAGE_BASE, USER_MMAP_BASE, USER_STACK_GUARD};
use tally_rt::uapi::syscall::*;

tally_rt::entry!(main);

const PAGE: usize = 4096;
/// 64-bit words in a page.
const WORDS: usize = PAGE / 8;
const RW: usize = PROT_READ | PROT_WRITE;
const ANON: usize = MAP_PRIVATE | MAP_ANONYMOUS;
/// A protection bit that does not exist.
const PROT_UNKNOWN: usize = PROT_EXEC << 1;

fn main() -> i32 {
    let prot_none = match tally_rt::arg(1) {
        None => false,
        Some(MMAP_PROT_NONE) => true,
        Some(_) => usage("[prot_none]"),
    };
    expect_err(probe::mmap(0, 0, RW, ANON, -1, 0), EINVAL, 1); // length 0
    expect_err(probe::mmap(0, PAGE, RW, MAP_SHARED | MAP_ANONYMOUS, -1, 0), EINVAL, 2);
    expect_err(probe::mmap(0, PAGE, RW, MAP_PRIVATE, -1, 0), EBADF, 3); // a file mapping without a file
    expect_err(probe::mmap(0, PAGE, PROT_UNKNOWN, ANON, -1, 0), EINVAL, 4);
    expect_err(probe::mmap(0, PAGE, RW, ANON, -1, 1), EINVAL, 5); // unaligned offset
    let Ok(m) = Mapping::new(16 * PAGE, RW) else { fail(6) };
    check(m.addr() as u64 >= USER_MMAP_BASE, 6);
    let base = m.addr();
    let w = m.words();
    for (i, page) in w.chunks(WORDS).enumerate() {
        // Touch each page: the first read finds zero, the write stays.
        check(page[0].load(Relaxed) == 0, 20);
        page[0].store(i as u64, Relaxed);
    }
    check(w[5 * WORDS].load(Relaxed) == 5, 21);
    expect_err(probe::mmap(base, PAGE, RW, ANON | MAP_FIXED_NOREPLACE, -1, 0), EEXIST, 7);
    // Over the program.
    expect_err(probe::mmap_fixed_refused(USER_IMAGE_BASE as usize, PAGE, RW, ANON), EINVAL, 8);
    // Over the stack's guard page (USER_STACK_GUARD) and the free page below it.
    expect_err(probe::mmap_fixed_refused(USER_STACK_GUARD as usize - PAGE, 2 * PAGE, RW, ANON), EINVAL, 27);
    expect_ok(m.replace(4 * PAGE, PAGE), base + 4 * PAGE, 9); // MAP_FIXED over page 4: a fresh zero page
    check(w[4 * WORDS].load(Relaxed) == 0, 10);
    check(w[5 * WORDS].load(Relaxed) == 5, 22); // its neighbour kept its contents
    expect_err(probe::munmap_refused(base + 1, PAGE), EINVAL, 11);
    expect_err(probe::munmap_refused(base, 0), EINVAL, 12);
    expect_ok(m.unmap(), 0, 13); // all 16 pages
    let mut m = match Mapping::new(16 * PAGE, RW) {
        Ok(m) if m.addr() == base => m, // first fit: the same place again
        _ => fail(14),
    };
    check(m.words()[5 * WORDS].load(Relaxed) == 0, 23); // and zeroed

    // clock_gettime into page 6, untouched since the mmap: the kernel's copy faults it in.
    let ts = &mut m.bytes_mut()[6 * PAGE..6 * PAGE + 16];
    expect_ok(probe::clock_gettime(CLOCK_MONOTONIC, Out::from(ts)), 0, 24);
    check(m.words()[6 * WORDS].load(Relaxed) | m.words()[6 * WORDS + 1].load(Relaxed) != 0, 25);
    // nanosleep reading an untouched page: {0, 0}.
    expect_ok(probe::nanosleep(base + 7 * PAGE, BadPtr::NULL.into()), 0, 26);
    // 4 GiB is more than the machine has: refused (Linux's overcommit guess), unless
    // MAP_NORESERVE says it is a sparse reservation.
    expect_err(Mapping::new(1 << 32, RW).map(|_| 0), ENOMEM, 28);
    let Ok(big) = sys::mapping_noreserve(1 << 32, RW) else { fail(15) }; // 4 GiB, one page touched
    check(big.addr() as isize > 0, 15);
    big.words()[0xc000_0000 / 8].store(42, Relaxed);
    expect_ok(big.unmap(), 0, 16);
    if prot_none {
        // PROT_NONE: reserved, and every touch faults.
        let Ok(none) = Mapping::new(PAGE, PROT_NONE) else { fail(17) };
        check(none.addr() as isize > 0, 17);
        none.load(0);
        fail(18);
    }
    0
}
