//! # tally-ldisc — the console's line discipline, as Linux's `n_tty`
//!
//! Between the UART and `read(0, ...)` sits a *line discipline*: the code that turns what is
//! typed into what a program reads. This crate is that code as a plain state machine, with
//! no hardware and no locks, so every rule is tested on the host (`cargo test -p
//! tally-ldisc`). The kernel (`kernel/src/drivers/tty.rs`) owns one [`Ldisc`], feeds it the
//! bytes the UART received, and hands what it produces to the right places:
//!
//! ```text
//!   bytes typed ─► Ldisc::receive ─┬─► completed input ─► Ldisc::read ─► read(0, buf, n)
//!                                  ├─► bytes to echo   ─► Sink::echo  ─► the console
//!   ISIG chars ─► Ldisc::signal_char ─► Signal { sig, flush, .. } ─► the foreground process group
//! ```
//!
//! **Canonical mode** (`ICANON`, the default), as `n_tty`: input is edited a line at a time
//! and a read returns at most one line, once it is complete.
//!
//! * `\n` (and `\r` with `ICRNL`) ends the line; the newline is part of it;
//! * ERASE (`DEL`, 0x7f, and backspace, 0x08, which many terminals send instead) removes
//!   the last *character* — a whole UTF-8 sequence — and rubs it out on the screen: `"\b \b"`
//!   once per column it took (2 for East Asian wide characters, 2 for a control character
//!   echoed as `^X`; a tab is backed over with `\b`s alone);
//! * KILL (`^U`) removes the whole line, rubbing out every character; WERASE (`^W`) the last
//!   word: trailing non-word characters, then word characters (letters, digits, `_`, any
//!   non-ASCII character), Linux's `ALTWERASE` rule;
//! * EOF (`^D`) at the start of a line is end of input: a read returns 0. Mid-line it hands
//!   the partial line over without a newline (a read returns `hel`); it is not echoed;
//! * a line holds at most `N - 1` bytes (its newline makes `N`): a character that does not fit
//!   is refused — BEL (0x07) is echoed, the byte counted in [`Ldisc::dropped`] — never cut
//!   in half or stored silently beyond the limit; newline and EOF are always accepted, so the
//!   line can still be ended (n_tty does the same at its 4095th byte);
//! * escape sequences (`ESC [ ... final`, `ESC O x`: the arrow and function keys) are
//!   swallowed whole: the shell has no history or cursor editing, and inserting `[A` into the
//!   line helps no one. A lone `ESC` followed by another character is dropped.
//! * echo (`ECHO`) writes each character whole, once its last UTF-8 byte has arrived, so a
//!   terminal never sees half a character; control characters are echoed as `^X` (`ECHOCTL`).
//!
//! **Raw mode** (`ICANON` off, `cfmakeraw`): every byte is input as it is (after `ICRNL` if
//! set), echoed if `ECHO` is set; a read returns as soon as `VMIN` bytes are there (`VMIN`
//! 0: at once, possibly with nothing). `VTIME` is not implemented (it is stored).
//!
//! **Signal characters** (`ISIG`): INTR (`^C`), QUIT (`^\`) and SUSP (`^Z`) are never input.
//! The kernel checks each byte with [`Ldisc::signal_char`] the moment it arrives (not when a
//! reader gets to it), which flushes the pending input (unless `NOFLSH`), echoes `^C` and a
//! newline, and tells the kernel which signal to send.
//!
//! The columns of the line are counted from where its echo started ([`Ldisc::set_start_column`],
//! the column the prompt left the cursor at), so a tab's width is known when it is erased.
//! What differs from Linux, and why: `docs/console.md`.
#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]

pub mod width;

use tally_uapi::signal::{SIGINT, SIGQUIT, SIGTSTP};
use tally_uapi::tty::*;

/// Where a line discipline's output goes: the echo, in order.
pub trait Sink {
    fn echo(&mut self, bytes: &[u8]);
}

/// What [`Ldisc::signal_char`] found: send `sig` to the foreground process group; `flush`
/// says the pending input was discarded — `discarded` bytes of it here (the kernel discards
/// what it still holds too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signal {
    pub sig: u8,
    pub flush: bool,
    pub discarded: usize,
}

