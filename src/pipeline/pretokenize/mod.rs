//! Pre-tokenization: cutting text into the pieces ("words") that the subword model sees.
//! Merges never cross a piece boundary.
//!
//! Presets `gpt2`, `cl100k`, `o200k`, `llama3`, `qwen2` and `tekken` are hand-written splitters
//! ([`presets`]) equal to the regexes tiktoken and the models' `tokenizer.json` files ship; a
//! regex spelled exactly as one of those (or a known variant) gets its preset; `whitespace` splits on `\s` runs and drops them; `none` keeps the text
//! whole; `metaspace` cuts SentencePiece-normalized text before each `▁` (`metaspace_suffix`:
//! after each); `hf:` and a JSON object are Hugging Face's splitting pre-tokenizers
//! ([`huggingface`]); anything else is compiled as a user regex (with lookaround, via `fancy-regex`) and its
//! matches are the pieces, as in tiktoken (text between matches is dropped).

#[cfg(target_arch = "x86_64")]
mod blocks;
mod classes;
pub mod huggingface;
mod presets;
pub(crate) mod user_regex;

use crate::error::{Error, Result};
use classes::SPACE;

pub const GPT2_PATTERN: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
);
pub const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
pub const QWEN2_PATTERN: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
pub const TEKKEN_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
);

/// Each preset with a regex, and that regex (tiktoken's spelling for OpenAI's, the models'
/// `tokenizer.json` spelling for the others).
pub fn preset_patterns() -> std::collections::BTreeMap<&'static str, &'static str> {
    [
        ("gpt2", GPT2_PATTERN),
        ("cl100k", CL100K_PATTERN),
        ("o200k", O200K_PATTERN),
        ("llama3", LLAMA3_PATTERN),
        ("qwen2", QWEN2_PATTERN),
        ("tekken", TEKKEN_PATTERN),
    ]
    .into_iter()
    .collect()
}

