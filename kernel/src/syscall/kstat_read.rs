//! `kstat_chain` and `kstat_read`: the kstat chain for user space (Solaris' `/dev/kstat`
//! `KSTAT_IOC_CHAIN_ID` + `KSTAT_IOC_READ`, as two calls).
//!
//! The ABI — buffer sizing with `-ENOMEM`, the optional `needed`/`info` out-pointers, the
//! chain id for detecting a stale chain, `-ENXIO` for a KID that is gone — is documented
//! with [`KstatReadInfo`] in `tally_uapi::kstat`. The work is `crate::stats::read`
//! (refresh from the source, encode the records, stamp `ks_snaptime`); this file sizes,
//! checks and copies.
//!
//! Sizes come from the kstat itself, never from the caller's `len`: a buffer is checked
//! and copied only as far as the data reaches, so a huge `len` costs nothing, and a
//! too-short one is refused before the kstat is read (its `ks_snaptime` unchanged).
//! Between sizing and reading a kstat can grow (the chain gains entries when a new IRQ
//! line fires); the read then reports the new size and the call retries a few times.

use alloc::vec::Vec;
use tally_kstat::KstatError;
use tally_uapi::errno::{EAGAIN, ENOMEM, ENXIO};
use tally_uapi::kstat::{KidT, KstatReadInfo, KSTAT_HEADERS_KID};

use super::{usercopy, Args, SysResult};
use crate::stats;

fn errno(e: KstatError) -> i32 {
    match e {
        KstatError::NoSuchKstat => ENXIO,
        KstatError::NotInstalled => EAGAIN,
        KstatError::BufferTooSmall { .. } => ENOMEM,
        other => other.errno(),
    }
}

/// Read `kid` into a kernel buffer sized from the kstat (retrying if it grew meanwhile),
/// provided the caller's `len` can take it. `Err((errno, needed))`.
fn read_sized(kid: KidT, len: u64) -> Result<(tally_kstat::KstatRead, Vec<u8>), (i32, Option<usize>)> {
    for _ in 0..4 {
        let needed = stats::data_size(kid).map_err(|e| (errno(e), None))?;
        if (len as u128) < needed as u128 {
            return Err((ENOMEM, Some(needed)));
        }
        let mut buf = Vec::new();
        buf.try_reserve_exact(needed).map_err(|_| (ENOMEM, None))?;
        buf.resize(needed, 0);
        match stats::read(kid, &mut buf) {
            Ok(got) => {
                buf.truncate(got.len);
                return Ok((got, buf));
            }
            Err(KstatError::BufferTooSmall { .. }) => continue,
            Err(e) => return Err((errno(e), None)),
        }
    }
    Err((EAGAIN, None))
}

/// `kstat_chain(buf, len, needed)` → the chain id.
pub fn kstat_chain(a: &Args) -> SysResult {
    let (addr, len, needed_addr) = (a[0], a[1], a[2]);
    if needed_addr != 0 {
        usercopy::check(needed_addr, 8, true)?;
    }
    // As in kstat_read: check the buffer as far as the chain reaches before reading it, so
    // a bad pointer fails without stamping KID 0's snaptime.
    if let Ok(n) = stats::data_size(KSTAT_HEADERS_KID) {
        if len as u128 >= n as u128 {
            usercopy::check(addr, n as u64, true)?;
        }
    }
    match read_sized(KSTAT_HEADERS_KID, len) {
        Ok((got, data)) => {
            usercopy::copy_to_user(addr, &data)?;
            if needed_addr != 0 {
                usercopy::write_u64(needed_addr, data.len() as u64)?;
            }
            Ok(got.chain_id as u64)
        }
        Err((e, needed)) => {
            if let (Some(n), true) = (needed, needed_addr != 0) {
                usercopy::write_u64(needed_addr, n as u64)?;
            }
            Err(e)
        }
    }
}

/// `kstat_read(kid, buf, len, info)` → bytes of data written.
pub fn kstat_read(a: &Args) -> SysResult {
    let (kid, addr, len, info_addr) = (a[0] as i64, a[1], a[2], a[3]);
    if kid < 0 {
        return Err(ENXIO);
    }
    if info_addr != 0 {
        usercopy::check(info_addr, KstatReadInfo::SIZE as u64, true)?;
    }
    // The data's size is known before the read: check the buffer as far as it reaches.
    if let Ok(n) = stats::data_size(kid) {
        if len as u128 >= n as u128 {
            usercopy::check(addr, n as u64, true)?;
        }
    }
    match read_sized(kid, len) {
        Ok((got, data)) => {
            usercopy::copy_to_user(addr, &data)?;
            if info_addr != 0 {
                let info = KstatReadInfo { kcid: got.chain_id, header: got.header };
                usercopy::copy_to_user(info_addr, &info.to_bytes())?;
            }
            Ok(data.len() as u64)
        }
        Err((e, needed)) => {
            if let (Some(_), true) = (needed, info_addr != 0) {
                if let Some((header, kcid)) = stats::header(kid) {
                    usercopy::copy_to_user(info_addr, &KstatReadInfo { kcid, header }.to_bytes())?;
                }
            }
            Err(e)
        }
    }
}
