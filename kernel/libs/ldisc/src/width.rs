//! How many terminal columns a character takes: 2 for East Asian wide and fullwidth
//! characters (Unicode's UAX #11 `W`/`F` classes, the main blocks), 1 for everything else
//! that prints. A simplification of `wcwidth`: combining marks and other zero-width
//! characters are counted as 1, so erasing after one rubs out a column too many
//! (`docs/console.md`).

/// The blocks a terminal draws two columns wide (the bulk of UAX #11's W and F classes).
const WIDE: &[(u32, u32)] = &[
    (0x1100, 0x115f),   // Hangul Jamo initial consonants
    (0x2e80, 0x303e),   // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
    (0x3041, 0x33ff),   // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, … CJK compatibility
    (0x3400, 0x4dbf),   // CJK extension A
    (0x4e00, 0x9fff),   // CJK unified ideographs
    (0xa000, 0xa4cf),   // Yi
    (0xac00, 0xd7a3),   // Hangul syllables
    (0xf900, 0xfaff),   // CJK compatibility ideographs
    (0xfe30, 0xfe4f),   // CJK compatibility forms
    (0xff00, 0xff60),   // fullwidth forms
    (0xffe0, 0xffe6),   // fullwidth signs
    (0x1f300, 0x1f64f), // pictographs, emoticons
    (0x1f900, 0x1f9ff), // supplemental symbols and pictographs
    (0x20000, 0x3fffd), // CJK extensions B and beyond
];

/// Columns `c` takes on a terminal (1 or 2; control characters are the caller's business).
pub fn columns(c: char) -> usize {
    let c = c as u32;
    if c >= 0x1100 && WIDE.iter().any(|&(lo, hi)| lo <= c && c <= hi) {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::columns;

    #[test]
    fn wide_and_narrow() {
        assert_eq!(columns('a'), 1);
        assert_eq!(columns('é'), 1);
        assert_eq!(columns('日'), 2);
        assert_eq!(columns('本'), 2);
        assert_eq!(columns('한'), 2);
        assert_eq!(columns('Ａ'), 2);
        assert_eq!(columns('€'), 1);
    }
}
