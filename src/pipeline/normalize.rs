//! Normalization: the first stage of the pipeline, applied to text before pre-tokenization.
//! A normalizer is a sequence of steps named in a spec string such as `"nfkc+lowercase"`.

use crate::error::{Error, Result};
use crate::pipeline::normalize_huggingface::HfNormalizer;
use crate::pipeline::normalize_sentencepiece::{
    MetaspaceStretch, SentencePieceNormalizer, SentencePieceNormalizerSpec,
};
use std::borrow::Cow;
use unicode_normalization::{
    is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick, IsNormalized, UnicodeNormalization,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    Lowercase,
    /// Remove combining marks after decomposition (`é` → `e`); implies NFD first.
    StripAccents,
    /// Put a space in front of text that does not start with one (GPT-2's `add_prefix_space`).
    PrefixSpace,
    /// BERT's text cleaning: drop NUL, U+FFFD and control/format characters; every whitespace
    /// character becomes a space.
    CleanText,
    /// BERT's handling of Chinese characters: a space on each side of every CJK ideograph.
    CjkSpaces,
    /// BERT's accent stripping: decompose (NFD), then drop nonspacing marks (`\p{Mn}`) only.
    StripMarks,
    /// Lowercase character by character (BERT; no word-final sigma rule).
    LowercaseChars,
}

/// What the steps make of each ASCII byte (`DROPPED`: nothing), found on first use; the prefix
/// space, the one step that is not a byte-for-byte map, is left to the callers. Derived from the
/// steps, so it takes no part in comparing normalizers.
#[derive(Debug, Clone, Default)]
struct AsciiMap(std::sync::OnceLock<[u8; 128]>);

impl PartialEq for AsciiMap {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

const DROPPED: u8 = 0xFF;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Normalizer {
    ascii: AsciiMap,
    steps: Vec<Step>,
    /// SentencePiece's normalizer (rules and whitespace handling), applied after the steps.
    sentencepiece: Option<std::sync::Arc<SentencePieceNormalizer>>,
    /// Hugging Face's normalizers (spelled `hf:` and their JSON), in place of the steps.
    huggingface: Option<std::sync::Arc<HfNormalizer>>,
}

impl Normalizer {
    /// Parses `"nfc"`, `"nfkc+lowercase"`, `"nfd+strip_accents"`, … ; `""` or `"none"` is no-op.
    ///
    /// ```
    /// use tokenmill::pipeline::normalize::Normalizer;
    /// let n = Normalizer::from_spec("nfkc+lowercase").unwrap();
    /// assert_eq!(n.apply("Ｈｅｌｌｏ"), "hello");
    /// ```
    pub fn from_spec(spec: &str) -> Result<Self> {
        if let Some(json) = spec.strip_prefix("hf:") {
            let hf = HfNormalizer::from_json(json)?;
            return Ok(Normalizer { huggingface: Some(std::sync::Arc::new(hf)), ..Normalizer::default() });
        }
        let mut steps = Vec::new();
        let mut sentencepiece = None;
        for name in spec.split('+').map(str::trim).filter(|s| !s.is_empty() && *s != "none") {
            if sentencepiece.is_some() {
                return Err(Error::config(format!("normalizer {spec:?}: \"sentencepiece\" must be the last step")));
            }
            if name == "sentencepiece" {
                sentencepiece =
                    Some(std::sync::Arc::new(SentencePieceNormalizer::new(SentencePieceNormalizerSpec::basic())));
                continue;
            }
            steps.push(match name.to_ascii_lowercase().as_str() {
                "nfc" => Step::Nfc,
                "nfd" => Step::Nfd,
                "nfkc" => Step::Nfkc,
                "nfkd" => Step::Nfkd,
                "lowercase" | "lower" => Step::Lowercase,
                "strip_accents" => Step::StripAccents,
                "prefix_space" => Step::PrefixSpace,
                "clean_text" => Step::CleanText,
                "cjk_spaces" => Step::CjkSpaces,
                "strip_marks" => Step::StripMarks,
                "lowercase_chars" => Step::LowercaseChars,
                other => {
                    return Err(Error::config(format!(
                        "unknown normalizer step {other:?}; use nfc, nfd, nfkc, nfkd, lowercase, strip_accents, \
                         prefix_space, clean_text, cjk_spaces, strip_marks, lowercase_chars, sentencepiece"
                    )))
                }
            });
        }
        Ok(Normalizer { steps, sentencepiece, huggingface: None, ascii: AsciiMap::default() })
    }

