//! Hugging Face's splitting pre-tokenizers, run as `tokenizers` runs them: `Whitespace`,
//! `WhitespaceSplit`, `BertPreTokenizer`, `Punctuation`, `Digits`, `CharDelimiterSplit`, `Split`
//! (a string or a regex; every behaviour; `invert`), `FixedLength`, `ByteLevel`'s regex, and
//! `Sequence`s of them. Each step cuts every piece of the step before; none changes the text, so
//! pieces stay slices of it and offsets come for free.
//!
//! A step first finds its matches in a piece, listed with the text between them so that the list
//! covers the piece (a delimiter given as a character class matches one character at a time:
//! `"!!"` is two matches); `invert` swaps the two kinds; the behaviour then says what becomes of a
//! match: dropped (`Removed`), a piece of its own (`Isolated`), glued to the piece before
//! (`MergedWithPrevious`) or after (`MergedWithNext`), or merged with the matches next to it
//! (`Contiguous`). Empty pieces are dropped.
//!
//! Spelled `hf:` and the pre-tokenizer's JSON, as `tokenizer.json` has it.

use super::user_regex::Engine;
use super::PreTokenizer;
use crate::error::{Error, Result};
use serde_json::Value;
use std::sync::Arc;

/// How `hf:` specs are spelled: this prefix, then the pre-tokenizer's JSON.
pub const HF_PREFIX: &str = "hf:";

/// `Whitespace`'s pattern: words and runs of other non-space characters (run by the `regex` crate
/// in `tokenizers`, as by ours: `\w` and `\s` are that crate's classes in both).
const WORDS_AND_SYMBOLS: &str = r"\w+|[^\w\s]+";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Behavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

#[derive(Debug, Clone)]
enum Delimiter {
    /// `char::is_whitespace`.
    Whitespace,
    /// ASCII punctuation and Unicode's `P*` categories, in the tables BERT's splitter uses.
    Punctuation,
    /// `char::is_numeric` (Unicode's `N*` categories).
    Numeric,
    Char(char),
    /// A regex (or an escaped string); the matches are the delimiters.
    Regex {
        pattern: String,
        engine: Arc<Engine>,
    },
    /// A preset's pieces are the delimiters (`ByteLevel`'s regex, a `Split` whose regex is a preset's).
    Preset(Box<PreTokenizer>),
}

#[derive(Debug, Clone)]
enum Step {
    Split {
        delimiter: Delimiter,
        behavior: Behavior,
        invert: bool,
    },
    /// Pieces of this many characters (the last one shorter).
    FixedLength(usize),
    /// A cut wherever the Unicode script changes (`UnicodeScripts`).
    Scripts,
}

/// A Hugging Face pre-tokenizer made of splitting steps.
#[derive(Debug, Clone)]
pub struct HfPreTokenizer {
    steps: Vec<Step>,
    /// The JSON it was read from (its spec after `hf:`).
    json: String,
}

impl HfPreTokenizer {
    /// Reads a `tokenizer.json` `pre_tokenizer` node. A component that changes the text
    /// (`Metaspace`, `ByteLevel` with `add_prefix_space`) or that tokenmill cannot run exactly is
    /// an error naming it.
    ///
    /// ```
    /// use tokenmill::pipeline::pretokenize::PreTokenizer;
    /// let p = PreTokenizer::from_spec(r#"hf:{"type":"Punctuation","behavior":"MergedWithPrevious"}"#).unwrap();
    /// assert_eq!(p.split("Hey, you!").unwrap(), ["Hey,", " you!"]);
    /// ```
    pub fn from_json(json: &str) -> Result<Self> {
        let node: Value = serde_json::from_str(json)
            .map_err(|e| Error::config(format!("a Hugging Face pre-tokenizer is a JSON object: {e}")))?;
        let mut steps = Vec::new();
        read_node(&node, &mut steps, 0)?;
        Ok(HfPreTokenizer { steps, json: serde_json::to_string(&node).expect("a JSON value serializes") })
    }

