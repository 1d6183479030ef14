//! The subword models, one folder each: what a model is (its vocabulary and encoding loop) and
//! how it is trained. `tokenizer::Model` is the one enum that names them.

pub mod bpe;
pub mod unigram;
pub mod wordpiece;
