//! SentencePiece's normalizer: a table of rewrite rules applied by longest match (the
//! "precompiled character map" of `nmt_nfkc` and friends, read from the `.model` file), then
//! its whitespace rules: leading, trailing and repeated spaces dropped, a `▁` put in front of
//! the text (the dummy prefix), and every space written as `▁`.
//!
//! The rules come from one of two places: a list of (source, replacement) pairs, or the
//! `.model` file's precompiled character map used as it is (`precompiled_charsmap`); both are
//! applied by longest match at each position.
//!
//! It keeps where each output byte came from, so offsets reach the original text.

use crate::pipeline::decoder::METASPACE;
use crate::pipeline::normalize::Alignment;
use crate::pipeline::precompiled_charsmap::{self, PrecompiledCharsmap};
use crate::util::trie::CharTrie;
use serde::{Deserialize, Serialize};

/// The settings of a SentencePiece normalizer as files store them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentencePieceNormalizerSpec {
    /// (source, replacement) rules, matched longest first at each position.
    pub rules: Vec<(String, String)>,
    /// Text matched here is copied unchanged (user-defined pieces: never normalized).
    #[serde(default)]
    pub keep: Vec<String>,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    #[serde(default)]
    pub treat_whitespace_as_suffix: bool,
    /// SentencePiece's own rule table (format version 4), kept as the `.model` file had it
    /// rather than expanded into `rules`; a spec has one or the other.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "precompiled_charsmap::base64_field")]
    pub precompiled_charsmap: Option<PrecompiledCharsmap>,
    /// A `tokenizer.json`'s `▁` prefix, in place of the dummy prefix: its `Metaspace`
    /// pre-tokenizer's, before a text that does not start with `▁` — every stretch between special
    /// tokens (`Always`) or only one at the start of the text (`First`) —, or its `Prepend("▁")`
    /// normalizer's, before every stretch (`Prepend`). As Hugging Face's, the prefix takes the
    /// offsets of the character it goes before.
    #[serde(default, skip_serializing_if = "MetaspacePrefix::is_none")]
    pub metaspace_prefix: MetaspacePrefix,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetaspacePrefix {
    #[default]
    None,
    Always,
    First,
    Prepend,
}

impl MetaspacePrefix {
    fn is_none(&self) -> bool {
        *self == MetaspacePrefix::None
    }
}

/// A `Metaspace` pre-tokenizer's part of a normalizer: spaces become `▁` and a `▁` goes in front
/// of a stretch of text (`Always`: any that lacks one; `First`: only one that starts the input).
/// Hugging Face runs it after `normalized: true` added tokens are matched, on each stretch between
/// them; `Normalizer::metaspace_stretches` splits it off for that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaspaceStretch {
    pub prefix: MetaspacePrefix,
}

impl MetaspaceStretch {
    /// `stretch` (text normalized without the whitespace part) with its spaces as `▁` and the
    /// prefix, and each output byte's source in `stretch` when `align` is given (the prefix
    /// stands for the first character, as Hugging Face aligns it). `starts_input`: the stretch
    /// begins the input.
    pub fn apply(&self, stretch: &str, starts_input: bool, mut align: Option<&mut Vec<usize>>) -> String {
        let mut out = String::with_capacity(stretch.len() + 8);
        let prefix = match self.prefix {
            MetaspacePrefix::Always => !stretch.starts_with(' ') && !stretch.starts_with(METASPACE),
            MetaspacePrefix::First => starts_input && !stretch.starts_with(' ') && !stretch.starts_with(METASPACE),
            MetaspacePrefix::None | MetaspacePrefix::Prepend => false,
        };
        if prefix && !stretch.is_empty() {
            out.push_str(METASPACE);
            if let Some(a) = align.as_deref_mut() {
                a.extend(std::iter::repeat_n(0, METASPACE.len()));
            }
        }
        for (i, c) in stretch.char_indices() {
            let piece = if c == ' ' { METASPACE } else { &stretch[i..i + c.len_utf8()] };
            out.push_str(piece);
            if let Some(a) = align.as_deref_mut() {
                a.extend(std::iter::repeat_n(i, piece.len()));
            }
        }
        out
    }
}

