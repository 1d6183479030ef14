//! A smaller BPE vocabulary from a larger one: merges form a prefix, so training with a smaller
//! `vocab_size` would have given the special tokens, the base alphabet and the first merges —
//! the tokens with the smallest ids — and the merges among them.

use super::Bpe;
use crate::error::{Error, Result};
use crate::models::vocab::Vocab;
use crate::models::PieceModel;
use crate::tokenizer::{Model, Tokenizer};
use rustc_hash::FxHashSet;

impl Tokenizer {
    /// This tokenizer cut to `vocab_size` tokens (special tokens included), as training with that
    /// size would have made it. Model-input settings are not carried over (they may name ids
    /// that are gone).
    pub fn truncated(&self, vocab_size: usize) -> Result<Tokenizer> {
        let bpe = match self.model() {
            Model::Bpe(bpe) if bpe.sentencepiece().is_none() => bpe,
            other => {
                let kind = if matches!(other, Model::Bpe(_)) { "SentencePiece BPE" } else { other.model_type() };
                return Err(Error::config(format!(
                    "truncated() keeps a prefix of a BPE tokenizer's merges; this tokenizer is {kind}, whose \
                     vocabulary has no merge order to cut (train again with the smaller vocab_size)"
                )));
            }
        };
        let vocab = self.vocab();
        let specials = vocab.specials();
        let ordinary: Vec<(u32, &[u8])> = vocab.ordinary().collect();
        // The base alphabet: single bytes (rank-based), or the tokens no merge makes.
        let base = if bpe.is_rank_based() {
            ordinary.iter().filter(|(_, bytes)| bytes.len() == 1).count()
        } else {
            let made: FxHashSet<u32> = bpe.merges().iter().filter_map(|&(l, r)| merged(vocab, l, r)).collect();
            ordinary.iter().filter(|(id, _)| !made.contains(id)).count()
        };
        let smallest = specials.len() + base.max(1);
        if vocab_size < smallest || vocab_size > vocab.len() {
            return Err(Error::config(format!(
                "vocab_size must be between {smallest} and {}, got {vocab_size}",
                vocab.len()
            )));
        }
        let kept = &ordinary[..vocab_size - specials.len()];
        let mut small = Vocab::default();
        for &(id, bytes) in kept {
            small.insert(id, bytes)?;
        }
        for (text, id) in specials {
            small.push_special(text, Some(*id))?;
        }
        let model = if bpe.is_rank_based() {
            Bpe::from_ranks(small, bpe.options().clone())?
        } else {
            let kept_ids: FxHashSet<u32> = kept.iter().map(|&(id, _)| id).collect();
            let merges = bpe
                .merges()
                .iter()
                .take_while(|&&(l, r)| merged(vocab, l, r).is_some_and(|id| kept_ids.contains(&id)))
                .copied()
                .collect();
            Bpe::from_merges(small, merges, bpe.options().clone())?
        };
        Ok(Tokenizer::new(self.normalizer().clone(), self.pretokenizer().clone(), Model::Bpe(model)))
    }
}

/// The token a merge of `left` and `right` makes.
fn merged(vocab: &Vocab, left: u32, right: u32) -> Option<u32> {
    let mut joined = vocab.token_bytes(left).ok()?.to_vec();
    joined.extend_from_slice(vocab.token_bytes(right).ok()?);
    vocab.id(&joined)
}
