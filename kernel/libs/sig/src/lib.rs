//! # tally-sig — the logic of POSIX signals, as Linux x86_64 has it
//!
//! Everything about signals that is arithmetic rather than machine: which signals a set
//! holds ([`SigSet`]), what a process does with each signal ([`Dispositions`], Linux's
//! `sighand`), which signals wait for a thread or a process ([`Pending`]) and which one is
//! delivered next ([`next_signal`]: synchronous faults first, then the lowest number, as
//! Linux's `next_signal`), the alternate signal stack ([`AltStack`], `sigaltstack`'s checks),
//! where the `rt_sigframe` goes and what it holds ([`frame::setup`]), how `rt_sigreturn`
//! checks what comes back ([`frame::restore`]), and when an interrupted system call is
//! restarted ([`restart_after`]). The kernel (`kernel/src/proc/signal.rs`,
//! `kernel/src/proc/sigdeliver.rs`) keeps these per process and per thread, under its task
//! table's lock, and copies the frames to and from user memory. Layouts are
//! `tally_uapi::signal`'s. See `docs/user-mode.md` (signals).
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

extern crate alloc;

mod altstack;
mod dispositions;
pub mod frame;
mod pending;
mod set;

pub use altstack::AltStack;
pub use dispositions::{Act, Dispositions};
pub use pending::{next_signal, Pending};
pub use set::SigSet;

use tally_uapi::signal::SA_RESTART;

/// Internal results of an interrupted system call (Linux's `include/linux/errno.h`); never
/// seen by user space: [`restart_after`] turns them into a restart or `EINTR`.
/// Restart if no handler runs or the handler has `SA_RESTART`, else `EINTR` (read, write,
/// wait4).
pub const ERESTARTSYS: i32 = 512;
/// Always restart.
pub const ERESTARTNOINTR: i32 = 513;
/// Restart only if no handler runs (poll, pause-like calls).
pub const ERESTARTNOHAND: i32 = 514;

/// Is `rax` (a system call's result) one of the restart codes above?
pub const fn is_restart(rax: u64) -> bool {
    let code = (rax as i64).wrapping_neg();
    code >= ERESTARTSYS as i64 && code <= ERESTARTNOHAND as i64
}

/// What happens to an interrupted system call's result on the way out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restart {
    /// Not an interrupted call: the result stands.
    Keep,
    /// Run the call again: back to the `syscall` instruction (`rip - 2`, `rax = orig_rax`).
    Rewind,
    /// The call fails with `EINTR`.
    Eintr,
}

/// Linux's `handle_signal`/`arch_do_signal_or_restart` rules: the call returned `ret`
/// (negative errno form), and a handler with flags `handler` is about to run (`None`: no
/// handler ran — the signal was ignored, stopped the process, or there was none).
pub fn restart_after(ret: i64, handler: Option<u64>) -> Restart {
    let Some(Ok(code)) = ret.checked_neg().map(i32::try_from) else { return Restart::Keep };
    match (code, handler) {
        (ERESTARTNOINTR, _) => Restart::Rewind,
        (ERESTARTSYS | ERESTARTNOHAND, None) => Restart::Rewind,
        (ERESTARTSYS, Some(flags)) if flags & SA_RESTART != 0 => Restart::Rewind,
        (ERESTARTSYS | ERESTARTNOHAND, Some(_)) => Restart::Eintr,
        _ => Restart::Keep,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarts_follow_linux() {
        let r = |code: i32, h| restart_after(-(code as i64), h);
        assert_eq!(r(ERESTARTSYS, None), Restart::Rewind);
        assert_eq!(r(ERESTARTSYS, Some(SA_RESTART)), Restart::Rewind);
        assert_eq!(r(ERESTARTSYS, Some(0)), Restart::Eintr);
        assert_eq!(r(ERESTARTNOHAND, Some(SA_RESTART)), Restart::Eintr);
        assert_eq!(r(ERESTARTNOHAND, None), Restart::Rewind);
        assert_eq!(r(ERESTARTNOINTR, Some(0)), Restart::Rewind);
        assert_eq!(r(4, Some(0)), Restart::Keep);
        assert_eq!(restart_after(5, None), Restart::Keep);
        assert_eq!(restart_after(i64::MIN, None), Restart::Keep);
        assert!(is_restart((-512i64) as u64) && is_restart((-514i64) as u64));
        assert!(!is_restart((-511i64) as u64) && !is_restart((-515i64) as u64) && !is_restart(512));
    }
}
