//! Hugging Face's normalizers, run as `tokenizers` runs them, spelled `hf:` and the
//! normalizer's JSON: `NFC`, `NFD`, `NFKC`, `NFKD`, `Lowercase`, `Strip`, `StripAccents`,
//! `Replace` (a string or a regex), `Prepend`, `ByteLevel`, `Precompiled` (SentencePiece's
//! character map, applied a grapheme cluster at a time as `tokenizers` applies it) and
//! `Sequence`s of them. The text is
//! kept as characters, each with the byte range of the original text it came from, and every
//! step hands those ranges on, so offsets come out as `tokenizers` computes them. A component
//! tokenmill cannot run exactly is an error naming it.

use super::normalize::{unicode_form_aligned, Alignment, Step};
use super::pretokenize::user_regex::Engine;
use crate::error::{Error, Result};
use crate::io::huggingface::byte_level_spelling;
use crate::pipeline::precompiled_charsmap::PrecompiledCharsmap;
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug, Clone)]
enum Norm {
    Form(Step),
    Lowercase,
    Strip {
        left: bool,
        right: bool,
    },
    StripAccents,
    Replace {
        pattern: Pattern,
        content: String,
    },
    Prepend(String),
    ByteLevel,
    Precompiled(PrecompiledCharsmap),
    MetaspaceWords,
    /// A space before text that does not start with one (`ByteLevel`'s `add_prefix_space`).
    SpaceBefore,
    /// BERT's normalizer, run by tokenmill's own steps (clean text, CJK spaces, marks, lowercase).
    Steps(Box<super::normalize::Normalizer>),
    /// SentencePiece's NMT rules without NFKC: control characters removed, other spaces a space.
    Nmt,
}

#[derive(Debug, Clone)]
enum Pattern {
    Literal(String),
    Regex { source: String, engine: Arc<Engine> },
}

/// A sequence of Hugging Face normalizers.
#[derive(Debug, Clone)]
pub struct HfNormalizer {
    steps: Vec<Norm>,
    json: String,
}

impl PartialEq for HfNormalizer {
    fn eq(&self, other: &Self) -> bool {
        self.json == other.json
    }
}

/// Characters of the text being normalized, each with the original byte range it came from.
type Chars = Vec<(char, u32, u32)>;

impl HfNormalizer {
    /// Reads a normalizer's JSON as `tokenizer.json` holds it.
    ///
    /// ```
    /// use tokenmill::pipeline::normalize_huggingface::HfNormalizer;
    /// let n = HfNormalizer::from_json(r#"{"type":"Sequence","normalizers":[{"type":"Strip","strip_left":true,"strip_right":true},{"type":"Lowercase"}]}"#).unwrap();
    /// assert_eq!(n.apply("  Hello "), "hello");
    /// ```
    pub fn from_json(json: &str) -> Result<Self> {
        let node: Value = serde_json::from_str(json)
            .map_err(|e| Error::config(format!("a Hugging Face normalizer is a JSON object: {e}")))?;
        let mut steps = Vec::new();
        read_node(&node, &mut steps, 0)?;
        Ok(HfNormalizer { steps, json: serde_json::to_string(&node).expect("a JSON value serializes") })
    }

    pub fn json(&self) -> &str {
        &self.json
    }

    pub fn apply(&self, text: &str) -> String {
        self.run(text).into_iter().map(|(c, _, _)| c).collect()
    }

    /// `apply`, and for each byte of the result the byte range of `text` it came from.
    pub fn apply_aligned(&self, text: &str) -> (String, Alignment) {
        let chars = self.run(text);
        let mut out = String::with_capacity(text.len());
        let mut align = Vec::with_capacity(text.len());
        for (c, s, e) in chars {
            out.push(c);
            align.extend(std::iter::repeat_n((s, e), c.len_utf8()));
        }
        (out, align)
    }

