//! Wait statuses, as `wait4` returns them: Linux's encoding and its `W*` decoders.
//!
//! An exit with code `c` is `(c & 0xff) << 8`; a death by signal `s` is `s`, plus `0x80`
//! when the signal's default action is a core dump (WCOREDUMP). The kernel encodes them
//! (`tally-tasktable`) and user programs decode them, both with these functions. Job
//! control adds two: a child that stopped is `0x7f | sig << 8` (`wait4` with `WUNTRACED`),
//! one continued by SIGCONT `0xffff` (`WCONTINUED`).

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

/// `WIFSTOPPED`: the child stopped (reported with `WUNTRACED`).
pub const fn wifstopped(status: i32) -> bool {
    status & 0xff == 0x7f
}

/// `WSTOPSIG`: the signal that stopped it; meaningful when [`wifstopped`].
pub const fn wstopsig(status: i32) -> i32 {
    (status >> 8) & 0xff
}

/// `WIFCONTINUED`: the child was continued by SIGCONT (reported with `WCONTINUED`).
pub const fn wifcontinued(status: i32) -> bool {
    status == 0xffff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_control_statuses_decode_as_libc_does() {
        let stopped = 0x7f | 20 << 8;
        assert!(wifstopped(stopped) && !wifexited(stopped) && !wifsignaled(stopped));
        assert_eq!(wstopsig(stopped), 20);
        assert!(wifcontinued(0xffff) && !wifstopped(0xffff) && !wifcontinued(stopped));
        assert!(!wifstopped(0x300) && !wifstopped(9));
    }
}
