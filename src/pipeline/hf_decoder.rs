//! Hugging Face's decoders, run as `tokenizers` runs them, for tokenizers loaded from a
//! `tokenizer.json` whose decoder tokenmill's own rules (`decoder.rs`) do not spell: each step
//! maps the list of token strings to a new list, and the text is their concatenation.
//!
//! ```text
//! ["▁Hello", "<0xE2>", "<0x82>", "<0xAC>"]  Replace(▁→" ")  [" Hello", "<0xE2>", …]
//!   ByteFallback  [" Hello", "€", "", ""]   Fuse  [" Hello€"]   Strip(" ", 1, 0)  ["Hello€"]
//! ```
//!
//! tokenmill keeps one string per token (the streaming and offset decoders need what each token
//! contributes), so `Fuse` is a mark rather than a join: after it, `Strip` works on the ends of
//! the whole text, as it would on the fused string. A chain whose later steps would need the
//! fused string itself (a `Replace` of more than one character, `ByteFallback`, `WordPiece`...
//! after `Fuse`) is refused when the file is read, naming the step.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HfPattern {
    String(String),
    Regex(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PrependScheme {
    #[default]
    Always,
    First,
    Never,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum HfDecoder {
    Replace {
        pattern: HfPattern,
        content: String,
    },
    ByteFallback,
    Fuse,
    Strip {
        content: char,
        #[serde(default)]
        start: usize,
        #[serde(default)]
        stop: usize,
    },
    Metaspace {
        #[serde(default = "metaspace")]
        replacement: char,
        #[serde(default)]
        prepend_scheme: Option<PrependScheme>,
        /// Older files' spelling of the scheme.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        add_prefix_space: Option<bool>,
    },
    WordPiece {
        #[serde(default = "double_hash")]
        prefix: String,
        #[serde(default = "yes")]
        cleanup: bool,
    },
    #[serde(rename = "BPEDecoder")]
    Bpe {
        #[serde(default = "end_of_word")]
        suffix: String,
    },
    #[serde(rename = "CTC")]
    Ctc {
        #[serde(default = "pad")]
        pad_token: String,
        #[serde(default = "bar")]
        word_delimiter_token: String,
        #[serde(default = "yes")]
        cleanup: bool,
    },
    /// Each token string read as byte-level characters (a string with another character
    /// stands for its own UTF-8 bytes), all the bytes joined and decoded as UTF-8 with
    /// replacement: one text, as tokenizers' `ByteLevel` decoder gives it.
    ByteLevel {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        add_prefix_space: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trim_offsets: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        use_regex: Option<bool>,
    },
    /// What `tokenizers` does for a file without a decoder: the token strings joined with
    /// spaces (tokenmill's own name; such a file is written back with no decoder).
    JoinedWithSpaces,
    Sequence {
        decoders: Vec<HfDecoder>,
    },
}

fn metaspace() -> char {
    '\u{2581}'
}
fn double_hash() -> String {
    "##".into()
}
fn yes() -> bool {
    true
}
fn end_of_word() -> String {
    "</w>".into()
}
fn pad() -> String {
    "<pad>".into()
}
fn bar() -> String {
    "|".into()
}

/// One token's string as the steps change it; `text` is what it contributes.
struct Piece {
    text: String,
}

impl HfDecoder {
    /// The steps in order (a `Sequence` flattened).
    fn steps(&self) -> Vec<&HfDecoder> {
        match self {
            HfDecoder::Sequence { decoders } => decoders.iter().flat_map(HfDecoder::steps).collect(),
            step => vec![step],
        }
    }

    /// Checks that every step can run on one string per token; regexes compile.
    pub fn check(&self) -> Result<()> {
        let mut fused = false;
        for step in self.steps() {
            let name = step.name();
            match step {
                HfDecoder::Fuse => fused = true,
                HfDecoder::Strip { .. } => {}
                HfDecoder::Replace { pattern: HfPattern::String(s), .. } if s.chars().count() == 1 => {}
                HfDecoder::Replace { pattern: HfPattern::Regex(r), .. } if !fused => {
                    fancy_regex::Regex::new(r)
                        .map_err(|e| Error::config(format!("decoder Replace: regex {r:?}: {e}")))?;
                }
                _ if fused => {
                    return Err(Error::config(format!(
                        "decoder {name} after Fuse is not supported (it would work on the fused text)"
                    )))
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn name(&self) -> &'static str {
        match self {
            HfDecoder::Replace { .. } => "Replace",
            HfDecoder::ByteFallback => "ByteFallback",
            HfDecoder::Fuse => "Fuse",
            HfDecoder::Strip { .. } => "Strip",
            HfDecoder::Metaspace { .. } => "Metaspace",
            HfDecoder::WordPiece { .. } => "WordPiece",
            HfDecoder::Bpe { .. } => "BPEDecoder",
            HfDecoder::Ctc { .. } => "CTC",
            HfDecoder::ByteLevel { .. } => "ByteLevel",
            HfDecoder::JoinedWithSpaces => "JoinedWithSpaces",
            HfDecoder::Sequence { .. } => "Sequence",
        }
    }

    /// What each token string contributes to the text. `follows`: the tokens continue earlier
    /// ones (a stream), so the first is not the start of the text; `at_end`: nothing follows.
    pub fn decode(&self, tokens: Vec<String>, follows: bool, at_end: bool) -> Vec<String> {
        let mut pieces: Vec<Piece> = tokens.into_iter().map(|text| Piece { text }).collect();
        let mut fused = false;
        for step in self.steps() {
            match step {
                HfDecoder::Fuse => fused = true,
                HfDecoder::Replace { pattern, content } => {
                    for p in &mut pieces {
                        p.text = match pattern {
                            HfPattern::String(s) => p.text.replace(s.as_str(), content),
                            HfPattern::Regex(r) => match fancy_regex::Regex::new(r) {
                                Ok(re) => re.replace_all(&p.text, content.as_str()).into_owned(),
                                Err(_) => p.text.clone(),
                            },
                        };
                    }
                }
                HfDecoder::ByteFallback => byte_fallback(&mut pieces),
                HfDecoder::Strip { content, start, stop } => {
                    if fused {
                        if !follows {
                            strip_fused_start(&mut pieces, *content, *start);
                        }
                        if at_end {
                            strip_fused_end(&mut pieces, *content, *stop);
                        }
                    } else {
                        for p in &mut pieces {
                            p.text = strip(&p.text, *content, *start, *stop);
                        }
                    }
                }
                HfDecoder::Metaspace { replacement, prepend_scheme, add_prefix_space } => {
                    let scheme = prepend_scheme.unwrap_or(match add_prefix_space {
                        Some(false) => PrependScheme::Never,
                        _ => PrependScheme::Always,
                    });
                    for (i, p) in pieces.iter_mut().enumerate() {
                        // As Hugging Face's: the first token loses every replacement character,
                        // not only a leading one.
                        let first = i == 0 && !follows && scheme != PrependScheme::Never;
                        p.text =
                            if first { p.text.replace(*replacement, "") } else { p.text.replace(*replacement, " ") };
                    }
                }
                HfDecoder::WordPiece { prefix, cleanup } => {
                    for (i, p) in pieces.iter_mut().enumerate() {
                        let mut text = if i > 0 || follows {
                            match p.text.strip_prefix(prefix.as_str()) {
                                Some(rest) => rest.to_string(),
                                None => format!(" {}", p.text),
                            }
                        } else {
                            p.text.clone()
                        };
                        if *cleanup {
                            text = clean_up(&text);
                        }
                        p.text = text;
                    }
                }
                HfDecoder::Bpe { suffix } => {
                    let n = pieces.len();
                    for (i, p) in pieces.iter_mut().enumerate() {
                        let last = i + 1 == n && at_end;
                        p.text = p.text.replace(suffix.as_str(), if last { "" } else { " " });
                    }
                }
                HfDecoder::Ctc { pad_token, word_delimiter_token, cleanup } => {
                    let mut previous: Option<String> = None;
                    for p in &mut pieces {
                        let repeat = previous.as_deref() == Some(p.text.as_str());
                        previous = Some(p.text.clone());
                        if repeat {
                            p.text.clear();
                            continue;
                        }
                        // As tokenizers: the pad token is removed wherever it occurs, and the word
                        // delimiter becomes a space only with `cleanup`.
                        let mut text = p.text.replace(pad_token.as_str(), "");
                        if *cleanup {
                            text = clean_up(&text).replace(word_delimiter_token.as_str(), " ");
                        }
                        p.text = text;
                    }
                }
                HfDecoder::ByteLevel { .. } => {
                    // One text for all the tokens: a character may take bytes from several.
                    let mut bytes = Vec::new();
                    for p in &mut pieces {
                        match crate::io::huggingface::byte_level_bytes(&p.text) {
                            Some(b) => bytes.extend_from_slice(&b),
                            None => bytes.extend_from_slice(p.text.as_bytes()),
                        }
                        p.text.clear();
                    }
                    if let Some(first) = pieces.first_mut() {
                        first.text = String::from_utf8_lossy(&bytes).into_owned();
                    }
                }
                HfDecoder::JoinedWithSpaces => {
                    for (i, p) in pieces.iter_mut().enumerate() {
                        if i > 0 || follows {
                            p.text.insert(0, ' ');
                        }
                    }
                }
                HfDecoder::Sequence { .. } => unreachable!("steps() flattens sequences"),
            }
        }
        pieces.into_iter().map(|p| p.text).collect()
    }
}

/// Runs of `<0xNN>` tokens become the text their bytes spell: the whole run's text on its first
/// token when the bytes are valid UTF-8, else U+FFFD for each token of the run.
fn byte_fallback(pieces: &mut [Piece]) {
    let byte_of = |t: &str| -> Option<u8> {
        let hex = t.strip_prefix("<0x")?.strip_suffix('>')?;
        (hex.len() == 2).then(|| u8::from_str_radix(hex, 16).ok()).flatten()
    };
    let mut i = 0;
    while i < pieces.len() {
        if byte_of(&pieces[i].text).is_none() {
            i += 1;
            continue;
        }
        let start = i;
        let mut bytes = Vec::new();
        while let Some(b) = pieces.get(i).and_then(|p| byte_of(&p.text)) {
            bytes.push(b);
            i += 1;
        }
        match String::from_utf8(bytes) {
            Ok(text) => {
                // Keep what each token contributes: its own bytes where they end a character,
                // so a stream can show text as soon as it is whole.
                let mut pos = 0;
                let raw = text.as_bytes();
                for (k, p) in pieces[start..i].iter_mut().enumerate() {
                    let end = k + 1;
                    if text.is_char_boundary(end) {
                        p.text = String::from_utf8(raw[pos..end].to_vec()).expect("char boundary");
                        pos = end;
                    } else {
                        p.text.clear();
                    }
                }
            }
            Err(_) => {
                for p in &mut pieces[start..i] {
                    p.text = "\u{FFFD}".into();
                }
            }
        }
    }
}

fn strip(text: &str, c: char, start: usize, stop: usize) -> String {
    let mut s = text;
    for _ in 0..start {
        match s.strip_prefix(c) {
            Some(rest) => s = rest,
            None => break,
        }
    }
    for _ in 0..stop {
        match s.strip_suffix(c) {
            Some(rest) => s = rest,
            None => break,
        }
    }
    s.to_string()
}

fn strip_fused_start(pieces: &mut [Piece], c: char, mut n: usize) {
    for p in pieces.iter_mut() {
        while n > 0 && p.text.starts_with(c) {
            p.text.remove(0);
            n -= 1;
        }
        if n == 0 || !p.text.is_empty() {
            return;
        }
    }
}

fn strip_fused_end(pieces: &mut [Piece], c: char, mut n: usize) {
    for p in pieces.iter_mut().rev() {
        while n > 0 && p.text.ends_with(c) {
            p.text.pop();
            n -= 1;
        }
        if n == 0 || !p.text.is_empty() {
            return;
        }
    }
}

/// Hugging Face's decoding cleanup: spaces before punctuation and in English contractions.
fn clean_up(text: &str) -> String {
    text.replace(" .", ".")
        .replace(" ?", "?")
        .replace(" !", "!")
        .replace(" ,", ",")
        .replace(" ' ", "'")
        .replace(" n't", "n't")
        .replace(" 'm", "'m")
        .replace(" do not", " don't")
        .replace(" 's", "'s")
        .replace(" 've", "'ve")
        .replace(" 're", "'re")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llama() -> HfDecoder {
        serde_json::from_str(
            r#"{"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}"#,
        )
        .unwrap()
    }

    fn run(d: &HfDecoder, tokens: &[&str]) -> String {
        d.decode(tokens.iter().map(|t| t.to_string()).collect(), false, true).concat()
    }

    #[test]
    fn llama_style_chain() {
        let d = llama();
        d.check().unwrap();
        assert_eq!(run(&d, &["▁Hello", "▁world", "<0xE2>", "<0x82>", "<0xAC>"]), "Hello world€");
        assert_eq!(run(&d, &["<s>", "▁Hello"]), "<s> Hello");
        assert_eq!(run(&d, &["<0xE2>", "<0x82>", "▁x"]), "\u{FFFD}\u{FFFD} x");
        // A stream's later tokens keep their leading space.
        assert_eq!(d.decode(vec!["▁world".into()], true, true).concat(), " world");
    }

    #[test]
    fn steps_that_need_the_fused_text_are_refused() {
        let d: HfDecoder =
            serde_json::from_str(r#"{"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "ByteFallback"}]}"#)
                .unwrap();
        assert!(d.check().unwrap_err().to_string().contains("ByteFallback after Fuse"));
    }

    #[test]
    fn other_decoders() {
        let wp: HfDecoder =
            serde_json::from_str(r###"{"type": "WordPiece", "prefix": "##", "cleanup": true}"###).unwrap();
        assert_eq!(run(&wp, &["un", "##aff", "##able", "."]), "unaffable.");
        let bpe: HfDecoder = serde_json::from_str(r#"{"type": "BPEDecoder", "suffix": "</w>"}"#).unwrap();
        assert_eq!(run(&bpe, &["low</w>", "est</w>"]), "low est");
        let ctc: HfDecoder = serde_json::from_str(r#"{"type": "CTC"}"#).unwrap();
        assert_eq!(run(&ctc, &["h", "h", "<pad>", "i", "|", "y", "o"]), "hi yo");
        let meta: HfDecoder =
            serde_json::from_str(r#"{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}"#).unwrap();
        assert_eq!(run(&meta, &["▁Hey", "▁there"]), "Hey there");
        assert_eq!(run(&meta, &["▁a▁b", "▁c"]), "ab c");
    }
}
