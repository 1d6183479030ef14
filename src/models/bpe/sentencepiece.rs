//! SentencePiece's BPE: merges implied by piece scores, user-defined pieces kept whole, unused
//! pieces split back.
//!
//! SentencePiece has no merge list. At each step it joins the adjacent pair whose concatenation
//! is a piece with the highest score, leftmost first — any concatenation that is a piece will
//! do. So the pair table here is every split of every piece into two pieces, ranked by the
//! joined piece's score; pieces of equal score share a rank, and then position decides, as in
//! SentencePiece. User-defined pieces are matched in the text first (longest match) and never
//! joined with a neighbour. An unused piece (`SetVocabulary`) may be formed and joined further
//! like any other, but if it is left in the output it is split back into the two symbols it was
//! last formed from, recursively.

use super::{Bpe, BpeOptions};
use crate::error::{Error, Result};
use crate::trie::Trie;
use crate::vocab::{TokenKind, Vocab};
use rustc_hash::{FxHashMap, FxHashSet};

/// What a SentencePiece BPE model holds beyond a BPE model's vocabulary and pair table.
#[derive(Debug, Clone)]
pub struct SentencePieceParts {
    /// The score of each id (0 for ids that are not pieces), kept to write the model back.
    pub(super) scores: Vec<f32>,
    pub(super) user_defined: Vec<u32>,
    /// The user-defined pieces by spelling, for the longest match at each position.
    pub(super) frozen: Trie,
    /// Unused pieces, by spelling (the vocabulary keeps them apart from ordinary spellings).
    pub(super) unused: FxHashMap<Box<[u8]>, u32>,
    /// What the unknown token decodes to.
    pub(super) unknown_surface: String,
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
        let score = |id: u32| scores.get(id as usize).copied().unwrap_or(0.0);
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

        // Every piece that a merge can form: ordinary ones and unused ones.
        let mut pieces: Vec<(u32, &[u8])> = vocab.ordinary().collect();
        pieces.extend(unused.iter().map(|(text, &id)| (id, &text[..])));
        // Rank = place of the piece's score among the distinct scores, highest first.
        let mut distinct: Vec<f32> = pieces.iter().map(|&(id, _)| score(id)).collect();
        distinct.sort_unstable_by(|a, b| b.total_cmp(a));
        distinct.dedup_by(|a, b| a.total_cmp(b).is_eq());
        let rank_of = |s: f32| distinct.binary_search_by(|probe| s.total_cmp(probe)).expect("listed") as u32;

        let lookup = |bytes: &[u8]| vocab.id(bytes).or_else(|| unused.get(bytes).copied());
        let mut pair_rank = FxHashMap::default();
        for &(id, bytes) in &pieces {
            let Ok(text) = std::str::from_utf8(bytes) else { continue };
            let rank = rank_of(score(id));
            for (k, _) in text.char_indices().skip(1) {
                let (Some(left), Some(right)) = (lookup(&bytes[..k]), lookup(&bytes[k..])) else { continue };
                if frozen_ids.contains(&left) || frozen_ids.contains(&right) {
                    continue;
                }
                pair_rank.insert((left, right), (rank, id));
            }
        }
        let parts =
            SentencePieceParts { scores, user_defined, frozen, unused, unknown_surface: unknown_surface.to_string() };
        let mut model = Self::assemble(vocab, Vec::new(), pair_rank, options)?;
        model.sentencepiece = Some(Box::new(parts));
        Ok(model)
    }

    /// The id of the piece spelled `bytes` that merges can form or start from.
    #[inline]
    pub(super) fn symbol_id(&self, bytes: &[u8]) -> Option<u32> {
        self.vocab.id(bytes).or_else(|| self.sentencepiece.as_ref()?.unused.get(bytes).copied())
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
