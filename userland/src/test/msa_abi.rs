//! `/test/msa_abi accounting|no-accounting` — the `msa()` system call's contract from ring 3
//! (`tally_uapi::msa`): the fixture of the `user_msa` self-test (`tally_uapi::fixture`). The
//! argument says whether the kernel keeps microstate clocks (without, every timer is 0).
//!
//! Checks: EINVAL for an unknown `which` (1), `ntimers` 14 (2) and -1 (3); `ntimers` 0 with
//! NULL is fine (4); EFAULT for NULL (5), a kernel address (6) and read-only code (7);
//! `ntimers` 3 fills timers 0-2 only (8-10); after some user work the thread's USR and SYS
//! are non-zero (11-13, with accounting); MSA_CHILDREN is all zero without children (14,
//! 15); MSA_SELF's USR covers the thread's (16, 17); `int` arguments use their low 32 bits
//! (18, 19). Exit status: the number of the failed check, 0 if none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::fixture::{check, expect_err, expect_ok, usage};
use tally_rt::sys;
use tally_rt::sys::probe::{self, BadPtr};
use tally_rt::uapi::errno::{EFAULT, EINVAL};
use tally_rt::uapi::fixture::{MSA_ACCOUNTING, MSA_NO_ACCOUNTING};
use tally_rt::uapi::msa::{MSA_CHILDREN, MSA_SELF, MSA_THREAD, NR_MICROSTATES};

tally_rt::entry!(main);

/// What the timers hold before a call, to see which ones it wrote.
const UNTOUCHED: u64 = 0xaaaa_aaaa_aaaa_aaaa;

fn main() -> i32 {
    let accounting = match tally_rt::arg(1) {
        Some(MSA_ACCOUNTING) => true,
        Some(MSA_NO_ACCOUNTING) => false,
        _ => usage("accounting|no-accounting"),
    };
    let mut a = [0u64; NR_MICROSTATES];
    let mut b = [0u64; NR_MICROSTATES];
    let (thread, self_) = (MSA_THREAD as usize, MSA_SELF as usize);
    expect_err(probe::msa(NR_MICROSTATES, 3, (&mut a[..]).into()), EINVAL, 1); // no such `which`
    expect_err(probe::msa(NR_MICROSTATES + 1, self_, (&mut a[..]).into()), EINVAL, 2);
    // -1 as an int: the low 32 bits set, the high ones clear, as a 32-bit `mov` leaves them.
    expect_err(probe::msa(u32::MAX as usize, self_, (&mut a[..]).into()), EINVAL, 3);
    expect_ok(probe::msa(0, self_, BadPtr::NULL.into()), 0, 4); // none at all: fine, even with NULL
    expect_err(probe::msa(NR_MICROSTATES, self_, BadPtr::NULL.into()), EFAULT, 5);
    expect_err(probe::msa(NR_MICROSTATES, thread, BadPtr::KERNEL.into()), EFAULT, 6);
    expect_err(probe::msa(NR_MICROSTATES, thread, BadPtr::code().into()), EFAULT, 7);
    a.fill(UNTOUCHED);
    expect_ok(sys::msa(MSA_THREAD, &mut a[..3]), 0, 8);
    check(a[3] == UNTOUCHED, 9);
    check(a[2] != UNTOUCHED, 10);
    for i in 0..2_000_000u32 {
        core::hint::black_box(i); // some user time
    }
    expect_ok(sys::msa(MSA_THREAD, &mut a), 0, 11);
    if accounting {
        check(a[0] != 0, 12);
        check(a[1] != 0, 13);
    }
    b.fill(UNTOUCHED);
    expect_ok(sys::msa(MSA_CHILDREN, &mut b), 0, 14); // no children: all zero
    check(b.iter().all(|&t| t == 0), 15);
    expect_ok(sys::msa(MSA_SELF, &mut b), 0, 16); // the process: at least the thread's user time
    check(b[0] >= a[0], 17);
    a[2] = UNTOUCHED;
    // int arguments: only the low 32 bits count (ntimers 2, which MSA_THREAD).
    expect_ok(probe::msa(0x1_0000_0002, 0x5_0000_0000 | thread, (&mut a[..]).into()), 0, 18);
    check(a[2] == UNTOUCHED, 19);
    0
}
