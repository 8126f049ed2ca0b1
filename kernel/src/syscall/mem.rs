//! `brk`: moving the end of the heap.
//!
//! The heap is a demand-zero region from the page after the program image up to the
//! *break*; `brk(addr)` moves the break and returns the new one, or the unchanged one if
//! `addr` is not acceptable (`brk(0)` is the usual way to ask where it is). Growing only
//! widens the region — pages appear when first touched — and shrinking unmaps and frees the
//! pages given back. The policy is `task::vm::Vm::brk`.

use tally_uapi::errno::ENOMEM;

use super::{Args, SysResult};
use crate::task;

pub fn brk(a: &Args) -> SysResult {
    let vm = task::current_vm().ok_or(ENOMEM)?;
    Ok(vm.brk(a[0]))
}
