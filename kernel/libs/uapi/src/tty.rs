//! Terminal `ioctl` requests (Linux's numbers, `<asm-generic/ioctls.h>`) on the console.
//!
//! Job control's requests: the console's foreground process group and controlling session
//! (`docs/job-control.md`). `arg` points to a `pid_t` (`int`) for the group requests.
//!
//! * `TIOCGPGRP` (`tcgetpgrp`): the foreground group; `ENOTTY` if the console is not the
//!   caller's controlling terminal.
//! * `TIOCSPGRP` (`tcsetpgrp`): make `*arg` the foreground group: `ENOTTY` not the
//!   caller's controlling terminal, `EINVAL` a negative group, `ESRCH` no such group,
//!   `EPERM` a group of another session. A background caller is let through, as if it
//!   ignored SIGTTOU (Tally has no SIGTTOU for `tcsetpgrp`; see the docs).
//! * `TIOCSCTTY`: the caller, a session leader without a controlling terminal, takes the
//!   console as its own (`EPERM` not a session leader or the console belongs to another
//!   session, unless `arg` is 1 and the caller is root: Linux's steal).
//! * `TIOCNOTTY`: the caller gives its controlling terminal up; a session leader's gives the
//!   console back to nobody (its foreground group gets SIGHUP and SIGCONT, as on Linux).

pub const TIOCSCTTY: u32 = 0x540E;
pub const TIOCGPGRP: u32 = 0x540F;
pub const TIOCSPGRP: u32 = 0x5410;
pub const TIOCNOTTY: u32 = 0x5422;
