//! The ids of a trained Unigram vocabulary, in SentencePiece's order: the unknown token, the
//! control tokens, the special tokens, the 256 byte tokens (with byte fallback), then the pieces,
//! best first.

use super::Unigram;
use crate::error::{Error, Result};
use crate::models::vocab::{TokenKind, Vocab};

/// The tokens a trained Unigram vocabulary holds besides its pieces.
pub struct UnigramTokens {
    pub unk_token: String,
    pub control_tokens: Vec<String>,
    pub special_tokens: Vec<String>,
    pub byte_fallback: bool,
}

impl UnigramTokens {
    /// The model of trained `pieces` (piece, score), best first.
    pub fn model(&self, pieces: Vec<(String, f32)>) -> Result<Unigram> {
        let mut vocab = Vocab::default();
        let mut id = 0u32;
        vocab.push_kind(&self.unk_token, id, TokenKind::Unknown)?;
        for control in &self.control_tokens {
            id += 1;
            vocab.push_kind(control, id, TokenKind::Control)?;
        }
        for special in &self.special_tokens {
            id += 1;
            vocab.push_special(special, Some(id))?;
        }
        if self.byte_fallback {
            for b in 0..=255u8 {
                id += 1;
                vocab.push_kind(&format!("<0x{b:02X}>"), id, TokenKind::Byte(b))?;
            }
        }
        let first_piece = id + 1;
        let mut scores = vec![0.0; first_piece as usize];
        for (i, (piece, score)) in pieces.into_iter().enumerate() {
            let piece_id = u32::try_from(i).ok().and_then(|i| i.checked_add(first_piece));
            let piece_id = piece_id.ok_or_else(|| Error::config("too many Unigram pieces for 32-bit ids"))?;
            vocab.insert(piece_id, piece.as_bytes())?;
            scores.push(score);
        }
        Unigram::new(vocab, scores, Vec::new(), self.byte_fallback)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_sentencepiece_order() {
        let tokens = UnigramTokens {
            unk_token: "<unk>".into(),
            control_tokens: vec!["<s>".into(), "</s>".into()],
            special_tokens: vec!["<mask>".into()],
            byte_fallback: true,
        };
        let model = tokens.model(vec![("▁a".into(), -1.0), ("b".into(), -2.0)]).unwrap();
        let vocab = model.vocab();
        assert_eq!(vocab.kind(0), Some(TokenKind::Unknown));
        assert_eq!(vocab.kind(2), Some(TokenKind::Control));
        assert_eq!(vocab.special_id("<mask>"), Some(3));
        assert_eq!(vocab.kind(4), Some(TokenKind::Byte(0)));
        assert_eq!(vocab.id("▁a".as_bytes()), Some(4 + 256));
        assert_eq!(model.scores()[4 + 257], -2.0);
    }
}
