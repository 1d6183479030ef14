//! The stages text goes through around the model, in order: special tokens split out
//! (`special`), `normalize` (with SentencePiece's normalizer and its precompiled character map),
//! `pretokenize`; after the model, `postprocess` (templates, truncation, padding, offsets); and
//! back from ids, `decoder` and `decode_stream`. Nothing here knows a model's internals.

pub mod decode_stream;
pub mod decoder;
pub mod hf_decoder;
pub mod normalize;
pub mod normalize_huggingface;
pub mod normalize_sentencepiece;
pub mod postprocess;
pub mod precompiled_charsmap;
pub mod pretokenize;
pub mod special;