impl SentencePieceNormalizerSpec {
    /// The normalizer spec step `sentencepiece` stands for: SentencePiece's whitespace handling
    /// with its defaults, tabs and line breaks counted as spaces, no other rules.
    pub fn basic() -> Self {
        SentencePieceNormalizerSpec {
            rules: ["\t", "\n", "\r"].iter().map(|c| (c.to_string(), " ".to_string())).collect(),
            keep: Vec::new(),
            add_dummy_prefix: true,
            remove_extra_whitespaces: true,
            escape_whitespaces: true,
            treat_whitespace_as_suffix: false,
            precompiled_charsmap: None,
            metaspace_prefix: MetaspacePrefix::None,
        }
    }

    pub fn is_basic(&self) -> bool {
        *self == Self::basic()
    }
}

#[derive(Debug, Clone)]
pub struct SentencePieceNormalizer {
    spec: SentencePieceNormalizerSpec,
    rules: CharTrie,
    keep: CharTrie,
    /// ASCII bytes that no rule or kept text matches when an ASCII byte (or the end) follows —
    /// rules that start with an ASCII letter go on with a combining mark — and are not a space:
    /// runs of them are copied as they are (most of English and code).
    plain_ascii: [bool; 128],
    /// No rule or map entry starts with a space followed by ASCII.
    plain_space: bool,
    /// The characters past ASCII that runs are copied through as well.
    wide: WideCopy,
}

/// Which characters of the Basic Multilingual Plane the rules leave alone where they stand, so
/// that runs of them (most of a Cyrillic, Greek or CJK text) are copied without a look-up per
/// character: one bit per code point in each set. A character outside it is always looked up.
#[derive(Debug, Clone)]
struct WideCopy {
    /// Some key starts with the character (past ASCII).
    starts: Vec<u64>,
    /// The character alone is a key, or starts one this table cannot follow: always looked up.
    alone: Vec<u64>,
    /// Some key has the character right after its first one (ASCII included).
    second: Vec<u64>,
    /// Per ASCII byte: every key that starts with it and goes on past ASCII has its second
    /// character in `second` (else the byte is not copied when a wide character follows).
    ascii_followed: [bool; 128],
}

impl WideCopy {
    const BITS: usize = 0x1_0000;

    fn has(set: &[u64], c: u32) -> bool {
        set[(c >> 6) as usize] >> (c & 63) & 1 == 1
    }

    fn set(set: &mut [u64], c: char) {
        let c = c as usize;
        if c < Self::BITS {
            set[c >> 6] |= 1 << (c & 63);
        }
    }

    fn new(map: Option<&PrecompiledCharsmap>, keys: &[&str]) -> Self {
        let words = Self::BITS / 64;
        let mut wide = WideCopy {
            starts: vec![0; words],
            alone: vec![0; words],
            second: vec![0; words],
            ascii_followed: [true; 128],
        };
        let mark = |wide: &mut WideCopy, c: char, alone: bool, after: &mut dyn Iterator<Item = char>| {
            if c.is_ascii() {
                wide.ascii_followed[c as usize] &= !alone;
            } else {
                Self::set(&mut wide.starts, c);
                if alone {
                    Self::set(&mut wide.alone, c);
                }
            }
            for d in after {
                Self::set(&mut wide.second, d);
                if d as usize >= Self::BITS {
                    // A follower past the plane: the start is always looked up.
                    if c.is_ascii() {
                        wide.ascii_followed[c as usize] = false;
                    } else {
                        Self::set(&mut wide.alone, c);
                    }
                }
            }
        };
        for key in keys {
            let mut chars = key.chars();
            if let Some(c) = chars.next() {
                let second = chars.next();
                mark(&mut wide, c, second.is_none(), &mut second.into_iter());
            }
        }
        if let Some(map) = map {
            let mut after = Vec::new();
            for c in (0..Self::BITS as u32).filter_map(char::from_u32) {
                after.clear();
                match map.keys_after(c, &mut after) {
                    Some(false) => {}
                    Some(true) => mark(&mut wide, c, false, &mut after.drain(..)),
                    None => mark(&mut wide, c, true, &mut std::iter::empty()),
                }
            }
        }
        wide
    }

