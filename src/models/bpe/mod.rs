//! Byte-pair encoding: the model (vocabulary + ranked merges), its encoder and its trainer.
//!
//! A merge is a pair of token ids with a rank; encoding a piece starts from its bytes (byte-level)
//! or characters (character-level, optionally followed by an end-of-word symbol) and repeatedly
//! merges the adjacent pair of lowest rank, leftmost first. Vocabularies that come as ranked
//! tokens without a merge list (tiktoken) are turned into the same pair table: every split of a
//! token into two tokens is a pair with the token's rank — which reproduces tiktoken's
//! "merge the pair whose concatenation has the lowest rank" exactly.

mod backtrack;
mod edges;
pub mod encode;
pub mod file;
mod long_word;
mod merge_state;
pub mod parity;
mod ranked;
mod sentencepiece;
pub mod train;
mod truncate;

pub use sentencepiece::SentencePieceParts;

use crate::error::{Error, Result};
use crate::models::vocab::Vocab;
use crate::pipeline::decoder::Decoder;
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::pretokenize::PreTokenizer;
use rustc_hash::FxHashMap;

/// How a BPE model starts a piece and what it does at the edges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BpeOptions {
    /// Start from the 256 bytes (GPT-2 style) instead of characters.
    pub byte_level: bool,
    /// A symbol appended to every piece (character-level), e.g. `</w>`; with `joined_suffix`,
    /// joined to the piece's last symbol instead.
    pub end_of_word_suffix: Option<String>,
    /// Hugging Face's form of the suffix: the piece's last character (or byte) and the suffix
    /// are one symbol from the start (`t</w>`), rather than two that a merge may join.
    pub joined_suffix: bool,
    /// Hugging Face's `continuing_subword_prefix`: every symbol of a piece but the first starts
    /// with it (`##b`), and a merge joins the left token to the right one without it.
    pub continuing_subword_prefix: Option<String>,
    /// The token that stands for characters outside the vocabulary (character-level).
    pub unk_token: Option<String>,
    /// Emit a piece that is itself a token without running merges (tiktoken's rule).
    pub whole_piece_first: bool,
    /// Character-level: a character outside the vocabulary becomes its UTF-8 bytes as byte
    /// tokens (`<0x41>`) rather than the unknown token.
    pub byte_fallback: bool,
    /// Character-level: a run of characters outside the vocabulary is one unknown token.
    pub fuse_unk: bool,
    /// Character-level, without an unknown token: a character outside the vocabulary is left
    /// out (Hugging Face's BPE) instead of being an error.
    pub drop_unknown: bool,
}

/// Where a BPE model's merge order comes from: the three kinds of BPE file.
#[derive(Debug, Clone)]
pub enum MergeOrder {
    /// A merge list in rank order (GPT-2, Hugging Face, tokenmill's trainer): (left, right) →
    /// (rank, merged id).
    Listed(FxHashMap<(u32, u32), (u32, u32)>),
    /// Ranked tokens without a merge list (tiktoken): a token's id is its rank, and a pair's
    /// rank is that of the token its joined bytes spell (`ranked.rs`).
    Ranks,
    /// Piece scores (SentencePiece BPE): a pair's rank comes from its joined piece's score.
    Scores(Box<SentencePieceParts>),
}

#[derive(Debug, Clone)]
pub struct Bpe {
    vocab: Vocab,
    /// The merge list of a `Listed` model (empty for the other kinds).
    merges: Vec<(u32, u32)>,
    order: MergeOrder,
    /// Byte-level: the id of each single byte.
    byte_ids: Vec<u32>,
    /// Byte-level: the id of each two-byte token by its bytes (u32::MAX where none), so the
    /// first round of merging a piece — one look-up per byte — indexes an array instead of
    /// hashing.
    pair_ids: Box<[u32]>,
    options: BpeOptions,
    suffix_id: Option<u32>,
    unk_id: Option<u32>,
    /// Byte-level with `drop_unknown`: some byte UTF-8 text can hold has no token, and is left
    /// out where it occurs (as Hugging Face's BPE leaves out a character it has no token for).
    drops_bytes: bool,
    /// Rank-based byte-level models: the long-piece encoder, built when first needed.
    backtracker: std::sync::OnceLock<std::sync::Arc<backtrack::Backtracker>>,
}

