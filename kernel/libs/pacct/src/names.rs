//! Names for the numbers in a record: user ids and terminals, as the tools print them.
//!
//! A record holds a uid and a device number; `lastcomm` shows `root` and `ttyS0`. GNU acct
//! asks the password database (`getpwuid`) and scans `/dev` for a character device with
//! that number; what it cannot name it prints as a number: the uid in decimal, the terminal
//! as `[major,minor]`, and `__` for "no terminal" (device 0). Terminals with the Unix98
//! pseudo-terminal majors (136–143) it names `pts/N` without looking.
//!
//! Tally has neither a password file nor a `/dev` directory, so the tools take a [`Names`]:
//! [`TallyNames`] knows what Tally has — uid 0 is `root` (as `prstat` prints it) and the
//! serial ports are `ttyS0`…`ttyS3` — and every other number falls back to GNU's spelling.
//! On the host, a reader can pass names from the host's own tables (or [`NumericNames`],
//! which knows none) to print what GNU acct would print there.

use core::fmt::{self, Write};

use crate::text::ShortStr;

/// Where the user and terminal names come from.
pub trait Names {
    /// The login name of `uid`, if there is one.
    fn user(&self, uid: u32) -> Option<&str>;
    /// The name of terminal `dev` (`old_encode_dev`: major << 8 | minor) under `/dev`,
    /// if there is one.
    fn tty(&self, dev: u16) -> Option<&str>;
}

/// Tally's names: `root` for uid 0, `ttyS0`…`ttyS3` for the serial ports (4/64…4/67).
#[derive(Clone, Copy, Debug, Default)]
pub struct TallyNames;

const SERIAL: [&str; 4] = ["ttyS0", "ttyS1", "ttyS2", "ttyS3"];

impl Names for TallyNames {
    fn user(&self, uid: u32) -> Option<&str> {
        (uid == 0).then_some("root")
    }

    fn tty(&self, dev: u16) -> Option<&str> {
        match (dev >> 8, dev & 0xff) {
            (4, minor @ 64..=67) => Some(SERIAL[usize::from(minor - 64)]),
            _ => None,
        }
    }
}

/// No names at all: every uid and terminal printed as GNU prints an unknown one.
#[derive(Clone, Copy, Debug, Default)]
pub struct NumericNames;

impl Names for NumericNames {
    fn user(&self, _uid: u32) -> Option<&str> {
        None
    }

    fn tty(&self, _dev: u16) -> Option<&str> {
        None
    }
}

/// A uid as the tools print it: its name, or the number. Honours width and precision
/// (`{:<8.8}` is `printf`'s `%-8.8s`).
pub struct User<'a, N: Names + ?Sized>(pub &'a N, pub u32);

impl<N: Names + ?Sized> fmt::Display for User<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.user(self.1) {
            Some(name) => f.pad(name),
            None => {
                let mut s = ShortStr::new();
                write!(s, "{}", self.1)?;
                f.pad(s.as_str())
            }
        }
    }
}

/// A terminal as GNU acct's `dev_gnu_name` prints it: `__` for none, its name if known,
/// `pts/N` for a Unix98 pseudo-terminal, else `[major,minor]`. Honours width and precision.
pub struct Tty<'a, N: Names + ?Sized>(pub &'a N, pub u16);

impl<N: Names + ?Sized> fmt::Display for Tty<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dev = self.1;
        if dev == 0 {
            return f.pad("__");
        }
        if let Some(name) = self.0.tty(dev) {
            return f.pad(name);
        }
        let (major, minor) = (dev >> 8, dev & 0xff);
        let mut s = ShortStr::new();
        if (136..=143).contains(&major) {
            write!(s, "pts/{}", (major - 136) * 256 + minor)?;
        } else {
            write!(s, "[{major},{minor}]")?;
        }
        f.pad(s.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_uapi::acct::{old_encode_dev, TTY_S0};

    #[test]
    fn users() {
        assert_eq!(format!("{:<8.8}|", User(&TallyNames, 0)), "root    |");
        assert_eq!(format!("{:<8.8}|", User(&TallyNames, 1000)), "1000    |");
        assert_eq!(format!("{:<8.8}|", User(&NumericNames, 0)), "0       |");
        assert_eq!(format!("{:<8.8}|", User(&TallyNames, u32::MAX)), "42949672|", "cut at 8 as %-8.8s");
    }

    #[test]
    fn ttys() {
        let t = |n: &dyn Names, dev| format!("{:<8.8}|", Tty(n, dev));
        assert_eq!(t(&TallyNames, 0), "__      |");
        assert_eq!(t(&TallyNames, TTY_S0), "ttyS0   |");
        assert_eq!(t(&TallyNames, old_encode_dev(4, 65)), "ttyS1   |");
        assert_eq!(t(&NumericNames, TTY_S0), "[4,64]  |");
        assert_eq!(t(&TallyNames, old_encode_dev(4, 68)), "[4,68]  |");
        assert_eq!(t(&TallyNames, old_encode_dev(136, 3)), "pts/3   |");
        assert_eq!(t(&TallyNames, old_encode_dev(137, 255)), "pts/511 |");
        assert_eq!(t(&TallyNames, old_encode_dev(255, 255)), "[255,255|");
    }
}
