//! # Job control on the console: its foreground process group
//!
//! The console's line discipline (`drivers/tty.rs`) calls [`signal_foreground`] when a
//! signal character is typed (`^C`, `^\`, `^Z` with `ISIG`), and [`console_read_check`] at
//! the top of every console `read`, as Linux's n_tty calls `__isig` and
//! `job_control`/`__tty_check_change`.
//!
//! placeholder: job control fills this (process groups, the foreground group, SIGTTIN).

/// The console's ISIG character was typed: send `sig` to every process of the console's
/// foreground process group (no-op if none).
pub fn signal_foreground(sig: u8) {
    let _ = sig;
}

/// May the caller read the console? `Ok` if it is in the foreground group or there is no
/// job control on it; otherwise an errno (the caller's group gets SIGTTIN, as Linux).
pub fn console_read_check() -> Result<(), i32> {
    Ok(())
}