const BEL: u8 = 0x07;
const BS: u8 = 0x08;
const ESC: u8 = 0x1b;

/// Where an escape sequence being swallowed is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Esc {
    None,
    /// `ESC` seen.
    Start,
    /// `ESC [`: parameters and intermediates until a final byte (0x40..=0x7e).
    Csi,
    /// `ESC O`: one more byte.
    Ss3,
}

/// A line discipline whose line and input buffer hold `N` bytes (the kernel's: 4096, as
/// `n_tty`'s `N_TTY_BUF_SIZE`).
#[derive(Clone, Debug)]
pub struct Ldisc<const N: usize> {
    termios: Termios,
    /// The line being edited (canonical mode).
    line: [u8; N],
    /// Per byte of `line`: 0 inside a character (a UTF-8 continuation, or a character still
    /// incomplete); at a character's first byte, 1 + the columns its echo took.
    meta: [u8; N],
    len: usize,
    /// An incomplete UTF-8 sequence at the end of the line: where it starts, its full length.
    partial: Option<(usize, usize)>,
    /// Continuation bytes of a refused character still to swallow.
    refusing: u8,
    /// Columns the line's echo takes, from `start_col`.
    cols: usize,
    start_col: usize,
    esc: Esc,
    /// Completed input, `cooked[pos..end]`: one line (canonical mode) or raw bytes.
    cooked: [u8; N],
    pos: usize,
    end: usize,
    /// Canonical mode: `cooked` holds a completed line (possibly empty: end of input).
    ready: bool,
    dropped: u64,
}

impl<const N: usize> Default for Ldisc<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Ldisc<N> {
    /// A line discipline in Linux's default mode ([`Termios::standard`]).
    pub const fn new() -> Self {
        Ldisc {
            termios: Termios::standard(),
            line: [0; N],
            meta: [0; N],
            len: 0,
            partial: None,
            refusing: 0,
            cols: 0,
            start_col: 0,
            esc: Esc::None,
            cooked: [0; N],
            pos: 0,
            end: 0,
            ready: false,
            dropped: 0,
        }
    }

    pub fn termios(&self) -> Termios {
        self.termios
    }

    fn canonical(&self) -> bool {
        self.termios.lflag(ICANON)
    }

    /// Change the mode. Leaving canonical mode hands the line being edited over as input;
    /// entering it makes input not yet read a completed line.
    pub fn set_termios(&mut self, t: Termios) {
        let was = self.canonical();
        self.termios = t;
        self.esc = Esc::None;
        match (was, self.canonical()) {
            (true, false) => {
                self.partial = None;
                self.refusing = 0;
                let n = self.len;
                self.compact();
                let room = N - self.end;
                let n = n.min(room);
                self.cooked[self.end..self.end + n].copy_from_slice(&self.line[..n]);
                self.end += n;
                self.len = 0;
                self.cols = 0;
                self.ready = false;
            }
            (false, true) => self.ready = self.end > self.pos,
            _ => {}
        }
    }

    /// The column the line's echo starts at (where the prompt left the cursor). Taken only
    /// while the line is empty.
    pub fn set_start_column(&mut self, col: usize) {
        if self.len == 0 && self.partial.is_none() {
            self.start_col = col;
        }
    }

    /// Bytes refused since creation (a line longer than the buffer).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The line being edited (canonical mode), without an incomplete character at its end.
    pub fn line(&self) -> &[u8] {
        &self.line[..self.partial.map_or(self.len, |(start, _)| start)]
    }

    /// Columns the line's echo takes.
    pub fn columns(&self) -> usize {
        self.cols
    }

    /// Input a reader could take now: bytes, and whether a canonical line is complete.
    pub fn available(&self) -> usize {
        self.end - self.pos
    }

    /// Should the kernel feed more bytes, for a reader that wants `count`? Canonical: not
    /// while a completed line waits for its reader (one line at a time; the rest stays in the
    /// kernel's flow-controlled buffer). Raw: until `count` bytes (or the buffer) are in, no
    /// more — so bytes beyond what the program reads are processed in whatever mode is in
    /// force when they are read (a program that leaves raw mode leaves the rest of the input
    /// to be edited and echoed as lines).
    pub fn wants_input(&self, count: usize) -> bool {
        if self.canonical() {
            !self.ready
        } else {
            self.end - self.pos < count.clamp(1, N)
        }
    }

