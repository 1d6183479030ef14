//! tokenmill: subword tokenization — training and exact, fast encoding.
//!
//! The data path, one module per stage:
//! `normalize` → `special` (split out special tokens) → `pretokenize` → `count` (training) →
//! `models::{bpe, wordpiece}` (training and the per-piece encoders) → `tokenizer::Tokenizer` →
//! `postprocess` (model inputs) and `decoder`; `serialize` saves and loads; `sentencepiece_model`
//! reads `.model` files (their character map walked as it is by `precompiled_charsmap`).
//! Only `python` (behind the `python` cargo feature) knows about Python.

pub mod charset;
pub mod count;
pub mod decoder;
pub mod error;
pub mod models;
pub mod normalize;
pub mod normalize_sentencepiece;
pub mod piece_cache;
pub mod postprocess;
pub mod precompiled_charsmap;
pub mod pretokenize;
pub mod read;
pub mod sentencepiece_model;
pub mod serialize;
pub mod special;
pub mod threads;
pub mod tokenizer;
pub mod trie;
pub mod vocab;
pub mod word_table;
pub mod words;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};
pub use tokenizer::Tokenizer;
