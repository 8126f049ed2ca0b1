//! `ioctl(fd, request, arg)`: device-specific requests — here, the console's terminal ones.
//!
//! The console is a terminal (`drivers/tty.rs`, its line discipline `tally_ldisc`), and a
//! program changes its mode the way it does on Linux, with the same numbers and layouts
//! (`tally_uapi::tty`):
//!
//! | request      | `arg`              | does                                                 |
//! |--------------|--------------------|------------------------------------------------------|
//! | `TCGETS`     | `struct termios *` | the current settings                                 |
//! | `TCSETS`     | `const termios *`  | new settings, at once                                |
//! | `TCSETSW`    | `const termios *`  | … once output has drained (console output is synchronous: at once) |
//! | `TCSETSF`    | `const termios *`  | … and input not yet read is discarded                |
//! | `TIOCGWINSZ` | `struct winsize *` | the window size (24 × 80 unless set)                 |
//! | `TIOCSWINSZ` | `const winsize *`  | set it (nothing else changes: there is no SIGWINCH)  |
//! | `TIOCGPGRP`, `TIOCSPGRP`, `TIOCSCTTY`, `TIOCNOTTY` | `pid_t *` / `int` | job control: the foreground process group, the controlling terminal (`job_calls.rs`, `docs/job-control.md`) |
//!
//! `FIONREAD` (an `int *`: the bytes a read would find now) is answered for pipes, either end,
//! as Linux's `pipe_ioctl` does; elsewhere `ENOTTY` (the console's count of typed input is
//! not offered).
//!
//! Any other request on a descriptor that is not the console (a pipe, a file, a socket) is `ENOTTY`, as is a
//! request the console does not know — Linux's answer to both (its `tty_ioctl` turns an
//! unknown command into `ENOTTY`). A bad `arg` is `EFAULT`, with nothing changed.
//! Raw mode and what the console honours: `docs/console.md`.

use tally_uapi::errno::ENOTTY;
use tally_uapi::tty::{Termios, Winsize, FIONREAD, TCGETS, TCSETS, TCSETSF, TCSETSW, TIOCGWINSZ, TIOCSWINSZ};

use super::{job_calls, usercopy, Args, SysResult};
use crate::drivers::tty;
use crate::file::OpenFile;

/// `ioctl(fd, request, arg)`.
pub fn ioctl(a: &Args) -> SysResult {
    // `request` is an `unsigned int` in the kernel's prototype: the upper half is ignored.
    let (fd, request, arg) = (super::int_arg(a[0]), a[1] as u32, a[2]);
    let f = super::io::file(fd)?;
    if let Some(answer) = job_calls::tty_ioctl(&f, request, arg) {
        return answer;
    }
    if request == FIONREAD {
        let n = match &*f {
            OpenFile::PipeReader(r) => r.available(),
            OpenFile::PipeWriter(w) => w.available(),
            _ => return Err(ENOTTY),
        };
        usercopy::write_i32(arg, n as i32)?;
        return Ok(0);
    }
    if !matches!(&*f, OpenFile::Console) {
        return Err(ENOTTY);
    }
    match request {
        TCGETS => usercopy::copy_to_user(arg, &tty::termios().to_bytes())?,
        TCSETS | TCSETSW | TCSETSF => {
            let mut b = [0u8; Termios::SIZE];
            usercopy::copy_from_user(arg, &mut b)?;
            tty::set_termios(Termios::from_bytes(&b), request == TCSETSF);
        }
        TIOCGWINSZ => usercopy::copy_to_user(arg, &tty::winsize().to_bytes())?,
        TIOCSWINSZ => {
            let mut b = [0u8; Winsize::SIZE];
            usercopy::copy_from_user(arg, &mut b)?;
            tty::set_winsize(Winsize::from_bytes(&b));
        }
        _ => return Err(ENOTTY),
    }
    Ok(0)
}
