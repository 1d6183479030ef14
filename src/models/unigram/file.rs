//! Unigram's part of tokenmill's file (`models/file.rs`).

use super::Unigram;
use crate::error::Result;
use crate::models::file::{read_vocab, OtherTokens};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub struct UnigramFile {
    tokens: Vec<Option<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    far_tokens: Vec<(u32, String)>,
    /// The score of each id (0 for ids that are not pieces).
    scores: Vec<f32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    user_defined: Vec<u32>,
    byte_fallback: bool,
    #[serde(default = "default_unknown_surface")]
    unknown_surface: String,
    /// A model read from a `tokenizer.json`, cut as Hugging Face cuts (`Unigram::huggingface`),
    /// with its f64 scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    huggingface_scores: Option<Vec<f64>>,
    /// Pieces cut in their byte-level spelling (`Unigram::with_byte_level`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    byte_level: bool,
}

fn default_unknown_surface() -> String {
    super::DEFAULT_UNKNOWN_SURFACE.to_string()
}

impl UnigramFile {
    pub fn of(u: &Unigram, tokens: Vec<Option<String>>, far_tokens: Vec<(u32, String)>) -> Self {
        UnigramFile {
            tokens,
            far_tokens,
            scores: u.scores().to_vec(),
            user_defined: u.user_defined(),
            byte_fallback: u.byte_fallback(),
            unknown_surface: u.unknown_surface().to_string(),
            huggingface_scores: u.is_huggingface().then(|| u.exact_scores().to_vec()),
            byte_level: u.is_byte_level(),
        }
    }

    pub fn into_model(self, others: OtherTokens) -> Result<Unigram> {
        let vocab = read_vocab(&self.tokens, &self.far_tokens, &others)?;
        let model = match self.huggingface_scores {
            Some(scores) => Unigram::huggingface(vocab, scores, self.byte_fallback)?,
            None => Unigram::new(vocab, self.scores, self.user_defined, self.byte_fallback)?,
        };
        Ok(model.with_unknown_surface(&self.unknown_surface).with_byte_level(self.byte_level))
    }
}
