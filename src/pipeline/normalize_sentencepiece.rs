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
        plain_ascii[b' ' as usize] = false;
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
        SentencePieceNormalizer { spec, rules, keep, plain_ascii }
    }

    pub fn spec(&self) -> &SentencePieceNormalizerSpec {
        &self.spec
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
    pub fn apply_aligned(&self, text: &str) -> (String, Alignment) {
        let mut align = Vec::with_capacity(text.len() + 4);
        let out = self.normalize(text, Some(&mut align));
        (out, align)
    }

    pub fn apply(&self, text: &str) -> String {
        self.normalize(text, None)
    }

    /// The work of both: `align`, when given, gets each output byte's source range.
    fn normalize(&self, text: &str, mut align: Option<&mut Alignment>) -> String {
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
        // A byte is copied as it is when it is a plain ASCII byte followed by ASCII (or the end).
        let plain = |at: usize| {
            let b = bytes[at];
            b.is_ascii() && self.plain_ascii[b as usize] && bytes.get(at + 1).is_none_or(u8::is_ascii)
        };
        while pos < text.len() {
            if align.is_none() && plain(pos) {
                let mut end = pos + 1;
                while end < bytes.len() && plain(end) {
                    end += 1;
                }
                out.push_str(&text[pos..end]);
                pos = end;
                after_space = false;
                continue;
            }
            let (piece, used) = self.normalize_prefix(&text[pos..]);
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
            out.push_str(space);
            mark(&mut align, (text.len() as u32, text.len() as u32), space.len());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalizer(rules: &[(&str, &str)], dummy: bool, extra: bool) -> SentencePieceNormalizer {
        SentencePieceNormalizer::new(SentencePieceNormalizerSpec {
            rules: rules.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
            keep: Vec::new(),
            add_dummy_prefix: dummy,
            remove_extra_whitespaces: extra,
            escape_whitespaces: true,
            treat_whitespace_as_suffix: false,
            precompiled_charsmap: None,
        })
    }

    #[test]
    fn whitespace_rules() {
        let n = normalizer(&[], true, true);
        assert_eq!(n.apply("  hello   world  "), "▁hello▁world");
        assert_eq!(n.apply("   "), "");
        let n = normalizer(&[], false, false);
        assert_eq!(n.apply(" a  b "), "▁a▁▁b▁");
    }

    #[test]
    fn rules_match_longest_first_and_align_to_their_source() {
        let n = normalizer(&[("Ａ", "A"), ("ｶﾞ", "ガ"), ("ｶ", "カ"), ("\u{3000}", " ")], true, true);
        let (text, align) = n.apply_aligned("ｶﾞＡ\u{3000}\u{3000}x");
        assert_eq!(text, "▁ガA▁x");
        assert_eq!(align.len(), text.len());
        assert_eq!(align[0], (0, 0), "the dummy prefix covers nothing");
        assert_eq!(align[3], (0, 6), "ガ comes from the two half-width characters");
        assert_eq!(align[6], (6, 9));
    }
}