/// Other spellings of the presets' patterns seen in vocabulary files, which split the same way:
/// GPT-2's original (Hugging Face's ByteLevel), cl100k as Oniguruma reads it, and a cl100k
/// spelling without `\s++$` found in converted `tokenizer.json` files — which splits as Llama 3.
const EQUIVALENT_PATTERNS: [(&str, &str); 3] = [
    (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+", "gpt2"),
    (
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
        "cl100k",
    ),
    (
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",
        "llama3",
    ),
];

/// Every name `from_spec` takes for a preset.
pub const PRESET_NAMES: [&str; 20] = [
    "bert",
    "gpt2",
    "r50k",
    "r50k_base",
    "p50k",
    "p50k_base",
    "p50k_edit",
    "cl100k",
    "cl100k_base",
    "o200k",
    "o200k_base",
    "llama3",
    "qwen2",
    "qwen3",
    "tekken",
    "whitespace",
    "metaspace",
    "metaspace_suffix",
    "metaspace_runs",
    "none",
];

#[derive(Debug, Clone)]
pub enum PreTokenizer {
    Gpt2,
    Cl100k,
    O200k,
    Llama3,
    /// Qwen 2, 2.5 and 3.
    Qwen2,
    /// Mistral's (Tekken tokenizer).
    Tekken,
    Whitespace,
    /// BERT's: split on whitespace (dropped) and around every punctuation character.
    Bert,
    /// Text whose spaces are `▁` (SentencePiece): a piece starts at each `▁`, or with `suffix`
    /// ends after each; with `runs`, a run of `▁` starts one piece with the word after it (for
    /// vocabularies with whitespace-only pieces, `▁▁▁▁`). Lossless.
    Metaspace {
        suffix: bool,
        runs: bool,
    },
    None,
    /// Matches are pieces; with `keep_gaps`, so is the text between matches (Hugging Face's
    /// `Split` with `Isolated`); without, that text is dropped (tiktoken).
    Regex {
        pattern: String,
        engine: std::sync::Arc<user_regex::Engine>,
        keep_gaps: bool,
    },
    /// Splits applied in turn, each to the pieces of the one before, text between matches kept
    /// (Hugging Face's `Sequence` of `Split`s with `Isolated`, as DeepSeek's files have). Spelled
    /// `chain:` and a JSON list of the patterns.
    Chain(Vec<PreTokenizer>),
    /// Hugging Face's splitting pre-tokenizers (`Whitespace`, `Punctuation`, `Digits`, `Split`
    /// with each behaviour, …), spelled `hf:` and their `tokenizer.json` JSON.
    HuggingFace(std::sync::Arc<huggingface::HfPreTokenizer>),
}

/// How a chain of splits is spelled: this prefix, then a JSON list of patterns.
pub const CHAIN_PREFIX: &str = "chain:";

impl PreTokenizer {
    /// A preset by name (`gpt2`/`r50k_base`/`p50k_base`, `cl100k`/`cl100k_base`, `o200k`/`o200k_base`,
    /// `whitespace`, `none`) or a regex. A bare lowercase identifier that names no preset is an
    /// error rather than a regex, so a typo never silently becomes a literal pattern.
    pub fn from_spec(spec: &str) -> Result<Self> {
        if let Some(name) = Self::preset_for_pattern(spec) {
            return Self::from_spec(name);
        }
        if let Some(json) = spec.strip_prefix(huggingface::HF_PREFIX) {
            return Ok(PreTokenizer::HuggingFace(std::sync::Arc::new(huggingface::HfPreTokenizer::from_json(json)?)));
        }
        if let Some(list) = spec.strip_prefix(CHAIN_PREFIX) {
            let bad = |reason: String| Error::Pattern { pattern: spec.to_string(), reason };
            let patterns: Vec<String> = serde_json::from_str(list)
                .map_err(|e| bad(format!("after {CHAIN_PREFIX:?} comes a JSON list of patterns: {e}")))?;
            if patterns.len() < 2 {
                return Err(bad("a chain needs at least two patterns".into()));
            }
            let parts = patterns.iter().map(|p| Ok(Self::from_spec(p)?.keeping_gaps())).collect::<Result<Vec<_>>>()?;
            if let Some(p) = parts.iter().find(|p| !p.is_lossless()) {
                return Err(bad(format!("{:?} drops text; a chain takes regexes and lossless presets", p.spec())));
            }
            return Ok(PreTokenizer::Chain(parts));
        }
        Ok(match spec {
            "gpt2" | "r50k" | "r50k_base" | "p50k" | "p50k_base" | "p50k_edit" => PreTokenizer::Gpt2,
            "cl100k" | "cl100k_base" => PreTokenizer::Cl100k,
            "o200k" | "o200k_base" => PreTokenizer::O200k,
            "llama3" => PreTokenizer::Llama3,
            "qwen2" | "qwen3" => PreTokenizer::Qwen2,
            "tekken" => PreTokenizer::Tekken,
            "whitespace" => PreTokenizer::Whitespace,
            "bert" => PreTokenizer::Bert,
            "metaspace" => PreTokenizer::Metaspace { suffix: false, runs: false },
            "metaspace_suffix" => PreTokenizer::Metaspace { suffix: true, runs: false },
            "metaspace_runs" => PreTokenizer::Metaspace { suffix: false, runs: true },
            "none" => PreTokenizer::None,
            _ if !spec.is_empty() && spec.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') => {
                let lower = spec.to_ascii_lowercase();
                let hint = if lower != spec && PRESET_NAMES.contains(&lower.as_str()) {
                    format!(" (preset names are lowercase: {lower:?})")
                } else {
                    String::new()
                };
                return Err(Error::Pattern {
                    pattern: spec.to_string(),
                    reason: format!(
                        "unknown preset{hint}; use gpt2, r50k_base, p50k_base, cl100k, cl100k_base, o200k, o200k_base, bert, whitespace, metaspace, metaspace_suffix, metaspace_runs, none or a regex"
                    ),
                });
            }
            "" => return Err(Error::Pattern { pattern: String::new(), reason: "the pattern is empty".into() }),
            _ => {
                let engine = user_regex::Engine::new(spec)
                    .map_err(|reason| Error::Pattern { pattern: spec.to_string(), reason })?;
                PreTokenizer::Regex { pattern: spec.to_string(), engine: std::sync::Arc::new(engine), keep_gaps: false }
            }
        })
    }

    /// The preset that splits exactly as `pattern` does, when it is spelled as one we know.
    pub fn preset_for_pattern(pattern: &str) -> Option<&'static str> {
        let presets = preset_patterns();
        let canonical = presets.iter().find(|(_, p)| **p == pattern).map(|(name, _)| *name);
        canonical.or_else(|| EQUIVALENT_PATTERNS.iter().find(|(p, _)| *p == pattern).map(|(_, name)| *name))
    }

    /// The name or pattern that `from_spec` turns back into this pre-tokenizer.
    pub fn spec(&self) -> std::borrow::Cow<'_, str> {
        if let PreTokenizer::Chain(parts) = self {
            let patterns: Vec<String> = parts.iter().map(|p| p.spec().into_owned()).collect();
            let list = serde_json::to_string(&patterns).expect("strings serialize");
            return format!("{CHAIN_PREFIX}{list}").into();
        }
        if let PreTokenizer::HuggingFace(hf) = self {
            return format!("{}{}", huggingface::HF_PREFIX, hf.json()).into();
        }
        std::borrow::Cow::Borrowed(match self {
            PreTokenizer::Gpt2 => "gpt2",
            PreTokenizer::Cl100k => "cl100k",
            PreTokenizer::O200k => "o200k",
            PreTokenizer::Llama3 => "llama3",
            PreTokenizer::Qwen2 => "qwen2",
            PreTokenizer::Tekken => "tekken",
            PreTokenizer::Whitespace => "whitespace",
            PreTokenizer::Bert => "bert",
            PreTokenizer::Metaspace { suffix: false, runs: false } => "metaspace",
            PreTokenizer::Metaspace { suffix: true, .. } => "metaspace_suffix",
            PreTokenizer::Metaspace { suffix: false, runs: true } => "metaspace_runs",
            PreTokenizer::None => "none",
            PreTokenizer::Regex { pattern, .. } => pattern,
            PreTokenizer::Chain(_) | PreTokenizer::HuggingFace(_) => unreachable!("spelled above"),
        })
    }

    /// The same user regex, but the text between matches becomes pieces too.
    pub fn keeping_gaps(self) -> Self {
        match self {
            PreTokenizer::Regex { pattern, engine, .. } => PreTokenizer::Regex { pattern, engine, keep_gaps: true },
            other => other,
        }
    }

    pub fn keeps_gaps(&self) -> bool {
        matches!(self, PreTokenizer::Regex { keep_gaps: true, .. })
    }

    /// The regex this pre-tokenizer is equivalent to, where there is one.
    pub fn pattern(&self) -> Option<&str> {
        match self {
            PreTokenizer::Gpt2 => Some(GPT2_PATTERN),
            PreTokenizer::Cl100k => Some(CL100K_PATTERN),
            PreTokenizer::O200k => Some(O200K_PATTERN),
            PreTokenizer::Llama3 => Some(LLAMA3_PATTERN),
            PreTokenizer::Qwen2 => Some(QWEN2_PATTERN),
            PreTokenizer::Tekken => Some(TEKKEN_PATTERN),
            PreTokenizer::Whitespace
            | PreTokenizer::Bert
            | PreTokenizer::Metaspace { .. }
            | PreTokenizer::None
            | PreTokenizer::Chain(_)
            | PreTokenizer::HuggingFace(_) => None,
            PreTokenizer::Regex { pattern, .. } => Some(pattern),
        }
    }

    /// Whether concatenating the pieces gives back the text (false only for `whitespace` and
    /// user regexes, which drop what they do not match).
    pub fn is_lossless(&self) -> bool {
        if let PreTokenizer::HuggingFace(hf) = self {
            return hf.is_lossless();
        }
        matches!(
            self,
            PreTokenizer::Gpt2
                | PreTokenizer::Cl100k
                | PreTokenizer::O200k
                | PreTokenizer::Llama3
                | PreTokenizer::Qwen2
                | PreTokenizer::Tekken
                | PreTokenizer::Metaspace { .. }
                | PreTokenizer::None
                | PreTokenizer::Regex { keep_gaps: true, .. }
                | PreTokenizer::Chain(_)
        )
    }

    /// Whether pieces keep the text's whitespace (then an end-of-word suffix marks where a word
    /// ends without standing for a space). A user regex keeps it when it can match a space.
    pub fn pieces_keep_whitespace(&self) -> bool {
        match self {
            PreTokenizer::Whitespace | PreTokenizer::Bert => false,
            PreTokenizer::HuggingFace(hf) => hf.pieces_keep_whitespace(),
            PreTokenizer::Regex { engine, keep_gaps: false, .. } => engine.matches_a_space(),
            _ => true,
        }
    }

    /// Where this pre-tokenizer always starts a piece, whatever the text around: `None`, or
    /// `Some(line_feeds)` for the tiktoken-style presets, which start one at a space between an
    /// ASCII letter or digit and an ASCII letter (runs of letters or digits end at a space, and
    /// a space before letters starts their piece) and, with `line_feeds`, right after a line
    /// feed that a character other than whitespace follows (no piece takes a line feed and then
    /// more than line breaks, none starts with one before other text, and the last line break of
    /// a run stays with the run — not so under GPT-2's `\s+(?!\S)`, which leaves it alone). A
    /// text cut at such places gives, side by side, the pieces it gives whole.
    pub fn piece_starts(&self) -> Option<bool> {
        match self {
            PreTokenizer::Gpt2 => Some(false),
            PreTokenizer::Cl100k
            | PreTokenizer::O200k
            | PreTokenizer::Llama3
            | PreTokenizer::Qwen2
            | PreTokenizer::Tekken => Some(true),
            _ => None,
        }
    }

    /// Calls `f` on each piece of `text`, in order.
    ///
    /// ```
    /// use tokenmill::pipeline::pretokenize::PreTokenizer;
    /// let mut pieces = Vec::new();
    /// let cl100k = PreTokenizer::from_spec("cl100k").unwrap();
    /// cl100k.for_each_piece("Hello world!!", |p| Ok(pieces.push(p.to_string()))).unwrap();
    /// assert_eq!(pieces, ["Hello", " world", "!!"]);
    /// ```
    pub fn for_each_piece<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str) -> Result<()>) -> Result<()> {
        // Each preset gets a loop of its own, so its splitter is inlined into it (through a
        // function pointer, each piece paid a call the splitter's work could not overlap).
        match self {
            PreTokenizer::Chain(parts) => chain_pieces(parts, text, &mut f),
            PreTokenizer::HuggingFace(hf) => hf.for_each_piece(text, &mut f),
            PreTokenizer::Gpt2 => windows::<true, false, false, true>("gpt2", text, presets::gpt2_piece_end, f),
            PreTokenizer::Cl100k => windows::<false, false, true, true>("cl100k", text, presets::cl100k_piece_end, f),
            PreTokenizer::O200k => windows::<false, true, true, true>("o200k", text, presets::o200k_piece_end, f),
            PreTokenizer::Llama3 => windows::<false, false, true, true>("llama3", text, presets::llama3_piece_end, f),
            PreTokenizer::Qwen2 => windows::<false, false, false, true>("qwen2", text, presets::qwen2_piece_end, f),
            PreTokenizer::Tekken => windows::<false, true, false, false>("tekken", text, presets::tekken_piece_end, f),
            PreTokenizer::None => {
                if text.is_empty() {
                    Ok(())
                } else {
                    f(text)
                }
            }
            PreTokenizer::Metaspace { suffix, runs } => {
                let marker = crate::pipeline::decoder::METASPACE;
                let mut start = 0;
                // `▁` is E2 96 81; a search for its first byte beats a substring search (most
                // pieces are one word long, and the searcher's set-up was paid for each).
                let bytes = text.as_bytes();
                let after_marker = |i: usize| i >= marker.len() && bytes[..i].ends_with(marker.as_bytes());
                let found = memchr::memchr_iter(0xE2, bytes)
                    .filter(|&i| bytes[i..].starts_with(marker.as_bytes()) && !(*runs && after_marker(i)));
                for i in found {
                    let cut = if *suffix { i + marker.len() } else { i };
                    if cut > start {
                        f(&text[start..cut])?;
                        start = cut;
                    }
                }
                if start < text.len() {
                    f(&text[start..])
                } else {
                    Ok(())
                }
            }
            PreTokenizer::Whitespace => {
                let table = classes::table();
                let mut start = None;
                for (i, c) in text.char_indices() {
                    let space = table.get(c) & SPACE != 0;
                    match (space, start) {
                        (true, Some(s)) => {
                            f(&text[s..i])?;
                            start = None;
                        }
                        (false, None) => start = Some(i),
                        _ => {}
                    }
                }
                if let Some(s) = start {
                    f(&text[s..])?;
                }
                Ok(())
            }
            PreTokenizer::Bert => {
                let punctuation = crate::util::bert_tables::punctuation();
                let ascii = bert_ascii_classes();
                let bytes = text.as_bytes();
                let mut start = None;
                let mut next = 0;
                while next < bytes.len() {
                    let i = next;
                    // ASCII through a table made from the same two questions (a character at a
                    // time, the set look-up was the largest share of encoding English).
                    let (space, punct) = if bytes[i] < 0x80 {
                        next += 1;
                        let class = ascii[bytes[i] as usize];
                        (class == BERT_SPACE, class == BERT_PUNCTUATION)
                    } else {
                        let c = text[i..].chars().next().expect("a character starts here");
                        next += c.len_utf8();
                        (c.is_whitespace(), punctuation.contains(c))
                    };
                    if space || punct {
                        if let Some(s) = start.take() {
                            f(&text[s..i])?;
                        }
                        if punct {
                            f(&text[i..next])?;
                        }
                    } else if start.is_none() {
                        start = Some(i);
                    }
                }
                if let Some(s) = start {
                    f(&text[s..])?;
                }
                Ok(())
            }
            PreTokenizer::Regex { pattern, engine, keep_gaps } => {
                let mut last = 0;
                engine.for_each_match(pattern, text, |start, end| {
                    if *keep_gaps && start > last {
                        f(&text[last..start])?;
                    }
                    if end > start {
                        f(&text[start..end])?;
                    }
                    last = end;
                    Ok(())
                })?;
                if *keep_gaps && last < text.len() {
                    f(&text[last..])?;
                }
                Ok(())
            }
        }
    }

    /// The pieces of `text` as a vector (convenience for tests and the Python `split`).
    pub fn split<'t>(&self, text: &'t str) -> Result<Vec<&'t str>> {
        let mut out = Vec::new();
        self.for_each_piece(text, |p| {
            out.push(p);
            Ok(())
        })?;
        Ok(out)
    }
}

