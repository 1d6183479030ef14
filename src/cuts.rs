//! The cuts SentencePiece's processor reports, each piece with the normalized text it spells
//! and the characters of the original text it came from: the best cut (as `encode` finds it),
//! the n best, a sampled cut with its log-probability, and the entropy of sampling. n-best and
//! sampling take the whole normalized text as one lattice, as SentencePiece does.

use crate::error::{Error, Result};
use crate::models::unigram::lattice::{self, Cut};
use crate::pipeline::postprocess::CharIndex;
use crate::tokenizer::{Tokenizer, NBEST_BUDGET};
use crate::util::rng::SplitMix64;

/// A piece of a cut: its id, the normalized text it covers (for an unknown piece, the text it
/// stands for; empty where tokens do not spell their text), and its character range in the
/// original text.
#[derive(Debug, Clone, PartialEq)]
pub struct CutPiece {
    pub id: u32,
    pub normalized: String,
    pub start: u32,
    pub end: u32,
}

impl Tokenizer {
    /// The pieces `encode_ordinary` gives for `text`, each with its text and place.
    pub fn best_pieces(&self, text: &str) -> Result<Vec<CutPiece>> {
        let chars = CharIndex::new(text);
        let mut out = Vec::with_capacity(text.len() / 3);
        self.for_each_aligned_token(text, |t| {
            let (start, end) = chars.span(t.start, t.end);
            out.push(CutPiece { id: t.id, normalized: t.normalized.unwrap_or("").to_string(), start, end });
        })?;
        Ok(out)
    }

    /// The `n` best cuts of `text` with their scores, best first (Unigram).
    pub fn nbest_pieces(&self, text: &str, n: usize) -> Result<Vec<(Vec<CutPiece>, f32)>> {
        self.aligned_cuts(text, "n-best encoding", |model, normalized| {
            if n.saturating_mul(normalized.len()) > NBEST_BUDGET {
                return Err(Error::config(format!(
                    "n-best of {n} cuts over {} bytes of text is too much work (n × bytes is at most \
                     {NBEST_BUDGET}); ask for fewer cuts or split the text",
                    normalized.len()
                )));
            }
            Ok(lattice::nbest(model, normalized, n).into_iter().map(|(cut, score)| (cut, score as f64)).collect())
        })
        .map(|cuts| cuts.into_iter().map(|(pieces, score)| (pieces, score as f32)).collect())
    }

    /// A cut of `text` drawn with probability proportional to exp(`alpha` × score), with its
    /// log-probability (Unigram). `seed` repeats a draw.
    pub fn sampled_pieces(&self, text: &str, alpha: f32, seed: u64) -> Result<(Vec<CutPiece>, f64)> {
        let mut rng = SplitMix64(seed);
        let cuts = self.aligned_cuts(text, "sampling with scores", |model, normalized| {
            let mut cut = Vec::new();
            let log_p = lattice::sample(model, normalized, alpha, &mut || rng.next_f64(), &mut cut);
            Ok(vec![(cut, log_p)])
        })?;
        Ok(cuts.into_iter().next().expect("one cut drawn"))
    }

    /// The entropy (nats) of the cuts of `text` drawn with `alpha` (Unigram).
    pub fn entropy(&self, text: &str, alpha: f32) -> Result<f64> {
        let model = self.unigram("the entropy of a lattice")?;
        let normalized = self.normalizer().apply(text);
        Ok(lattice::entropy(model, &normalized, alpha as f64))
    }

    /// Cuts `cuts` makes of the normalized text, each piece placed in the original `text`.
    fn aligned_cuts(
        &self,
        text: &str,
        what: &str,
        cuts: impl FnOnce(&crate::models::unigram::Unigram, &str) -> Result<Vec<(Cut, f64)>>,
    ) -> Result<Vec<(Vec<CutPiece>, f64)>> {
        let model = self.unigram(what)?;
        let (normalized, align) = self.normalizer().apply_aligned(text);
        let chars = CharIndex::new(text);
        let original = |start: usize, end: usize| -> (u32, u32) {
            let (s, e) = match &align {
                None => (start, end),
                Some(a) if start < end => (a[start].0 as usize, a[end - 1].1 as usize),
                Some(a) => {
                    let at = a.get(start).map_or(text.len(), |s| s.0 as usize);
                    (at, at)
                }
            };
            chars.span(s, e)
        };
        let found = cuts(model, &normalized)?;
        let bytes = normalized.as_bytes();
        Ok(found
            .into_iter()
            .map(|(cut, score)| {
                let mut pieces = Vec::with_capacity(cut.len());
                let mut at = 0;
                model.emit(&normalized, cut.into_iter(), |id, len| {
                    let (start, end) = original(at, at + len);
                    let spelled = String::from_utf8_lossy(&bytes[at..at + len]).into_owned();
                    pieces.push(CutPiece { id, normalized: spelled, start, end });
                    at += len;
                });
                (pieces, score)
            })
            .collect())
    }
}
