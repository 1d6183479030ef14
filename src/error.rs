//! The one error type of the core. Every failure a user can cause becomes one of these variants;
//! `src/python/errors.rs` maps them to Python exceptions in exactly one place.

use std::path::PathBuf;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// Text that must be UTF-8 is not (character-level training, vocabulary files).
    #[error("{path}: invalid UTF-8 at byte offset {offset}")]
    InvalidUtf8 { path: PathBuf, offset: u64 },

    /// The corpus held no words to learn from.
    #[error("empty corpus: {0}")]
    EmptyCorpus(String),

    /// A parameter outside its valid range or a contradictory combination.
    #[error("invalid configuration: {0}")]
    Config(String),

    /// A pre-tokenizer pattern that does not compile, or an unknown preset name.
    #[error("bad pattern {pattern:?}: {reason}")]
    Pattern { pattern: String, reason: String },

    /// A character the vocabulary cannot represent and no `unk_token` to fall back on.
    #[error("character {ch:?} (U+{code:04X}) is not in the vocabulary and no unk_token is set")]
    OutOfVocabulary { ch: char, code: u32 },

    /// Text a Hugging Face Unigram model without an unknown piece cannot cut (tokenizers'
    /// own words, which callers may match).
    #[error("Encountered an unknown token but `unk_id` is missing")]
    MissingUnknownPiece,

    /// A word a WordLevel model does not hold, and no unknown token to fall back on.
    #[error("word {word:?} is not in the vocabulary and the model has no unknown token")]
    UnknownWord { word: String },

    /// A token id that the vocabulary does not hold.
    #[error("token id {id} is out of range (vocabulary has {n_vocab} ids)")]
    IdOutOfRange { id: u32, n_vocab: usize },

    /// A token id inside the vocabulary's range that no token holds (a gap in its ids).
    #[error("token id {id} holds no token: it is one of the unused ids inside this vocabulary's {n_vocab}")]
    UnusedId { id: u32, n_vocab: usize },

    /// A special token appeared in text where the caller disallowed it.
    #[error("text contains the special token {token:?}, which is disallowed; pass it in allowed_special to encode it as a special token, or disallowed_special=() to encode it as ordinary text")]
    DisallowedSpecial { token: String },

    /// A tokenizer or vocabulary file that is truncated, corrupt or of another format.
    #[error("{path}: not a valid {format} file: {reason}")]
    Format { path: PathBuf, format: &'static str, reason: String },

    /// The caller asked to stop (Ctrl-C from Python, or a progress callback that failed).
    #[error("interrupted")]
    Interrupted,
}

impl Error {
    pub fn config(msg: impl Into<String>) -> Self {
        Error::Config(msg.into())
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