    /// Would a read return now, without waiting? Canonical: a line (or end of input) is
    /// complete. Raw: [`poll_threshold`](Self::poll_threshold) bytes are there. What `poll`
    /// reports as POLLIN (Linux's `input_available_p`).
    pub fn readable(&self) -> bool {
        if self.canonical() {
            self.ready
        } else {
            self.available() >= self.poll_threshold()
        }
    }

    /// How many bytes a poller waits for in raw mode: `VMIN`, at least 1 (n_tty's
    /// `input_available_p` with `VTIME` 0; Tally has no `VTIME`).
    pub fn poll_threshold(&self) -> usize {
        usize::from(self.termios.c_cc[VMIN]).clamp(1, N)
    }

    /// Discard all pending input: the line, a completed line, raw bytes. Returns how many
    /// bytes were discarded (the line's and the completed input's).
    pub fn flush(&mut self) -> usize {
        let discarded = self.available() + self.line().len();
        self.len = 0;
        self.cols = 0;
        self.partial = None;
        self.refusing = 0;
        self.esc = Esc::None;
        self.pos = 0;
        self.end = 0;
        self.ready = false;
        discarded
    }

    /// Is `b` a signal character (with `ISIG`)? If so, act on it: flush the input unless
    /// `NOFLSH`, echo it as `^C` and a newline, and say which signal to send. The kernel
    /// calls this for every byte as it arrives.
    pub fn signal_char(&mut self, b: u8, out: &mut impl Sink) -> Option<Signal> {
        if !self.termios.lflag(ISIG) {
            return None;
        }
        let cc = &self.termios.c_cc;
        // A control character set to 0 is disabled (`_POSIX_VDISABLE`).
        let sig = [(VINTR, SIGINT), (VQUIT, SIGQUIT), (VSUSP, SIGTSTP)]
            .iter()
            .find(|&&(i, _)| cc[i] != 0 && cc[i] == b)
            .map(|&(_, s)| s)?;
        let flush = !self.termios.lflag(NOFLSH);
        let discarded = if flush { self.flush() } else { 0 };
        if self.termios.lflag(ECHO) {
            self.echo_ctl(b, out);
            out.echo(b"\n");
            // `cols` stays the width of what the line still holds (0 once flushed): with
            // NOFLSH the kept characters can still be erased, and `erase` counts on it.
            self.start_col = 0;
        }
        Some(Signal { sig, flush, discarded })
    }

    /// Take one received byte: edit the line, complete it, or store it (raw mode); echo.
    /// A signal character is acted on as in [`Ldisc::signal_char`].
    pub fn receive(&mut self, b: u8, out: &mut impl Sink) -> Option<Signal> {
        let b = if b == b'\r' && self.termios.c_iflag & ICRNL != 0 { b'\n' } else { b };
        if let Some(s) = self.signal_char(b, out) {
            return Some(s);
        }
        if !self.canonical() {
            self.receive_raw(b, out);
            return None;
        }
        if self.swallow_escape(b) {
            return None;
        }
        let cc = self.termios.c_cc;
        let is = |i: usize| cc[i] != 0 && cc[i] == b;
        if is(VERASE) || b == BS {
            self.erase(out);
        } else if is(VWERASE) {
            self.erase_word(out);
        } else if is(VKILL) {
            self.kill(out);
        } else if is(VEOF) {
            self.complete(None, out);
        } else if b == b'\n' || is(VEOL) || is(VEOL2) {
            if self.termios.lflag(ECHO) || self.termios.lflag(ECHONL) {
                out.echo(b"\n");
            }
            self.complete(Some(b), out);
        } else {
            self.insert(b, out);
        }
        None
    }

    /// Copy completed input into `buf` (non-empty). Canonical: `Some(n)` once a line is
    /// complete — at most one line, `Some(0)` at end of input. Raw: `Some(n)` once `VMIN`
    /// bytes (at most `buf.len()`) are there, at once with `VMIN` 0. `None`: wait.
    pub fn read(&mut self, buf: &mut [u8]) -> Option<usize> {
        let avail = self.end - self.pos;
        if self.canonical() {
            if !self.ready {
                return None;
            }
        } else if avail < usize::from(self.termios.c_cc[VMIN]).min(buf.len()) {
            return None;
        }
        let n = avail.min(buf.len());
        buf[..n].copy_from_slice(&self.cooked[self.pos..self.pos + n]);
        self.pos += n;
        if self.pos == self.end {
            self.pos = 0;
            self.end = 0;
            self.ready = false;
        }
        Some(n)
    }