const BERT_SPACE: u8 = 1;
const BERT_PUNCTUATION: u8 = 2;

/// What BERT's pre-tokenizer asks of each ASCII character: whitespace, punctuation or neither.
fn bert_ascii_classes() -> &'static [u8; 128] {
    static CLASSES: std::sync::OnceLock<[u8; 128]> = std::sync::OnceLock::new();
    CLASSES.get_or_init(|| {
        let punctuation = crate::util::bert_tables::punctuation();
        std::array::from_fn(|b| {
            let c = char::from(b as u8);
            if c.is_whitespace() {
                BERT_SPACE
            } else if punctuation.contains(c) {
                BERT_PUNCTUATION
            } else {
                0
            }
        })
    })
}

/// Calls `f` on each piece of `text`, a piece ending where `piece_end` (the splitter of the
/// preset `preset`) says.
// On x86-64 every preset goes through `blocks.rs` (this stays its fallback elsewhere and the
// tests' reference).
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
#[inline(always)]
fn each_piece<'t>(
    preset: &'static str,
    text: &'t str,
    piece_end: impl Fn(&str, usize) -> usize,
    mut f: impl FnMut(&'t str) -> Result<()>,
) -> Result<()> {
    let mut i = 0;
    while i < text.len() {
        let end = piece_end(text, i);
        // A splitter that failed to advance would loop for ever, and one that stopped inside a
        // character or past the text would panic on the slice: either is a bug in a hand-written
        // preset, and the caller gets an error that says where rather than a hang or a panic.
        // (`get` makes the same boundary checks as slicing, so the sound path pays one compare.)
        match text.get(i..end) {
            Some(piece) if end > i => f(piece)?,
            _ => return Err(splitter_bug(preset, text.len(), i, end)),
        }
        i = end;
    }
    Ok(())
}

