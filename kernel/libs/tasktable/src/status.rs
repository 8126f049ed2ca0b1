//! # Exit status: how a task's end is told to its parent
//!
//! When a process ends, its parent learns how from `wait`: a 16-bit *wait status* in Linux's
//! encoding, which every libc decodes with the `W*` macros. A normal `exit(code)` is stored as
//! `(code & 0xff) << 8`; death by signal `sig` is stored as `sig` in the low 7 bits, with 0x80
//! added when the signal dumped core. The value `0x7f` in the low bits means "stopped", which
//! this kernel never reports but the decoders keep apart, as libc does.
//!
//! Flow: the kernel builds an [`ExitStatus`] at `exit`/`exit_group` (from the syscall's
//! argument or from the killing signal), the table stores it in the zombie, and `wait` hands the
//! raw value back for the kernel to copy to user space.

use tally_uapi::errno::EINVAL;

use crate::Errno;

/// Largest signal number (Linux `_NSIG` on x86_64).
pub const NSIG: u8 = 64;

/// A wait status in Linux's encoding. Build one with [`ExitStatus::exited`] or
/// [`ExitStatus::signaled`]; [`ExitStatus::raw`] is what `wait4` stores to user space.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ExitStatus(i32);

impl ExitStatus {
    /// `exit(code)`: only the low 8 bits survive, as on Linux (`exit(256)` reads back as 0).
    pub const fn exited(code: i32) -> Self {
        ExitStatus((code & 0xff) << 8)
    }

    /// Killed by signal `sig` (1..=64), `core` if it dumped core. `EINVAL` for other numbers:
    /// 0 is no signal and 0x7f would read back as "stopped".
    pub fn signaled(sig: u8, core: bool) -> Result<Self, Errno> {
        if sig == 0 || sig > NSIG {
            return Err(EINVAL);
        }
        Ok(ExitStatus(i32::from(sig) | if core { 0x80 } else { 0 }))
    }

    /// The encoded value.
    pub const fn raw(self) -> i32 {
        self.0
    }

    pub const fn is_exited(self) -> bool {
        wifexited(self.0)
    }
    pub const fn is_signaled(self) -> bool {
        wifsignaled(self.0)
    }
    pub const fn core_dumped(self) -> bool {
        wcoredump(self.0)
    }
}

pub use tally_uapi::wait::{wcoredump, wexitstatus, wifexited, wifsignaled, wtermsig};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_round_trip() {
        for code in [0, 1, 42, 255] {
            let s = ExitStatus::exited(code);
            assert!(wifexited(s.raw()) && !wifsignaled(s.raw()));
            assert_eq!(wexitstatus(s.raw()), code);
        }
        assert_eq!(ExitStatus::exited(256).raw(), 0);
        assert_eq!(ExitStatus::exited(-1).raw(), 0xff00);
        assert_eq!(ExitStatus::exited(3).raw(), 0x300);
    }

    #[test]
    fn signals_round_trip() {
        let s = ExitStatus::signaled(11, true).unwrap();
        assert_eq!(s.raw(), 0x8b);
        assert!(s.is_signaled() && s.core_dumped() && !s.is_exited());
        assert_eq!(wtermsig(s.raw()), 11);
        let s = ExitStatus::signaled(9, false).unwrap();
        assert_eq!(s.raw(), 9);
        assert!(!s.core_dumped());
        assert_eq!(ExitStatus::signaled(0, false), Err(EINVAL));
        assert_eq!(ExitStatus::signaled(65, false), Err(EINVAL));
        assert!(!wifsignaled(0x7f), "0x7f means stopped");
    }
}
