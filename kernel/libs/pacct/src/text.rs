//! Small pieces of `printf` that the tools' formats need, for `core::fmt`.
//!
//! GNU acct prints with C's `printf`: `%-8.8s` pads and cuts a string, `%9.2f` prints a
//! double in fixed notation. Rust's `{:<8.8}` and `{:9.2}` do the same for ASCII strings and
//! finite doubles — both round the exact binary value to nearest, ties to even, as glibc
//! does — so most columns are plain `write!`. What differs is gathered here: a string must
//! be whole before it can be padded ([`ShortStr`]), a command name is bytes, not UTF-8
//! ([`Comm`]), and a NaN prints as `nan` or `-nan` in C ([`CFloat`]).

use core::fmt::{self, Write};

use tally_uapi::acct::{AcctV3, ACORE, AFORK, ASU, AXSIG};

/// A short string built on the stack (names, numbers, command names), so that
/// [`fmt::Formatter::pad`] can pad and cut it as `%-8.8s` does.
#[derive(Clone, Copy)]
pub(crate) struct ShortStr {
    buf: [u8; 32],
    len: usize,
}

impl ShortStr {
    pub(crate) const fn new() -> ShortStr {
        ShortStr { buf: [0; 32], len: 0 }
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only whole `&str`s and ASCII bytes are ever pushed, so this cannot fail.
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("?")
    }

    /// Appends an ASCII byte (others become `?`); silently full at 32 bytes.
    pub(crate) fn push_ascii(&mut self, b: u8) {
        if self.len < self.buf.len() {
            self.buf[self.len] = if b.is_ascii() { b } else { b'?' };
            self.len += 1;
        }
    }
}

impl Write for ShortStr {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// How a command name's bytes are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CommStyle {
    /// As GNU's `printf("%s")` writes them (`dump-acct`, `sa`), except that bytes above
    /// 0x7f, which would not be UTF-8 on their own, become `?`.
    Raw,
    /// Anything C's `isprint` rejects (in the C locale: all but 0x20..=0x7e) becomes `?`,
    /// as `lastcomm` shows it.
    Printable,
}

/// A record's command name (up to its first NUL, at most 16 bytes), ready to pad.
pub(crate) fn comm(r: &AcctV3, style: CommStyle) -> ShortStr {
    let mut s = ShortStr::new();
    for &b in r.comm_bytes() {
        let printable = (0x20..=0x7e).contains(&b);
        s.push_ascii(if style == CommStyle::Printable && !printable { b'?' } else { b });
    }
    s
}

/// C's `isprint` over a whole name (C locale), as `sa` tests names for `***other`.
pub(crate) fn is_printable(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| (0x20..=0x7e).contains(b))
}

/// The five flag columns of `lastcomm` and `dump-acct`: `S` (ASU), `F` (AFORK), `C`
/// (ACOMPAT, never set on Linux), `D` (ACORE), `X` (AXSIG), a space for each flag not set.
pub(crate) struct Flags(pub u8);

impl fmt::Display for Flags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (bit, c) in [(ASU, 'S'), (AFORK, 'F'), (tally_uapi::acct::ACOMPAT, 'C'), (ACORE, 'D'), (AXSIG, 'X')] {
            f.write_char(if self.0 & bit != 0 { c } else { ' ' })?;
        }
        Ok(())
    }
}

/// `printf("%W.Pf", v)`: fixed notation, right-aligned in `W` columns, with C's spelling of
/// a NaN (`nan`, `-nan`) and of infinities (`inf`, `-inf`).
pub(crate) struct CFloat(pub f64, pub usize, pub usize);

impl fmt::Display for CFloat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let CFloat(v, width, prec) = *self;
        if v.is_nan() {
            let s = if v.is_sign_negative() { "-nan" } else { "nan" };
            write!(f, "{s:>width$}")
        } else {
            write!(f, "{v:>width$.prec$}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strings_stop_at_their_size() {
        let mut s = ShortStr::new();
        for b in 0..40u8 {
            s.push_ascii(b'a' + b % 26);
        }
        assert_eq!(s.as_str().len(), 32);
        assert!(write!(s, "x").is_err());
        let mut s = ShortStr::new();
        s.push_ascii(0xe9);
        assert_eq!(s.as_str(), "?");
    }

    #[test]
    fn command_names() {
        let mut r = AcctV3::zeroed();
        r.ac_comm[..5].copy_from_slice(b"a\tb\xffc");
        assert_eq!(comm(&r, CommStyle::Raw).as_str(), "a\tb?c");
        assert_eq!(comm(&r, CommStyle::Printable).as_str(), "a?b?c");
        r.ac_comm = *b"abcdefghijklmnop";
        assert_eq!(comm(&r, CommStyle::Raw).as_str(), "abcdefghijklmnop");
        assert!(is_printable(b"sh ok~") && !is_printable(b"a\x7f") && !is_printable(b"\xe9"));
    }

    #[test]
    fn flags_in_gnu_order() {
        assert_eq!(Flags(0).to_string(), "     ");
        assert_eq!(Flags(ASU | AXSIG).to_string(), "S   X");
        assert_eq!(Flags(0xff).to_string(), "SFCDX");
    }

    #[test]
    fn c_floats() {
        // The same strings glibc's printf gives for these (ties go to even on the exact
        // binary value: 0.125 is exact, 0.005 is slightly above its decimal).
        assert_eq!(CFloat(0.125, 9, 2).to_string(), "     0.12");
        assert_eq!(CFloat(0.375, 9, 2).to_string(), "     0.38");
        assert_eq!(CFloat(0.005, 6, 2).to_string(), "  0.01");
        assert_eq!(CFloat(2.5, 9, 0).to_string(), "        2");
        assert_eq!(CFloat(-0.0, 6, 2).to_string(), " -0.00");
        assert_eq!(CFloat(17_177_772_032.0, 9, 2).to_string(), "17177772032.00");
        assert_eq!(CFloat(f64::NAN, 9, 2).to_string(), "      nan");
        assert_eq!(CFloat(-f64::NAN, 9, 2).to_string(), "     -nan");
        assert_eq!(CFloat(f64::INFINITY, 9, 2).to_string(), "      inf");
    }
}
