//! `msa(ntimers, which, timers)`: microstate times, the call of the Linux micro-state
//! accounting patch.
//!
//! The contract is in `tally_uapi::msa`: `which` picks the calling thread (`MSA_THREAD`),
//! its whole process past and present (`MSA_SELF`) or its reaped children
//! (`MSA_CHILDREN`); the first `ntimers` (0..=13) clocks are written to `timers` in
//! nanoseconds. Checks, in order: `ntimers` (an `int`) outside 0..=13 → `EINVAL`; `which`
//! unknown → `EINVAL`; `timers` not writable for `8 × ntimers` bytes → `EFAULT`, nothing
//! written. Returns 0.
//!
//! The kernel keeps clocks in TSC ticks (`task::msa_of`, one TSC read for the whole
//! answer); each is converted to nanoseconds here, on the way out.

use tally_msa::NR_MICROSTATES;
use tally_uapi::errno::EINVAL;
use tally_uapi::msa::{MSA_CHILDREN, MSA_SELF, MSA_THREAD};

use super::{int_arg, uaccess, Args, SysResult};
use crate::task::{self, MsaWhich};

pub fn msa(a: &Args) -> SysResult {
    let (ntimers, which, addr) = (int_arg(a[0]), int_arg(a[1]), a[2]);
    let n = usize::try_from(ntimers).ok().filter(|&n| n <= NR_MICROSTATES).ok_or(EINVAL)?;
    let which = match u32::try_from(which) {
        Ok(MSA_SELF) => MsaWhich::SelfProcess,
        Ok(MSA_CHILDREN) => MsaWhich::Children,
        Ok(MSA_THREAD) => MsaWhich::Thread,
        _ => return Err(EINVAL),
    };
    if n == 0 {
        return Ok(0);
    }
    // copy_to_user checks the whole range before writing anything: one page-table walk.
    let ticks = task::msa_of(which);
    let clock = crate::time::clock();
    let mut bytes = [0u8; 8 * NR_MICROSTATES];
    for (chunk, t) in bytes.chunks_exact_mut(8).zip(ticks.iter()) {
        chunk.copy_from_slice(&clock.ticks_to_ns(*t).to_le_bytes());
    }
    uaccess::copy_to_user(addr, &bytes[..8 * n])?;
    Ok(0)
}