impl Bpe {
    /// A model from a vocabulary and merges in rank order. The result of each merge must be a
    /// token of the vocabulary.
    pub fn from_merges(vocab: Vocab, merges: Vec<(u32, u32)>, options: BpeOptions) -> Result<Self> {
        let mut pair_rank = FxHashMap::default();
        pair_rank.reserve(merges.len());
        let prefix = options.continuing_subword_prefix.as_deref().unwrap_or("").as_bytes();
        for (rank, &(left, right)) in merges.iter().enumerate() {
            let mut joined = vocab.token_bytes(left)?.to_vec();
            let right = vocab.token_bytes(right).map(|r| (right, r.strip_prefix(prefix).unwrap_or(r)))?;
            joined.extend_from_slice(right.1);
            let right = right.0;
            let merged = vocab.id(&joined).ok_or_else(|| {
                Error::config(format!(
                    "merge {rank} ({left}, {right}) gives {:?}, which is not in the vocabulary",
                    String::from_utf8_lossy(&joined)
                ))
            })?;
            pair_rank.entry((left, right)).or_insert((rank as u32, merged));
        }
        Self::assemble(vocab, merges, MergeOrder::Listed(pair_rank), options)
    }

    /// A model from ranked tokens without a merge list (tiktoken): a token's id is its rank.
    /// Encoding looks merged byte slices up in the vocabulary itself (`ranked.rs`), so no pair
    /// table is built; `ranked_pairs` derives the merge list when another format needs one.
    pub fn from_ranks(vocab: Vocab, options: BpeOptions) -> Result<Self> {
        Self::assemble(vocab, Vec::new(), MergeOrder::Ranks, options)
    }

    /// The merges as (left, right, rank), ordered by rank, then by the ids of the parts. For a
    /// rank-based model every split of a token into two tokens is a merge with the token's rank.
    pub fn ranked_pairs(&self) -> Vec<(u32, u32, u32)> {
        let mut pairs: Vec<(u32, u32, u32)> = match &self.order {
            MergeOrder::Ranks => {
                let mut pairs = Vec::new();
                for (id, bytes) in self.vocab.ordinary() {
                    for k in 1..bytes.len() {
                        if let (Some(l), Some(r)) = (self.vocab.id(&bytes[..k]), self.vocab.id(&bytes[k..])) {
                            pairs.push((l, r, id));
                        }
                    }
                }
                pairs
            }
            MergeOrder::Scores(sp) => sp.implied_pairs(&self.vocab),
            MergeOrder::Listed(pair_rank) => pair_rank.iter().map(|(&(l, r), &(rank, _))| (l, r, rank)).collect(),
        };
        pairs.sort_unstable_by_key(|&(l, r, rank)| (rank, l, r));
        pairs
    }

    /// Whether the model came as ranked tokens (tiktoken) rather than with a merge list.
    pub fn is_rank_based(&self) -> bool {
        matches!(self.order, MergeOrder::Ranks)
    }

    pub fn merge_order(&self) -> &MergeOrder {
        &self.order
    }

