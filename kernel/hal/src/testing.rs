//! Deliberate misbehaviour, for the integration scenarios that check the fault handlers.

/// Read a byte at `addr` with a volatile load. Used by self-tests to take a page fault on
/// purpose: the kernel's page-fault handler reports it and ends the run.
pub fn read_byte(addr: u64) -> u8 {
    // SAFETY: not sound in general — the point is to fault. Only the kernel's self-tests call
    // this, with an address they know to be unmapped, and the fault handler never returns.
    unsafe { core::ptr::read_volatile(addr as *const u8) }
}