    pub fn json(&self) -> &str {
        &self.json
    }

    /// Whether every character of the text lands in some piece.
    pub fn is_lossless(&self) -> bool {
        self.steps.iter().all(|s| !matches!(s, Step::Split { behavior: Behavior::Removed, .. }))
    }

    /// Whether pieces may hold whitespace (false when a step drops every whitespace character).
    pub fn pieces_keep_whitespace(&self) -> bool {
        !self.steps.iter().any(|s| {
            matches!(s, Step::Split { delimiter: Delimiter::Whitespace, behavior: Behavior::Removed, invert: false })
        })
    }

    pub fn for_each_piece<'t>(&self, text: &'t str, f: &mut dyn FnMut(&'t str) -> Result<()>) -> Result<()> {
        run(&self.steps, text, f)
    }
}

/// The pieces of `text` cut by each of `steps` in turn.
fn run<'t>(steps: &[Step], text: &'t str, f: &mut dyn FnMut(&'t str) -> Result<()>) -> Result<()> {
    let Some((step, rest)) = steps.split_first() else {
        return if text.is_empty() { Ok(()) } else { f(text) };
    };
    match step {
        Step::FixedLength(n) => {
            let mut start = 0;
            for (k, (i, _)) in text.char_indices().enumerate() {
                if k > 0 && k % n == 0 {
                    run(rest, &text[start..i], f)?;
                    start = i;
                }
            }
            if start < text.len() {
                run(rest, &text[start..], f)?;
            }
            Ok(())
        }
        Step::Scripts => {
            // As tokenizers cuts: before each character whose script differs from the last
            // script seen; spaces (and characters of no script) neither cut nor count, and what
            // comes before the first cut is dropped.
            let mut cuts = Vec::new();
            let mut last = None;
            for (i, c) in text.char_indices() {
                let script = hf_script(c);
                if script.is_some() && last != Some(script) {
                    cuts.push(i);
                }
                if script.is_some() {
                    last = Some(script);
                }
            }
            cuts.push(text.len());
            for w in cuts.windows(2) {
                if w[1] > w[0] {
                    run(rest, &text[w[0]..w[1]], f)?;
                }
            }
            Ok(())
        }
        Step::Split { delimiter, behavior, invert } => {
            let matches = find_matches(delimiter, text)?;
            for (start, end) in pieces(matches, *behavior, *invert) {
                if end > start {
                    run(rest, &text[start..end], f)?;
                }
            }
            Ok(())
        }
    }
}

/// The script `UnicodeScripts` gives `c`: kana and the prolonged sound mark count as Han; a
/// space and characters unassigned in its (older) Unicode tables have none (`None`).
fn hf_script(c: char) -> Option<unicode_script::Script> {
    use unicode_script::{Script, UnicodeScript};
    if c == ' ' {
        return None;
    }
    if c == '\u{30FC}' {
        return Some(Script::Han);
    }
    if crate::util::hf_scripts::unassigned_then().contains(c) {
        return None;
    }
    let c = crate::util::hf_scripts::script_then(c).unwrap_or(c);
    match c.script() {
        Script::Unknown => None,
        Script::Hiragana | Script::Katakana => Some(Script::Han),
        s => Some(s),
    }
}

