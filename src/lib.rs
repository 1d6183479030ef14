//! tokenmill: subword tokenization — training and exact, fast encoding.
//!
//! The data path, one module per stage:
//! `normalize` → `special` (split out special tokens) → `pretokenize` → `count` (training) →
//! `models` (`PieceModel`: BPE, WordPiece, Unigram — training, the per-piece encoders, their part
//! of the file) → `tokenizer::Tokenizer` → `postprocess` (model inputs), `decoder` and
//! `decode_stream`; `serialize` saves and loads tokenmill's own files; `io` reads other
//! libraries' files (`tokenizer.json`, `.model` — its character map walked as it is by
//! `precompiled_charsmap` — `.tiktoken`, `vocab.txt`, GPT-2's pair).
//! Only `python` (behind the `python` cargo feature) knows about Python.

pub mod charset;
pub mod count;
pub mod decode_stream;
pub mod decoder;
pub mod error;
pub mod io;
pub mod models;
pub mod normalize;
pub mod normalize_sentencepiece;
pub mod piece_cache;
pub mod postprocess;
pub mod precompiled_charsmap;
pub mod pretokenize;
pub mod read;
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