    fn assemble(vocab: Vocab, merges: Vec<(u32, u32)>, order: MergeOrder, options: BpeOptions) -> Result<Self> {
        let mut byte_ids = vec![u32::MAX; 256];
        let mut pair_ids = Vec::new().into_boxed_slice();
        let mut drops_bytes = false;
        if options.byte_level {
            for b in 0..=255u8 {
                match vocab.id(&[b]) {
                    Some(id) => byte_ids[b as usize] = id,
                    // Bytes UTF-8 never produces may be missing (GPT-NeoX's vocabulary lacks
                    // them): text never needs them, and raw-byte input that holds one is refused.
                    None if never_in_utf8(b) => {}
                    // A vocabulary made for some text only (pix2tex's: ASCII without '%'); where
                    // the file asks for it, text's other bytes are left out.
                    None if options.drop_unknown => drops_bytes = true,
                    None => {
                        return Err(Error::config(format!("byte-level vocabulary lacks the single byte 0x{b:02x}")))
                    }
                }
            }
            let marks = options.joined_suffix || options.continuing_subword_prefix.is_some();
            if byte_ids.contains(&u32::MAX) && !marks {
                // No token may spell a byte the vocabulary lacks alone: merging starts from bytes
                // (with word marks, from marked symbols, which hold bytes with no token alone).
                for (id, bytes) in vocab.ordinary() {
                    if let Some(&b) = bytes.iter().find(|&&b| byte_ids[b as usize] == u32::MAX) {
                        return Err(Error::config(format!(
                            "token {id} holds the byte 0x{b:02x}, which the byte-level vocabulary lacks as a token"
                        )));
                    }
                }
            }
            pair_ids = (0..=u16::MAX).map(|k| vocab.id(&k.to_be_bytes()).unwrap_or(u32::MAX)).collect();
        }
        let suffix_id = match &options.end_of_word_suffix {
            Some(_) if options.joined_suffix => None,
            Some(s) => Some(
                vocab
                    .id(s.as_bytes())
                    .ok_or_else(|| Error::config(format!("end-of-word suffix {s:?} is not in the vocabulary")))?,
            ),
            None => None,
        };
        let unk_id = match &options.unk_token {
            Some(u) => Some(
                vocab
                    .any_id(u.as_bytes())
                    .ok_or_else(|| Error::config(format!("unk_token {u:?} is not in the vocabulary")))?,
            ),
            None => None,
        };
        Ok(Bpe {
            vocab,
            merges,
            order,
            byte_ids,
            pair_ids,
            options,
            suffix_id,
            unk_id,
            drops_bytes,
            backtracker: std::sync::OnceLock::new(),
        })
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    pub fn merges(&self) -> &[(u32, u32)] {
        &self.merges
    }

    pub fn options(&self) -> &BpeOptions {
        &self.options
    }

    /// Whether pieces start from Hugging Face's marked symbols (a continuing-subword prefix or a
    /// joined end-of-word suffix) rather than bare characters or bytes.
    #[inline]
    pub(super) fn marks_symbols(&self) -> bool {
        self.options.joined_suffix || self.options.continuing_subword_prefix.is_some()
    }

    /// The token that stands for characters outside the vocabulary (character-level models).
    pub fn unk_id(&self) -> Option<u32> {
        self.unk_id
    }

    /// The SentencePiece parts (scores, user-defined pieces) of a model built by `from_scores`.
    pub fn sentencepiece(&self) -> Option<&SentencePieceParts> {
        match &self.order {
            MergeOrder::Scores(sp) => Some(sp),
            _ => None,
        }
    }

    /// How many bytes of `piece` each of its `ids` covers. An unknown token covers the
    /// characters outside the vocabulary at its place (one, or a run with `fuse_unk`).
    pub fn piece_lens(&self, piece: &str, ids: &[u32]) -> Option<Vec<usize>> {
        if self.marks_symbols() {
            return self.marked_piece_lens(piece, ids);
        }
        let mut lens = Vec::with_capacity(ids.len());
        let mut pos = 0;
        let mut buf = [0u8; 4];
        for &id in ids {
            let len = if Some(id) == self.unk_id {
                let mut n = 0;
                for c in piece.get(pos..)?.chars() {
                    if self.symbol_id(c.encode_utf8(&mut buf).as_bytes()).is_some() {
                        break;
                    }
                    n += c.len_utf8();
                    if !self.options.fuse_unk {
                        break;
                    }
                }
                n
            } else {
                self.text_len(id)?
            };
            pos += len;
            lens.push(len);
        }
        // Where characters (or bytes) the vocabulary lacks were left out, the tokens cover less
        // than the piece; Hugging Face places each token after the last regardless, and so do we.
        (pos == piece.len() || self.options.drop_unknown && pos < piece.len()).then_some(lens)
    }

    /// The first symbols of a piece of a model with word marks, as (start, length) in the
    /// piece, and for each token of `ids` the index one past its last symbol: each token is the
    /// run of symbols whose spelling (the prefix dropped from all but the run's first) makes
    /// its own.
    fn marked_runs(&self, piece: &[u8], ids: &[u32]) -> Option<(Vec<Span>, Vec<usize>)> {
        let (mut symbols, mut units) = (Vec::new(), Vec::new());
        self.push_marked(piece, &mut symbols, Some(&mut units)).ok()?;
        let prefix_len = self.options.continuing_subword_prefix.as_ref().map_or(0, |p| p.len());
        let spelling =
            |id: u32| if Some(id) == self.unk_id { Some(0) } else { self.vocab.token_bytes(id).ok().map(|b| b.len()) };
        let mut ends = Vec::with_capacity(ids.len());
        let mut k = 0;
        for &id in ids {
            let target = spelling(id)?;
            let mut spelled = 0;
            let run_start = k;
            loop {
                let symbol_len = spelling(*symbols.get(k)?)?;
                spelled += if k == run_start { symbol_len } else { symbol_len.saturating_sub(prefix_len) };
                k += 1;
                if spelled >= target {
                    break;
                }
            }
            ends.push(k);
        }
        (k == symbols.len()).then_some((units, ends))
    }

    /// `piece_lens` for a model with word marks: each token covers its symbols' text.
    fn marked_piece_lens(&self, piece: &str, ids: &[u32]) -> Option<Vec<usize>> {
        let (units, ends) = self.marked_runs(piece.as_bytes(), ids)?;
        let mut start = 0;
        Some(
            ends.iter()
                .map(|&end| {
                    let len = units[start..end].iter().map(|u| u.1).sum();
                    start = end;
                    len
                })
                .collect(),
        )
    }

    /// Where each token of a piece lies when bytes the vocabulary lacks were left out, as
    /// Hugging Face places them: in the piece's byte-level spelling (a printable ASCII byte one
    /// UTF-8 byte, any other two), each token right after the one before, as long as its own
    /// bytes' spelling — so a token after a left-out byte lands on that byte's place. A token
    /// then covers the bytes whose spellings its range touches.
    fn spans_without_lacking_bytes(&self, piece: &[u8], ids: &[u32]) -> Option<Vec<(usize, usize)>> {
        let width = |b: u8| if (0x21..=0x7E).contains(&b) { 1 } else { 2 };
        // Where each byte's spelling starts, and the end.
        let mut starts = Vec::with_capacity(piece.len() + 1);
        let mut at = 0;
        for &b in piece {
            starts.push(at);
            at += width(b);
        }
        starts.push(at);
        let byte_at = |pos: usize| starts.partition_point(|&s| s <= pos) - 1;
        // How long each token's spelling is: its own bytes', or with word marks its symbols'
        // text's (the marks take no room).
        let spellings: Vec<usize> = if self.marks_symbols() {
            let (units, ends) = self.marked_runs(piece, ids)?;
            let mut start = 0;
            ends.iter()
                .map(|&end| {
                    let run = &units[start..end];
                    start = end;
                    run.iter().flat_map(|&(at, len)| &piece[at..at + len]).map(|&b| width(b)).sum()
                })
                .collect()
        } else {
            let bytes = |id: u32| self.vocab.token_bytes(id).ok();
            ids.iter().map(|&id| bytes(id).map(|b| b.iter().map(|&b| width(b)).sum())).collect::<Option<_>>()?
        };
        let mut spans = Vec::with_capacity(ids.len());
        let mut pos = 0;
        for spelled in spellings {
            if spelled == 0 || pos + spelled > at {
                return None;
            }
            spans.push((byte_at(pos), byte_at(pos + spelled - 1) + 1));
            pos += spelled;
        }
        Some(spans)
    }

    /// How many bytes of text token `id` covers (see `Model::text_len`).
    #[inline]
    pub fn text_len(&self, id: u32) -> Option<usize> {
        if Some(id) == self.unk_id {
            return None;
        }
        if let Some(crate::models::vocab::TokenKind::Byte(_)) = self.vocab.kind(id) {
            return Some(1);
        }
        let bytes = self.vocab.token_bytes(id).ok()?;
        match &self.options.end_of_word_suffix {
            Some(suffix) if bytes.ends_with(suffix.as_bytes()) => Some(bytes.len() - suffix.len()),
            _ => Some(bytes.len()),
        }
    }
}

/// Where a symbol's text lies in its piece: (start, length).
type Span = (usize, usize);

/// Bytes that never occur in UTF-8 text (0xC0, 0xC1, 0xF5–0xFF).
fn never_in_utf8(b: u8) -> bool {
    matches!(b, 0xC0 | 0xC1 | 0xF5..=0xFF)
}

impl super::PieceModel for Bpe {
    fn vocab(&self) -> &Vocab {
        &self.vocab
    }
    fn model_type(&self) -> &'static str {
        "bpe"
    }
    #[inline]
    fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) -> Result<()> {
        Bpe::encode_piece(self, piece, out)
    }
    fn piece_lens(&self, piece: &str, ids: &[u32], _carry: f32) -> Option<Vec<usize>> {
        Bpe::piece_lens(self, piece, ids)
    }
    fn piece_spans(&self, piece: &str, ids: &[u32], _carry: f32) -> Option<Vec<(usize, usize)>> {
        let drops = if self.marks_symbols() {
            // A marked symbol the vocabulary lacks was left out.
            self.options.byte_level && self.unk_id.is_none() && {
                let (mut symbols, mut units) = (Vec::new(), Vec::new());
                self.push_marked(piece.as_bytes(), &mut symbols, Some(&mut units)).ok()?;
                units.iter().map(|u| u.1).sum::<usize>() < piece.len()
            }
        } else {
            self.drops_bytes && piece.bytes().any(|b| self.byte_ids[b as usize] == u32::MAX)
        };
        if drops {
            return self.spans_without_lacking_bytes(piece.as_bytes(), ids);
        }
        Bpe::piece_lens(self, piece, ids).map(super::spans_one_after_another)
    }
    /// SentencePiece BPE spells spaces as `▁`; an end-of-word suffix stands for a space (or
    /// nothing, where the pieces kept their whitespace); otherwise tokens are bytes.
    fn decoder(&self, normalizer: &Normalizer, pretokenizer: &PreTokenizer) -> Decoder {
        if let Some(sp) = self.sentencepiece() {
            return Decoder::Metaspace {
                unknown_surface: sp.unknown_surface().to_string(),
                strip_leading: super::strip_leading(normalizer),
            };
        }
        match &self.options.end_of_word_suffix {
            // Byte-level tokens decode as their bytes, a suffix included (tokenizers' ByteLevel
            // decoder keeps it).
            Some(suffix) if !self.options.byte_level => Decoder::Suffix {
                suffix: suffix.clone(),
                replacement: if pretokenizer.pieces_keep_whitespace() { "" } else { " " },
            },
            _ => Decoder::Bytes,
        }
    }
    fn unknown_id(&self) -> Option<u32> {
        self.unk_id()
    }
    fn score(&self, id: u32) -> Option<f32> {
        self.sentencepiece().map(|sp| sp.scores().get(id as usize).copied().unwrap_or(0.0))
    }
    fn config(&self) -> serde_json::Value {
        let o = &self.options;
        serde_json::json!({"type": "bpe", "byte_level": o.byte_level,
            "end_of_word_suffix": o.end_of_word_suffix, "joined_suffix": o.joined_suffix,
            "continuing_subword_prefix": o.continuing_subword_prefix, "unk_token": o.unk_token,
            "whole_piece_first": o.whole_piece_first, "rank_based": self.is_rank_based(),
            "byte_fallback": o.byte_fallback, "fuse_unk": o.fuse_unk, "drop_unknown": o.drop_unknown,
            "sentencepiece": self.sentencepiece().is_some()})
    }
    /// The model's list, or the one its ranks or scores imply.
    fn merge_list(&self) -> Vec<(u32, u32)> {
        match self.order {
            MergeOrder::Listed(_) => self.merges().to_vec(),
            MergeOrder::Ranks | MergeOrder::Scores(_) => {
                self.ranked_pairs().into_iter().map(|(l, r, _)| (l, r)).collect()
            }
        }
    }
    /// BPE-dropout: each merge skipped with probability `alpha`.
    fn encode_sampled(
        &self,
        piece: &str,
        alpha: f32,
        uniform: &mut dyn FnMut() -> f64,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        self.encode_piece_dropout(piece, alpha as f64, &mut { uniform }, out)
    }
    /// tokenizers' BPE-dropout (`encode_piece_requeued_dropout`).
    fn encode_drawn(
        &self,
        piece: &str,
        draw: super::Draw,
        uniform: &mut dyn FnMut() -> f64,
        out: &mut Vec<u32>,
    ) -> Result<Option<Vec<(usize, usize)>>> {
        let start = out.len();
        self.encode_piece_requeued_dropout(piece, draw.p, uniform, out)?;
        Ok(super::PieceModel::piece_spans(self, piece, &out[start..], 0.0))
    }
    fn check_sampling(&self, alpha: f32) -> Result<()> {
        if alpha > 1.0 {
            return Err(Error::config(format!("dropout is a probability between 0 and 1, got {alpha}")));
        }
        Ok(())
    }
}