    /// The character starting `bytes` if it lies in the plane (and its length).
    #[inline(always)]
    fn decode(bytes: &[u8]) -> Option<(u32, usize)> {
        match *bytes {
            [b0 @ 0..=0x7F, ..] => Some((b0 as u32, 1)),
            [b0 @ 0xC0..=0xDF, b1, ..] => Some(((b0 as u32 & 0x1F) << 6 | (b1 as u32 & 0x3F), 2)),
            [b0 @ 0xE0..=0xEF, b1, b2, ..] => {
                Some(((b0 as u32 & 0x0F) << 12 | (b1 as u32 & 0x3F) << 6 | (b2 as u32 & 0x3F), 3))
            }
            _ => None,
        }
    }

    /// Whether the character starting `rest` (if any) may follow a key's first character.
    #[inline(always)]
    fn may_continue(&self, rest: &[u8]) -> bool {
        match Self::decode(rest) {
            Some((c, _)) => Self::has(&self.second, c),
            None => !rest.is_empty(),
        }
    }
}

impl PartialEq for SentencePieceNormalizer {
    fn eq(&self, other: &Self) -> bool {
        self.spec == other.spec
    }
}

impl SentencePieceNormalizer {
    pub fn new(spec: SentencePieceNormalizerSpec) -> Self {
        let rules = CharTrie::new(spec.rules.iter().enumerate().map(|(i, (from, _))| (from.as_str(), i as u32)));
        let keep = CharTrie::new(spec.keep.iter().enumerate().map(|(i, k)| (k.as_str(), i as u32)));
        let mut plain_ascii = [true; 128];
        if let Some(map) = &spec.precompiled_charsmap {
            for (plain, starts) in plain_ascii.iter_mut().zip(map.ascii_key_starts()) {
                *plain &= !starts;
            }
        }
        for key in spec.rules.iter().map(|r| r.0.as_bytes()).chain(spec.keep.iter().map(|k| k.as_bytes())) {
            if let Some(&b) = key.first().filter(|b| b.is_ascii()) {
                if key.get(1).is_none_or(u8::is_ascii) {
                    plain_ascii[b as usize] = false;
                }
            }
        }
        // A space no rule rewrites is still not copied as it is (it may be escaped or dropped),
        // but needs no look-up in the rules.
        let plain_space = plain_ascii[b' ' as usize];
        plain_ascii[b' ' as usize] = false;
        // The keys normalize_prefix looks at: kept text, then the map or else the rules.
        let mut keys: Vec<&str> = spec.keep.iter().map(String::as_str).collect();
        if spec.precompiled_charsmap.is_none() {
            keys.extend(spec.rules.iter().map(|r| r.0.as_str()));
        }
        let wide = WideCopy::new(spec.precompiled_charsmap.as_ref(), &keys);
        SentencePieceNormalizer { spec, rules, keep, plain_ascii, plain_space, wide }
    }

    /// This normalizer split in two where it is a `Metaspace` pre-tokenizer's (spaces escaped, an
    /// `Always`/`First` prefix or none, nothing that looks across spaces): the text part (escaping
    /// and prefix off) and the stretch part; `None` for other whitespace handling.
    pub fn metaspace_stretches(&self) -> Option<(SentencePieceNormalizer, MetaspaceStretch)> {
        let spec = &self.spec;
        let per_stretch = spec.metaspace_prefix != MetaspacePrefix::Prepend
            && spec.escape_whitespaces
            && !spec.remove_extra_whitespaces
            && !spec.add_dummy_prefix
            && !spec.treat_whitespace_as_suffix;
        if !per_stretch {
            return None;
        }
        let text = SentencePieceNormalizerSpec {
            escape_whitespaces: false,
            metaspace_prefix: MetaspacePrefix::None,
            ..spec.clone()
        };
        Some((SentencePieceNormalizer::new(text), MetaspaceStretch { prefix: spec.metaspace_prefix }))
    }

