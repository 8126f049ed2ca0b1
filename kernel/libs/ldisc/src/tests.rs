//! The line discipline as a state machine: examples of each rule, then properties over
//! arbitrary typing.

use super::*;
use proptest::prelude::*;

/// Collects the echo.
#[derive(Default)]
struct Screen(Vec<u8>);

impl Sink for Screen {
    fn echo(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

fn typed<const N: usize>(ld: &mut Ldisc<N>, input: &[u8]) -> (Vec<u8>, Vec<Signal>) {
    let mut s = Screen::default();
    let mut sigs = Vec::new();
    for &b in input {
        if let Some(sig) = ld.receive(b, &mut s) {
            sigs.push(sig);
        }
    }
    (s.0, sigs)
}

fn read_all<const N: usize>(ld: &mut Ldisc<N>) -> Option<Vec<u8>> {
    let mut buf = [0u8; 8192];
    ld.read(&mut buf).map(|n| buf[..n].to_vec())
}

#[test]
fn a_line_is_read_once_complete_with_icrnl() {
    let mut ld = Ldisc::<4096>::new();
    let (echo, _) = typed(&mut ld, b"hello");
    assert_eq!(read_all(&mut ld), None, "no line yet");
    assert!(ld.wants_input(4096));
    let (echo2, _) = typed(&mut ld, b"\r");
    assert_eq!([echo, echo2].concat(), b"hello\n");
    assert!(!ld.wants_input(4096), "one line at a time");
    assert_eq!(read_all(&mut ld).unwrap(), b"hello\n");
    assert_eq!(read_all(&mut ld), None);
}

#[test]
fn a_short_read_leaves_the_rest_of_the_line() {
    let mut ld = Ldisc::<4096>::new();
    typed(&mut ld, b"abcdef\n");
    let mut buf = [0u8; 4];
    assert_eq!(ld.read(&mut buf), Some(4));
    assert_eq!(&buf, b"abcd");
    assert_eq!(ld.read(&mut buf), Some(3));
    assert_eq!(&buf[..3], b"ef\n");
    assert_eq!(ld.read(&mut buf), None);
}

#[test]
fn erase_removes_a_whole_utf8_character_and_rubs_out_its_columns() {
    let mut ld = Ldisc::<4096>::new();
    let (echo, _) = typed(&mut ld, "hé日".as_bytes());
    assert_eq!(echo, "hé日".as_bytes(), "echoed whole");
    assert_eq!(ld.columns(), 4);
    let (echo, _) = typed(&mut ld, b"\x7f");
    assert_eq!(echo, b"\x08 \x08\x08 \x08", "a wide character: two columns");
    let (echo, _) = typed(&mut ld, b"\x08");
    assert_eq!(echo, b"\x08 \x08");
    assert_eq!(ld.line(), b"h");
    typed(&mut ld, b"\n");
    assert_eq!(read_all(&mut ld).unwrap(), b"h\n");
}

#[test]
fn echo_waits_for_the_last_byte_of_a_character() {
    let mut ld = Ldisc::<4096>::new();
    let (echo, _) = typed(&mut ld, &"本".as_bytes()[..2]);
    assert!(echo.is_empty());
    let (echo, _) = typed(&mut ld, &"本".as_bytes()[2..]);
    assert_eq!(echo, "本".as_bytes());
}

#[test]
fn kill_and_word_erase() {
    let mut ld = Ldisc::<4096>::new();
    typed(&mut ld, b"echo foo bar. ");
    let (echo, _) = typed(&mut ld, b"\x17");
    assert_eq!(ld.line(), b"echo foo ");
    assert_eq!(echo, b"\x08 \x08".repeat(5));
    typed(&mut ld, b"\x17");
    assert_eq!(ld.line(), b"echo ");
    let (echo, _) = typed(&mut ld, b"\x15");
    assert_eq!(ld.line(), b"");
    assert_eq!(echo, b"\x08 \x08".repeat(5));
    assert_eq!(ld.columns(), 0);
}

#[test]
fn eof_at_the_start_is_end_of_input_and_mid_line_hands_the_line_over() {
    let mut ld = Ldisc::<4096>::new();
    let (echo, _) = typed(&mut ld, b"hel\x04");
    assert_eq!(echo, b"hel", "^D is not echoed");
    assert_eq!(read_all(&mut ld).unwrap(), b"hel", "no newline");
    typed(&mut ld, b"lo\n");
    assert_eq!(read_all(&mut ld).unwrap(), b"lo\n");
    typed(&mut ld, b"\x04");
    assert_eq!(read_all(&mut ld).unwrap(), b"", "end of input: a read of 0");
    assert_eq!(read_all(&mut ld), None, "consumed");
}

#[test]
fn a_line_longer_than_the_buffer_is_refused_with_a_bell() {
    let mut ld = Ldisc::<8>::new();
    let (echo, _) = typed(&mut ld, b"abcdefghij");
    assert_eq!(echo, b"abcdefg\x07\x07\x07");
    assert_eq!(ld.dropped(), 3);
    typed(&mut ld, b"\n");
    assert_eq!(read_all(&mut ld).unwrap(), b"abcdefg\n");
    // A character that does not fit whole is refused whole.
    let mut ld = Ldisc::<4>::new();
    let (echo, _) = typed(&mut ld, "ab日c".as_bytes());
    assert_eq!(ld.line(), b"abc");
    assert_eq!(echo, b"ab\x07c");
    assert_eq!(ld.dropped(), 3);
}

#[test]
fn arrow_keys_are_swallowed_in_canonical_mode() {
    let mut ld = Ldisc::<4096>::new();
    let (echo, _) = typed(&mut ld, b"ab\x1b[A\x1b[D\x1bOBc\x1b[1;5C\n");
    assert_eq!(echo, b"abc\n");
    assert_eq!(read_all(&mut ld).unwrap(), b"abc\n");
}

#[test]
fn signal_characters_flush_and_echo() {
    let mut ld = Ldisc::<4096>::new();
    let (echo, sigs) = typed(&mut ld, b"abc\x03");
    assert_eq!(sigs, [Signal { sig: SIGINT, flush: true, discarded: 3 }]);
    assert_eq!(echo, b"abc^C\n");
    assert_eq!(ld.line(), b"");
    let (_, sigs) = typed(&mut ld, b"\x1c\x1a");
    assert_eq!(sigs.iter().map(|s| s.sig).collect::<Vec<_>>(), [SIGQUIT, SIGTSTP]);
    let mut t = ld.termios();
    t.c_lflag &= !ISIG;
    ld.set_termios(t);
    let (_, sigs) = typed(&mut ld, b"\x03\n");
    assert!(sigs.is_empty());
    assert_eq!(read_all(&mut ld).unwrap(), b"\x03\n", "without ISIG, ^C is input");
}

#[test]
fn control_characters_echo_as_caret_and_erase_two_columns() {
    let mut ld = Ldisc::<4096>::new();
    let (echo, _) = typed(&mut ld, b"\x01");
    assert_eq!(echo, b"^A");
    let (echo, _) = typed(&mut ld, b"\x7f");
    assert_eq!(echo, b"\x08 \x08\x08 \x08");
}

#[test]
fn a_tab_is_erased_by_the_columns_it_took() {
    let mut ld = Ldisc::<4096>::new();
    ld.set_start_column(2); // after the prompt "$ "
    typed(&mut ld, b"a\t");
    assert_eq!(ld.columns(), 6);
    let (echo, _) = typed(&mut ld, b"\x7f");
    assert_eq!(echo, b"\x08\x08\x08\x08\x08");
}

#[test]
fn raw_mode_hands_over_bytes_as_they_come() {
    let mut ld = Ldisc::<4096>::new();
    let mut t = ld.termios();
    t.make_raw();
    ld.set_termios(t);
    let (echo, sigs) = typed(&mut ld, b"a\r\x7f\x03\x1b[A");
    assert!(echo.is_empty() && sigs.is_empty());
    assert_eq!(read_all(&mut ld).unwrap(), b"a\r\x7f\x03\x1b[A");
    assert_eq!(read_all(&mut ld), None, "VMIN 1: wait");
    t.c_cc[VMIN] = 0;
    ld.set_termios(t);
    assert_eq!(read_all(&mut ld).unwrap(), b"", "VMIN 0: at once");
    t.c_cc[VMIN] = 3;
    ld.set_termios(t);
    typed(&mut ld, b"xy");
    assert_eq!(read_all(&mut ld), None);
    typed(&mut ld, b"z");
    assert_eq!(read_all(&mut ld).unwrap(), b"xyz");
}

#[test]
fn raw_mode_takes_only_what_a_read_asks_for() {
    let mut ld = Ldisc::<4096>::new();
    let canon = ld.termios();
    let mut raw = canon;
    raw.make_raw();
    ld.set_termios(raw);
    assert!(ld.wants_input(1));
    typed(&mut ld, b"a");
    assert!(!ld.wants_input(1), "one byte asked, one byte taken: the rest stays unprocessed");
    assert!(ld.wants_input(2));
    let mut one = [0u8; 1];
    assert_eq!(ld.read(&mut one), Some(1));
    // Back to canonical: what comes next is edited and echoed as a line.
    ld.set_termios(canon);
    let (echo, _) = typed(&mut ld, b"hi\r");
    assert_eq!(echo, b"hi\n");
    assert_eq!(read_all(&mut ld).unwrap(), b"hi\n");
}

#[test]
fn switching_modes_keeps_pending_input() {
    let mut ld = Ldisc::<4096>::new();
    typed(&mut ld, b"par");
    let canon = ld.termios();
    let mut raw = canon;
    raw.make_raw();
    ld.set_termios(raw);
    assert_eq!(read_all(&mut ld).unwrap(), b"par");
    typed(&mut ld, b"xy");
    ld.set_termios(canon);
    assert_eq!(read_all(&mut ld).unwrap(), b"xy");
}

/// What a terminal's cursor does with the echo (from column `col`): `None` once a newline
/// went by (the line's columns then start over).
fn cursor(mut col: isize, echo: &[u8]) -> Option<isize> {
    // Each echo call of the line discipline is whole characters; decode them as a terminal
    // would, one U+FFFD column per byte that is not UTF-8.
    let text = String::from_utf8_lossy(echo);
    for c in text.chars() {
        match c {
            '\n' => return None,
            '\x08' => col -= 1,
            '\t' => col += 8 - col.rem_euclid(8),
            '\x07' => {}
            c if (c as u32) < 0x20 || c == '\x7f' => {}
            c => col += width::columns(c) as isize,
        }
    }
    Some(col)
}

/// Keys a user may press: characters of every width, and the editing keys.
fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::sample::select(vec!["a", "b", "_", " ", ".", "é", "日", "😀", "\t", "\u{1}", "\u{0}"])
            .prop_map(|s| s.as_bytes().to_vec()),
        1 => Just(vec![0x7f]),
        1 => Just(vec![0x08]),
        1 => Just(vec![0x17]),
        1 => Just(vec![0x15]),
        1 => Just(b"\x1b[A".to_vec()),
    ]
}

