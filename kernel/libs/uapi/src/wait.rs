//! Wait statuses, as `wait4` returns them: Linux's encoding and its `W*` decoders.
//!
//! An exit with code `c` is `(c & 0xff) << 8`; a death by signal `s` is `s`, plus `0x80`
//! when the signal's default action is a core dump (WCOREDUMP). The kernel encodes them
//! (`tally-tasktable`) and user programs decode them, both with these functions.

/// `WIFEXITED`: ended by `exit`.
pub const fn wifexited(status: i32) -> bool {
    status & 0x7f == 0
}

/// `WEXITSTATUS`: the exit code; meaningful when [`wifexited`].
pub const fn wexitstatus(status: i32) -> i32 {
    (status >> 8) & 0xff
}

/// `WIFSIGNALED`: ended by a signal (neither exited nor stopped).
pub const fn wifsignaled(status: i32) -> bool {
    let low = status & 0x7f;
    low != 0 && low != 0x7f
}

/// `WTERMSIG`: the killing signal; meaningful when [`wifsignaled`].
pub const fn wtermsig(status: i32) -> i32 {
    status & 0x7f
}

/// `WCOREDUMP`: the killing signal's default action is a core dump.
pub const fn wcoredump(status: i32) -> bool {
    status & 0x80 != 0
}
