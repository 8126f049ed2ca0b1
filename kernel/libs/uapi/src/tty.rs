//! # Terminal ioctls: `struct termios`, `struct winsize` and their request numbers
//!
//! The console is a terminal with a line discipline (`kernel/libs/ldisc`, Linux's `n_tty`);
//! a program changes how it behaves — canonical lines or keys one by one, echo on or off,
//! signal characters — with `ioctl(fd, TCSETS, &termios)`, as on Linux. Everything here has
//! Linux's numbers and layouts (`asm-generic/termbits.h`, `asm-generic/ioctls.h`): the
//! kernel's `struct termios` (36 bytes: no speed fields, 19 control characters), not glibc's
//! larger user-space one. The console honours the flags listed with each constant; the
//! others are stored and read back but change nothing (`docs/console.md`).

/// `ioctl` requests (Linux's numbers, x86_64).
pub const TCGETS: u32 = 0x5401;
/// Set at once.
pub const TCSETS: u32 = 0x5402;
/// Set once output has drained (the console's output is synchronous: at once).
pub const TCSETSW: u32 = 0x5403;
/// Set after discarding input not yet read (typed-ahead text is dropped).
pub const TCSETSF: u32 = 0x5404;
/// The window size (`struct winsize`).
pub const TIOCGWINSZ: u32 = 0x5413;
pub const TIOCSWINSZ: u32 = 0x5414;
/// `FIONREAD` (`TIOCINQ`): an `int`, the bytes that a read would find now. Tally answers it
/// for pipes (either end, as Linux's `pipe_ioctl`); the console and the rest: `ENOTTY`.
pub const FIONREAD: u32 = 0x541B;

// Job control's requests: the console's foreground process group and controlling session
// (`docs/job-control.md`). `arg` points to a `pid_t` (`int`) for the group requests.
//
// * `TIOCGPGRP` (`tcgetpgrp`): the foreground group; `ENOTTY` if the console is not the
//   caller's controlling terminal.
// * `TIOCSPGRP` (`tcsetpgrp`): make `*arg` the foreground group: `ENOTTY` not the
//   caller's controlling terminal, `EINVAL` a negative group, `ESRCH` no such group,
//   `EPERM` a group of another session. A background caller is let through, as if it
//   ignored SIGTTOU (Tally has no SIGTTOU for `tcsetpgrp`; see the docs).
// * `TIOCSCTTY`: the caller, a session leader without a controlling terminal, takes the
//   console as its own (`EPERM` not a session leader or the console belongs to another
//   session, unless `arg` is 1 and the caller is root: Linux's steal).
// * `TIOCNOTTY`: the caller gives its controlling terminal up; a session leader's gives the
//   console back to nobody (its foreground group gets SIGHUP and SIGCONT, as on Linux).
pub const TIOCSCTTY: u32 = 0x540E;
pub const TIOCGPGRP: u32 = 0x540F;
pub const TIOCSPGRP: u32 = 0x5410;
pub const TIOCNOTTY: u32 = 0x5422;

/// `c_iflag`: translate carriage return to newline on input (honoured).
pub const ICRNL: u32 = 0o400;
/// `c_iflag`: software flow control (stored only).
pub const IXON: u32 = 0o2000;
/// `c_iflag`: input is UTF-8, erase removes whole characters (the console always does).
pub const IUTF8: u32 = 0o40000;

/// `c_oflag`: post-process output / newline as CR LF (stored; the console always does).
pub const OPOST: u32 = 0o1;
pub const ONLCR: u32 = 0o4;

/// `c_cflag` of a 38400-baud 8-bit line with the receiver on (stored only).
pub const B38400: u32 = 0o17;
pub const CS8: u32 = 0o60;
pub const CREAD: u32 = 0o200;
pub const HUPCL: u32 = 0o2000;

/// `c_lflag`: the signal characters (`VINTR`, `VQUIT`, `VSUSP`) send signals (honoured).
pub const ISIG: u32 = 0o1;
/// `c_lflag`: canonical mode — line editing, reads return whole lines (honoured).
pub const ICANON: u32 = 0o2;
/// `c_lflag`: echo input (honoured).
pub const ECHO: u32 = 0o10;
/// `c_lflag`: erase rubs the character out (`"\b \b"`; the console always does when echoing).
pub const ECHOE: u32 = 0o20;
pub const ECHOK: u32 = 0o40;
/// `c_lflag`: echo the newline even when `ECHO` is off (honoured).
pub const ECHONL: u32 = 0o100;
/// `c_lflag`: do not flush input at a signal character (honoured).
pub const NOFLSH: u32 = 0o200;
pub const TOSTOP: u32 = 0o400;
/// `c_lflag`: echo control characters as `^X` (honoured).
pub const ECHOCTL: u32 = 0o1000;
pub const ECHOKE: u32 = 0o4000;
pub const IEXTEN: u32 = 0o100000;

/// Indices into `c_cc`.
pub const VINTR: usize = 0;
pub const VQUIT: usize = 1;
pub const VERASE: usize = 2;
pub const VKILL: usize = 3;
pub const VEOF: usize = 4;
pub const VTIME: usize = 5;
pub const VMIN: usize = 6;
pub const VSWTC: usize = 7;
pub const VSTART: usize = 8;
pub const VSTOP: usize = 9;
pub const VSUSP: usize = 10;
pub const VEOL: usize = 11;
pub const VREPRINT: usize = 12;
pub const VDISCARD: usize = 13;
pub const VWERASE: usize = 14;
pub const VLNEXT: usize = 15;
pub const VEOL2: usize = 16;
/// Number of control characters in the kernel's `struct termios`.
pub const NCCS: usize = 19;

