//! Ending the machine: QEMU's `isa-debug-exit` device at port 0xF4.
//!
//! Writing a value `v` makes QEMU exit with status `(v << 1) | 1`, so no value can produce
//! status 0. Two kinds of value, which never overlap, so `cargo xtask` can always say which
//! one ended the run:
//! * a program's exit code `n` (init's when pid 1 ends — the shell's, by default): `0x10 + n`,
//!   status `33 + 2n`, which xtask turns back into `n` (0 is success);
//! * the kernel's failure verdict (a panic, a fault, a failed self-test, pid 1 killed by a
//!   signal): `0x0F`, status 31, below every program's code. The kernel's success verdict
//!   (a self-test passed) is `0x10`, the same as a program's 0: both mean success.
//!
//! Everything else — a triple fault (status 0 with `-no-reboot`), QEMU's own errors,
//! a timeout — is a failure too, that the kernel did not get to report.

use x86_64::instructions::port::Port;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum ExitCode {
    /// QEMU exit status 33 (the same as a program's exit code 0).
    Success = 0x10,
    /// QEMU exit status 31: the kernel's failure verdict, outside the programs' codes.
    Failure = 0x0F,
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