/// Calls `f` on each piece of `text` under GPT-2's preset or one of the cl100k or o200k family (`GPT2`, `O200K`,
/// `DIGITS3`: up to three digits a piece, `CONTRACTIONS`: `'s` and the like): 64-byte windows of
/// ASCII at a time on x86-64 (`blocks.rs`, SSE2), `piece_end` alone elsewhere.
#[inline(always)]
fn windows<'t, const GPT2: bool, const O200K: bool, const DIGITS3: bool, const CONTRACTIONS: bool>(
    preset: &'static str,
    text: &'t str,
    piece_end: impl Fn(&str, usize) -> usize,
    f: impl FnMut(&'t str) -> Result<()>,
) -> Result<()> {
    #[cfg(target_arch = "x86_64")]
    return blocks::each_piece::<GPT2, O200K, DIGITS3, CONTRACTIONS>(text, piece_end, f, |start, end| {
        splitter_bug(preset, text.len(), start, end)
    });
    #[cfg(not(target_arch = "x86_64"))]
    return each_piece(preset, text, piece_end, f);
}

/// The error for a splitter that ended a piece at `end` when it began at `start` (out of line,
/// away from the piece loop: it never happens).
#[cold]
#[inline(never)]
fn splitter_bug(preset: &'static str, len: usize, start: usize, end: usize) -> Error {
    Error::Pattern {
        pattern: preset.to_string(),
        reason: format!(
            "the preset's splitter ended a piece at byte {end} of a {len}-byte text, starting at byte {start}; this is a bug in tokenmill, please report it with the text"
        ),
    }
}