/// The kernel's `struct termios` (`asm-generic/termbits.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Termios {
    pub c_iflag: u32,
    pub c_oflag: u32,
    pub c_cflag: u32,
    pub c_lflag: u32,
    pub c_line: u8,
    pub c_cc: [u8; NCCS],
}

impl Termios {
    /// Its size in bytes (16 for the flags, 1 for `c_line`, 19 for `c_cc`).
    pub const SIZE: usize = 36;

    /// What a terminal starts with: Linux's `tty_std_termios` — canonical mode, echo, signal
    /// characters, ICRNL; `^C ^\ DEL ^U ^D` for INTR QUIT ERASE KILL EOF, `^Z` SUSP, `^W`
    /// WERASE, VMIN 1, VTIME 0 (plus IUTF8, as a UTF-8 console has it).
    pub const fn standard() -> Self {
        let mut c_cc = [0u8; NCCS];
        c_cc[VINTR] = 0x03;
        c_cc[VQUIT] = 0x1c;
        c_cc[VERASE] = 0x7f;
        c_cc[VKILL] = 0x15;
        c_cc[VEOF] = 0x04;
        c_cc[VTIME] = 0;
        c_cc[VMIN] = 1;
        c_cc[VSTART] = 0x11;
        c_cc[VSTOP] = 0x13;
        c_cc[VSUSP] = 0x1a;
        c_cc[VREPRINT] = 0x12;
        c_cc[VDISCARD] = 0x0f;
        c_cc[VWERASE] = 0x17;
        c_cc[VLNEXT] = 0x16;
        Termios {
            c_iflag: ICRNL | IXON | IUTF8,
            c_oflag: OPOST | ONLCR,
            c_cflag: B38400 | CS8 | CREAD | HUPCL,
            c_lflag: ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN,
            c_line: 0,
            c_cc,
        }
    }

    /// The structure as the ABI lays it out (little-endian).
    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        for (i, v) in [self.c_iflag, self.c_oflag, self.c_cflag, self.c_lflag].iter().enumerate() {
            b[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        b[16] = self.c_line;
        b[17..].copy_from_slice(&self.c_cc);
        b
    }

    /// Decode [`Termios::to_bytes`] (any 36 bytes decode).
    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        let word = |i: usize| u32::from_le_bytes([b[i * 4], b[i * 4 + 1], b[i * 4 + 2], b[i * 4 + 3]]);
        let mut c_cc = [0u8; NCCS];
        c_cc.copy_from_slice(&b[17..]);
        Termios { c_iflag: word(0), c_oflag: word(1), c_cflag: word(2), c_lflag: word(3), c_line: b[16], c_cc }
    }

    /// Is local flag `flag` set?
    pub const fn lflag(&self, flag: u32) -> bool {
        self.c_lflag & flag != 0
    }

    /// `cfmakeraw`'s changes: no canonical mode, echo, signals or input translation; VMIN 1.
    pub fn make_raw(&mut self) {
        self.c_iflag &= !(ICRNL | IXON);
        self.c_lflag &= !(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
        self.c_cc[VMIN] = 1;
        self.c_cc[VTIME] = 0;
    }
}

impl Default for Termios {
    fn default() -> Self {
        Self::standard()
    }
}

/// `struct winsize` (`asm-generic/termios.h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Winsize {
    pub ws_row: u16,
    pub ws_col: u16,
    pub ws_xpixel: u16,
    pub ws_ypixel: u16,
}

impl Winsize {
    pub const SIZE: usize = 8;

    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut b = [0u8; Self::SIZE];
        for (i, v) in [self.ws_row, self.ws_col, self.ws_xpixel, self.ws_ypixel].iter().enumerate() {
            b[i * 2..i * 2 + 2].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    pub fn from_bytes(b: &[u8; Self::SIZE]) -> Self {
        let half = |i: usize| u16::from_le_bytes([b[i * 2], b[i * 2 + 1]]);
        Winsize { ws_row: half(0), ws_col: half(1), ws_xpixel: half(2), ws_ypixel: half(3) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_linuxs() {
        assert_eq!(core::mem::size_of::<Termios>(), Termios::SIZE);
        assert_eq!(core::mem::size_of::<Winsize>(), Winsize::SIZE);
        let t = Termios::standard();
        assert_eq!(Termios::from_bytes(&t.to_bytes()), t);
        let b = t.to_bytes();
        // Linux's tty_std_termios c_lflag (0x8a3b) with c_cc starting at offset 17.
        assert_eq!(u32::from_le_bytes([b[12], b[13], b[14], b[15]]), 0o105073);
        assert_eq!(&b[17..24], &[3, 0x1c, 0x7f, 0x15, 4, 0, 1]);
        let w = Winsize { ws_row: 24, ws_col: 80, ..Winsize::default() };
        assert_eq!(Winsize::from_bytes(&w.to_bytes()), w);
        assert_eq!(w.to_bytes(), [24, 0, 80, 0, 0, 0, 0, 0]);
    }
}
