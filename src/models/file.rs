//! The model's part of tokenmill's own file (`serialize.rs` holds the rest): `{"type": "bpe" |
//! "wordpiece" | "unigram" | "wordlevel", ...}` with the ordinary tokens by id (base64) and the model's options.
//! Each model owns its part (`bpe/file.rs`, `wordpiece/file.rs`, `unigram/file.rs`); this enum
//! names them and reads the token lists every part shares.

use super::bpe::file::BpeFile;
use super::unigram::file::UnigramFile;
use super::wordlevel::file::WordLevelFile;
use super::wordpiece::file::WordPieceFile;
use super::Model;
use crate::error::{Error, Result};
use crate::models::vocab::{TokenKind, Vocab};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum FileModel {
    Bpe(BpeFile),
    WordPiece(WordPieceFile),
    Unigram(UnigramFile),
    WordLevel(WordLevelFile),
}

/// The tokens that are not in a model's lists: special tokens (text, id) and tokens of other
/// kinds (text, id, kind name).
pub struct OtherTokens<'a> {
    pub specials: &'a [(String, u32)],
    pub kinded: &'a [(String, u32, String)],
}

impl FileModel {
    pub fn of(model: &Model) -> Self {
        let (tokens, far_tokens) = token_lists(super::PieceModel::vocab(model));
        match model {
            Model::Bpe(m) => FileModel::Bpe(BpeFile::of(m, tokens, far_tokens)),
            Model::WordPiece(m) => FileModel::WordPiece(WordPieceFile::of(m, tokens, far_tokens)),
            Model::Unigram(m) => FileModel::Unigram(UnigramFile::of(m, tokens, far_tokens)),
            Model::WordLevel(m) => FileModel::WordLevel(WordLevelFile::of(m, tokens, far_tokens)),
        }
    }

    pub fn into_model(self, others: OtherTokens) -> Result<Model> {
        Ok(match self {
            FileModel::Bpe(f) => f.into_model(others)?.into(),
            FileModel::WordPiece(f) => f.into_model(others)?.into(),
            FileModel::Unigram(f) => f.into_model(others)?.into(),
            FileModel::WordLevel(f) => f.into_model(others)?.into(),
        })
    }
}

/// The ordinary tokens of `vocab` by id (base64), and those far past the rest separately: a
/// list by id would hold a null for every id in between.
fn token_lists(vocab: &Vocab) -> (Vec<Option<String>>, Vec<(u32, String)>) {
    let mut tokens = vec![None; vocab.dense_len()];
    let mut far_tokens = Vec::new();
    for (id, bytes) in vocab.ordinary() {
        match tokens.get_mut(id as usize) {
            Some(slot) => *slot = Some(BASE64.encode(bytes)),
            None => far_tokens.push((id, BASE64.encode(bytes))),
        }
    }
    (tokens, far_tokens)
}

/// A vocabulary from a part's token lists and the file's other tokens.
pub(super) fn read_vocab(
    tokens: &[Option<String>],
    far_tokens: &[(u32, String)],
    others: &OtherTokens,
) -> Result<Vocab> {
    let mut vocab = Vocab::default();
    let listed = tokens.iter().enumerate().filter_map(|(id, t)| t.as_ref().map(|t| (id as u32, t)));
    for (id, b64) in listed.chain(far_tokens.iter().map(|(id, t)| (*id, t))) {
        let bytes = BASE64.decode(b64).map_err(|e| Error::config(format!("token {id}: bad base64: {e}")))?;
        vocab.insert(id, &bytes)?;
    }
    // Kinds first: a special token may be a control or unknown token too (`push_special`).
    for (text, id, kind) in others.kinded {
        vocab.push_kind(text, *id, TokenKind::parse(kind, text)?)?;
    }
    for (text, id) in others.specials {
        vocab.push_special(text, Some(*id))?;
    }
    Ok(vocab)
}

pub(super) fn is_false(b: &bool) -> bool {
    !*b
}
