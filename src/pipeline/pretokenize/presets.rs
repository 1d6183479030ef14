//! Hand-written splitters for the GPT-2 (r50k), cl100k and o200k patterns, and the open models'
//! variants of the last two: Llama 3 and Qwen 2 (cl100k's family), Mistral's tekken (o200k's).
//!
//! Each `*_piece_end(text, start)` returns where the piece that the reference regex would match
//! at `start` ends. The reference patterns (as tiktoken ships them) are:
//!
//! ```text
//! gpt2   '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
//! cl100k '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
//!        |\s++$|\s*[\r\n]|\s+(?!\S)|\s
//! o200k  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//!        |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//!        |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! Why not a regex engine: the lookahead `(?!\S)` needs a backtracking engine, which dominates
//! encoding time. Each alternative here is a few forward scans, and every scan either ends the
//! piece or is bounded by the run it re-reads once, so splitting stays linear.
//! The comments name the alternative each branch implements; `tests/test_pretokenize.py`
//! checks every preset against Python's `regex` module on real and generated text.

use super::classes::{table, ClassTable, ASCII, LETTER, LOWERISH, NUMBER, SPACE, UPPERISH};

/// Every byte of a word set to 1, and to its high bit: the lanes of the 8-byte scans below.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Per byte of `word`, the high bit set where the byte is an ASCII lowercase letter. No carry
/// crosses bytes (each lane stays below 0x100): the high bit of `+ (0x80 - b'a')` says
/// `>= b'a'`, that of `+ (0x80 - b'z' - 1)` says `> b'z'`; a set high bit in `word` itself is a
/// non-ASCII byte. On `word | 0x20` per byte (A-Z folded onto a-z, no other byte mapped into
/// a-z, high bits unchanged) it marks the letters of either case.
#[inline(always)]
fn lowercase_lanes(word: u64) -> u64 {
    let low = word & !HIGH;
    (low + (0x80 - b'a' as u64) * ONES) & !(low + (0x80 - b'z' as u64 - 1) * ONES) & !word & HIGH
}

