//! BPE's part of tokenmill's file (`models/file.rs`).

use super::{Bpe, BpeOptions};
use crate::error::{Error, Result};
use crate::models::file::{is_false, read_vocab, OtherTokens};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub struct BpeFile {
    byte_level: bool,
    end_of_word_suffix: Option<String>,
    /// Hugging Face's marks (`BpeOptions`); absent in files before them.
    #[serde(default, skip_serializing_if = "is_false")]
    joined_suffix: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    continuing_subword_prefix: Option<String>,
    unk_token: Option<String>,
    whole_piece_first: bool,
    tokens: Vec<Option<String>>,
    /// Tokens whose ids lie far past the rest, as (id, base64 bytes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    far_tokens: Vec<(u32, String)>,
    /// `null` for rank-based models (tiktoken): ranks are ids, merges are implied; and for
    /// SentencePiece models, whose merges the `scores` imply.
    merges: Option<Vec<(u32, u32)>>,
    #[serde(default, skip_serializing_if = "is_false")]
    byte_fallback: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    fuse_unk: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    drop_unknown: bool,
    /// SentencePiece BPE: the score of each id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scores: Option<Vec<f32>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    user_defined: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unknown_surface: Option<String>,
}

impl BpeFile {
    pub fn of(bpe: &Bpe, tokens: Vec<Option<String>>, far_tokens: Vec<(u32, String)>) -> Self {
        let options = bpe.options();
        let sp = bpe.sentencepiece();
        BpeFile {
            byte_level: options.byte_level,
            end_of_word_suffix: options.end_of_word_suffix.clone(),
            joined_suffix: options.joined_suffix,
            continuing_subword_prefix: options.continuing_subword_prefix.clone(),
            unk_token: options.unk_token.clone(),
            whole_piece_first: options.whole_piece_first,
            tokens,
            far_tokens,
            merges: matches!(bpe.merge_order(), super::MergeOrder::Listed(_)).then(|| bpe.merges().to_vec()),
            byte_fallback: options.byte_fallback,
            fuse_unk: options.fuse_unk,
            drop_unknown: options.drop_unknown,
            scores: sp.map(|sp| sp.scores().to_vec()),
            user_defined: sp.map(|sp| sp.user_defined().to_vec()).unwrap_or_default(),
            unknown_surface: sp.map(|sp| sp.unknown_surface().to_string()),
        }
    }

    pub fn into_model(self, others: OtherTokens) -> Result<Bpe> {
        let vocab = read_vocab(&self.tokens, &self.far_tokens, &others)?;
        let options = BpeOptions {
            byte_level: self.byte_level,
            end_of_word_suffix: self.end_of_word_suffix,
            joined_suffix: self.joined_suffix,
            continuing_subword_prefix: self.continuing_subword_prefix,
            unk_token: self.unk_token,
            whole_piece_first: self.whole_piece_first,
            byte_fallback: self.byte_fallback,
            fuse_unk: self.fuse_unk,
            drop_unknown: self.drop_unknown,
        };
        match (self.scores, self.merges) {
            (Some(_), Some(_)) => Err(Error::config("a BPE model has merges or scores, not both")),
            (Some(scores), None) => {
                let surface =
                    self.unknown_surface.as_deref().unwrap_or(crate::models::unigram::DEFAULT_UNKNOWN_SURFACE);
                Bpe::from_scores(vocab, scores, self.user_defined, options, surface)
            }
            (None, Some(merges)) => Bpe::from_merges(vocab, merges, options),
            (None, None) => Bpe::from_ranks(vocab, options),
        }
    }
}
