//! `_core.train_unigram`: Unigram training on a counter's words; returns (piece, score) best
//! first. Python assembles the tokenizer from them (through the file description).

use super::callback::detach_reporting;
use super::train::WordCounter;
use crate::models::unigram::train::{self, UnigramProgress, UnigramTrainConfig};
use pyo3::prelude::*;

#[pyfunction]
#[pyo3(signature = (counter, *, pieces, character_coverage, max_piece_length, seed_size, shrinking_factor,
                    em_iterations, whitespace_as_suffix, split_digits, progress=None))]
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
    progress: Option<Py<PyAny>>,
) -> PyResult<Vec<(String, f32)>> {
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
    let counts = counter.shared_counts();
    detach_reporting(py, progress.as_ref(), |notify| {
        let mut report = |p: UnigramProgress| notify(&[p.pieces, p.target]);
        train::train(&counts, &config, &mut report)
    })
}