proptest! {
    /// Whatever is typed (any bytes at all), the line and a completed line never exceed the
    /// buffer, and every completed line is readable whole.
    #[test]
    fn lines_never_exceed_the_buffer(input in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut ld = Ldisc::<16>::new();
        let mut s = Screen::default();
        for &b in &input {
            ld.receive(b, &mut s);
            prop_assert!(ld.line().len() < 16);
            prop_assert!(ld.available() <= 16);
            if !ld.wants_input(64) {
                let mut buf = [0u8; 64];
                let n = ld.read(&mut buf).expect("a completed line is readable");
                prop_assert!(n <= 16);
            }
        }
    }

    /// Typing characters and editing keys: the line is always whole UTF-8 (erase never leaves
    /// half a character), and the echo moves the cursor to exactly where the line's columns
    /// say it is.
    #[test]
    fn erase_keeps_utf8_whole_and_columns_match_the_echo(
        keys in prop::collection::vec(key(), 0..120),
        start in 0usize..10,
    ) {
        let mut ld = Ldisc::<32>::new();
        ld.set_start_column(start);
        let mut col = Some(start as isize);
        for k in &keys {
            let mut s = Screen::default();
            for &b in k {
                ld.receive(b, &mut s);
            }
            prop_assert!(core::str::from_utf8(ld.line()).is_ok(), "line {:?}", ld.line());
            col = col.and_then(|c| cursor(c, &s.0));
            if let Some(c) = col {
                prop_assert_eq!(c, (start + ld.columns()) as isize, "after {:?}", k);
            }
            prop_assert!(ld.line().len() < 32);
        }
    }

    /// Plain lines come out as typed, one per read, the part beyond the buffer refused.
    #[test]
    fn plain_lines_come_out_as_typed(lines in prop::collection::vec("[a-z ]{0,40}", 0..10)) {
        let mut ld = Ldisc::<32>::new();
        let mut s = Screen::default();
        for line in &lines {
            for &b in line.as_bytes() {
                ld.receive(b, &mut s);
            }
            ld.receive(b'\r', &mut s);
            let got = read_all(&mut ld).expect("a line");
            let kept = &line.as_bytes()[..line.len().min(31)];
            prop_assert_eq!(&got[..got.len() - 1], kept);
            prop_assert_eq!(got.last(), Some(&b'\n'));
        }
    }
}

