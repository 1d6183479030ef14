//! WordPiece's part of tokenmill's file (`models/file.rs`).

use super::WordPiece;
use crate::error::Result;
use crate::models::file::{read_vocab, OtherTokens};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub struct WordPieceFile {
    tokens: Vec<Option<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    far_tokens: Vec<(u32, String)>,
    unk_token: String,
    continuing_subword_prefix: String,
    max_input_chars_per_word: usize,
    #[serde(default = "yes")]
    decoder_cleanup: bool,
}

fn yes() -> bool {
    true
}

impl WordPieceFile {
    pub fn of(wp: &WordPiece, tokens: Vec<Option<String>>, far_tokens: Vec<(u32, String)>) -> Self {
        WordPieceFile {
            tokens,
            far_tokens,
            unk_token: wp.unk_token().to_string(),
            continuing_subword_prefix: wp.prefix().to_string(),
            max_input_chars_per_word: wp.max_input_chars_per_word(),
            decoder_cleanup: wp.cleanup(),
        }
    }

    pub fn into_model(self, others: OtherTokens) -> Result<WordPiece> {
        let vocab = read_vocab(&self.tokens, &self.far_tokens, &others)?;
        WordPiece::new(
            vocab,
            &self.unk_token,
            &self.continuing_subword_prefix,
            self.max_input_chars_per_word,
            self.decoder_cleanup,
        )
    }
}
