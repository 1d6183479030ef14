//! What comes in and goes out: corpora read in blocks and counted into word tables (training's
//! input), tokenmill's own file, and other libraries' tokenizer files, read in Rust.

pub mod count;
pub mod documents;
pub mod file_counts;
pub mod huggingface;
pub mod huggingface_inputs;
pub mod json_lines;
pub mod read;
pub mod sentencepiece;
pub mod serialize;
pub mod tiktoken;
pub mod word_table;
pub mod wordpiece;
