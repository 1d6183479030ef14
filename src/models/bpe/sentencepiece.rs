//! SentencePiece's BPE: merges implied by piece scores, user-defined pieces kept whole, unused
//! pieces split back.
//!
//! SentencePiece has no merge list. At each step it joins the adjacent pair whose concatenation
//! is a piece with the highest score, leftmost first — any concatenation that is a piece will
//! do. So a pair's rank is found by looking the joined text up (`joined_rank`), ranked by the
//! joined piece's score; pieces of equal score share a rank, and then position decides, as in
//! SentencePiece. User-defined pieces are matched in the text first (longest match) and never
//! joined with a neighbour. An unused piece (`SetVocabulary`) may be formed and joined further
//! like any other, but if it is left in the output it is split back into the two symbols it was
//! last formed from, recursively.

use super::{Bpe, BpeOptions};
use crate::error::{Error, Result};
use crate::models::vocab::{TokenKind, Vocab};
use crate::util::trie::Trie;
use rustc_hash::{FxHashMap, FxHashSet};

/// What a SentencePiece BPE model holds beyond a BPE model's vocabulary and pair table.
#[derive(Debug, Clone)]
pub struct SentencePieceParts {
    /// The score of each id (0 for ids that are not pieces), kept to write the model back.
    pub(super) scores: Vec<f32>,
    pub(super) user_defined: Vec<u32>,
    /// The user-defined pieces by spelling, for the longest match at each position.
    pub(super) frozen: Trie,
    /// The user-defined pieces by id: never joined with a neighbour.
    frozen_ids: FxHashSet<u32>,
    /// Unused pieces, by spelling (the vocabulary keeps them apart from ordinary spellings).
    pub(super) unused: FxHashMap<Box<[u8]>, u32>,
    /// What the unknown token decodes to.
    pub(super) unknown_surface: String,
    /// Names this model's entries in the per-thread memo of joined pairs.
    memo_owner: u64,
}

/// Pairs already joined (or found not to join) on this thread, for one model at a time: a word
/// the piece cache has not seen still mostly asks pairs asked before, and a look-up here is a
/// fraction of spelling the pair and finding its text among the pieces.
struct PairMemo {
    owner: u64,
    joined: FxHashMap<u64, u64>,
}

/// The memo is emptied when it grows past this many pairs.
const MEMO_PAIRS: usize = 1 << 18;
const NO_JOIN: u64 = u64::MAX;

thread_local! {
    static PAIRS: std::cell::RefCell<PairMemo> =
        std::cell::RefCell::new(PairMemo { owner: 0, joined: FxHashMap::default() });
}

impl SentencePieceParts {
    pub fn scores(&self) -> &[f32] {
        &self.scores
    }

    pub fn user_defined(&self) -> &[u32] {
        &self.user_defined
    }

    pub fn unknown_surface(&self) -> &str {
        &self.unknown_surface
    }

    pub(super) fn has_unused(&self) -> bool {
        !self.unused.is_empty()
    }

    /// The rank and id of the piece `left` and `right` join into, if they may join: SentencePiece
    /// looks the joined text up among the pieces, as here, rather than keeping a table of every
    /// split of every piece (building that took 3-4x sentencepiece's whole load on 262k pieces).
    #[inline]
    pub(super) fn joined_rank(&self, vocab: &Vocab, left: u32, right: u32) -> Option<(u32, u32)> {
        let key = (left as u64) << 32 | right as u64;
        let known = PAIRS.with_borrow_mut(|memo| {
            if memo.owner != self.memo_owner {
                memo.owner = self.memo_owner;
                memo.joined.clear();
            }
            memo.joined.get(&key).copied()
        });
        if let Some(packed) = known {
            return (packed != NO_JOIN).then_some(((packed >> 32) as u32, packed as u32));
        }
        let found = self.join(vocab, left, right);
        PAIRS.with_borrow_mut(|memo| {
            if memo.joined.len() >= MEMO_PAIRS {
                memo.joined.clear();
            }
            memo.joined.insert(key, found.map_or(NO_JOIN, |(rank, id)| (rank as u64) << 32 | id as u64));
        });
        found
    }

    /// `joined_rank` without the memo.
    fn join(&self, vocab: &Vocab, left: u32, right: u32) -> Option<(u32, u32)> {
        if self.frozen_ids.contains(&left) || self.frozen_ids.contains(&right) {
            return None;
        }
        // Unused pieces are spelled by `token_bytes` too (tokens of every kind are).
        let (l, r) = (vocab.token_bytes(left).ok()?, vocab.token_bytes(right).ok()?);
        let mut joined: smallvec::SmallVec<[u8; 64]> = smallvec::SmallVec::with_capacity(l.len() + r.len());
        joined.extend_from_slice(l);
        joined.extend_from_slice(r);
        let id = vocab.id(&joined).or_else(|| self.unused.get(&joined[..]).copied())?;
        Some((score_rank(self.scores.get(id as usize).copied().unwrap_or(0.0)), id))
    }

