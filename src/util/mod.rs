//! Building blocks the stages share: character tries, Unicode character sets, the thread pool
//! that survives `fork`.

pub mod charset;
pub mod threads;
pub mod trie;
