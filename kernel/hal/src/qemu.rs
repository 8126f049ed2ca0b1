//! Ending the machine: QEMU's `isa-debug-exit` device at port 0xF4.
//!
//! Writing a value `v` makes QEMU exit with status `(v << 1) | 1`, so no value can produce
//! status 0. `cargo xtask` treats 33 (`0x10`) as success and everything else — 35 (`0x11`),
//! a crash, a timeout, a triple fault — as failure. To hand on a program's exit code `n`
//! (init's when pid 1 ends — the shell's, by default), the kernel writes `0x10 + n`, which
//! xtask turns back into `n`: 0 is success, 1 is the failure status above.

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
    exit_value(code as u32)
}

/// The largest exit code that survives the trip: QEMU's status `(v << 1) | 1` must fit a byte.
pub const MAX_EXIT_CODE: u8 = 111;

/// End QEMU with a program's exit code (clamped to [`MAX_EXIT_CODE`]).
pub fn exit_with_code(code: u8) -> ! {
    exit_value(0x10 + code.min(MAX_EXIT_CODE) as u32)
}

fn exit_value(v: u32) -> ! {
    // SAFETY: port 0xF4 is the isa-debug-exit device that `cargo xtask` attaches; on a machine
    // without it, a write to an unused port is ignored.
    unsafe { Port::<u32>::new(0xf4).write(v) };
    super::cpu::halt_forever()
}