    /// This normalizer followed by SentencePiece's.
    pub fn with_sentencepiece(mut self, spec: SentencePieceNormalizerSpec) -> Self {
        self.sentencepiece = Some(std::sync::Arc::new(SentencePieceNormalizer::new(spec)));
        self
    }

    /// The SentencePiece part's settings, if there is one.
    pub fn sentencepiece(&self) -> Option<&SentencePieceNormalizerSpec> {
        self.sentencepiece.as_deref().map(SentencePieceNormalizer::spec)
    }

    /// Where SentencePiece's normalizer places the end of `text`'s normalized form in it, the
    /// output ending with what `text[..read]` gives (`None`: empty); see
    /// `SentencePieceNormalizer::end_in`. (Steps before SentencePiece's, which only Hugging
    /// Face-style pipelines have, are not looked through: the end of the text.)
    pub fn sentencepiece_end(&self, text: &str, read: Option<usize>) -> usize {
        match &self.sentencepiece {
            Some(sp) if self.steps.is_empty() && self.huggingface.is_none() => sp.end_in(text, read),
            _ => text.len(),
        }
    }

    pub fn spec(&self) -> String {
        if let Some(hf) = &self.huggingface {
            return format!("hf:{}", hf.json());
        }
        let names: Vec<&str> = self
            .steps
            .iter()
            .map(|s| match s {
                Step::Nfc => "nfc",
                Step::Nfd => "nfd",
                Step::Nfkc => "nfkc",
                Step::Nfkd => "nfkd",
                Step::Lowercase => "lowercase",
                Step::StripAccents => "strip_accents",
                Step::PrefixSpace => "prefix_space",
                Step::CleanText => "clean_text",
                Step::CjkSpaces => "cjk_spaces",
                Step::StripMarks => "strip_marks",
                Step::LowercaseChars => "lowercase_chars",
            })
            .collect();
        let mut names = names;
        if self.sentencepiece().is_some_and(SentencePieceNormalizerSpec::is_basic) {
            names.push("sentencepiece");
        }
        if names.is_empty() {
            "none".into()
        } else {
            names.join("+")
        }
    }

    /// Whether this normalizer ends by putting a space in front of the text (ByteLevel's
    /// `add_prefix_space`, which Hugging Face applies to each stretch between added tokens).
    pub fn adds_prefix_space(&self) -> bool {
        self.huggingface.is_none() && self.steps.contains(&Step::PrefixSpace)
    }

    /// This normalizer without its prefix space (see `adds_prefix_space`).
    pub fn without_prefix_space(&self) -> Normalizer {
        let mut n = self.clone();
        n.steps.retain(|s| *s != Step::PrefixSpace);
        n
    }

    /// This normalizer without the `Metaspace` part Hugging Face runs per stretch between
    /// `normalized: true` added tokens, and that part (see `MetaspaceStretch`); `None` when it
    /// has no such part.
    pub fn metaspace_stretches(&self) -> Option<(Normalizer, MetaspaceStretch)> {
        let (text, stretch) = self.sentencepiece.as_deref()?.metaspace_stretches()?;
        let mut n = self.clone();
        n.sentencepiece = Some(std::sync::Arc::new(text));
        Some((n, stretch))
    }

    /// The normalizer a `normalized: true` added token's own spelling goes through: without the
    /// parts Hugging Face runs after such tokens are matched (ByteLevel's prefix space, Metaspace).
    pub fn for_added_tokens(&self) -> Normalizer {
        let n = self.without_prefix_space();
        n.metaspace_stretches().map_or(n, |(text, _)| text)
    }

    pub fn is_identity(&self) -> bool {
        self.steps.is_empty() && self.sentencepiece.is_none() && self.huggingface.is_none()
    }

    pub fn apply<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.apply_at(text, true)
    }