    pub fn spec(&self) -> &SentencePieceNormalizerSpec {
        &self.spec
    }

    /// Where SentencePiece puts the end of normalized `text` in it, when the output (before
    /// its trailing spaces are trimmed) ends with what `text[..read]` gives (`None`: nothing
    /// kept). It counts all the input read, removed characters included — but trimming the
    /// output's trailing space moves the end back to where that space came from: the first
    /// stretch after `read` that the rules turn into a space (or `▁`), or with nothing kept the dummy
    /// prefix, placed after the leading spaces it skipped.
    ///
    /// `"a\x7f"` ends at 2 (the control character removed is read), `"a \x1f"` at 1.
    pub fn end_in(&self, text: &str, read: Option<usize>) -> usize {
        if !self.spec.remove_extra_whitespaces {
            return text.len();
        }
        let stretches = |from: usize| {
            let mut at = from;
            std::iter::from_fn(move || {
                (at < text.len()).then(|| {
                    let (piece, used) = self.normalize_prefix(&text[at..]);
                    at += used.max(1);
                    (at - used.max(1), piece)
                })
            })
        };
        match read {
            // The output's trailing `▁` is trimmed whatever wrote it: a space or `▁` itself.
            Some(read) => stretches(read)
                .find(|(_, piece)| {
                    piece.starts_with(' ') || self.spec.escape_whitespaces && piece.starts_with(METASPACE)
                })
                .map_or(text.len(), |(at, _)| at),
            None => {
                // Only spaces: SentencePiece stops before placing anything (its offsets say 0).
                let Some((lead, _)) = stretches(0).find(|(_, piece)| *piece != " ") else { return 0 };
                let dummy = self.spec.add_dummy_prefix && !self.spec.treat_whitespace_as_suffix;
                if dummy {
                    lead
                } else {
                    text.len()
                }
            }
        }
    }

