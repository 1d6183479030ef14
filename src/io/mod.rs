//! Other libraries' tokenizer files, read in Rust.

pub mod huggingface;
pub mod sentencepiece;
pub mod tiktoken;
pub mod wordpiece;
