//! WordLevel's part of tokenmill's file (`models/file.rs`).

use super::WordLevel;
use crate::error::Result;
use crate::models::file::{read_vocab, OtherTokens};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
pub struct WordLevelFile {
    tokens: Vec<Option<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    far_tokens: Vec<(u32, String)>,
    unk_token: String,
}

impl WordLevelFile {
    pub fn of(m: &WordLevel, tokens: Vec<Option<String>>, far_tokens: Vec<(u32, String)>) -> Self {
        WordLevelFile { tokens, far_tokens, unk_token: m.unk_token().to_string() }
    }

    pub fn into_model(self, others: OtherTokens) -> Result<WordLevel> {
        WordLevel::new(read_vocab(&self.tokens, &self.far_tokens, &others)?, &self.unk_token)
    }
}
