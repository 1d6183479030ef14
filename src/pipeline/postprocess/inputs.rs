//! From text to model inputs: the model's tokens with their offsets and words, then
//! truncation, the post-processor and padding — for one input, a pair, or a batch.

use super::{Encoding, Padding, PostProcessor, Truncation};
use crate::error::{Error, Result};
use crate::models::piece_cache;
use crate::models::vocab::Vocab;
use crate::pipeline::normalize::Alignment;
use crate::pipeline::special::Segment;
use crate::tokenizer::Tokenizer;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The longest padded length accepted: padding allocates it for every input of a batch, so an
/// absurd number must be refused rather than tried.
const MAX_PADDED_LENGTH: usize = 1 << 24;

/// A tokenizer's model-input settings; each is optional (none: bare ids, nothing cut or padded).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInputs {
    #[serde(default)]
    pub post_processor: Option<PostProcessor>,
    #[serde(default)]
    pub truncation: Option<Truncation>,
    #[serde(default)]
    pub padding: Option<Padding>,
}

impl ModelInputs {
    pub fn is_empty(&self) -> bool {
        *self == ModelInputs::default()
    }

    /// Checks the settings against a vocabulary: every inserted id exists, templates are whole,
    /// the stride leaves room to move forward.
    pub fn check(&self, vocab: &Vocab) -> Result<()> {
        if let Some(p) = &self.post_processor {
            p.validate()?;
            for id in p.inserted_ids() {
                vocab.token_bytes(id).map_err(|_| {
                    Error::config(format!("the post-processor inserts token id {id}, which the vocabulary lacks"))
                })?;
            }
        }
        if let Some(t) = &self.truncation {
            if t.stride >= t.max_length && t.max_length > 0 {
                return Err(Error::config(format!(
                    "stride {} must be less than max_length {}",
                    t.stride, t.max_length
                )));
            }
            let added = self.post_processor.as_ref().map_or(0, |p| p.added_tokens(false));
            if t.max_length < added && !t.whole_below_template {
                return Err(Error::config(format!(
                    "max_length {} is shorter than the {added} special tokens the template adds",
                    t.max_length
                )));
            }
        }
        if let Some(p) = &self.padding {
            for (name, value) in [("padding length", p.length), ("pad_to_multiple_of", p.multiple_of)] {
                if let Some(v) = value.filter(|&v| v > MAX_PADDED_LENGTH) {
                    return Err(Error::config(format!(
                        "{name} {v} is larger than {MAX_PADDED_LENGTH} tokens, which no model takes"
                    )));
                }
            }
            vocab
                .token_bytes(p.pad_id)
                .map_err(|_| Error::config(format!("pad id {} is not in the vocabulary", p.pad_id)))?;
        }
        Ok(())
    }
}

/// Character index of the character holding each byte of a text (identity for ASCII text).
pub(crate) struct CharIndex {
    of_byte: Option<Vec<u32>>,
}

impl CharIndex {
    pub(crate) fn new(text: &str) -> Self {
        if text.is_ascii() {
            return CharIndex { of_byte: None };
        }
        let mut of_byte = Vec::with_capacity(text.len() + 1);
        for (i, c) in text.chars().enumerate() {
            of_byte.extend(std::iter::repeat_n(i as u32, c.len_utf8()));
        }
        CharIndex { of_byte: Some(of_byte) }
    }

    /// Character offsets of the byte range `start..end` (a partial character counts whole).
    pub(crate) fn span(&self, start: usize, end: usize) -> (u32, u32) {
        match &self.of_byte {
            None => (start as u32, end as u32),
            Some(of) => {
                if start >= end {
                    let at = of.get(start).copied().unwrap_or_else(|| of.last().map_or(0, |&c| c + 1));
                    return (at, at);
                }
                (of[start], of[end - 1] + 1)
            }
        }
    }
}

/// One token of `Tokenizer::for_each_aligned_token`: its id, the byte range of the original
/// text it came from, the normalized text it spells (`None` when the model's tokens do not
/// spell their piece, as WordPiece's `##` or byte-level tokens), and its word's index.
pub struct AlignedToken<'a> {
    pub id: u32,
    pub start: usize,
    pub end: usize,
    pub normalized: Option<&'a str>,
    /// Bytes of the normalized text it covers (0 for a special token or a token that shares
    /// its piece with others).
    pub normalized_len: usize,
    pub word: u32,
    /// A special (added) token found in the text; `normalized` is then the text it matched.
    pub added: bool,
}