/// Where the run of bytes that `lanes` marks (as `lowercase_lanes` does) ends from `i`, eight
/// bytes at a time while eight remain: a word's end is then found by counting zeros rather than
/// by a loop exit the branch predictor misses once a word. Near the text's end it stops early.
#[inline(always)]
fn eight_at_a_time_end(bytes: &[u8], mut i: usize, lanes: impl Fn(u64) -> u64) -> usize {
    while i + 8 <= bytes.len() {
        let word = u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let others = !lanes(word) & HIGH;
        if others != 0 {
            return i + (others.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i
}

/// Where the run of ASCII letters from `i` ends (near the text's end it stops early; the
/// caller's byte loop goes on).
#[inline(always)]
fn ascii_letters_end(bytes: &[u8], i: usize) -> usize {
    eight_at_a_time_end(bytes, i, |word| lowercase_lanes(word | (0x20 * ONES)))
}

/// Where the run of ASCII lowercase letters from `i` ends.
#[inline(always)]
fn ascii_lower_end(bytes: &[u8], i: usize) -> usize {
    let mut i = eight_at_a_time_end(bytes, i, lowercase_lanes);
    while i < bytes.len() && bytes[i].is_ascii_lowercase() {
        i += 1;
    }
    i
}

/// Per byte of `word`, the high bit set where the byte is zero (exact: no borrow crosses bytes).
#[inline(always)]
fn zero_bytes(word: u64) -> u64 {
    let low7 = !HIGH;
    !(((word & low7) + low7) | word) & HIGH
}

/// The ASCII whitespace (`\t \n \v \f \r` and space) from `i`, eight bytes at a time while
/// eight remain: where it ends, and just past its last `\r` or `\n` if any. Code is indented
/// with long runs of these; the caller's character loop goes on from where this stops.
#[inline(always)]
fn ascii_space_run(bytes: &[u8], mut i: usize) -> (usize, Option<usize>) {
    let mut after_newline = None;
    while i + 8 <= bytes.len() {
        let word = u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        // \t..\r is 0x09..=0x0D: the high bit of `+ (0x80 - 0x09)` says `>= 0x09`, that of
        // `+ (0x80 - 0x0E)` says `> 0x0D` (lanes below 0x80, so no carry between bytes).
        let low = word & !HIGH;
        let controls = (low + (0x80 - 0x09) * ONES) & !(low + (0x80 - 0x0E) * ONES) & !word & HIGH;
        let newlines = zero_bytes(word ^ (b'\n' as u64 * ONES)) | zero_bytes(word ^ (b'\r' as u64 * ONES));
        let spaces = controls | zero_bytes(word ^ (b' ' as u64 * ONES));
        let others = !spaces & HIGH;
        let run = if others == 0 { 8 } else { (others.trailing_zeros() / 8) as usize };
        let in_run = if run == 8 { newlines } else { newlines & ((1u64 << (8 * run)) - 1) };
        if in_run != 0 {
            after_newline = Some(i + (63 - in_run.leading_zeros() as usize) / 8 + 1);
        }
        i += run;
        if run < 8 {
            break;
        }
    }
    (i, after_newline)
}

/// A view of the text that answers "which character, which class" at a byte offset.
struct Scan<'a> {
    text: &'a str,
    classes: &'static ClassTable,
}

impl<'a> Scan<'a> {
    fn new(text: &'a str) -> Self {
        Scan { text, classes: table() }
    }

    #[inline]
    fn len(&self) -> usize {
        self.text.len()
    }

    /// The character at byte offset `i` (a char boundary < len), its class bits and its width.
    #[inline(always)]
    fn at(&self, i: usize) -> (char, u8, usize) {
        let b = self.text.as_bytes()[i];
        if b < 0x80 {
            return (b as char, ASCII[b as usize], 1);
        }
        self.at_multibyte(i)
    }

    /// Decodes the character at `i` by hand: the text is a `str`, so it is valid UTF-8 and the
    /// lead byte alone gives the width.
    #[inline]
    fn at_multibyte(&self, i: usize) -> (char, u8, usize) {
        self.at_multibyte_inlined(i)
    }

    /// `at_multibyte`, always inlined: for the letter runs of CJK text, where a call per
    /// character was a tenth of encoding Chinese (inlining it everywhere cost English 2%).
    #[inline(always)]
    fn at_multibyte_inlined(&self, i: usize) -> (char, u8, usize) {
        let b = self.text.as_bytes();
        let lead = b[i] as u32;
        let (cp, w) = if lead < 0xE0 {
            (((lead & 0x1F) << 6) | (b[i + 1] as u32 & 0x3F), 2)
        } else if lead < 0xF0 {
            (((lead & 0x0F) << 12) | ((b[i + 1] as u32 & 0x3F) << 6) | (b[i + 2] as u32 & 0x3F), 3)
        } else {
            let cp = ((lead & 0x07) << 18)
                | ((b[i + 1] as u32 & 0x3F) << 12)
                | ((b[i + 2] as u32 & 0x3F) << 6)
                | (b[i + 3] as u32 & 0x3F);
            (cp, 4)
        };
        // SAFETY: decoded from valid UTF-8 at a char boundary, so `cp` is a scalar value.
        let c = unsafe { char::from_u32_unchecked(cp) };
        (c, self.classes.get(c), w)
    }

    #[inline(always)]
    fn class_at(&self, i: usize) -> u8 {
        if i >= self.len() {
            0
        } else {
            self.at(i).1
        }
    }

    /// End of the run of characters (from `i`) whose class bits intersect `mask`.
    #[inline(always)]
    fn run_end(&self, mut i: usize, mask: u8) -> usize {
        let bytes = self.text.as_bytes();
        if mask == LETTER {
            i = ascii_letters_end(bytes, i);
            // Where the 8-byte scan stopped at an ASCII non-letter, the run has ended: the loops
            // below would only read that byte again, twice.
            if bytes.get(i).is_some_and(|&b| b < 0x80 && ASCII[b as usize] & LETTER == 0) {
                return i;
            }
        }
        // ASCII stretch first: one table load per byte.
        while i < bytes.len() && bytes[i] < 0x80 && ASCII[bytes[i] as usize] & mask != 0 {
            i += 1;
        }
        while i < self.len() {
            let b = bytes[i];
            let (class, w) = if b < 0x80 {
                (ASCII[b as usize], 1)
            } else {
                let (_, class, w) = self.at_multibyte_inlined(i);
                (class, w)
            };
            if class & mask == 0 {
                break;
            }
            i += w;
        }
        i
    }

    /// End of the run of characters that are neither `\s`, `\p{L}` nor `\p{N}`.
    #[inline]
    fn other_run_end(&self, mut i: usize) -> usize {
        while i < self.len() {
            let (_, class, w) = self.at(i);
            if class & (SPACE | LETTER | NUMBER) != 0 {
                break;
            }
            i += w;
        }
        i
    }

    /// End of the run of characters from `i` that are all in `set`.
    #[inline]
    fn ascii_run_end(&self, mut i: usize, set: &[u8]) -> usize {
        let bytes = self.text.as_bytes();
        while i < bytes.len() && set.contains(&bytes[i]) {
            i += 1;
        }
        i
    }

    /// `\p{N}{1,3}` after its first digit: up to two more numeric characters from `j`.
    #[inline]
    fn up_to_two_more_numbers(&self, mut j: usize) -> usize {
        for _ in 0..2 {
            if self.class_at(j) & NUMBER == 0 {
                break;
            }
            j += self.at(j).2;
        }
        j
    }

    /// Byte offset of the last character before `i`.
    #[inline]
    fn prev(&self, mut i: usize) -> usize {
        let bytes = self.text.as_bytes();
        i -= 1;
        while bytes[i] & 0xC0 == 0x80 {
            i -= 1;
        }
        i
    }

    /// Whitespace alternatives shared by the presets: returns (end of the whitespace run,
    /// byte offset just past the last `\r` or `\n` in the run, if any).
    #[inline]
    fn space_run(&self, i: usize) -> (usize, Option<usize>) {
        let bytes = self.text.as_bytes();
        let (mut j, mut after_newline) = ascii_space_run(bytes, i);
        while j < bytes.len() {
            let (c, class, w) = self.at(j);
            if class & SPACE == 0 {
                break;
            }
            j += w;
            if c == '\r' || c == '\n' {
                after_newline = Some(j);
            }
        }
        (j, after_newline)
    }

    /// `\s+(?!\S)|\s`: the run minus its last character when a non-space follows and the run
    /// is longer than one character; the whole run at the end of the text; else one character.
    #[inline]
    fn space_before_word(&self, i: usize, run_end: usize, width: usize) -> usize {
        if run_end == self.len() {
            return run_end;
        }
        let last = self.prev(run_end);
        if last > i {
            last
        } else {
            i + width
        }
    }

    /// Length of a contraction (`'s 't 're 've 'm 'll 'd`) starting at `i`, or 0.
    /// `ignore_case` follows Unicode simple case folding, as regex engines do: `ſ` folds to `s`.
    #[inline]
    fn contraction(&self, i: usize, ignore_case: bool) -> usize {
        let bytes = self.text.as_bytes();
        if bytes.get(i) != Some(&b'\'') {
            return 0;
        }
        let fold = |b: Option<&u8>| -> u8 {
            match b {
                Some(&b) if ignore_case => b.to_ascii_lowercase(),
                Some(&b) => b,
                None => 0,
            }
        };
        let c1 = fold(bytes.get(i + 1));
        match c1 {
            b's' | b'd' | b'm' | b't' => return 2,
            b'l' if fold(bytes.get(i + 2)) == b'l' => return 3,
            b'v' | b'r' if fold(bytes.get(i + 2)) == b'e' => return 3,
            _ => {}
        }
        // U+017F LATIN SMALL LETTER LONG S (0xC5 0xBF) case-folds to 's'.
        if ignore_case && bytes.get(i + 1) == Some(&0xC5) && bytes.get(i + 2) == Some(&0xBF) {
            return 3;
        }
        0
    }
}

/// GPT-2 / r50k / p50k pattern.
pub fn gpt2_piece_end(text: &str, i: usize) -> usize {
    let s = Scan::new(text);
    let (c, class, w) = s.at(i);
    // '(?:[sdmt]|ll|ve|re)
    let n = s.contraction(i, false);
    if n > 0 {
        return i + n;
    }
    // ` ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++`
    let (body, body_class) = if c == ' ' && i + 1 < s.len() { (i + 1, s.class_at(i + 1)) } else { (i, class) };
    if body_class & LETTER != 0 {
        return s.run_end(body, LETTER);
    }
    if body_class & NUMBER != 0 {
        return s.run_end(body, NUMBER);
    }
    if body_class & SPACE == 0 {
        return s.other_run_end(body);
    }
    // `\s++$|\s+(?!\S)|\s`
    let (run_end, _) = s.space_run(i);
    s.space_before_word(i, run_end, w)
}

/// cl100k (GPT-4) pattern.
pub fn cl100k_piece_end(text: &str, i: usize) -> usize {
    cl100k_family::<true, true>(text, i)
}

/// Llama 3's pattern: cl100k's, except that whitespace at the end of the text is cut after its
/// last newline (Llama 3 has no `\s++$` alternative; `\s*[\r\n]+` comes first).
pub fn llama3_piece_end(text: &str, i: usize) -> usize {
    cl100k_family::<true, false>(text, i)
}

/// Qwen 2's pattern (Qwen 2.5 and 3 too): Llama 3's with one digit per piece.
pub fn qwen2_piece_end(text: &str, i: usize) -> usize {
    cl100k_family::<false, false>(text, i)
}

/// The cl100k family; `DIGITS3`: `\p{N}{1,3}` rather than `\p{N}`; `WHOLE_END_SPACE`: the
/// `\s++$` alternative before `\s*[\r\n]`.
#[inline(always)]
fn cl100k_family<const DIGITS3: bool, const WHOLE_END_SPACE: bool>(text: &str, i: usize) -> usize {
    let s = Scan::new(text);
    let (c, class, w) = s.at(i);
    // '(?i:[sdmt]|ll|ve|re)
    let n = s.contraction(i, true);
    if n > 0 {
        return i + n;
    }
    // [^\r\n\p{L}\p{N}]?+\p{L}++
    if class & LETTER != 0 {
        return s.run_end(i, LETTER);
    }
    let can_prefix = c != '\r' && c != '\n' && class & NUMBER == 0;
    if can_prefix && s.class_at(i + w) & LETTER != 0 {
        return s.run_end(i + w, LETTER);
    }
    // \p{N}{1,3}+ or \p{N}
    if class & NUMBER != 0 {
        return if DIGITS3 { s.up_to_two_more_numbers(i + w) } else { i + w };
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    let body = if c == ' ' { i + 1 } else { i };
    if body < s.len() && s.class_at(body) & (SPACE | LETTER | NUMBER) == 0 {
        let j = s.other_run_end(body);
        return s.ascii_run_end(j, b"\r\n");
    }
    // \s++$|\s*[\r\n]|\s+(?!\S)|\s  (without `\s++$`: \s*[\r\n]+|\s+(?!\S)|\s+)
    let (run_end, after_newline) = s.space_run(i);
    if WHOLE_END_SPACE && run_end == s.len() {
        return run_end;
    }
    if let Some(j) = after_newline {
        return j;
    }
    s.space_before_word(i, run_end, w)
}

/// o200k pattern.
pub fn o200k_piece_end(text: &str, i: usize) -> usize {
    o200k_family::<true, true>(text, i)
}

/// Mistral's tekken pattern: o200k's without contractions and with one digit per piece.
pub fn tekken_piece_end(text: &str, i: usize) -> usize {
    o200k_family::<false, false>(text, i)
}

/// The o200k family; `CONTRACTIONS`: letters may end in `'s`, `'t`, ...; `DIGITS3`:
/// `\p{N}{1,3}` rather than `\p{N}`.
#[inline(always)]
fn o200k_family<const CONTRACTIONS: bool, const DIGITS3: bool>(text: &str, i: usize) -> usize {
    let s = Scan::new(text);
    let contraction = |end: usize| if CONTRACTIONS { end + s.contraction(end, true) } else { end };
    let ascii_word = o200k_ascii_word(text.as_bytes(), i);
    if let AsciiWord::Ends(end) = ascii_word {
        return contraction(end);
    }
    let (c, class, w) = s.at(i);
    let can_prefix = c != '\r' && c != '\n' && class & (LETTER | NUMBER) == 0;
    let next = i + w;
    if ascii_word == AsciiWord::Unknown {
        // Alternative 1, `[^\r\n\p{L}\p{N}]?[A]*[B]+(contraction)?`, with the prefix, then without.
        if can_prefix && next < s.len() {
            if let Some(end) = o200k_letters(&s, next) {
                return contraction(end);
            }
        }
        if let Some(end) = o200k_letters(&s, i) {
            return contraction(end);
        }
        // Alternative 2, `[^\r\n\p{L}\p{N}]?[A]+[B]*(contraction)?`. Alternative 1 failed, so
        // no lower-ish character follows the upper-ish run and `[B]*` matches nothing.
        if can_prefix && s.class_at(next) & UPPERISH != 0 {
            return contraction(s.run_end(next, UPPERISH));
        }
        if class & UPPERISH != 0 {
            return contraction(s.run_end(i, UPPERISH));
        }
    }
    // \p{N}{1,3} or \p{N}
    if class & NUMBER != 0 {
        return if DIGITS3 { s.up_to_two_more_numbers(next) } else { next };
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    let body = if c == ' ' { next } else { i };
    if body < s.len() && s.class_at(body) & (SPACE | LETTER | NUMBER) == 0 {
        let j = s.other_run_end(body);
        return s.ascii_run_end(j, b"\r\n/");
    }
    // \s*[\r\n]+|\s+(?!\S)|\s+
    let (run_end, after_newline) = s.space_run(i);
    if let Some(j) = after_newline {
        return j;
    }
    s.space_before_word(i, run_end, w)
}

/// What the o200k family's letter alternatives (1 and 2) come to, decided from ASCII bytes alone.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AsciiWord {
    /// They match, ending here (before any contraction).
    Ends(usize),
    /// Neither can match.
    NoWord,
    /// A non-ASCII byte was met: the general path decides.
    Unknown,
}

/// Alternatives 1 and 2 of the o200k family over ASCII text (most words of English and code):
/// `[^\r\n\p{L}\p{N}]?[A-Z]*[a-z]+` or `[^\r\n\p{L}\p{N}]?[A-Z]+`. No ASCII letter is both
/// upper-ish and lower-ish, so the backtracking of `o200k_letters` cannot find a lowercase letter
/// inside the uppercase run: the first alternative matches exactly when a lowercase letter
/// follows it. `Unknown` wherever a non-ASCII byte could change the answer (a non-ASCII letter
/// may start or continue either run).
#[inline(always)]
fn o200k_ascii_word(bytes: &[u8], i: usize) -> AsciiWord {
    let b = bytes[i];
    if b >= 0x80 {
        return AsciiWord::Unknown;
    }
    let class = ASCII[b as usize];
    let start = if class & LETTER != 0 {
        i
    } else if class & NUMBER == 0 && b != b'\r' && b != b'\n' {
        i + 1
    } else {
        // Both alternatives need a letter here or a prefix character.
        return AsciiWord::NoWord;
    };
    let mut upper_end = start;
    while upper_end < bytes.len() && bytes[upper_end].is_ascii_uppercase() {
        upper_end += 1;
    }
    let end = if upper_end < bytes.len() && bytes[upper_end].is_ascii_lowercase() {
        ascii_lower_end(bytes, upper_end)
    } else if upper_end > start {
        upper_end
    } else if upper_end < bytes.len() && bytes[upper_end] >= 0x80 {
        return AsciiWord::Unknown;
    } else {
        // A prefix character followed by the text's end or an ASCII non-letter.
        return AsciiWord::NoWord;
    };
    if end < bytes.len() && bytes[end] >= 0x80 {
        return AsciiWord::Unknown;
    }
    AsciiWord::Ends(end)
}

/// `[A]*[B]+` at `start` under backtracking: the upper-ish run is given back one character at a
/// time until a lower-ish character can start `[B]+`, which then runs greedily.
#[inline]
fn o200k_letters(s: &Scan, start: usize) -> Option<usize> {
    let upper_end = s.run_end(start, UPPERISH);
    let mut p = upper_end;
    loop {
        if s.class_at(p) & LOWERISH != 0 {
            return Some(s.run_end(p, LOWERISH));
        }
        if p == start {
            return None;
        }
        p = s.prev(p);
    }
}

#[cfg(test)]
mod tests {
    /// Runs of every mix of the six ASCII spaces, then every byte value, at lengths up to 20,
    /// against a byte scan.
    #[test]
    fn ascii_space_runs_match_a_byte_scan() {
        let spaces = [b' ', b'\t', b'\n', 0x0b, 0x0c, b'\r'];
        for len in 0..20usize {
            for other in 0..=255u8 {
                for seed in 0..3usize {
                    let mut bytes: Vec<u8> = (0..len).map(|k| spaces[(k * 7 + seed * 5 + k / 3) % 6]).collect();
                    bytes.push(other);
                    bytes.extend_from_slice(b" \n\tabcdefghijklmnop");
                    let (mut end, mut after) = (0, None);
                    while end < bytes.len() && bytes[end].is_ascii_whitespace() || bytes.get(end) == Some(&0x0b) {
                        end += 1;
                        if matches!(bytes[end - 1], b'\n' | b'\r') {
                            after = Some(end);
                        }
                    }
                    let (fast, fast_after) = super::ascii_space_run(&bytes, 0);
                    // It may stop early only where fewer than eight bytes remain, having seen
                    // the run's newlines up to there.
                    let last_newline_before =
                        |to: usize| bytes[..to].iter().rposition(|b| matches!(b, b'\n' | b'\r')).map(|p| p + 1);
                    if fast == end {
                        assert_eq!(fast_after, after, "len {len}, byte {other}, seed {seed}");
                    } else {
                        assert!(fast < end && fast + 8 > bytes.len(), "len {len}, byte {other}, seed {seed}");
                        assert_eq!(fast_after, last_newline_before(fast));
                    }
                }
            }
        }
    }

    /// Runs of `fill` bytes of every length up to 20 from `starts`, then every byte value:
    /// `check(bytes, start, fast end, byte-scan end)` for each, the scan counting `member` bytes.
    fn byte_runs(
        starts: std::ops::Range<usize>,
        fill: impl Fn(usize) -> u8,
        member: impl Fn(u8) -> bool,
        fast: impl Fn(&[u8], usize) -> usize,
        check: impl Fn(&[u8], usize, usize, usize),
    ) {
        for start in starts {
            for len in 0..20 {
                for other in 0..=255u8 {
                    let mut bytes = b"..".to_vec();
                    bytes.extend((0..len).map(&fill));
                    bytes.push(other);
                    bytes.extend_from_slice(b"abcdefghijklmnop");
                    let mut scan = start;
                    while scan < bytes.len() && member(bytes[scan]) {
                        scan += 1;
                    }
                    check(&bytes, start, fast(&bytes, start), scan);
                }
            }
        }
    }

    /// Every byte value after lowercase runs of every length up to 20, at two alignments.
    #[test]
    fn ascii_lowercase_runs_end_where_a_byte_scan_says() {
        let fill = |k: usize| b'z' - (k % 26) as u8;
        byte_runs(
            2..4,
            fill,
            |b| b.is_ascii_lowercase(),
            super::ascii_lower_end,
            |bytes, start, fast, scan| {
                assert_eq!(fast, scan, "start {start}, bytes {bytes:?}");
            },
        );
    }

    /// Every byte value after runs of every length up to 20, at every alignment.
    #[test]
    fn ascii_letter_runs_end_where_a_byte_scan_says() {
        let fill = |k: usize| if k % 3 == 0 { b'Q' } else { b'z' - (k % 26) as u8 };
        byte_runs(
            0..3,
            fill,
            |b| b.is_ascii_alphabetic(),
            super::ascii_letters_end,
            |bytes, start, fast, scan| {
                // It may stop early only where fewer than eight bytes remain.
                assert!(
                    fast == scan || (fast < scan && fast + 8 > bytes.len()),
                    "start {start}, bytes {bytes:?}: {fast} vs {scan}"
                );
            },
        );
    }
}