    /// Every (left, right, rank) pair the scores imply: each split of each piece into two
    /// pieces that may join (for listing and exporting the merges; encoding never needs them).
    pub(super) fn implied_pairs(&self, vocab: &Vocab) -> Vec<(u32, u32, u32)> {
        let lookup = |bytes: &[u8]| vocab.id(bytes).or_else(|| self.unused.get(bytes).copied());
        let mut pieces: Vec<(u32, &[u8])> = vocab.ordinary().collect();
        pieces.extend(self.unused.iter().map(|(text, &id)| (id, &text[..])));
        let mut pairs = Vec::new();
        for (id, bytes) in pieces {
            let Ok(text) = std::str::from_utf8(bytes) else { continue };
            let rank = score_rank(self.scores.get(id as usize).copied().unwrap_or(0.0));
            for (k, _) in text.char_indices().skip(1) {
                let (Some(left), Some(right)) = (lookup(&bytes[..k]), lookup(&bytes[k..])) else { continue };
                if !self.frozen_ids.contains(&left) && !self.frozen_ids.contains(&right) {
                    pairs.push((left, right, rank));
                }
            }
        }
        pairs
    }
}

/// A merge rank from a piece's score: higher scores give lower ranks, equal scores equal ranks
/// (then position decides, as in SentencePiece). The f32's bits, made to sort as the floats do
/// and reversed.
#[inline]
fn score_rank(score: f32) -> u32 {
    let bits = score.to_bits();
    let ascending = if bits >> 31 == 1 { !bits } else { bits | 0x8000_0000 };
    // u32::MAX means "no merge" to the merge loops; no finite score maps there.
    !ascending
}

impl Bpe {
    /// A SentencePiece BPE model: a vocabulary (with an unknown token named by
    /// `options.unk_token`), a score per id, and the ids of user-defined pieces.
    pub fn from_scores(
        vocab: Vocab,
        scores: Vec<f32>,
        user_defined: Vec<u32>,
        options: BpeOptions,
        unknown_surface: &str,
    ) -> Result<Self> {
        if options.byte_level || options.end_of_word_suffix.is_some() || options.whole_piece_first {
            return Err(Error::config("a SentencePiece BPE model is character-level, with no end-of-word suffix"));
        }
        if options.unk_token.is_none() {
            return Err(Error::config("a SentencePiece BPE model needs an unknown token"));
        }
        if let Some(bad) = scores.iter().position(|s| !s.is_finite()) {
            return Err(Error::config(format!("piece {bad} has score {}", scores[bad])));
        }
        let frozen_ids: FxHashSet<u32> = user_defined.iter().copied().collect();
        let mut frozen_keys = Vec::with_capacity(user_defined.len());
        for &id in &user_defined {
            if vocab.kind(id) != Some(TokenKind::Normal) {
                return Err(Error::config(format!("user-defined piece {id} is not an ordinary token")));
            }
            frozen_keys.push((vocab.token_bytes(id)?, id));
        }
        let frozen = Trie::new(frozen_keys);
        let unused: FxHashMap<Box<[u8]>, u32> = vocab
            .kinded()
            .into_iter()
            .filter(|&(_, _, kind)| kind == TokenKind::Unused)
            .map(|(id, text, _)| (text.as_bytes().into(), id))
            .collect();

        let parts = SentencePieceParts {
            scores,
            user_defined,
            frozen,
            frozen_ids,
            unused,
            unknown_surface: unknown_surface.to_string(),
            memo_owner: crate::models::piece_cache::next_owner_id(),
        };
        Self::assemble(vocab, Vec::new(), super::MergeOrder::Scores(Box::new(parts)), options)
    }

    /// The id of the piece spelled `bytes` that merges can form or start from.
    #[inline]
    pub(super) fn symbol_id(&self, bytes: &[u8]) -> Option<u32> {
        self.vocab.id(bytes).or_else(|| self.sentencepiece()?.unused.get(bytes).copied())
    }

    /// Splits unused pieces in `ids` back into what they were formed from (`formed_from`:
    /// merged id → the pair it was last formed from).
    pub(super) fn resegment(&self, ids: &[u32], formed_from: &FxHashMap<u32, (u32, u32)>, out: &mut Vec<u32>) {
        let mut stack: Vec<u32> = Vec::new();
        for &id in ids {
            stack.push(id);
            while let Some(id) = stack.pop() {
                match formed_from.get(&id) {
                    Some(&(left, right)) if self.vocab.kind(id) == Some(TokenKind::Unused) => {
                        stack.push(right);
                        stack.push(left);
                    }
                    _ => out.push(id),
                }
            }
        }
    }
}