/// Byte ranges of a normalized text: a token matched there (with its id) or the text between.
type Cuts = Vec<(std::ops::Range<usize>, Option<u32>)>;

impl Tokenizer {
    /// `t` normalized (`at_start`: it starts the input), with the alignment to `t`, cut at the
    /// tokens matched in normalized text (`normalized: true` added tokens). Where the normalizer
    /// puts a space in front of the text, it goes in front of each stretch between such tokens
    /// instead, after they are matched (as Hugging Face's ByteLevel pre-tokenizer does); the
    /// space stands for its stretch's first character, as in `Normalizer::apply_aligned`.
    fn normalized_stretches<'t>(&self, t: &'t str, at_start: bool) -> Result<(Cow<'t, str>, Option<Alignment>, Cuts)> {
        let normalizer = &self.splitter.normalizer;
        let Some(after) = self.splitter.specials.after_normalizing() else {
            let (normalized, align) = normalizer.apply_aligned_at(t, at_start);
            let whole = 0..normalized.len();
            return Ok((normalized, align, vec![(whole, None)]));
        };
        let spaced = normalizer.adds_prefix_space();
        let metaspace = if spaced { None } else { normalizer.metaspace_stretches() };
        let (plain, align) = if spaced {
            normalizer.without_prefix_space().apply_aligned_at(t, at_start)
        } else if let Some((text, _)) = &metaspace {
            text.apply_aligned_at(t, at_start)
        } else {
            normalizer.apply_aligned_at(t, at_start)
        };
        let mut cuts = Vec::new();
        let base = plain.as_ptr() as usize;
        after.for_each_segment(
            &plain,
            |name| Ok::<bool, Error>(self.matches_special(name)),
            |segment| {
                let (s, id) = match segment {
                    Segment::Text(s) => (s, None),
                    Segment::Special { text: s, id } => (s, Some(id)),
                };
                let at = s.as_ptr() as usize - base;
                cuts.push((at..at + s.len(), id));
                Ok(())
            },
        )?;
        let source = |b: usize| align.as_ref().map_or((b as u32, b as u32 + 1), |a| a[b]);
        if let Some((_, part)) = metaspace {
            // Metaspace on each stretch between the matched tokens, as Hugging Face's pre-tokenizer.
            let mut out = String::with_capacity(plain.len() + 3 * cuts.len());
            let mut out_align = Vec::with_capacity(out.capacity());
            let mut escaped_cuts = Vec::with_capacity(cuts.len());
            let mut from = Vec::new();
            for (range, id) in cuts {
                let start = out.len();
                if id.is_some() {
                    out.push_str(&plain[range.clone()]);
                    out_align.extend(range.map(source));
                } else {
                    from.clear();
                    out.push_str(&part.apply(&plain[range.clone()], at_start && range.start == 0, Some(&mut from)));
                    out_align.extend(from.iter().map(|&i| source(range.start + i)));
                }
                escaped_cuts.push((start..out.len(), id));
            }
            return Ok((Cow::Owned(out), Some(out_align), escaped_cuts));
        }
        let needs_space = |(range, id): &(std::ops::Range<usize>, Option<u32>)| {
            id.is_none() && !range.is_empty() && !plain[range.clone()].starts_with(' ')
        };
        if !spaced || !cuts.iter().any(needs_space) {
            return Ok((plain, align, cuts));
        }
        let mut out = String::with_capacity(plain.len() + cuts.len());
        let mut out_align = Vec::with_capacity(plain.len() + cuts.len());
        let mut spaced_cuts = Vec::with_capacity(cuts.len());
        for cut in cuts {
            let start = out.len();
            if needs_space(&cut) {
                out.push(' ');
                out_align.push(source(cut.0.start));
            }
            out.push_str(&plain[cut.0.clone()]);
            out_align.extend(cut.0.clone().map(source));
            spaced_cuts.push((start..out.len(), cut.1));
        }
        Ok((Cow::Owned(out), Some(out_align), spaced_cuts))
    }

    /// The model's tokens for `text` with character offsets into `text` and word indices:
    /// special tokens are matched in the text (as Hugging Face matches added tokens) and each
    /// is a word of its own. Offsets go through normalization; a token that covers part of a
    /// character covers that character.
    pub fn encode_aligned(&self, text: &str, type_id: u32) -> Result<Encoding> {
        let chars = CharIndex::new(text);
        let mut ids = Vec::with_capacity(text.len() / 3);
        let mut offsets = Vec::with_capacity(text.len() / 3);
        let mut words = Vec::with_capacity(text.len() / 3);
        // Shown as the text they stand for, as Hugging Face shows them: added tokens, and a
        // Hugging Face Unigram model's unknown token.
        let unknown = self.model().as_unigram().filter(|u| u.is_huggingface()).map(|u| u.unk_id());
        let mut surfaces = Vec::new();
        self.for_each_aligned_token(text, |token| {
            if let Some(surface) = token.normalized.filter(|_| token.added || Some(token.id) == unknown) {
                if self.token_string(token.id).ok().as_deref() != Some(surface) {
                    surfaces.push((ids.len() as u32, surface.into()));
                }
            }
            ids.push(token.id);
            offsets.push(chars.span(token.start, token.end));
            words.push(Some(token.word));
        })?;
        let mut encoding = Encoding::from_model(ids, offsets, words);
        encoding.surfaces = surfaces;
        encoding.type_ids = vec![type_id; encoding.len()];
        Ok(encoding)
    }

    /// Calls `f` with each token of `text` as `encode` finds it (special tokens matched in the
    /// text), with the byte range of `text` it came from, the normalized text it spells (when
    /// the model's tokens spell their piece), and its word: a special token or a pre-tokenized
    /// piece. A token that covers part of a character covers that character.
    pub fn for_each_aligned_token(&self, text: &str, mut f: impl FnMut(AlignedToken<'_>)) -> Result<()> {
        let mut word = 0u32;
        let base_of = |part: &str| part.as_ptr() as usize - text.as_ptr() as usize;
        let mut ids = Vec::new();
        self.splitter.specials.for_each_segment(
            text,
            |name| Ok::<bool, Error>(self.matches_special(name)),
            |segment| {
                match segment {
                    Segment::Special { text: t, id } => {
                        let start = base_of(t);
                        f(AlignedToken {
                            id,
                            start,
                            end: start + t.len(),
                            normalized: Some(t),
                            normalized_len: 0,
                            word,
                            added: true,
                        });
                        word += 1;
                    }
                    Segment::Text(t) => {
                        let base = base_of(t);
                        let (normalized, align, cuts) = self.normalized_stretches(t, base == 0)?;
                        let original = |start: usize, end: usize| -> (usize, usize) {
                            match &align {
                                None => (base + start, base + end),
                                Some(a) if start < end => (base + a[start].0 as usize, base + a[end - 1].1 as usize),
                                Some(a) => {
                                    let at = a.get(start).map_or(t.len(), |s| s.0 as usize);
                                    (base + at, base + at)
                                }
                            }
                        };
                        let mut unigram_base = 0.0;
                        let stretches: Vec<(&str, Option<u32>)> =
                            cuts.into_iter().map(|(range, id)| (&normalized[range], id)).collect();
                        piece_cache::with_cache(self.cache_owner, |cache| {
                            for (stretch, special) in stretches {
                                if let Some(id) = special {
                                    let at = stretch.as_ptr() as usize - normalized.as_ptr() as usize;
                                    let (start, end) = original(at, at + stretch.len());
                                    f(AlignedToken {
                                        id,
                                        start,
                                        end,
                                        normalized: Some(stretch),
                                        normalized_len: 0,
                                        word,
                                        added: true,
                                    });
                                    word += 1;
                                    continue;
                                }
                                self.splitter.pretokenizer.for_each_piece(stretch, |piece| {
                                    ids.clear();
                                    let spans = self.encode_piece_placed(cache, piece, &mut unigram_base, &mut ids)?;
                                    let piece_start = piece.as_ptr() as usize - normalized.as_ptr() as usize;
                                    match spans.filter(|s| s.iter().all(|&(_, end)| end <= piece.len())) {
                                        Some(spans) => {
                                            for (&id, (from, to)) in ids.iter().zip(spans) {
                                                let at = piece_start + from;
                                                let len = to - from;
                                                let (start, end) = original(at, at + len);
                                                // None inside a character (a byte-fallback token).
                                                let spelled = normalized.get(at..at + len);
                                                f(AlignedToken {
                                                    id,
                                                    start,
                                                    end,
                                                    normalized: spelled,
                                                    normalized_len: len,
                                                    word,
                                                    added: false,
                                                });
                                            }
                                        }
                                        // Tokens that do not spell their text: each covers the piece.
                                        None => {
                                            let (start, end) = original(piece_start, piece_start + piece.len());
                                            for &id in &ids {
                                                f(AlignedToken {
                                                    id,
                                                    start,
                                                    end,
                                                    normalized: None,
                                                    normalized_len: 0,
                                                    word,
                                                    added: false,
                                                });
                                            }
                                        }
                                    }
                                    word += 1;
                                    Ok(())
                                })?;
                            }
                            Ok::<(), Error>(())
                        })?;
                    }
                }
                Ok(())
            },
        )
    }

    /// Model inputs for one text or a pair: truncated, post-processed and (if a fixed length is
    /// set) padded, by this tokenizer's settings.
    pub fn encode_for_model(&self, first: &str, second: Option<&str>, add_special_tokens: bool) -> Result<Encoding> {
        let a = self.encode_aligned(first, 0)?;
        let b = second.map(|s| self.encode_aligned(s, 1)).transpose()?;
        self.post_process(a, b, add_special_tokens)
    }

    /// What follows the model for one input (or a pair): truncation, the post-processor's
    /// template (with `add_special_tokens`) and padding to a fixed length — Hugging Face's
    /// `Tokenizer.post_process` on encodings made elsewhere too.
    pub fn post_process(&self, mut a: Encoding, mut b: Option<Encoding>, add_special_tokens: bool) -> Result<Encoding> {
        if let Some(truncation) = &self.inputs.truncation {
            let added = match (&self.inputs.post_processor, add_special_tokens) {
                (Some(p), true) => p.added_tokens(b.is_some()),
                _ => 0,
            };
            truncation.apply(&mut a, b.as_mut(), added)?;
        }
        let inputs: Vec<Encoding> = std::iter::once(a).chain(b).collect();
        let mut out = match &self.inputs.post_processor {
            Some(p) => p.process(inputs, add_special_tokens, self.vocab()),
            // No post-processor: one input as it is; a pair joined, each marked with its input.
            None if inputs.len() == 1 => inputs.into_iter().next().expect("one input"),
            None => {
                let mut out = Encoding::default();
                for (i, mut e) in inputs.into_iter().enumerate() {
                    e.set_sequence_id(i as u8);
                    out.merge_with(e);
                }
                out
            }
        };
        // Padding one encoding (to a fixed length, or its own length rounded up to a multiple);
        // a batch is padded again together.
        if let Some(padding) = &self.inputs.padding {
            padding.apply(std::slice::from_mut(&mut out));
        }
        Ok(out)
    }

    /// `encode_for_model` over a batch on `num_threads` threads, then padded together.
    pub fn encode_batch_for_model(
        &self,
        inputs: &[(&str, Option<&str>)],
        add_special_tokens: bool,
        num_threads: Option<usize>,
    ) -> Result<Vec<Encoding>> {
        let texts: Vec<&str> = inputs.iter().flat_map(|(a, b)| std::iter::once(*a).chain(*b)).collect();
        let threads = crate::tokenizer::batch_threads(&texts, num_threads).min(inputs.len().max(1));
        let encode = |chunk: &[(&str, Option<&str>)]| -> Result<Vec<Encoding>> {
            chunk.iter().map(|(a, b)| self.encode_for_model(a, *b, add_special_tokens)).collect()
        };
        let mut out = if threads <= 1 {
            encode(inputs)?
        } else {
            let per = inputs.len().div_ceil(threads);
            let parts: Vec<Result<Vec<Encoding>>> = std::thread::scope(|scope| {
                let handles: Vec<_> = inputs.chunks(per).map(|chunk| scope.spawn(move || encode(chunk))).collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err(Error::config("encoder thread panicked"))))
                    .collect()
            });
            let mut out = Vec::with_capacity(inputs.len());
            for part in parts {
                out.extend(part?);
            }
            out
        };
        if let Some(padding) = &self.inputs.padding {
            padding.apply(&mut out);
        }
        Ok(out)
    }
}
