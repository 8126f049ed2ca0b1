//! `/test/blk_abi` — `blk_read`/`blk_write` from ring 3 on the data disk (8192 sectors,
//! `cargo xtask`'s `data.img`): the fixture of the `user_blk` self-test
//! (`tally_uapi::fixture`).
//!
//! Checks: 0 sectors is nothing to do (1); EINVAL for more than `BLK_MAX_SECTORS` (2), past
//! the disk's end (3), an LBA that overflows (4); EFAULT for a buffer at nothing (5), in
//! read-only code (6), in the kernel (7); a pattern in 8 sectors written at LBA 200 (8),
//! read back (9) intact (10); a 40-sector read into fresh `mmap` pages (11, 12) — several
//! driver requests — holds the pattern at its sector 20 (13). 48 sectors read and 8 written
//! in all, for the test's counters. Exit status: the number of the failed check, 0 if none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::fixture::{check, expect_err, expect_ok, fail};
use tally_rt::sys::probe::{self, BadPtr};
use tally_rt::sys::{self, Mapping};
use tally_rt::uapi::errno::{EFAULT, EINVAL};
use tally_rt::uapi::syscall::{BLK_MAX_SECTORS, BLK_SECTOR_SIZE, PROT_READ, PROT_WRITE};

tally_rt::entry!(main);

const SECTOR: usize = BLK_SECTOR_SIZE;
/// The data disk's last sector.
const LAST_LBA: u64 = 8191;

fn main() -> i32 {
    let mut buf = [0u8; 0x2000];
    // 0 sectors: nothing to do.
    expect_ok(sys::blk_write(100, &buf[..0]), 0, 1);
    // More than BLK_MAX_SECTORS, into a buffer of 16: refused before the buffer matters.
    expect_err(probe::blk_read(0, (&mut buf[..]).into(), BLK_MAX_SECTORS + 1), EINVAL, 2);
    expect_err(sys::blk_read(LAST_LBA, &mut buf[..2 * SECTOR]), EINVAL, 3); // past the end
    expect_err(sys::blk_read(u64::MAX, &mut buf[..SECTOR]), EINVAL, 4); // lba + sectors overflows
    expect_err(probe::blk_read(0, BadPtr::UNMAPPED.into(), 1), EFAULT, 5);
    expect_err(probe::blk_read(0, BadPtr::code().into(), 1), EFAULT, 6); // reading into code
    expect_err(probe::blk_write(100, BadPtr::KERNEL.addr(), 1), EFAULT, 7); // writing from the kernel
    let (pattern, back) = buf.split_at_mut(8 * SECTOR);
    for (i, b) in pattern.iter_mut().enumerate() {
        *b = (i * 7 + 3) as u8;
    }
    expect_ok(sys::blk_write(200, pattern), 8, 8);
    expect_ok(sys::blk_read(200, back), 8, 9);
    check(pattern == back, 10);
    // 40 sectors: several driver requests.
    let Ok(mut big) = Mapping::new(40 * SECTOR, PROT_READ | PROT_WRITE) else { fail(11) };
    check(big.addr() as isize > 0, 11);
    expect_ok(sys::blk_read(180, big.bytes_mut()), 40, 12);
    check(big.bytes_mut()[20 * SECTOR..28 * SECTOR] == *pattern, 13); // LBA 200 is its sector 20
    0
}