/// The delimiters in `text` and the text between them, in order, covering it: (start, end, is a
/// delimiter).
fn find_matches(delimiter: &Delimiter, text: &str) -> Result<Vec<(usize, usize, bool)>> {
    let mut out = Vec::new();
    let mut last = 0;
    let mut push = |start: usize, end: usize, out: &mut Vec<(usize, usize, bool)>| {
        if start > last {
            out.push((last, start, false));
        }
        out.push((start, end, true));
        last = end;
    };
    let class = |c: char| match delimiter {
        Delimiter::Whitespace => c.is_whitespace(),
        Delimiter::Punctuation => c.is_ascii_punctuation() || crate::util::bert_tables::punctuation().contains(c),
        Delimiter::Numeric => c.is_numeric(),
        Delimiter::Char(d) => c == *d,
        Delimiter::Regex { .. } | Delimiter::Preset(_) => false,
    };
    match delimiter {
        Delimiter::Regex { pattern, engine } => engine.for_each_match(pattern, text, |s, e| {
            push(s, e, &mut out);
            Ok(())
        })?,
        Delimiter::Preset(preset) => {
            let base = text.as_ptr() as usize;
            preset.for_each_piece(text, |piece| {
                let s = piece.as_ptr() as usize - base;
                push(s, s + piece.len(), &mut out);
                Ok(())
            })?
        }
        _ => {
            for (i, c) in text.char_indices() {
                if class(c) {
                    push(i, i + c.len_utf8(), &mut out);
                }
            }
        }
    }
    if last < text.len() {
        out.push((last, text.len(), false));
    }
    Ok(out)
}

/// The spans that stay pieces, once `behavior` has said what becomes of each delimiter.
fn pieces(matches: Vec<(usize, usize, bool)>, behavior: Behavior, invert: bool) -> Vec<(usize, usize)> {
    let matches = matches.into_iter().map(|(s, e, m)| (s, e, m != invert));
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut previous_match = false;
    match behavior {
        Behavior::Removed => out.extend(matches.filter(|m| !m.2).map(|(s, e, _)| (s, e))),
        Behavior::Isolated => out.extend(matches.map(|(s, e, _)| (s, e))),
        Behavior::Contiguous | Behavior::MergedWithPrevious => {
            for (s, e, is_match) in matches {
                let glue = match behavior {
                    Behavior::Contiguous => is_match == previous_match,
                    _ => is_match && !previous_match,
                };
                match out.last_mut() {
                    Some(last) if glue => last.1 = e,
                    _ => out.push((s, e)),
                }
                previous_match = is_match;
            }
        }
        Behavior::MergedWithNext => {
            let all: Vec<_> = matches.collect();
            for &(s, e, is_match) in all.iter().rev() {
                match out.last_mut() {
                    Some(last) if is_match && !previous_match => last.0 = s,
                    _ => out.push((s, e)),
                }
                previous_match = is_match;
            }
            out.reverse();
        }
    }
    out
}

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 32;

