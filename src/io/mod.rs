//! Other libraries' tokenizer files, read in Rust.

pub mod huggingface;
