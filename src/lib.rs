//! tokenmill: subword tokenization — training and exact, fast encoding.
//!
//! The data path, a folder per part:
//! `pipeline` — special tokens split out → normalize → pre-tokenize, and after the model
//! post-process (model inputs), decode and streaming decode; `io` — reading corpora and counting
//! words (training's input), tokenmill's own file (`serialize`) and other libraries' files
//! (`tokenizer.json`, `.model`, `.tiktoken`, `vocab.txt`, GPT-2's pair); `models` — `PieceModel`
//! (BPE, WordPiece, Unigram: training, the per-piece encoders, their part of the file), the
//! vocabulary and the piece cache; `tokenizer::Tokenizer` joins them; `util` — tries, character
//! sets, the thread pool.
//! Only `python` (behind the `python` cargo feature) knows about Python.

pub mod cuts;
pub mod error;
pub mod io;
mod long_text;
pub mod models;
pub mod pipeline;
pub mod tokenizer;
pub mod util;
pub mod words;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};
pub use tokenizer::Tokenizer;
