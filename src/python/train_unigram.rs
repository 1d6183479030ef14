//! `_core.train_unigram`: Unigram training on a counter's words, returning the tokenizer built
//! in Rust with SentencePiece's id order (`models::unigram::train::layout`).

use super::callback::detach_reporting;
use super::errors::to_py;
use super::tokenizer::CoreTokenizer;
use super::train::WordCounter;
use crate::models::unigram::layout::UnigramTokens;
use crate::models::unigram::train::{self, UnigramProgress, UnigramTrainConfig};
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::pretokenize::PreTokenizer;
use crate::tokenizer::Tokenizer;
use pyo3::prelude::*;

#[pyfunction]
#[pyo3(signature = (counter, *, pieces, character_coverage, max_piece_length, seed_size, shrinking_factor,
                    em_iterations, whitespace_as_suffix, split_digits, unk_token, control_tokens,
                    special_tokens, byte_fallback, normalizer, pattern, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn train_unigram(
    py: Python<'_>,
    counter: &WordCounter,
    pieces: usize,
    character_coverage: f64,
    max_piece_length: usize,
    seed_size: usize,
    shrinking_factor: f64,
    em_iterations: usize,
    whitespace_as_suffix: bool,
    split_digits: bool,
    unk_token: String,
    control_tokens: Vec<String>,
    special_tokens: Vec<String>,
    byte_fallback: bool,
    normalizer: &str,
    pattern: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<CoreTokenizer> {
    let config = UnigramTrainConfig {
        pieces,
        character_coverage,
        max_piece_length,
        seed_size,
        shrinking_factor,
        em_iterations,
        whitespace_as_suffix,
        split_digits,
    };
    // Checked before training: a bad spec should not cost a training run.
    let normalizer = Normalizer::from_spec(normalizer).map_err(to_py)?;
    let pretokenizer = PreTokenizer::from_spec(pattern).map_err(to_py)?;
    let counts = counter.shared_counts();
    let trained = detach_reporting(py, progress.as_ref(), |notify| {
        let mut report = |p: UnigramProgress| notify(&[p.pieces, p.target]);
        train::train(&counts, &config, &mut report)
    })?;
    let tokens = UnigramTokens { unk_token, control_tokens, special_tokens, byte_fallback };
    py.detach(|| {
        let model = tokens.model(trained)?;
        Ok(Tokenizer::new(normalizer, pretokenizer, model))
    })
    .map(CoreTokenizer::new)
    .map_err(to_py)
}

/// The pieces with their scores, and the unknown token's id.
type TrainedVocab = (Vec<(String, f64)>, Option<u32>);

/// tokenizers' Unigram trainer (`models::unigram::train_huggingface`) on `words` (text, count):
/// the vocabulary as tokenizers lists it, [(piece, score)], and the unknown token's id.
#[pyfunction]
#[pyo3(signature = (words, *, vocab_size, special_tokens, unk_token, shrinking_factor, max_piece_length,
                    n_sub_iterations, initial_alphabet, seed_size, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn train_unigram_huggingface(
    py: Python<'_>,
    words: Vec<(String, u64)>,
    vocab_size: usize,
    special_tokens: Vec<String>,
    unk_token: Option<String>,
    shrinking_factor: f64,
    max_piece_length: usize,
    n_sub_iterations: usize,
    initial_alphabet: Vec<char>,
    seed_size: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<TrainedVocab> {
    use crate::models::unigram::train_huggingface::{self as hf, HfUnigramConfig};
    if !(shrinking_factor > 0.0 && shrinking_factor < 1.0) {
        return Err(to_py(crate::error::Error::config(format!(
            "shrinking_factor must be between 0 and 1, not {shrinking_factor}"
        ))));
    }
    if max_piece_length == 0 {
        return Err(to_py(crate::error::Error::config("max_piece_length must be at least 1")));
    }
    let config = HfUnigramConfig {
        vocab_size,
        special_tokens,
        unk_token,
        shrinking_factor,
        max_piece_length,
        n_sub_iterations,
        initial_alphabet,
        seed_size,
    };
    let vocab = detach_reporting(py, progress.as_ref(), |notify| {
        hf::train(&words, &config, &mut |pieces, target| notify(&[pieces as u64, target as u64]))
    })?;
    Ok((vocab.pieces, vocab.unk_id))
}
