//! Ending the machine: QEMU's `isa-debug-exit` device at port 0xF4.
//!
//! Writing a value `v` makes QEMU exit with status `(v << 1) | 1`, so no value can produce
//! status 0. `cargo xtask` treats 33 (`0x10`) as success and everything else — 35 (`0x11`),
//! a crash, a timeout, a triple fault — as failure.

use x86_64::instructions::port::Port;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum ExitCode {
    /// QEMU exit status 33.
    Success = 0x10,
    /// QEMU exit status 35.
    Failure = 0x11,
}

/// Ask QEMU to exit; if there is no exit device (real hardware), halt instead.
pub fn exit(code: ExitCode) -> ! {
    // SAFETY: port 0xF4 is the isa-debug-exit device that `cargo xtask` attaches; on a machine
    // without it, a write to an unused port is ignored.
    unsafe { Port::<u32>::new(0xf4).write(code as u32) };
    super::cpu::halt_forever()
}
