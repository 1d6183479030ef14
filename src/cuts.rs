//! The cuts SentencePiece's processor reports, each piece with the normalized text it spells
//! and the characters of the original text it came from: the best cut (as `encode` finds it),
//! the n best, a sampled cut with its log-probability, and the entropy of sampling. n-best and
//! sampling take the whole normalized text as one lattice, as SentencePiece does.

use crate::error::{Error, Result};
use crate::models::unigram::lattice::{self, Cut};
use crate::pipeline::normalize::Normalizer;
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
        let mut found = Vec::with_capacity(text.len() / 3);
        self.for_each_aligned_token(text, |t| found.push((t.id, t.normalized_len)))?;
        let (normalized, align) = self.normalizer().apply_aligned(text);
        Ok(place(self.normalizer(), text, &normalized, align.as_deref(), found))
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
        let found = cuts(model, &normalized)?;
        Ok(found
            .into_iter()
            .map(|(cut, score)| {
                let mut ids = Vec::with_capacity(cut.len());
                model.emit(&normalized, cut.into_iter(), |id, len| ids.push((id, len)));
                (place(self.normalizer(), text, &normalized, align.as_deref(), ids), score)
            })
            .collect())
    }
}

/// Where in `text` each normalized byte position is, as SentencePiece reports it: a byte of
/// the normalized text is at the start of what it came from (so whitespace removed inside the
/// text belongs to the piece before it), and the end of the normalized text at the end of all
/// the input read — characters removed at the very end (controls) included, whitespace trimmed
/// there not (`Normalizer::sentencepiece_end`).
pub fn sentencepiece_positions(
    normalizer: &Normalizer,
    text: &str,
    normalized: &str,
    align: Option<&[(u32, u32)]>,
) -> Vec<u32> {
    match align {
        None => (0..=normalized.len() as u32).collect(),
        Some(a) => {
            let mut at: Vec<u32> = a.iter().map(|r| r.0).collect();
            let read = a.last().map(|r| r.1 as usize);
            at.push(normalizer.sentencepiece_end(text, read) as u32);
            debug_assert!(at.iter().all(|&p| p as usize <= text.len()));
            at
        }
    }
}

/// Pieces (id, bytes of normalized text) that tile `normalized`, placed in `text`.
fn place(
    normalizer: &Normalizer,
    text: &str,
    normalized: &str,
    align: Option<&[(u32, u32)]>,
    ids: Vec<(u32, usize)>,
) -> Vec<CutPiece> {
    let positions = sentencepiece_positions(normalizer, text, normalized, align);
    let chars = CharIndex::new(text);
    let bytes = normalized.as_bytes();
    let mut at = 0;
    ids.into_iter()
        .map(|(id, len)| {
            let end_at = (at + len).min(bytes.len());
            let (start, _) = chars.span(positions[at] as usize, positions[at] as usize);
            let (end, _) = chars.span(positions[end_at] as usize, positions[end_at] as usize);
            let spelled = String::from_utf8_lossy(&bytes[at..end_at]).into_owned();
            at = end_at;
            CutPiece { id, normalized: spelled, start, end }
        })
        .collect()
}