    /// `apply` for a stretch of the input: `at_start` says whether it starts the input (one after
    /// a special token does not), which a `Metaspace` prefix of scheme `first` asks.
    pub fn apply_at<'t>(&self, text: &'t str, at_start: bool) -> Cow<'t, str> {
        let out = self.apply_steps(text);
        match &self.sentencepiece {
            Some(sp) => Cow::Owned(sp.apply(&out, at_start)),
            None => out,
        }
    }

    fn apply_steps<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if let Some(hf) = &self.huggingface {
            let out = hf.apply(text);
            return if out == text { Cow::Borrowed(text) } else { Cow::Owned(out) };
        }
        // ASCII text through a table, in one pass: each step allocating its own copy (and BERT's
        // accent stripping decomposing every character) was a third of encoding English with a
        // BERT tokenizer.
        if !self.steps.is_empty() && !self.steps.contains(&Step::PrefixSpace) && text.is_ascii() {
            let map = self.ascii_map();
            let bytes = text.as_bytes();
            if bytes.iter().all(|&b| map[b as usize] == b) {
                return Cow::Borrowed(text);
            }
            let out: Vec<u8> = bytes.iter().map(|&b| map[b as usize]).filter(|&b| b != DROPPED).collect();
            return Cow::Owned(String::from_utf8(out).expect("ASCII maps to ASCII"));
        }
        self.apply_each_step(text)
    }

    /// The steps applied one after another (what `apply_steps`'s ASCII table stands for).
    fn apply_each_step<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for step in &self.steps {
            // Most text is already in the form asked for, and the quick check (one table look-up
            // per character) says so at several times the speed of recomposing it.
            let already = match step {
                Step::Nfc => is_nfc_quick(out.chars()),
                Step::Nfd => is_nfd_quick(out.chars()),
                Step::Nfkc => is_nfkc_quick(out.chars()),
                Step::Nfkd => is_nfkd_quick(out.chars()),
                _ => IsNormalized::No,
            };
            if already == IsNormalized::Yes {
                continue;
            }
            out = Cow::Owned(match step {
                Step::Nfc => out.nfc().collect(),
                Step::Nfd => out.nfd().collect(),
                Step::Nfkc => out.nfkc().collect(),
                Step::Nfkd => out.nfkd().collect(),
                Step::Lowercase => out.to_lowercase(),
                Step::StripAccents => {
                    out.nfd().filter(|c| !unicode_normalization::char::is_combining_mark(*c)).collect()
                }
                Step::PrefixSpace => {
                    if out.is_empty() || out.starts_with(' ') {
                        continue;
                    }
                    format!(" {out}")
                }
                Step::CleanText => {
                    let other = crate::util::charset::other();
                    out.chars()
                        .filter(|&c| {
                            !(c == '\0' || c == '\u{FFFD}' || (!matches!(c, '\t' | '\n' | '\r') && other.contains(c)))
                        })
                        .map(|c| if c.is_whitespace() { ' ' } else { c })
                        .collect()
                }
                Step::CjkSpaces => {
                    if !out.chars().any(is_cjk_ideograph) {
                        continue;
                    }
                    let mut s = String::with_capacity(out.len() + 16);
                    for c in out.chars() {
                        if is_cjk_ideograph(c) {
                            s.push(' ');
                            s.push(c);
                            s.push(' ');
                        } else {
                            s.push(c);
                        }
                    }
                    s
                }
                Step::StripMarks => {
                    let marks = crate::util::bert_tables::marks();
                    crate::util::bert_tables::decompose(&out).chars().filter(|&c| !marks.contains(c)).collect()
                }
                Step::LowercaseChars => out.chars().flat_map(char::to_lowercase).collect(),
            });
        }
        out
    }
}