#[test]
fn noflsh_keeps_the_line_and_it_can_still_be_erased() {
    let mut ld = Ldisc::<4096>::new();
    let mut t = ld.termios();
    t.c_lflag |= NOFLSH;
    ld.set_termios(t);
    let (_, sigs) = typed(&mut ld, b"ab\xc3\xa9\x03");
    assert_eq!(sigs.len(), 1);
    assert!(!sigs[0].flush);
    assert_eq!(ld.line(), "abé".as_bytes(), "NOFLSH keeps the line");
    assert_eq!(ld.columns(), 3);
    // Every kept character erases, and one more erase finds the line empty.
    typed(&mut ld, b"\x7f\x7f\x7f\x7f");
    assert_eq!(ld.line(), b"");
    assert_eq!(ld.columns(), 0);
    typed(&mut ld, b"x\n");
    assert_eq!(read_all(&mut ld), Some(b"x\n".to_vec()));
}

#[test]
fn readable_is_what_poll_reports() {
    let mut ld = Ldisc::<4096>::new();
    typed(&mut ld, b"ab");
    assert!(!ld.readable(), "canonical: no line yet");
    typed(&mut ld, b"\n");
    assert!(ld.readable());
    read_all(&mut ld);
    assert!(!ld.readable());
    typed(&mut ld, b"\x04");
    assert!(ld.readable(), "end of input is readable (a read returns 0)");
    read_all(&mut ld);
    let mut t = ld.termios();
    t.make_raw();
    t.c_cc[VMIN] = 2;
    ld.set_termios(t);
    assert_eq!(ld.poll_threshold(), 2);
    typed(&mut ld, b"x");
    assert!(!ld.readable(), "raw: VMIN bytes");
    typed(&mut ld, b"y");
    assert!(ld.readable());
    t.c_cc[VMIN] = 0;
    ld.set_termios(t);
    assert_eq!(ld.poll_threshold(), 1, "VMIN 0 polls for one byte, as n_tty");
}