fn read_node(node: &Value, steps: &mut Vec<Step>, depth: usize) -> Result<()> {
    let kind = node.get("type").and_then(Value::as_str).ok_or_else(|| {
        Error::config(format!("a Hugging Face pre-tokenizer needs a \"type\": {}", shorten(&node.to_string())))
    })?;
    let bad = |what: String| Error::config(format!("pre-tokenizer {kind}: {what}"));
    let flag = |key: &str, default: bool| match node.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(bad(format!("{key} must be true or false, not {other}"))),
    };
    let behavior = |default: Option<Behavior>| -> Result<Behavior> {
        match node.get("behavior").and_then(Value::as_str) {
            Some("Removed") => Ok(Behavior::Removed),
            Some("Isolated") => Ok(Behavior::Isolated),
            Some("MergedWithPrevious") => Ok(Behavior::MergedWithPrevious),
            Some("MergedWithNext") => Ok(Behavior::MergedWithNext),
            Some("Contiguous") => Ok(Behavior::Contiguous),
            None if node.get("behavior").is_none() && default.is_some() => Ok(default.expect("checked")),
            _ => Err(bad(format!(
                "behavior must be Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous, not {}",
                node.get("behavior").map_or("nothing".into(), Value::to_string)
            ))),
        }
    };
    let split = |delimiter, behavior, invert| Step::Split { delimiter, behavior, invert };
    match kind {
        "Sequence" => {
            if depth >= MAX_DEPTH {
                return Err(bad(format!("nested more than {MAX_DEPTH} deep")));
            }
            let list = node
                .get("pretokenizers")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("no pretokenizers list".into()))?;
            for child in list {
                read_node(child, steps, depth + 1)?;
            }
        }
        "Whitespace" => steps.push(split(regex(WORDS_AND_SYMBOLS)?, Behavior::Removed, true)),
        "WhitespaceSplit" => steps.push(split(Delimiter::Whitespace, Behavior::Removed, false)),
        "BertPreTokenizer" => {
            steps.push(split(Delimiter::Whitespace, Behavior::Removed, false));
            steps.push(split(Delimiter::Punctuation, Behavior::Isolated, false));
        }
        "Punctuation" => steps.push(split(Delimiter::Punctuation, behavior(Some(Behavior::Isolated))?, false)),
        "Digits" => {
            let each = flag("individual_digits", false)?;
            steps.push(split(Delimiter::Numeric, if each { Behavior::Isolated } else { Behavior::Contiguous }, false));
        }
        "CharDelimiterSplit" => {
            let d = node.get("delimiter").and_then(Value::as_str).unwrap_or_default();
            let mut chars = d.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => steps.push(split(Delimiter::Char(c), Behavior::Removed, false)),
                _ => return Err(bad(format!("the delimiter must be one character, not {d:?}"))),
            }
        }
        "Split" => {
            let pattern = node.get("pattern").ok_or_else(|| bad("no pattern".into()))?;
            let delimiter =
                match (pattern.get("String").and_then(Value::as_str), pattern.get("Regex").and_then(Value::as_str)) {
                    (Some(s), None) => regex(&regex_syntax::escape(s))?,
                    (None, Some(r)) => match PreTokenizer::preset_for_pattern(r) {
                        Some(name) => Delimiter::Preset(Box::new(PreTokenizer::from_spec(name)?)),
                        None => regex(r)?,
                    },
                    _ => {
                        return Err(bad(format!(
                            "pattern must be {{\"String\": …}} or {{\"Regex\": …}}, not {pattern}"
                        )))
                    }
                };
            steps.push(split(delimiter, behavior(None)?, flag("invert", false)?));
        }
        "FixedLength" => {
            let length = match node.get("length") {
                None => 5,
                Some(v) => v
                    .as_u64()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| bad(format!("length must be a positive integer, not {v}")))?,
            };
            steps.push(Step::FixedLength(usize::try_from(length).unwrap_or(usize::MAX)));
        }
        "UnicodeScripts" => steps.push(Step::Scripts),
        "ByteLevel" => {
            if flag("add_prefix_space", true)? {
                return Err(bad(
                    "add_prefix_space puts a space before every piece; tokenmill runs it only as the first step".into(),
                ));
            }
            if flag("use_regex", true)? {
                steps.push(split(Delimiter::Preset(Box::new(PreTokenizer::Gpt2)), Behavior::Isolated, false));
            }
        }
        other => {
            return Err(Error::config(format!(
                "pre-tokenizer {other} is not one tokenmill runs exactly (it runs Whitespace, WhitespaceSplit, \
                 BertPreTokenizer, Punctuation, Digits, CharDelimiterSplit, Split, FixedLength, UnicodeScripts, \
                 ByteLevel and Sequences of them here)"
            )))
        }
    }
    Ok(())
}

fn regex(pattern: &str) -> Result<Delimiter> {
    let engine = Engine::new(pattern).map_err(|reason| Error::Pattern { pattern: pattern.to_string(), reason })?;
    Ok(Delimiter::Regex { pattern: pattern.to_string(), engine: Arc::new(engine) })
}

