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
//! The kernel keeps clocks in TSC ticks (`acct::msa_of`, one TSC read for the whole
//! answer); each is converted to nanoseconds here, on the way out.

use tally_microstate::NR_MICROSTATES;
use tally_uapi::errno::EINVAL;
use tally_uapi::msa::{MSA_CHILDREN, MSA_SELF, MSA_THREAD};

use super::{int_arg, usercopy, Args, SysResult};
use crate::acct::{self, MsaWhich};

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
    // Converted in place. Most clocks are zero (a live process is never a zombie; nothing
    // here stops, pages, or sleeps on futexes or poll; most processes never enter most of
    // the other states), and zero ticks are zero nanoseconds without a division.
    // BEGIN LAB 1: read `which`'s clocks (TSC ticks, acct::msa_of) and convert each to nanoseconds
    // STUB: let _ = which;
    // STUB: let clocks = [0u64; NR_MICROSTATES];
    let mut clocks = [0; NR_MICROSTATES];
    acct::msa_of(which, &mut clocks);
    let clock = crate::base::time::clock();
    for t in clocks.iter_mut().filter(|t| **t != 0) {
        *t = clock.ticks_to_ns(*t);
    }
    // END LAB 1
    usercopy::write_u64s(addr, &clocks[..n])?;
    Ok(0)
}