    fn run(&self, text: &str) -> Chars {
        let mut chars: Chars = text.char_indices().map(|(i, c)| (c, i as u32, (i + c.len_utf8()) as u32)).collect();
        for step in &self.steps {
            chars = apply_step(step, chars);
        }
        chars
    }
}

/// The characters of `out`, which `align` maps byte by byte onto the text of `chars`, each with
/// the original range of the characters it came from.
fn realign(chars: &Chars, out: &str, align: &Alignment) -> Chars {
    // Byte offsets of the text → the characters they belong to.
    let mut char_at = Vec::with_capacity(out.len() + 1);
    for (k, (c, _, _)) in chars.iter().enumerate() {
        char_at.extend(std::iter::repeat_n(k, c.len_utf8()));
    }
    let mut result = Vec::with_capacity(out.len());
    for (i, c) in out.char_indices() {
        let (s, e) = align[i];
        let range = if s < e {
            (chars[char_at[s as usize]].1, chars[char_at[e as usize - 1]].2)
        } else {
            let at = char_at.get(s as usize).map_or_else(|| chars.last().map_or(0, |c| c.2), |&k| chars[k].1);
            (at, at)
        };
        result.push((c, range.0, range.1));
    }
    result
}

fn apply_step(step: &Norm, chars: Chars) -> Chars {
    match step {
        Norm::Form(form) => {
            let text: String = chars.iter().map(|c| c.0).collect();
            let Some((out, align)) = unicode_form_aligned(&text, *form) else {
                // Not expected (the aligned form is computed for every text); the whole text
                // then maps to the whole source, which keeps offsets valid.
                let whole = (chars.first().map_or(0, |c| c.1), chars.last().map_or(0, |c| c.2));
                let text: String = chars.iter().map(|c| c.0).collect();
                let out = normalize_form(&text, *form);
                return out.chars().map(|c| (c, whole.0, whole.1)).collect();
            };
            realign(&chars, &out, &align)
        }
        Norm::Nmt => chars
            .into_iter()
            .filter(|&(c, _, _)| !matches!(c as u32, 0x01..=0x08 | 0x0B | 0x0E..=0x1F | 0x7F | 0x8F | 0x9F))
            .map(|(c, s, e)| match c as u32 {
                0x09 | 0x0A | 0x0C | 0x0D | 0x1680 | 0x200B..=0x200F | 0x2028 | 0x2029 | 0x2581 | 0xFEFF | 0xFFFD => {
                    (' ', s, e)
                }
                _ => (c, s, e),
            })
            .collect(),
        Norm::Steps(normalizer) => {
            let text: String = chars.iter().map(|c| c.0).collect();
            match normalizer.apply_aligned(&text) {
                (out, Some(align)) => realign(&chars, &out, &align),
                _ => chars, // unchanged
            }
        }
        Norm::Lowercase => chars.into_iter().flat_map(|(c, s, e)| c.to_lowercase().map(move |l| (l, s, e))).collect(),
        Norm::Strip { left, right } => {
            let start = if *left { chars.iter().position(|c| !c.0.is_whitespace()).unwrap_or(chars.len()) } else { 0 };
            let end = if *right {
                chars.iter().rposition(|c| !c.0.is_whitespace()).map_or(start, |k| k + 1)
            } else {
                chars.len()
            };
            chars[start..end.max(start)].to_vec()
        }
        Norm::StripAccents => chars.into_iter().filter(|c| !crate::util::hf_marks::is_hf_combining_mark(c.0)).collect(),
        Norm::Prepend(prefix) => {
            let Some(&(_, s, e)) = chars.first() else {
                return chars;
            };
            prefix.chars().map(|c| (c, s, e)).chain(chars).collect()
        }
        Norm::ByteLevel => {
            let mut out = Vec::with_capacity(chars.len() * 2);
            let mut buf = [0u8; 4];
            for (c, s, e) in chars {
                for b in byte_level_spelling(c.encode_utf8(&mut buf).as_bytes()).chars() {
                    out.push((b, s, e));
                }
            }
            out
        }
        Norm::Replace { pattern, content } => replace(chars, pattern, content),
        Norm::Precompiled(map) => precompiled(chars, map),
        Norm::SpaceBefore => {
            // The space takes the first character's range, as Hugging Face's prepend does.
            let Some(&(_, s, e)) = chars.first().filter(|first| first.0 != ' ') else {
                return chars;
            };
            std::iter::once((' ', s, e)).chain(chars).collect()
        }
        Norm::MetaspaceWords => {
            // Each run of non-whitespace is a word, whitespace goes, and a ▁ (taking the word's
            // first character's range, as Hugging Face's prepend does) goes before each word
            // that does not start with one.
            let mut out = Vec::with_capacity(chars.len() + 8);
            let mut i = 0;
            while i < chars.len() {
                if chars[i].0.is_whitespace() {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < chars.len() && !chars[i].0.is_whitespace() {
                    i += 1;
                }
                if chars[start].0 != '\u{2581}' {
                    out.push(('\u{2581}', chars[start].1, chars[start].2));
                }
                out.extend_from_slice(&chars[start..i]);
            }
            out
        }
    }
}

/// `tokenizers`' `Precompiled`: each grapheme cluster under 6 bytes that the map has a key at
/// the start of is replaced whole by the shortest such key's replacement (a mark after the key
/// goes with it); other clusters are mapped character by character. (SentencePiece maps by
/// longest match instead; the two agree on nearly all text.)
///
/// Offsets follow `tokenizers`' bookkeeping, quirks included: each written character either
/// takes the next source character's range (and may skip some after it) or, when a replacement
/// is longer than what it replaces, the previous one's; a deletion is booked on the character
/// written last (so an insertion just before it takes the deleted character's range), and
/// one before anything is written is not booked at all (later characters then take ranges
/// that many places early).
fn precompiled(chars: Chars, map: &PrecompiledCharsmap) -> Chars {
    use unicode_segmentation::UnicodeSegmentation;
    let text: String = chars.iter().map(|c| c.0).collect();
    // (character, change): 0 takes the next source character, 1 is inserted, -k also skips k.
    let mut written: Vec<(char, isize)> = Vec::with_capacity(chars.len());
    let replace = |written: &mut Vec<(char, isize)>, old: usize, new: &str| {
        let start = written.len();
        written.extend(new.chars().map(|c| (c, 0)));
        let diff = (written.len() - start) as isize - old as isize;
        if diff > 0 {
            for w in written.iter_mut().rev().take(diff as usize) {
                w.1 = 1;
            }
        } else if diff < 0 {
            if let Some(last) = written.last_mut() {
                last.1 += diff;
            }
        }
    };
    let mut buf = [0u8; 4];
    for cluster in text.graphemes(true) {
        if cluster.len() < 6 {
            if let Some(new) = map.shortest_match(cluster) {
                replace(&mut written, cluster.chars().count(), new);
                continue;
            }
        }
        for c in cluster.chars() {
            match map.shortest_match(c.encode_utf8(&mut buf)) {
                Some(new) => replace(&mut written, 1, new),
                None => written.push((c, 0)),
            }
        }
    }
    let range = |k: usize| chars.get(k).or(chars.last()).map_or((0, 0), |&(_, s, e)| (s, e));
    let mut next = 0; // the next source character
    written
        .into_iter()
        .map(|(c, change)| {
            let (s, e) = if change > 0 {
                if next == 0 {
                    (0, 0)
                } else {
                    range(next - 1)
                }
            } else {
                next += 1 + (-change) as usize;
                range(next - 1 - (-change) as usize)
            };
            (c, s, e)
        })
        .collect()
}

fn normalize_form(text: &str, form: Step) -> String {
    use unicode_normalization::UnicodeNormalization;
    match form {
        Step::Nfc => text.nfc().collect(),
        Step::Nfd => text.nfd().collect(),
        Step::Nfkc => text.nfkc().collect(),
        _ => text.nfkd().collect(),
    }
}

/// Each match of `pattern` replaced by `content`, left to right; the replacement's characters
/// come from the last matched character (an empty match: the empty range where it is).
fn replace(chars: Chars, pattern: &Pattern, content: &str) -> Chars {
    let text: String = chars.iter().map(|c| c.0).collect();
    let mut matches = Vec::new();
    match pattern {
        Pattern::Literal(lit) if lit.is_empty() => return chars,
        Pattern::Literal(lit) => matches.extend(text.match_indices(lit.as_str()).map(|(i, m)| (i, i + m.len()))),
        Pattern::Regex { source, engine } => {
            // The DFA engine (all this module compiles) cannot fail.
            let _ = engine.for_each_match(source, &text, |s, e| {
                matches.push((s, e));
                Ok(())
            });
        }
    }
    if matches.is_empty() {
        return chars;
    }
    let mut char_at = Vec::with_capacity(text.len() + 1);
    for (k, (c, _, _)) in chars.iter().enumerate() {
        char_at.extend(std::iter::repeat_n(k, c.len_utf8()));
    }
    let end_of_text = chars.last().map_or(0, |c| c.2);
    let mut out = Vec::with_capacity(chars.len());
    let mut next = 0; // the next character of `chars` not yet copied
    for (s, e) in matches {
        let (first, last) =
            (char_at.get(s).copied().unwrap_or(chars.len()), char_at.get(e).copied().unwrap_or(chars.len()));
        out.extend_from_slice(&chars[next..first]);
        // As `tokenizers` aligns them: every character of the replacement with the last
        // character matched.
        let range = if first < last {
            (chars[last - 1].1, chars[last - 1].2)
        } else {
            let at = chars.get(first).map_or(end_of_text, |c| c.1);
            (at, at)
        };
        out.extend(content.chars().map(|c| (c, range.0, range.1)));
        next = last;
    }
    out.extend_from_slice(&chars[next..]);
    out
}

fn read_node(node: &Value, steps: &mut Vec<Norm>, depth: usize) -> Result<()> {
    if depth > 32 {
        return Err(Error::config("normalizer Sequences nested more than 32 deep"));
    }
    let kind = node.get("type").and_then(Value::as_str).unwrap_or("");
    let flag = |name: &str, default: bool| node.get(name).and_then(Value::as_bool).unwrap_or(default);
    let text = |name: &str| -> Result<String> {
        node.get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| Error::config(format!("normalizer {kind}: {name} must be a string")))
    };
    steps.push(match kind {
        "Sequence" => {
            let children = node
                .get("normalizers")
                .and_then(Value::as_array)
                .ok_or_else(|| Error::config("normalizer Sequence without a list of normalizers"))?;
            for child in children {
                read_node(child, steps, depth + 1)?;
            }
            return Ok(());
        }
        "NFC" => Norm::Form(Step::Nfc),
        "NFD" => Norm::Form(Step::Nfd),
        "NFKC" => Norm::Form(Step::Nfkc),
        "NFKD" => Norm::Form(Step::Nfkd),
        "Lowercase" => Norm::Lowercase,
        "Nmt" => Norm::Nmt,
        "BertNormalizer" => {
            let lowercase = flag("lowercase", true);
            // Accents go with lowercasing unless strip_accents says otherwise, as in BERT.
            let strip = node.get("strip_accents").and_then(Value::as_bool).unwrap_or(lowercase);
            let named = [
                (flag("clean_text", true), "clean_text"),
                (flag("handle_chinese_chars", true), "cjk_spaces"),
                (strip, "strip_marks"),
                (lowercase, "lowercase_chars"),
            ];
            let spec: Vec<&str> = named.iter().filter(|(on, _)| *on).map(|(_, step)| *step).collect();
            let spec = if spec.is_empty() { "none".to_string() } else { spec.join("+") };
            Norm::Steps(Box::new(super::normalize::Normalizer::from_spec(&spec)?))
        }
        "Strip" => Norm::Strip { left: flag("strip_left", true), right: flag("strip_right", true) },
        "StripAccents" => Norm::StripAccents,
        "Prepend" => Norm::Prepend(text("prepend")?),
        "ByteLevel" => Norm::ByteLevel,
        "Precompiled" => {
            use base64::Engine as _;
            let blob = text("precompiled_charsmap")?;
            let blob = base64::engine::general_purpose::STANDARD.decode(blob).map_err(|e| {
                Error::config(format!("normalizer Precompiled: precompiled_charsmap is not base64: {e}"))
            })?;
            Norm::Precompiled(
                PrecompiledCharsmap::new(&blob)
                    .map_err(|e| Error::config(format!("normalizer Precompiled: precompiled_charsmap: {e}")))?,
            )
        }
        // tokenmill's own spelling (not a Hugging Face normalizer) of the pre-tokenizers
        // `WhitespaceSplit` + `Metaspace(prepend_scheme="always")`: with a cut before each ▁
        // after it, the same pieces as that pair gives (each word starts with a ▁).
        "MetaspaceWords" => Norm::MetaspaceWords,
        // tokenmill's spelling of the pre-tokenizer `ByteLevel(add_prefix_space=True)` as its
        // first step: a space before each stretch of text that lacks one.
        "SpaceBefore" => Norm::SpaceBefore,
        "Replace" => {
            let content = text("content")?;
            let pattern = node.get("pattern").ok_or_else(|| Error::config("normalizer Replace without a pattern"))?;
            let pattern = if let Some(s) = pattern.get("String").and_then(Value::as_str) {
                Pattern::Literal(s.to_string())
            } else if let Some(r) = pattern.get("Regex").and_then(Value::as_str) {
                let engine = Engine::new(r).map_err(|reason| Error::Pattern { pattern: r.to_string(), reason })?;
                if matches!(engine, Engine::Backtracking(_)) {
                    return Err(Error::config(format!(
                        "normalizer Replace with the regex {r:?} is not one tokenmill runs exactly (look-arounds, \
                         back-references and patterns that match nothing are not supported here)"
                    )));
                }
                Pattern::Regex { source: r.to_string(), engine: Arc::new(engine) }
            } else {
                return Err(Error::config("normalizer Replace: pattern is neither a String nor a Regex"));
            };
            Norm::Replace { pattern, content }
        }
        other => {
            return Err(Error::config(format!(
                "normalizer {other} is not one tokenmill runs exactly here (it runs NFC, NFD, NFKC, NFKD, Lowercase, \
                 BertNormalizer, Nmt, Strip, StripAccents, Replace, Prepend, ByteLevel, Precompiled and Sequences \
                 of them)"
            )))
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(json: &str, text: &str) -> (String, Alignment) {
        HfNormalizer::from_json(json).unwrap().apply_aligned(text)
    }

    #[test]
    fn replace_aligns_the_replacement_with_the_match() {
        let (out, align) = run(r#"{"type":"Replace","pattern":{"Regex":" {2,}"},"content":"_"}"#, "a   b");
        assert_eq!(out, "a_b");
        assert_eq!(align, [(0, 1), (3, 4), (4, 5)]);
    }

    #[test]
    fn prepend_and_strip() {
        let json = r#"{"type":"Sequence","normalizers":[{"type":"Strip","strip_left":true,"strip_right":true},{"type":"Prepend","prepend":"▁"}]}"#;
        let (out, align) = run(json, "  hi ");
        assert_eq!(out, "▁hi");
        assert_eq!(align[..3], [(2, 3), (2, 3), (2, 3)]);
        assert_eq!(run(json, "   ").0, "");
    }

    #[test]
    fn unknown_components_are_named() {
        let e = HfNormalizer::from_json(r#"{"type":"Nonesuch"}"#).unwrap_err().to_string();
        assert!(e.contains("Nonesuch"), "{e}");
    }
}