fn shorten(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(json: &str, text: &str) -> Vec<String> {
        let p = HfPreTokenizer::from_json(json).unwrap();
        let mut out = Vec::new();
        p.for_each_piece(text, &mut |piece| {
            out.push(piece.to_string());
            Ok(())
        })
        .unwrap();
        out
    }

    /// The five behaviours on the example `tokenizers` documents ("the-final--countdown" split
    /// on "-").
    #[test]
    fn each_behavior() {
        let text = "the-final--countdown";
        let on_dash =
            |b: &str| format!(r#"{{"type":"Split","pattern":{{"String":"-"}},"behavior":"{b}","invert":false}}"#);
        assert_eq!(split(&on_dash("Removed"), text), ["the", "final", "countdown"]);
        assert_eq!(split(&on_dash("Isolated"), text), ["the", "-", "final", "-", "-", "countdown"]);
        assert_eq!(split(&on_dash("MergedWithPrevious"), text), ["the-", "final-", "-", "countdown"]);
        assert_eq!(split(&on_dash("MergedWithNext"), text), ["the", "-final", "-", "-countdown"]);
        assert_eq!(split(&on_dash("Contiguous"), text), ["the", "-", "final", "--", "countdown"]);
    }

    #[test]
    fn invert_keeps_what_the_pattern_matches() {
        let json = r#"{"type":"Split","pattern":{"Regex":"\\d+"},"behavior":"Removed","invert":true}"#;
        assert_eq!(split(json, "a12b345"), ["12", "345"]);
    }

    #[test]
    fn named_pre_tokenizers() {
        assert_eq!(split(r#"{"type":"Whitespace"}"#, "Hey man!? ok"), ["Hey", "man", "!?", "ok"]);
        assert_eq!(split(r#"{"type":"WhitespaceSplit"}"#, " Hey man!?\tok "), ["Hey", "man!?", "ok"]);
        assert_eq!(split(r#"{"type":"Digits","individual_digits":false}"#, "a123b4"), ["a", "123", "b", "4"]);
        assert_eq!(split(r#"{"type":"Digits","individual_digits":true}"#, "a123"), ["a", "1", "2", "3"]);
        assert_eq!(split(r#"{"type":"CharDelimiterSplit","delimiter":"|"}"#, "a||b|c"), ["a", "b", "c"]);
        assert_eq!(split(r#"{"type":"FixedLength","length":2}"#, "abcdé"), ["ab", "cd", "é"]);
        assert_eq!(split(r#"{"type":"BertPreTokenizer"}"#, "Hi, you."), ["Hi", ",", "you", "."]);
        let seq = r#"{"type":"Sequence","pretokenizers":[{"type":"WhitespaceSplit"},{"type":"Digits","individual_digits":true}]}"#;
        assert_eq!(split(seq, "ab12 c3"), ["ab", "1", "2", "c", "3"]);
        let byte_level = r#"{"type":"ByteLevel","add_prefix_space":false,"use_regex":true}"#;
        assert_eq!(split(byte_level, "Hi  there"), ["Hi", " ", " there"]);
    }

    #[test]
    fn what_it_cannot_run_is_an_error_naming_it() {
        for (json, named) in [
            (r#"{"type":"Metaspace","replacement":"▁"}"#, "Metaspace"),
            (r#"{"type":"Nonesuch"}"#, "Nonesuch"),
            (r#"{"type":"ByteLevel","add_prefix_space":true}"#, "add_prefix_space"),
            (r#"{"type":"Split","pattern":{"Regex":"("},"behavior":"Removed","invert":false}"#, "("),
            (r#"{"type":"Split","pattern":{"Regex":"a"},"behavior":"Sideways","invert":false}"#, "Sideways"),
            (r#"{"type":"FixedLength","length":0}"#, "length"),
            (r#"{"type":"CharDelimiterSplit","delimiter":"ab"}"#, "one character"),
            (r#"{"pretokenizers":[]}"#, "type"),
        ] {
            let e = HfPreTokenizer::from_json(json).unwrap_err().to_string();
            assert!(e.contains(named), "{json}: {e}");
        }
        let deep = (0..40).fold(r#"{"type":"Whitespace"}"#.to_string(), |inner, _| {
            format!(r#"{{"type":"Sequence","pretokenizers":[{inner}]}}"#)
        });
        assert!(HfPreTokenizer::from_json(&deep).unwrap_err().to_string().contains("nested"));
    }
}