impl Normalizer {
    /// The table of `AsciiMap`, made on first use: every step maps an ASCII character to at
    /// most one ASCII character on its own (nothing composes, nothing looks at context).
    fn ascii_map(&self) -> &[u8; 128] {
        self.ascii.0.get_or_init(|| {
            let other = self.steps.contains(&Step::CleanText).then(crate::util::charset::other);
            let mut map = [DROPPED; 128];
            'bytes: for (b, slot) in map.iter_mut().enumerate() {
                let mut c = b as u8 as char;
                for step in &self.steps {
                    c = match step {
                        Step::Lowercase | Step::LowercaseChars => c.to_ascii_lowercase(),
                        Step::CleanText => {
                            let drop =
                                other.as_ref().is_some_and(|o| !matches!(c, '\t' | '\n' | '\r') && o.contains(c));
                            if c == '\0' || drop {
                                continue 'bytes;
                            }
                            if c.is_whitespace() {
                                ' '
                            } else {
                                c
                            }
                        }
                        // Identity on ASCII: no decomposition, no marks, no ideographs (and the
                        // prefix space adds a byte rather than mapping one).
                        Step::Nfc | Step::Nfd | Step::Nfkc | Step::Nfkd => c,
                        Step::StripAccents | Step::StripMarks | Step::CjkSpaces | Step::PrefixSpace => c,
                    };
                }
                *slot = c as u8;
            }
            map
        })
    }

    /// `steps_aligned` for ASCII text, byte by byte: every step maps an ASCII character to at
    /// most one ASCII character on its own (nothing composes, nothing looks at context), so each
    /// output byte comes from one input byte. Normalizing the text stretch by stretch allocated
    /// per character: on a BERT sentence it was most of `encode_for_model`'s time.
    fn ascii_aligned(&self, text: &str, prefix: bool) -> Option<(String, Alignment)> {
        let mut out = String::with_capacity(text.len() + 1);
        let mut align = Vec::with_capacity(text.len() + 1);
        if prefix {
            out.push(' ');
            align.push((0, 0));
        }
        let map = self.ascii_map();
        for (i, &b) in text.as_bytes().iter().enumerate() {
            let mapped = map[b as usize];
            if mapped != DROPPED {
                out.push(char::from(mapped));
                align.push((i as u32, i as u32 + 1));
            }
        }
        Some((out, align))
    }
}

