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
