//! `/test/kstat_abi KID` — the kstat calls' contract from ring 3 (`tally_uapi::kstat`): the
//! fixture of the `user_kstat` self-test (`tally_uapi::fixture`). KID names a kstat the
//! test created and deleted before starting it.
//!
//! Checks: a 64 KiB buffer (30); `kstat_chain(NULL, 0, &needed)` is ENOMEM (1) with the size
//! of whole headers (2, 3); the chain fits (4), its size is whole headers (5), KID 0 then 1
//! first (6, 7); one byte short is ENOMEM (8); a bad buffer or size pointer is EFAULT (9,
//! 10); `kstat_read` of a negative, never-made or deleted KID is ENXIO (11-13); a read into
//! no room is ENOMEM with the header (14-16); a read returns the data (17) and a KCID no
//! older than the chain's (18); a later read has a later snaptime (19, 20); bad buffer or
//! info is EFAULT (21, 22); after the first disk request (23) the read reports a newer KCID
//! (24, 25): the chain copy is stale. Exit status: the number of the failed check, 0 if none.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use tally_rt::fixture::{check, expect_err, expect_ok, fail, raw, usage};
use tally_rt::process::parse_u64;
use tally_rt::sys::probe::{self, BadPtr};
use tally_rt::sys::{self, Mapping};
use tally_rt::uapi::errno::{EFAULT, ENOMEM, ENXIO};
use tally_rt::uapi::kstat::{KidT, KstatHeader, KstatNamed, KstatReadInfo};
use tally_rt::uapi::syscall::{BLK_SECTOR_SIZE, PROT_READ, PROT_WRITE};

tally_rt::entry!(main);

const DATA: usize = 0x10000;
/// KID 1 (`unix:0:kstat_types`) holds five named records.
const TYPES_SIZE: usize = 5 * KstatNamed::SIZE;
const H: usize = KstatHeader::SIZE;

fn header(buf: &[u8], i: usize) -> KstatHeader {
    let mut b = [0u8; KstatHeader::SIZE];
    b.copy_from_slice(&buf[i * H..(i + 1) * H]);
    KstatHeader::from_bytes(&b)
}

fn main() -> i32 {
    let Some(gone) = tally_rt::arg(1).and_then(parse_u64) else { usage("KID") };
    let Ok(mut data) = Mapping::new(DATA, PROT_READ | PROT_WRITE) else { fail(30) };
    check(data.addr() as isize > 0, 30);
    let buf = data.bytes_mut();
    let mut needed = 0u64;
    expect_err(probe::kstat_chain(BadPtr::NULL.into(), 0, (&mut needed).into()), ENOMEM, 1);
    check(needed >= H as u64, 2);
    check(needed.is_multiple_of(H as u64), 3);
    let kcid = raw(sys::kstat_chain(buf, Some(&mut needed)));
    check(kcid >= 0, 4);
    let kcid = kcid as KidT;
    check(needed.is_multiple_of(H as u64), 5);
    check(header(buf, 0).ks_kid == 0, 6);
    check(header(buf, 1).ks_kid == 1, 7);
    expect_err(sys::kstat_chain(&mut buf[..needed as usize - 1], None), ENOMEM, 8); // one byte short
    expect_err(probe::kstat_chain(BadPtr::UNMAPPED.into(), DATA, BadPtr::NULL.into()), EFAULT, 9);
    expect_err(probe::kstat_chain((&mut buf[..]).into(), DATA, BadPtr::KERNEL.into()), EFAULT, 10);
    expect_err(sys::kstat_read(-1, &mut buf[..4096], None), ENXIO, 11);
    expect_err(sys::kstat_read(1 << 40, &mut buf[..4096], None), ENXIO, 12); // a KID never made
    expect_err(sys::kstat_read(gone as KidT, &mut buf[..4096], None), ENXIO, 13);
    let mut info = KstatReadInfo::from_bytes(&[0; KstatReadInfo::SIZE]);
    expect_err(sys::kstat_read(1, &mut buf[..0], Some(&mut info)), ENOMEM, 14); // no room: the header
    check(info.header.ks_kid == 1, 15);
    check(info.header.ks_data_size == TYPES_SIZE as u64, 16);
    expect_ok(sys::kstat_read(1, buf, Some(&mut info)), TYPES_SIZE, 17);
    check(info.kcid >= kcid, 18);
    let snaptime = info.header.ks_snaptime;
    for i in 0..200_000u32 {
        core::hint::black_box(i);
    }
    expect_ok(sys::kstat_read(1, buf, Some(&mut info)), TYPES_SIZE, 19); // again: a later snaptime
    check(info.header.ks_snaptime > snaptime, 20);
    expect_err(probe::kstat_read(1, BadPtr::UNMAPPED.into(), DATA, BadPtr::NULL.into()), EFAULT, 21);
    expect_err(probe::kstat_read(1, (&mut buf[..]).into(), DATA, BadPtr::UNMAPPED.into()), EFAULT, 22);
    // The first disk request: IRQ 14 fires and its kstats appear.
    expect_ok(sys::blk_read(0, &mut buf[..BLK_SECTOR_SIZE]), 1, 23);
    expect_ok(sys::kstat_read(1, buf, Some(&mut info)), TYPES_SIZE, 24);
    check(info.kcid > kcid, 25); // the chain changed: the copy is stale
    0
}