    fn receive_raw(&mut self, b: u8, out: &mut impl Sink) {
        self.compact();
        if self.end == N {
            self.dropped += 1;
            return;
        }
        self.cooked[self.end] = b;
        self.end += 1;
        if self.termios.lflag(ECHO) {
            if b == b'\n' || b == b'\t' || b >= 0x20 && b != 0x7f {
                out.echo(&[b]);
            } else {
                self.echo_ctl(b, out);
            }
        }
    }

    fn compact(&mut self) {
        if self.pos > 0 {
            self.cooked.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
    }

    /// Canonical mode: is `b` part of an escape sequence (swallowed)?
    fn swallow_escape(&mut self, b: u8) -> bool {
        match self.esc {
            Esc::None if b == ESC => {
                self.esc = Esc::Start;
                true
            }
            Esc::None => false,
            Esc::Start => {
                self.esc = match b {
                    b'[' => Esc::Csi,
                    b'O' => Esc::Ss3,
                    ESC => Esc::Start,
                    _ => Esc::None,
                };
                // `ESC x`: the ESC is dropped, `x` is input as typed.
                self.esc != Esc::None
            }
            Esc::Csi => match b {
                0x20..=0x3f => true,
                0x40..=0x7e => {
                    self.esc = Esc::None;
                    true
                }
                _ => {
                    self.esc = Esc::None;
                    false
                }
            },
            Esc::Ss3 => {
                self.esc = Esc::None;
                (0x40..=0x7e).contains(&b)
            }
        }
    }

    /// Room for `n` more bytes in the line (one slot stays for the newline).
    fn fits(&self, n: usize) -> bool {
        self.len + n < N
    }

    fn refuse(&mut self, out: &mut impl Sink) {
        self.dropped += 1;
        if self.termios.lflag(ECHO) {
            out.echo(&[BEL]);
        }
    }

    fn insert(&mut self, b: u8, out: &mut impl Sink) {
        if b & 0xc0 == 0x80 {
            if self.refusing > 0 {
                self.refusing -= 1;
                self.dropped += 1;
                return;
            }
            if let Some((start, total)) = self.partial {
                self.line[self.len] = b;
                self.meta[self.len] = 0;
                self.len += 1;
                if self.len - start == total {
                    self.partial = None;
                    self.settle(start, out);
                }
                return;
            }
            // A continuation byte with no character to continue: a character of its own.
            return self.push_single(b, out);
        }
        self.refusing = 0;
        self.settle_partial(out);
        let total = match b {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => return self.push_single(b, out),
        };
        if !self.fits(total) {
            self.refusing = (total - 1) as u8;
            return self.refuse(out);
        }
        self.line[self.len] = b;
        self.meta[self.len] = 0;
        self.partial = Some((self.len, total));
        self.len += 1;
    }

    /// Store a one-byte character (ASCII, a control character, or a byte that is not UTF-8)
    /// and echo it.
    fn push_single(&mut self, b: u8, out: &mut impl Sink) {
        if !self.fits(1) {
            return self.refuse(out);
        }
        let at = self.len;
        self.line[at] = b;
        self.len += 1;
        let echo = self.termios.lflag(ECHO);
        let w = match b {
            b'\t' => {
                let w = 8 - (self.start_col + self.cols) % 8;
                if echo {
                    out.echo(b"\t");
                }
                w
            }
            0..=0x1f | 0x7f if self.termios.lflag(ECHOCTL) => {
                if echo {
                    self.echo_ctl(b, out);
                }
                2
            }
            0..=0x1f | 0x7f => {
                if echo {
                    out.echo(&[b]);
                }
                0
            }
            _ => {
                if echo {
                    out.echo(&[b]);
                }
                1
            }
        };
        self.meta[at] = 1 + w as u8;
        self.cols += w;
    }

    /// The UTF-8 sequence at `start..len` is complete: record its width and echo it whole;
    /// if it is not valid UTF-8 (an overlong form, a surrogate), each byte becomes a
    /// character of one column, as a terminal shows each as U+FFFD.
    fn settle(&mut self, start: usize, out: &mut impl Sink) {
        match core::str::from_utf8(&self.line[start..self.len]) {
            Ok(s) => {
                let w = s.chars().next().map_or(1, width::columns);
                self.meta[start] = 1 + w as u8;
                self.cols += w;
                if self.termios.lflag(ECHO) {
                    out.echo(&self.line[start..self.len]);
                }
            }
            Err(_) => self.settle_bytes(start, out),
        }
    }

    fn settle_bytes(&mut self, start: usize, out: &mut impl Sink) {
        for i in start..self.len {
            self.meta[i] = 2;
            self.cols += 1;
            if self.termios.lflag(ECHO) {
                out.echo(&[self.line[i]]);
            }
        }
    }

    /// A character left incomplete (another character, or the line's end, came first).
    fn settle_partial(&mut self, out: &mut impl Sink) {
        if let Some((start, _)) = self.partial.take() {
            self.settle_bytes(start, out);
        }
    }

    /// Remove the last character; `false` if the line was empty.
    fn erase(&mut self, out: &mut impl Sink) -> bool {
        self.refusing = 0;
        if let Some((start, _)) = self.partial.take() {
            // Never echoed: nothing to rub out.
            self.len = start;
            return true;
        }
        let Some(start) = (0..self.len).rev().find(|&i| self.meta[i] != 0) else {
            return false;
        };
        let w = usize::from(self.meta[start] - 1);
        let tab = self.line[start] == b'\t';
        self.len = start;
        self.cols = self.cols.saturating_sub(w);
        if self.termios.lflag(ECHO) {
            for _ in 0..w {
                // A tab left only blank columns behind: back over them.
                out.echo(if tab { b"\x08" } else { b"\x08 \x08" });
            }
        }
        true
    }

    /// The last character of the line, if any: (its first byte, whether it is a word's).
    fn last_is_word(&self) -> Option<bool> {
        let start = (0..self.len).rev().find(|&i| self.meta[i] != 0)?;
        let b = self.line[start];
        Some(b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80)
    }

    fn erase_word(&mut self, out: &mut impl Sink) {
        if self.partial.is_some() {
            self.erase(out);
        }
        let mut seen_word = false;
        while let Some(word) = self.last_is_word() {
            if word {
                seen_word = true;
            } else if seen_word {
                break;
            }
            self.erase(out);
        }
    }

    fn kill(&mut self, out: &mut impl Sink) {
        if self.termios.lflag(ECHO) && !self.termios.lflag(ECHOKE) {
            // ECHOK without ECHOKE: the line stays on the screen, a new one starts below.
            self.len = 0;
            self.cols = 0;
            self.partial = None;
            self.refusing = 0;
            if self.termios.lflag(ECHOK) {
                out.echo(b"\n");
                self.start_col = 0;
            }
            return;
        }
        while self.erase(out) {}
    }

    /// End the line: with `delim` (`\n`, EOL) or without (EOF). The line becomes the
    /// completed input.
    fn complete(&mut self, delim: Option<u8>, out: &mut impl Sink) {
        self.settle_partial(out);
        self.refusing = 0;
        self.compact();
        let n = self.len.min(N - self.end);
        self.cooked[self.end..self.end + n].copy_from_slice(&self.line[..n]);
        self.end += n;
        if let Some(d) = delim {
            if self.end < N {
                self.cooked[self.end] = d;
                self.end += 1;
            }
        }
        self.ready = true;
        self.len = 0;
        // After `hel^D` the cursor stays after `hel`: the next line's echo starts there.
        self.start_col = if delim.is_some() { 0 } else { self.start_col + self.cols };
        self.cols = 0;
    }

    /// `^X` for control character `b` (`^?` for DEL), as `ECHOCTL` shows it.
    fn echo_ctl(&self, b: u8, out: &mut impl Sink) {
        if self.termios.lflag(ECHOCTL) {
            out.echo(&[b'^', b ^ 0x40]);
        } else {
            out.echo(&[b]);
        }
    }
}

#[cfg(test)]
mod tests;
