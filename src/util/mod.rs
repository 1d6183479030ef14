//! Building blocks the stages share: character tries, Unicode character sets, the thread pool
//! that survives `fork`, a seedable generator, UTF-8 lengths.

pub mod bert_tables;
pub mod charset;
pub mod hf_marks;
pub mod hf_scripts;
pub mod rng;
pub mod threads;
pub mod trie;
pub mod utf8;