/// The pieces of `text` cut by each of `parts` in turn.
fn chain_pieces<'t>(parts: &[PreTokenizer], text: &'t str, f: &mut dyn FnMut(&'t str) -> Result<()>) -> Result<()> {
    match parts.split_first() {
        None => f(text),
        Some((first, rest)) => first.for_each_piece(text, |piece| chain_pieces(rest, piece, f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Differential check of each hand-written preset against its reference pattern run by a
    /// backtracking regex engine, on strings built from characters that stress every branch.
    #[test]
    fn presets_equal_their_reference_regex() {
        let alphabet: Vec<char> = " \t\n\r\u{3000}aZéE\u{301}ſ's'T1٣Ⅻ!/.中ǅʰ🙂\u{1F3FD}".chars().collect();
        let mut seed: u64 = 0x9E3779B97F4A7C15;
        let presets = ["gpt2", "cl100k", "o200k", "llama3", "qwen2", "tekken"].map(|p| {
            let fast = PreTokenizer::from_spec(p).unwrap();
            (p, fast.pattern().unwrap().to_string())
        });
        let spellings = EQUIVALENT_PATTERNS.map(|(pattern, p)| (p, pattern.to_string()));
        for (preset, pattern) in presets.into_iter().chain(spellings) {
            let fast = PreTokenizer::from_spec(preset).unwrap();
            let slow = fancy_regex::Regex::new(&pattern).unwrap();
            assert_eq!(PreTokenizer::from_spec(&pattern).unwrap().spec(), fast.spec(), "{pattern} is recognized");
            for _ in 0..20_000 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let len = (seed % 12) as usize;
                let text: String = (0..len).map(|k| alphabet[((seed >> (k * 5)) as usize) % alphabet.len()]).collect();
                let expected: Vec<&str> = slow.find_iter(&text).map(|m| m.unwrap().as_str()).collect();
                assert_eq!(fast.split(&text).unwrap(), expected, "{preset} on {text:?}");
            }
        }
    }

    /// The 64-byte windows of the cl100k and o200k families (`blocks.rs`) against the character-at-a-time
    /// splitters and the reference regexes, on texts long enough to span several windows and
    /// made mostly of the bytes the windows' rules are about.
    #[test]
    fn windows_equal_the_splitters_and_the_regexes() {
        let alphabet: Vec<char> =
            "aaaaeeZAsStTlLvVrRdDmMx0123456789      \t\n\n\r\x0b\x0c'''..,!-_//\x1c\x7f\u{a0}\u{3000}é中ſ١\u{85}"
                .chars()
                .collect();
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        type Splitter = fn(&str, usize) -> usize;
        fn scalar_pieces<'t>(preset: &'static str, text: &'t str, piece_end: Splitter) -> Vec<&'t str> {
            let mut pieces = Vec::new();
            each_piece(preset, text, piece_end, |p| {
                pieces.push(p);
                Ok(())
            })
            .unwrap();
            pieces
        }
        let family: [(&str, Splitter); 6] = [
            ("gpt2", presets::gpt2_piece_end),
            ("cl100k", presets::cl100k_piece_end),
            ("llama3", presets::llama3_piece_end),
            ("qwen2", presets::qwen2_piece_end),
            ("o200k", presets::o200k_piece_end),
            ("tekken", presets::tekken_piece_end),
        ];
        for (preset, piece_end) in family {
            let fast = PreTokenizer::from_spec(preset).unwrap();
            let slow = fancy_regex::Regex::new(fast.pattern().unwrap()).unwrap();
            for round in 0..6_000 {
                let len = (next() % 300) as usize;
                // Mostly ASCII; every other text has no non-ASCII character at all.
                let span = if round % 2 == 0 { alphabet.len() - 7 } else { alphabet.len() };
                let text: String = (0..len).map(|_| alphabet[(next() % span as u64) as usize]).collect();
                let scalar = scalar_pieces(preset, &text, piece_end);
                assert_eq!(fast.split(&text).unwrap(), scalar, "{preset} on {text:?}");
                if round % 4 == 0 {
                    let expected: Vec<&str> = slow.find_iter(&text).map(|m| m.unwrap().as_str()).collect();
                    assert_eq!(scalar, expected, "{preset} on {text:?}");
                }
            }
            // Words with contractions and newlines, at every offset of a window's end.
            let words = ["you'll", " it's", " we've", "I'M", " they're", "'d", "x'", "\n", " ", "s", ".\n/"];
            for round in 0..3_000 {
                let pad = "a".repeat(round % 70);
                let tail: String = (0..6).map(|_| words[(next() % words.len() as u64) as usize]).collect();
                let text = format!("{pad}{tail}");
                let scalar = scalar_pieces(preset, &text, piece_end);
                assert_eq!(fast.split(&text).unwrap(), scalar, "{preset} on {text:?}");
            }
        }
    }

    /// BERT's pre-tokenizer, with its ASCII table, against the two questions asked of every
    /// character (`char::is_whitespace`, BERT's punctuation set) on generated text.
    #[test]
    fn bert_pieces_follow_whitespace_and_punctuation() {
        let alphabet: Vec<char> = "ab Z09\t\n\r\x0b\x0c\x1c\x7f.,!$`~-_\u{a0}\u{3000}\u{85}é中¿「」—".chars().collect();
        let punctuation = crate::util::bert_tables::punctuation();
        let bert = PreTokenizer::from_spec("bert").unwrap();
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..5_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            let text: String =
                (0..len).map(|k| alphabet[((seed >> (k % 12 * 5)) as usize + k) % alphabet.len()]).collect();
            let mut expected = Vec::new();
            let mut word = String::new();
            for c in text.chars() {
                if c.is_whitespace() || punctuation.contains(c) {
                    if !word.is_empty() {
                        expected.push(std::mem::take(&mut word));
                    }
                    if punctuation.contains(c) {
                        expected.push(c.to_string());
                    }
                } else {
                    word.push(c);
                }
            }
            if !word.is_empty() {
                expected.push(word);
            }
            assert_eq!(bert.split(&text).unwrap(), expected, "{text:?}");
        }
    }

    #[test]
    fn unknown_preset_is_an_error_not_a_regex() {
        assert!(matches!(PreTokenizer::from_spec("cl100"), Err(Error::Pattern { .. })));
        assert!(PreTokenizer::from_spec(r"\w+").is_ok());
        assert!(matches!(PreTokenizer::from_spec("(unclosed"), Err(Error::Pattern { .. })));
    }

    #[test]
    fn metaspace_cuts_at_each_marker() {
        let p = PreTokenizer::from_spec("metaspace").unwrap();
        assert_eq!(p.split("▁hello▁▁world▁").unwrap(), ["▁hello", "▁", "▁world", "▁"]);
        assert_eq!(p.split("ab▁c").unwrap(), ["ab", "▁c"]);
        let p = PreTokenizer::from_spec("metaspace_suffix").unwrap();
        assert_eq!(p.split("hello▁▁world▁x").unwrap(), ["hello▁", "▁", "world▁", "x"]);
        let p = PreTokenizer::from_spec("metaspace_runs").unwrap();
        assert_eq!(p.split("▁hello▁▁▁world▁x▁").unwrap(), ["▁hello", "▁▁▁world", "▁x", "▁"]);
        assert_eq!(p.split("▁▁a").unwrap(), ["▁▁a"]);
    }

    #[test]
    fn a_chain_cuts_the_pieces_of_each_split_again() {
        let chain = PreTokenizer::from_spec(r#"chain:["\\p{N}{1,3}", "[一-龥]+", "llama3"]"#).unwrap();
        assert_eq!(chain.split("ab12345 中文x").unwrap(), ["ab", "123", "45", " ", "中文", "x"]);
        assert_eq!(PreTokenizer::from_spec(&chain.spec()).unwrap().split("a中1").unwrap(), ["a", "中", "1"]);
        for bad in ["chain:[]", r#"chain:["x"]"#, "chain:nope", r#"chain:["x", "whitespace"]"#, r#"chain:["x", "("]"#] {
            assert!(matches!(PreTokenizer::from_spec(bad), Err(Error::Pattern { .. })), "{bad}");
        }
    }

    #[test]
    fn whitespace_drops_spaces() {
        let p = PreTokenizer::from_spec("whitespace").unwrap();
        assert_eq!(p.split("  low\tlower \n").unwrap(), ["low", "lower"]);
    }

    /// A splitter that stalls, stops inside a character or runs past the text is an error naming
    /// the preset and the offsets, not a hang or a panic; a sound one cuts the text whole.
    #[test]
    fn a_broken_splitter_is_an_error_not_a_hang() {
        let collect = |piece_end: &dyn Fn(&str, usize) -> usize| {
            let mut pieces = Vec::new();
            each_piece("test", "aé b", piece_end, |p| {
                pieces.push(p);
                Ok(())
            })
            .map(|()| pieces)
        };
        assert_eq!(
            collect(&|t, i| t[i..].chars().next().map_or(i, |c| i + c.len_utf8())).unwrap(),
            ["a", "é", " ", "b"]
        );
        let stalls_at_space =
            |t: &str, i: usize| if t.as_bytes()[i] == b' ' { i } else { i + t[i..].chars().next().unwrap().len_utf8() };
        for (broken, at) in [
            (&stalls_at_space as &dyn Fn(&str, usize) -> usize, "byte 3 of a 5-byte text, starting at byte 3"),
            (&|_: &str, i: usize| i + 1, "byte 2 of a 5-byte text, starting at byte 1"),
            (&|_: &str, _: usize| 9, "byte 9 of a 5-byte text, starting at byte 0"),
        ] {
            match collect(broken) {
                Err(Error::Pattern { pattern, reason }) => {
                    assert_eq!(pattern, "test");
                    assert!(reason.contains(at), "{reason}");
                }
                other => panic!("expected a pattern error, got {other:?}"),
            }
        }
    }
}
