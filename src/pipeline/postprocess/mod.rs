//! The stage after the model, shared by every model family: truncation (with overflowing
//! windows), a post-processor that adds a template's special tokens and type ids, and padding.
//!
//! ```text
//! encode(A) [, encode(B)] → truncate to max_length − template tokens → post-process → pad
//! ```
//!
//! The post-processors are the ones Hugging Face `tokenizer.json` files name (`TemplateProcessing`,
//! `BertProcessing`, `RobertaProcessing`, `ByteLevel` offset trimming, and a `Sequence` of them),
//! with the same results, so that a loaded file feeds a model exactly what it fed before.

pub mod encoding;
mod inputs;

pub use encoding::{Encoding, Side};
pub(crate) use inputs::CharIndex;
pub use inputs::{AlignedToken, ModelInputs};

use crate::error::{Error, Result};
use crate::models::vocab::Vocab;
use serde::{Deserialize, Serialize};

/// A part of a template: one of the inputs, or a special token, each with a type id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Piece {
    /// `$A` (first input) or `$B` (second input).
    Sequence { second: bool, type_id: u32 },
    /// A special token by its name in the template (it may stand for several ids).
    Special { name: String, type_id: u32 },
}

/// The special tokens a template names: name → ids.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplateToken {
    pub name: String,
    pub ids: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Template {
    pub single: Vec<Piece>,
    pub pair: Vec<Piece>,
    pub tokens: Vec<TemplateToken>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum PostProcessor {
    Template(Template),
    /// `[CLS] A [SEP]` / `[CLS] A [SEP] B [SEP]`, B's part with type id 1.
    Bert {
        cls: u32,
        sep: u32,
    },
    /// `<s> A </s>` / `<s> A </s> </s> B </s>`, all type id 0; optionally trims offsets.
    Roberta {
        cls: u32,
        sep: u32,
        trim_offsets: bool,
        add_prefix_space: bool,
    },
    /// Trims the spaces a byte-level token starts or ends with from its offsets.
    ByteLevel {
        trim_offsets: bool,
        add_prefix_space: bool,
    },
    Sequence {
        processors: Vec<PostProcessor>,
    },
}

impl Template {
    /// Checks that both forms use each input once (`$B` only in the pair form) and that every
    /// special token they name is defined.
    pub fn validate(&self) -> Result<()> {
        for (form, pieces, pair) in [("single", &self.single, false), ("pair", &self.pair, true)] {
            let count = |second: bool| {
                pieces.iter().filter(|p| matches!(p, Piece::Sequence { second: s, .. } if *s == second)).count()
            };
            let (a, b) = (count(false), count(true));
            if a != 1 || b != usize::from(pair) {
                return Err(Error::config(format!(
                    "the {form} template must use $A once{}; it uses $A {a} times and $B {b} times",
                    if pair { " and $B once" } else { " and no $B" }
                )));
            }
            for piece in pieces {
                if let Piece::Special { name, .. } = piece {
                    if !self.tokens.iter().any(|t| &t.name == name) {
                        return Err(Error::config(format!(
                            "the {form} template names {name:?}, which it does not define"
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    fn ids(&self, name: &str) -> &[u32] {
        self.tokens.iter().find(|t| t.name == name).map_or(&[], |t| &t.ids)
    }

    fn added(&self, pieces: &[Piece]) -> usize {
        pieces.iter().map(|p| if let Piece::Special { name, .. } = p { self.ids(name).len() } else { 0 }).sum()
    }
}

impl PostProcessor {
    /// Checks templates (each input used once, every named token defined).
    pub fn validate(&self) -> Result<()> {
        match self {
            PostProcessor::Template(t) => t.validate(),
            PostProcessor::Sequence { processors } => processors.iter().try_for_each(PostProcessor::validate),
            _ => Ok(()),
        }
    }

    /// How many tokens the processor adds to one input, or to a pair.
    /// Whether the second input of a pair gets type ids of its own (BERT-style), which is when
    /// transformers returns `token_type_ids` by default.
    pub fn pair_type_ids(&self) -> bool {
        match self {
            PostProcessor::Bert { .. } => true,
            PostProcessor::Template(t) => t.pair.iter().any(|p| match p {
                Piece::Sequence { type_id, .. } | Piece::Special { type_id, .. } => *type_id != 0,
            }),
            PostProcessor::Sequence { processors } => processors.iter().any(PostProcessor::pair_type_ids),
            PostProcessor::Roberta { .. } | PostProcessor::ByteLevel { .. } => false,
        }
    }

    pub fn added_tokens(&self, pair: bool) -> usize {
        match self {
            PostProcessor::Template(t) => t.added(if pair { &t.pair } else { &t.single }),
            PostProcessor::Bert { .. } => 2 + usize::from(pair),
            PostProcessor::Roberta { .. } => 2 + 2 * usize::from(pair),
            PostProcessor::ByteLevel { .. } => 0,
            PostProcessor::Sequence { processors } => processors.iter().map(|s| s.added_tokens(pair)).sum(),
        }
    }

    /// Every id the processor inserts (for checks against the vocabulary).
    pub fn inserted_ids(&self) -> Vec<u32> {
        match self {
            PostProcessor::Template(t) => t.tokens.iter().flat_map(|t| t.ids.iter().copied()).collect(),
            PostProcessor::Bert { cls, sep } | PostProcessor::Roberta { cls, sep, .. } => vec![*cls, *sep],
            PostProcessor::ByteLevel { .. } => Vec::new(),
            PostProcessor::Sequence { processors } => processors.iter().flat_map(|s| s.inserted_ids()).collect(),
        }
    }

    /// The inputs (one or two), each marked with its sequence id and type id, processed and joined.
    pub fn process(&self, mut inputs: Vec<Encoding>, add_special_tokens: bool, vocab: &Vocab) -> Encoding {
        for (i, input) in inputs.iter_mut().enumerate() {
            input.set_sequence_id(i as u8);
            for window in &mut input.overflowing {
                window.set_sequence_id(i as u8);
            }
            input.type_ids = vec![i as u32; input.len()];
        }
        join(self.process_each(inputs, add_special_tokens, vocab))
    }

    fn process_each(&self, mut inputs: Vec<Encoding>, add_special_tokens: bool, vocab: &Vocab) -> Vec<Encoding> {
        match self {
            PostProcessor::Sequence { processors } => {
                for step in processors {
                    inputs = step.process_each(inputs, add_special_tokens, vocab);
                }
                inputs
            }
            PostProcessor::ByteLevel { trim_offsets, add_prefix_space } => {
                if *trim_offsets {
                    trim_all(&mut inputs, *add_prefix_space, vocab);
                }
                for (i, input) in inputs.iter_mut().enumerate() {
                    input.set_sequence_id(i as u8);
                }
                inputs
            }
            PostProcessor::Template(t) => {
                let pieces = if inputs.len() == 2 { &t.pair } else { &t.single };
                let mut out = Vec::with_capacity(pieces.len());
                for piece in pieces {
                    match piece {
                        Piece::Sequence { second, type_id } => {
                            let i = usize::from(*second);
                            // Only the input's own tokens take the template's type id; its
                            // overflowing windows keep theirs (as in Hugging Face).
                            inputs[i].type_ids = vec![*type_id; inputs[i].len()];
                            inputs[i].set_sequence_id(i as u8);
                            out.push(inputs[i].clone());
                        }
                        Piece::Special { name, type_id } if add_special_tokens => {
                            out.push(Encoding::inserted(t.ids(name), *type_id));
                        }
                        Piece::Special { .. } => {}
                    }
                }
                out
            }
            PostProcessor::Bert { cls, sep } => {
                if !add_special_tokens {
                    return inputs;
                }
                wrap_each(&inputs, |e, i| {
                    let mut out = if i == 0 { Encoding::inserted(&[*cls], 0) } else { Encoding::default() };
                    out.merge_with(body(e));
                    out.merge_with(Encoding::inserted(&[*sep], if i == 0 { 0 } else { 1 }));
                    out.sequence_ranges = vec![(i as u8, usize::from(i == 0)..out.len() - 1)];
                    out
                })
            }
            PostProcessor::Roberta { cls, sep, trim_offsets, add_prefix_space } => {
                if *trim_offsets {
                    trim_all(&mut inputs, *add_prefix_space, vocab);
                }
                for input in &mut inputs {
                    input.type_ids = vec![0; input.len()];
                }
                if !add_special_tokens {
                    return inputs;
                }
                wrap_each(&inputs, |e, i| {
                    let mut out = Encoding::inserted(&[if i == 0 { *cls } else { *sep }], 0);
                    let mut body = body(e);
                    body.type_ids = vec![0; body.len()];
                    out.merge_with(body);
                    out.merge_with(Encoding::inserted(&[*sep], 0));
                    out.sequence_ranges = vec![(i as u8, 1..out.len() - 1)];
                    out
                })
            }
        }
    }
}

/// Applies `wrap(encoding, input number)` to each input and to each of its overflowing windows
/// (BERT and RoBERTa wrap every window in the same special tokens).
fn wrap_each(inputs: &[Encoding], wrap: impl Fn(&Encoding, usize) -> Encoding) -> Vec<Encoding> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut out = wrap(e, i);
            out.overflowing = e.overflowing.iter().map(|o| wrap(o, i)).collect();
            out
        })
        .collect()
}

/// An input's tokens as the body of a wrapped sequence: no windows, none special, all attended.
fn body(e: &Encoding) -> Encoding {
    let n = e.len();
    Encoding { overflowing: Vec::new(), special_tokens_mask: vec![0; n], attention_mask: vec![1; n], ..e.clone() }
}

/// Joins processed parts into one encoding (windows combine as `Encoding::merge_with` says).
fn join(parts: Vec<Encoding>) -> Encoding {
    let mut out = Encoding::default();
    for part in parts {
        out.merge_with(part);
    }
    out
}

fn trim_all(inputs: &mut [Encoding], add_prefix_space: bool, vocab: &Vocab) {
    for input in inputs {
        trim_offsets(input, add_prefix_space, vocab);
        for window in &mut input.overflowing {
            trim_offsets(window, add_prefix_space, vocab);
        }
    }
}

/// Moves each token's offsets in past the spaces its text starts or ends with, so `" world"`
/// points at `world`. The first token keeps one leading space that `add_prefix_space` put there.
fn trim_offsets(encoding: &mut Encoding, add_prefix_space: bool, vocab: &Vocab) {
    for (i, (&id, offsets)) in encoding.ids.iter().zip(encoding.offsets.iter_mut()).enumerate() {
        let Ok(bytes) = vocab.token_bytes(id) else { continue };
        let (leading, trailing) = if vocab.is_special(id) {
            // An added token is its text: whitespace, or `Ġ` (byte-level's space) spelled out,
            // counts as Hugging Face counts it.
            let text = String::from_utf8_lossy(bytes);
            let space = |c: &char| c.is_whitespace() || *c == '\u{120}';
            (text.chars().take_while(space).count(), text.chars().rev().take_while(space).count())
        } else {
            (bytes.iter().take_while(|&&b| b == b' ').count(), bytes.iter().rev().take_while(|&&b| b == b' ').count())
        };
        let mut leading = leading as u32;
        let trailing = trailing as u32;
        if leading > 0 {
            if (i == 0 || offsets.0 == 0) && add_prefix_space && leading == 1 {
                leading = 0;
            }
            offsets.0 = (offsets.0 + leading).min(offsets.1);
        }
        if trailing > 0 && offsets.1 >= trailing {
            offsets.1 = (offsets.1 - trailing).max(offsets.0);
        }
    }
}

/// Which input truncation shortens when there are two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TruncationStrategy {
    #[default]
    LongestFirst,
    OnlyFirst,
    OnlySecond,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Truncation {
    pub max_length: usize,
    #[serde(default)]
    pub stride: usize,
    #[serde(default)]
    pub strategy: TruncationStrategy,
    #[serde(default)]
    pub side: Side,
    /// With `max_length` shorter than the template's tokens, the inputs stay whole, as in
    /// tokenizers (whose unsigned subtraction wraps there); otherwise that is an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole_below_template: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Padding {
    /// A fixed length, or `None` for the longest encoding of the batch.
    pub length: Option<usize>,
    pub multiple_of: Option<usize>,
    pub pad_id: u32,
    pub pad_type_id: u32,
    pub pad_token: String,
    pub side: Side,
}

impl Truncation {
    /// Cuts the inputs so that, with `added` template tokens, they fit `max_length`.
    pub fn apply(&self, first: &mut Encoding, second: Option<&mut Encoding>, added: usize) -> Result<()> {
        let Some(max_length) = self.max_length.checked_sub(added) else {
            if self.whole_below_template {
                return Ok(());
            }
            return Err(Error::config(format!(
                "max_length {} is shorter than the {added} special tokens the template adds",
                self.max_length
            )));
        };
        let too_long_stride = |limit: usize| {
            // In a pair, the other text's tokens take their share of the window too.
            let other = max_length.saturating_sub(limit);
            let other = if other > 0 { format!(" and the other text's {other}") } else { String::new() };
            Error::config(format!(
                "stride {} must be less than the tokens left for the text ({limit}: max_length {} minus {added} \
                 template tokens{other})",
                self.stride, self.max_length
            ))
        };
        let cut = |e: &mut Encoding, to: usize| -> Result<()> {
            if to < e.len() && to > 0 && self.stride >= to {
                return Err(too_long_stride(to));
            }
            e.truncate(to, self.stride, self.side);
            Ok(())
        };
        let total = first.len() + second.as_ref().map_or(0, |s| s.len());
        if max_length == 0 {
            first.truncate(0, self.stride, self.side);
            if let Some(second) = second {
                second.truncate(0, self.stride, self.side);
            }
            return Ok(());
        }
        if total <= max_length {
            return Ok(());
        }
        let excess = total - max_length;
        match (self.strategy, second) {
            (TruncationStrategy::LongestFirst, Some(second)) => {
                let (mut short, mut long) = (first.len(), second.len());
                let swapped = short > long;
                if swapped {
                    std::mem::swap(&mut short, &mut long);
                }
                long = if short > max_length { short } else { short.max(max_length - short) };
                if short + long > max_length {
                    short = max_length / 2;
                    long = short + max_length % 2;
                }
                let (n1, n2) = if swapped { (long, short) } else { (short, long) };
                cut(first, n1)?;
                cut(second, n2)
            }
            (TruncationStrategy::LongestFirst, None) | (TruncationStrategy::OnlyFirst, _) => {
                let n = first.len();
                if n <= excess {
                    return Err(Error::config(format!(
                        "the first input ({n} tokens) is too short to remove the {excess} needed to fit max_length"
                    )));
                }
                cut(first, n - excess)
            }
            (TruncationStrategy::OnlySecond, None) => {
                Err(Error::config("truncation only_second needs a second input (a pair)"))
            }
            (TruncationStrategy::OnlySecond, Some(second)) => {
                let n = second.len();
                if n <= excess {
                    return Err(Error::config(format!(
                        "the second input ({n} tokens) is too short to remove the {excess} needed to fit max_length"
                    )));
                }
                cut(second, n - excess)
            }
        }
    }
}

impl Padding {
    /// Pads every encoding (and its windows) to the same length.
    pub fn apply(&self, encodings: &mut [Encoding]) {
        let mut target = match self.length {
            Some(n) => n,
            None => encodings.iter().map(Encoding::len).max().unwrap_or(0),
        };
        if let Some(m) = self.multiple_of.filter(|&m| m > 0) {
            target = target.div_ceil(m) * m;
        }
        for e in encodings {
            e.pad(target, self.pad_id, self.pad_type_id, &self.pad_token, self.side);
        }
    }
}