/// A Unicode normal form of `text` with the alignment Hugging Face's normalizers give it: each
/// output character comes from one source character. Decomposing, a character's first part
/// takes its place and the others are added after it (aligned with it); reordering marks moves
/// those places with them; composing, the result takes the place of its first part and the
/// others' places are dropped. The places are then handed out in order: a character that takes
/// a place gets the next source character, one that was added the one before.
pub(crate) fn unicode_form_aligned(text: &str, form: Step) -> Option<(String, Alignment)> {
    use unicode_normalization::char::{
        canonical_combining_class as ccc, compose, decompose_canonical, decompose_compatible,
    };
    // (character, change): 0 takes a place, +1 is added, -n takes a place and drops n more.
    let mut chars: Vec<(char, isize)> = Vec::with_capacity(text.len());
    for c in text.chars() {
        let mut first = true;
        let mut push = |d: char| {
            chars.push((d, if first { 0 } else { 1 }));
            first = false;
        };
        match form {
            Step::Nfd | Step::Nfc => decompose_canonical(c, &mut push),
            _ => decompose_compatible(c, &mut push),
        }
    }
    // Canonical order: each run of non-starters sorted by combining class, stably.
    let mut i = 0;
    while i < chars.len() {
        if ccc(chars[i].0) == 0 {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && ccc(chars[i].0) != 0 {
            i += 1;
        }
        chars[start..i].sort_by_key(|&(c, _)| ccc(c));
    }
    if matches!(form, Step::Nfc | Step::Nfkc) {
        let mut out: Vec<(char, isize)> = Vec::with_capacity(chars.len());
        let mut starter: Option<usize> = None;
        let mut last_class: Option<u8> = None;
        for (c, change) in chars {
            let class = ccc(c);
            if let Some(s) = starter {
                // Not blocked: nothing in between, or everything in between of a lower class.
                let blocked = matches!(last_class, Some(l) if l == 0 || l >= class);
                if !blocked {
                    if let Some(composed) = compose(out[s].0, c) {
                        out[s] = (composed, out[s].1 + change - 1);
                        continue;
                    }
                }
            }
            if class == 0 {
                starter = Some(out.len());
                last_class = None;
            } else {
                last_class = Some(class);
            }
            out.push((c, change));
        }
        chars = out;
    }
    let sources: Vec<(u32, u32)> = text.char_indices().map(|(i, c)| (i as u32, (i + c.len_utf8()) as u32)).collect();
    let mut next = 0usize;
    let mut normalized = String::with_capacity(text.len());
    let mut align = Vec::with_capacity(text.len());
    for (c, change) in chars {
        let source = if change > 0 {
            next.checked_sub(1).map_or((0, 0), |k| sources[k])
        } else {
            let here = *sources.get(next)?;
            next += 1 + (-change) as usize;
            here
        };
        normalized.push(c);
        align.extend(std::iter::repeat_n(source, c.len_utf8()));
    }
    Some((normalized, align))
}

/// The CJK ideograph blocks BERT puts spaces around.
fn is_cjk_ideograph(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B920..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// For each byte of a normalized text, the byte range of the original text it came from.
pub type Alignment = Vec<(u32, u32)>;

impl Normalizer {
    /// `apply`, and where each normalized byte came from (`None` when nothing changes).
    ///
    /// The text is normalized in stretches that each start at a character with combining class
    /// 0 — the units composition and decomposition work within — so every output byte maps to
    /// the stretch it came from. In the rare case where stretch by stretch gives another result
    /// than the whole text (a context rule such as a final sigma), every byte maps to the whole
    /// text: offsets then stay valid, only coarse. A prefix space maps to the empty range at 0.
    pub fn apply_aligned<'t>(&self, text: &'t str) -> (Cow<'t, str>, Option<Alignment>) {
        self.apply_aligned_at(text, true)
    }

    /// `apply_aligned` for a stretch of the input (see `apply_at`).
    pub fn apply_aligned_at<'t>(&self, text: &'t str, at_start: bool) -> (Cow<'t, str>, Option<Alignment>) {
        let (stepped, first) = self.steps_aligned(text);
        let Some(sp) = &self.sentencepiece else {
            return (stepped, first);
        };
        let (out, second) = sp.apply_aligned(&stepped, at_start);
        let Some(first) = first else {
            return (Cow::Owned(out), Some(second));
        };
        // Through both: a range of the stepped text is the span of its bytes' sources.
        let source = |s: u32, e: u32| {
            if s == e {
                let at = first.get(s as usize).map_or(text.len() as u32, |r| r.0);
                (at, at)
            } else {
                (first[s as usize].0, first[e as usize - 1].1)
            }
        };
        let composed = second.into_iter().map(|(s, e)| source(s, e)).collect();
        (Cow::Owned(out), Some(composed))
    }

    fn steps_aligned<'t>(&self, text: &'t str) -> (Cow<'t, str>, Option<Alignment>) {
        if let Some(hf) = &self.huggingface {
            let (out, align) = hf.apply_aligned(text);
            return (Cow::Owned(out), Some(align));
        }
        let whole = self.apply_steps(text);
        if *whole == *text {
            return (whole, None);
        }
        let prefix = self.steps.contains(&Step::PrefixSpace) && !whole.is_empty() && !text.starts_with(' ');
        // The space put in front stands for the text's first character, as Hugging Face aligns
        // what `prepend` adds (a token of that space alone then covers the first character).
        let with_prefix = |mut align: Alignment| {
            if prefix && align.len() > 1 {
                align[0] = align[1];
            }
            align
        };
        if text.is_ascii() {
            if let Some(aligned) = self.ascii_aligned(text, prefix).filter(|(out, _)| *out == *whole) {
                return (whole, Some(with_prefix(aligned.1)));
            }
        }
        if let [form @ (Step::Nfc | Step::Nfd | Step::Nfkc | Step::Nfkd)] = self.steps.as_slice() {
            if let Some(align) = unicode_form_aligned(text, *form).filter(|(out, _)| *out == *whole) {
                return (whole, Some(align.1));
            }
        }
        let align = self.stretch_aligned(text, &whole, prefix);
        (whole, Some(with_prefix(align)))
    }

    /// The alignment of `whole` (the steps applied to `text`), stretch by stretch.
    fn stretch_aligned(&self, text: &str, whole: &str, prefix: bool) -> Alignment {
        let steps = Normalizer {
            steps: self.steps.iter().copied().filter(|s| *s != Step::PrefixSpace).collect(),
            // The same table (it leaves the prefix space out): made once, not once a call.
            ascii: self.ascii.clone(),
            ..Normalizer::default()
        };
        let mut out = String::with_capacity(whole.len());
        let mut align: Alignment = Vec::with_capacity(whole.len());
        if prefix {
            out.push(' ');
            align.push((0, 0));
        }
        let mut start = 0;
        let boundaries = text
            .char_indices()
            .filter(|&(i, c)| i > 0 && unicode_normalization::char::canonical_combining_class(c) == 0)
            .map(|(i, _)| i)
            .chain(std::iter::once(text.len()));
        for end in boundaries {
            let segment = &text[start..end];
            let part = steps.apply(segment);
            out.push_str(&part);
            // Finer still where the stretch normalizes character by character (accents
            // stripped, say): each output byte then maps to its own character.
            let by_char: Vec<(usize, Cow<str>)> = if segment.chars().nth(1).is_some() {
                segment.char_indices().map(|(i, c)| (i, steps.apply(&segment[i..i + c.len_utf8()]))).collect()
            } else {
                Vec::new()
            };
            if !by_char.is_empty()
                && by_char.iter().map(|(_, p)| p.len()).sum::<usize>() == part.len()
                && by_char.iter().map(|(_, p)| p.as_ref()).collect::<String>() == *part
            {
                for (i, piece) in &by_char {
                    let c_end = start + i + segment[*i..].chars().next().map_or(0, char::len_utf8);
                    align.extend(std::iter::repeat_n(((start + i) as u32, c_end as u32), piece.len()));
                }
            } else {
                align.extend(std::iter::repeat_n((start as u32, end as u32), part.len()));
            }
            start = end;
        }
        if out != *whole {
            return vec![(0, text.len() as u32); whole.len()];
        }
        align
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On ASCII text the one-pass table gives what the steps give one after another, for every
    /// step (and BERT's sequence), on every ASCII byte.
    #[test]
    fn the_ascii_table_equals_the_steps() {
        let every_byte: String = (0u8..128).map(char::from).collect();
        let specs = [
            "lowercase",
            "lowercase_chars",
            "clean_text",
            "strip_accents",
            "strip_marks",
            "cjk_spaces",
            "nfc",
            "nfkd",
            "clean_text+cjk_spaces+strip_marks+lowercase_chars",
            "nfkc+lowercase",
        ];
        for spec in specs {
            let n = Normalizer::from_spec(spec).unwrap();
            for text in [every_byte.as_str(), "Hello,\tWorld!\r\n\0\x7f", "already plain", ""] {
                assert_eq!(n.apply_steps(text), n.apply_each_step(text), "{spec} on {text:?}");
            }
        }
    }

    #[test]
    fn ascii_alignment_equals_the_stretch_by_stretch_one() {
        let specs = [
            "clean_text+cjk_spaces+strip_marks+lowercase_chars",
            "clean_text+cjk_spaces",
            "nfkc+lowercase",
            "prefix_space+nfc",
            "nfd+strip_accents+lowercase",
        ];
        let texts = ["The Quick\tbrown\r\nFOX.", " lead", "a\u{0}b\u{1}c\u{7f}d\u{1c}e", "", "   ", "x"];
        for spec in specs {
            let n = Normalizer::from_spec(spec).unwrap();
            for text in texts {
                let whole = n.apply_steps(text);
                let prefix = n.steps.contains(&Step::PrefixSpace) && !whole.is_empty() && !text.starts_with(' ');
                let (out, fast) = n.ascii_aligned(text, prefix).unwrap();
                assert_eq!(out, *whole, "{spec} {text:?}");
                assert_eq!(fast, n.stretch_aligned(text, &whole, prefix), "{spec} {text:?}");
            }
        }
    }

    #[test]
    fn alignment_maps_each_byte_to_its_source() {
        let n = Normalizer::from_spec("nfc+lowercase").unwrap();
        let (text, align) = n.apply_aligned("Ae\u{301}B");
        assert_eq!(text, "aéb");
        let align = align.unwrap();
        assert_eq!(align.len(), text.len());
        assert_eq!(align[0], (0, 1));
        assert_eq!(align[1], (1, 4)); // é from e + U+0301
        assert_eq!(align[3], (4, 5));
        assert!(Normalizer::from_spec("nfc").unwrap().apply_aligned("plain").1.is_none());
        let (spaced, align) = Normalizer::from_spec("prefix_space").unwrap().apply_aligned("hi");
        assert_eq!((spaced.as_ref(), align.unwrap()[0]), (" hi", (0, 1)));
    }

    #[test]
    fn steps_apply_in_order() {
        assert_eq!(Normalizer::from_spec("nfd+strip_accents").unwrap().apply("Café"), "Cafe");
        assert_eq!(Normalizer::from_spec("lowercase").unwrap().apply("ÀB"), "àb");
        assert_eq!(Normalizer::from_spec("nfc").unwrap().apply("e\u{301}"), "é");
        assert!(Normalizer::from_spec("").unwrap().is_identity());
        assert!(Normalizer::from_spec("nfx").is_err());
    }
}
