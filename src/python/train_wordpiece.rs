//! `_core.train_wordpiece`: WordPiece training on a counter's words; returns the tokens by id.
//! Python assembles the tokenizer from them (through the file description, as every importer).

use super::callback::detach_reporting;
use super::train::WordCounter;
use crate::models::wordpiece::train::{self, WordPieceProgress, WordPieceTrainConfig};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

#[pyfunction]
#[pyo3(signature = (counter, *, vocab_size, prefix, special_tokens, min_frequency, limit_alphabet, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn train_wordpiece<'py>(
    py: Python<'py>,
    counter: &WordCounter,
    vocab_size: usize,
    prefix: String,
    special_tokens: Vec<String>,
    min_frequency: u64,
    limit_alphabet: Option<usize>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let config = WordPieceTrainConfig { vocab_size, prefix, special_tokens, min_frequency, limit_alphabet };
    let counts = counter.shared_counts();
    let tokens = detach_reporting(py, progress.as_ref(), |notify| {
        let mut report = |p: WordPieceProgress| notify(&[p.tokens, p.target]);
        train::train(&counts, &config, &mut report)
    })?;
    Ok(tokens.iter().map(|t| PyBytes::new(py, t)).collect())
}
