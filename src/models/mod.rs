//! Subword models other than BPE (which lives in `crate::bpe`): WordPiece.

pub mod wordpiece;
pub mod wordpiece_train;
