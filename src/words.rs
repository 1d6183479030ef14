//! Counting words for tokens per word (`tokenmill.analysis`), by a hand-written scanner.
//!
//! A word is what `python/tokenmill/analysis/_words.py`'s `WORD_PATTERN` matches (that module
//! says why): a Han or Hiragana character with the marks after it; a run of Katakana (and `ー`)
//! with its marks; a run of Thai, Lao, Khmer or Myanmar; or a run of other letters, marks, digits
//! and connector punctuation that goes on across `'`, `’`, `.` or `·` followed by such a
//! character, and across `,` followed by decimal digits. The regex engine finds the same words
//! at about half the speed of encoding; this scanner answers at several times that, so counting
//! words adds little to an analysis that encodes anyway. The Python tests hold the two equal.

use crate::util::charset::CharSet;

macro_rules! class {
    ($name:ident, $class:expr) => {
        fn $name() -> &'static CharSet {
            static SET: std::sync::OnceLock<CharSet> = std::sync::OnceLock::new();
            SET.get_or_init(|| CharSet::from_class($class))
        }
    };
}

class!(han_hiragana, r"[\p{Han}\p{Hiragana}]");
class!(katakana, r"[\p{Katakana}ー]");
class!(unspaced, r"[\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]");
class!(letter, r"[\p{L}\p{M}\p{N}\p{Pc}--[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]]");
class!(mark, r"\p{M}");
class!(decimal, r"\p{Nd}");

/// The words in `text`.
pub fn count_words(text: &str) -> u64 {
    let (letter, mark) = (letter(), mark());
    let mut chars = text.chars().peekable();
    let mut words = 0;
    while let Some(c) = chars.next() {
        if c.is_ascii() {
            if !(c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
        } else if han_hiragana().contains(c) {
            words += 1;
            skip_while(&mut chars, |c| mark.contains(c));
            continue;
        } else if katakana().contains(c) {
            words += 1;
            skip_while(&mut chars, |c| katakana().contains(c));
            skip_while(&mut chars, |c| mark.contains(c));
            continue;
        } else if unspaced().contains(c) {
            words += 1;
            skip_while(&mut chars, |c| unspaced().contains(c));
            continue;
        } else if !letter.contains(c) {
            continue;
        }
        words += 1;
        // A run of letters; then, as long as one follows, a separator and more letters, or a
        // comma and decimal digits (after which only another separator or comma goes on).
        skip_while(&mut chars, |c| is_letter(letter, c));
        loop {
            let mut ahead = chars.clone();
            match ahead.next() {
                Some('\'' | '’' | '.' | '·') if ahead.next().is_some_and(|c| is_letter(letter, c)) => {
                    chars.next();
                    skip_while(&mut chars, |c| is_letter(letter, c));
                }
                Some(',') if ahead.next().is_some_and(|c| decimal().contains(c)) => {
                    chars.next();
                    skip_while(&mut chars, |c| decimal().contains(c));
                }
                _ => break,
            }
        }
    }
    words
}

#[inline]
fn is_letter(letter: &CharSet, c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        letter.contains(c)
    }
}

fn skip_while(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, mut keep: impl FnMut(char) -> bool) {
    while chars.next_if(|&c| keep(c)).is_some() {}
}

#[cfg(test)]
mod tests {
    use super::count_words;

    #[test]
    fn words_as_the_pattern_finds_them() {
        assert_eq!(count_words("Hello, world! don't"), 3);
        assert_eq!(count_words("日本語のテキスト"), 5); // 日 本 語 の テキスト
        assert_eq!(count_words("l'homme a 1,000.50 e.g. x"), 5); // e.g: the last dot ends it
        assert_eq!(count_words("1,12ab"), 2); // after ",12" only a separator or comma goes on
        assert_eq!(count_words("a.b.c, d"), 2);
        assert_eq!(count_words("ภาษาไทย คือ"), 2);
        assert_eq!(count_words("  ...  "), 0);
    }
}