    /// What the rules make of the start of `text`: (replacement, bytes consumed).
    fn normalize_prefix<'a>(&'a self, text: &'a str) -> (&'a str, usize) {
        if !self.keep.is_empty() {
            if let Some((len, _)) = self.keep.longest_prefix(text) {
                return (&text[..len], len);
            }
        }
        if let Some(map) = &self.spec.precompiled_charsmap {
            if let Some((len, replacement)) = map.longest_match(text) {
                return (replacement, len);
            }
        } else if let Some((len, rule)) = self.rules.longest_prefix(text) {
            return (&self.spec.rules[rule as usize].1, len);
        }
        let len = text.chars().next().map_or(0, char::len_utf8);
        (&text[..len], len)
    }

    /// The normalized text and, for each of its bytes, the byte range of `text` it came from.
    /// `at_start`: the text starts the input (it is not a stretch after a special token).
    pub fn apply_aligned(&self, text: &str, at_start: bool) -> (String, Alignment) {
        let mut align = Vec::with_capacity(text.len() + 4);
        let out = self.normalize(text, Some(&mut align), at_start);
        (out, align)
    }

    pub fn apply(&self, text: &str, at_start: bool) -> String {
        self.normalize(text, None, at_start)
    }

    /// The work of both: `align`, when given, gets each output byte's source range.
    fn normalize(&self, text: &str, mut align: Option<&mut Alignment>, at_start: bool) -> String {
        let mut out = self.normalize_text(text, align.as_deref_mut());
        let prefix = match self.spec.metaspace_prefix {
            MetaspacePrefix::None => false,
            MetaspacePrefix::Prepend => true,
            MetaspacePrefix::Always => !out.starts_with(METASPACE),
            MetaspacePrefix::First => at_start && !out.starts_with(METASPACE),
        };
        if prefix && !out.is_empty() {
            out.insert_str(0, METASPACE);
            if let Some(a) = align {
                let first = a.first().copied().unwrap_or((0, 0));
                a.splice(0..0, std::iter::repeat_n(first, METASPACE.len()));
            }
        }
        out
    }

    fn normalize_text(&self, text: &str, mut align: Option<&mut Alignment>) -> String {
        let spec = &self.spec;
        let space = if spec.escape_whitespaces { METASPACE } else { " " };
        let mut out = String::with_capacity(text.len() + 4);
        let mark = |align: &mut Option<&mut Alignment>, source: (u32, u32), n: usize| {
            if let Some(a) = align.as_deref_mut() {
                a.extend(std::iter::repeat_n(source, n));
            }
        };
        let mut pos = 0;
        if spec.remove_extra_whitespaces {
            while pos < text.len() {
                let (piece, used) = self.normalize_prefix(&text[pos..]);
                if piece != " " {
                    break;
                }
                pos += used;
            }
        }
        if pos == text.len() {
            return out;
        }
        if spec.add_dummy_prefix && !spec.treat_whitespace_as_suffix {
            out.push_str(space);
            mark(&mut align, (pos as u32, pos as u32), space.len());
        }
        let mut after_space = spec.remove_extra_whitespaces;
        let bytes = text.as_bytes();
        // A character is copied as it is when no key can match where it stands: a plain ASCII
        // byte followed by ASCII (or the end, or a character no key has second), or a wide
        // character that starts no key, or starts only keys whose second character is not next.
        let wide = &self.wide;
        let plain_run_end = |from: usize| {
            let mut end = from;
            while end < bytes.len() {
                let b = bytes[end];
                if b < 0x80 {
                    let next = bytes.get(end + 1).copied().unwrap_or(0);
                    if !self.plain_ascii[b as usize]
                        || next >= 0x80 && (!wide.ascii_followed[b as usize] || wide.may_continue(&bytes[end + 1..]))
                    {
                        break;
                    }
                    end += 1;
                    continue;
                }
                let Some((c, len)) = WideCopy::decode(&bytes[end..]) else { break };
                if WideCopy::has(&wide.starts, c)
                    && (WideCopy::has(&wide.alone, c) || wide.may_continue(&bytes[end + len..]))
                {
                    break;
                }
                end += len;
            }
            end
        };
        while pos < text.len() {
            if align.is_none() {
                let end = plain_run_end(pos);
                if end > pos {
                    out.push_str(&text[pos..end]);
                    pos = end;
                    after_space = false;
                    continue;
                }
            }
            let (piece, used) = if self.plain_space && bytes[pos] == b' ' && bytes.get(pos + 1).is_none_or(u8::is_ascii)
            {
                (" ", 1)
            } else {
                self.normalize_prefix(&text[pos..])
            };
            let source = (pos as u32, (pos + used) as u32);
            let mut piece = piece;
            while after_space && piece.starts_with(' ') {
                piece = &piece[1..];
            }
            if !piece.is_empty() {
                if !piece.contains(' ') {
                    out.push_str(piece);
                    mark(&mut align, source, piece.len());
                } else {
                    for c in piece.chars() {
                        let spelled = if c == ' ' { space.len() } else { c.len_utf8() };
                        if c == ' ' {
                            out.push_str(space);
                        } else {
                            out.push(c);
                        }
                        mark(&mut align, source, spelled);
                    }
                }
                after_space = piece.ends_with(' ');
            }
            pos += used;
            if !spec.remove_extra_whitespaces {
                after_space = false;
            }
        }
        if spec.remove_extra_whitespaces {
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
                if let Some(a) = align.as_deref_mut() {
                    a.truncate(out.len());
                }
            }
        }
        if spec.add_dummy_prefix && spec.treat_whitespace_as_suffix {
            // Placed where SentencePiece's reading of the text ends (trailing spaces trimmed).
            let end = match align.as_deref() {
                Some(a) => self.end_in(text, a.last().map(|r| r.1 as usize)),
                None => text.len(),
            } as u32;
            out.push_str(space);
            mark(&mut align, (end, end), space.len());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metaspace_stretch_escapes_spaces_and_puts_its_prefix_where_the_scheme_says() {
        let (always, first, never) = (
            MetaspaceStretch { prefix: MetaspacePrefix::Always },
            MetaspaceStretch { prefix: MetaspacePrefix::First },
            MetaspaceStretch { prefix: MetaspacePrefix::None },
        );
        let mut from = Vec::new();
        assert_eq!(always.apply("a b", false, Some(&mut from)), "▁a▁b");
        // The prefix stands for the first character; each `▁` for the space it replaces.
        assert_eq!(from, [0, 0, 0, 0, 1, 1, 1, 2]);
        assert_eq!(always.apply(" a", true, None), "▁a");
        assert_eq!(first.apply("a b", false, None), "a▁b");
        assert_eq!(first.apply("a b", true, None), "▁a▁b");
        assert_eq!(never.apply("a b", true, None), "a▁b");
        assert_eq!(always.apply("", true, None), "");
    }

    fn normalizer(rules: &[(&str, &str)], dummy: bool, extra: bool) -> SentencePieceNormalizer {
        SentencePieceNormalizer::new(SentencePieceNormalizerSpec {
            rules: rules.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
            keep: Vec::new(),
            add_dummy_prefix: dummy,
            remove_extra_whitespaces: extra,
            escape_whitespaces: true,
            treat_whitespace_as_suffix: false,
            precompiled_charsmap: None,
            metaspace_prefix: MetaspacePrefix::None,
        })
    }

    #[test]
    fn whitespace_rules() {
        let n = normalizer(&[], true, true);
        assert_eq!(n.apply("  hello   world  ", true), "▁hello▁world");
        assert_eq!(n.apply("   ", true), "");
        let n = normalizer(&[], false, false);
        assert_eq!(n.apply(" a  b ", true), "▁a▁▁b▁");
    }

    #[test]
    fn rules_match_longest_first_and_align_to_their_source() {
        let n = normalizer(&[("Ａ", "A"), ("ｶﾞ", "ガ"), ("ｶ", "カ"), ("\u{3000}", " ")], true, true);
        let (text, align) = n.apply_aligned("ｶﾞＡ\u{3000}\u{3000}x", true);
        assert_eq!(text, "▁ガA▁x");
        assert_eq!(align.len(), text.len());
        assert_eq!(align[0], (0, 0), "the dummy prefix covers nothing");
        assert_eq!(align[3], (0, 6), "ガ comes from the two half-width characters");
        assert_eq!(align[6], (6, 9));
    }

    /// Runs copied without a look-up (only when no alignment is asked for) give the text the
    /// look-up of every character gives, around keys that start or go on with wide characters.
    #[test]
    fn copied_runs_agree_with_looking_up_every_character() {
        let rules = [("е\u{308}", "ё"), ("ｶﾞ", "ガ"), ("ｶ", "カ"), ("a\u{301}", "á"), ("й", "и"), ("x😀", "X")];
        let alphabet = ['е', '\u{308}', 'ｶ', 'ﾞ', 'a', '\u{301}', 'й', 'x', ' ', '日', '😀', 'b'];
        let n = normalizer(&rules, true, true);
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..3000 {
            let text: String = (0..state % 9)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            assert_eq!(n.apply(&text, true), n.apply_aligned(&text, true).0, "{text:?}");
        }
    }

    #[test]
    fn a_metaspace_prefix_goes_before_text_that_lacks_one() {
        let spec = |prefix| SentencePieceNormalizerSpec {
            add_dummy_prefix: false,
            remove_extra_whitespaces: false,
            metaspace_prefix: prefix,
            ..normalizer(&[], false, false).spec
        };
        let always = SentencePieceNormalizer::new(spec(MetaspacePrefix::Always));
        assert_eq!(always.apply("a b", false), "▁a▁b");
        assert_eq!(always.apply(" a", true), "▁a", "a leading space is the prefix already");
        assert_eq!(always.apply("", true), "");
        let first = SentencePieceNormalizer::new(spec(MetaspacePrefix::First));
        assert_eq!(first.apply("a", true), "▁a");
        assert_eq!(first.apply("a", false), "a", "only the stretch that starts the text");
        let (text, align) = first.apply_aligned("hi", true);
        assert_eq!((text.as_str(), align[0], align[3]), ("▁hi", (0, 1), (0, 1)), "the prefix takes h's offsets");
        let prepend = SentencePieceNormalizer::new(spec(MetaspacePrefix::Prepend));
        assert_eq!(prepend.apply("▁a", false), "▁▁a");
    }
}
