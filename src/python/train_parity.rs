//! `_core.train_parity_bpe`: parity-aware BPE (`models::bpe::parity`) on each language's counted
//! words, giving the vocabulary by id and the merges.

use super::callback::detach_reporting;
use super::errors::to_py;
use crate::error::Error;
use crate::models::bpe::parity::{self, ParityConfig, ParityVariant};
use pyo3::prelude::*;

/// The tokens by id, and the merges in order.
type Trained = (Vec<String>, Vec<(String, String)>);

#[pyfunction]
#[pyo3(signature = (train, dev, *, num_merges, variant, min_frequency, ratio, global_merges, window_size, alpha,
                    total_symbols, special_tokens, limit_alphabet, initial_alphabet, continuing_subword_prefix,
                    end_of_word_suffix, max_token_length, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn train_parity_bpe(
    py: Python<'_>,
    train: Vec<Vec<(String, u64)>>,
    dev: Option<Vec<Vec<(String, u64)>>>,
    num_merges: usize,
    variant: &str,
    min_frequency: u64,
    ratio: Option<Vec<f64>>,
    global_merges: usize,
    window_size: usize,
    alpha: f64,
    total_symbols: bool,
    special_tokens: Vec<String>,
    limit_alphabet: Option<usize>,
    initial_alphabet: Vec<char>,
    continuing_subword_prefix: Option<String>,
    end_of_word_suffix: Option<String>,
    max_token_length: Option<usize>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Trained> {
    let variant = match variant {
        "base" => ParityVariant::Base,
        "window" => ParityVariant::Window,
        other => {
            return Err(to_py(Error::config(format!("unknown variant {other:?}; use \"base\" or \"window\""))));
        }
    };
    let config = ParityConfig {
        num_merges,
        variant,
        min_frequency,
        ratio,
        global_merges,
        window_size,
        alpha,
        total_symbols,
        special_tokens,
        limit_alphabet,
        initial_alphabet,
        continuing_subword_prefix,
        end_of_word_suffix,
        max_token_length,
    };
    let vocab = detach_reporting(py, progress.as_ref(), |notify| {
        parity::train(&train, dev.as_deref(), &config, &mut |done, total| notify(&[done as u64, total as u64]))
    })?;
    Ok((vocab.tokens, vocab.merges))
}
