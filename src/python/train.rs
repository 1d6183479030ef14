//! `_core.WordCounter` and `_core.train_bpe`: the training half of the bindings.

use super::errors::to_py;
use super::tokenizer::CoreTokenizer;
use crate::bpe::train::{self, BpeTrainConfig, TrainProgress};
use crate::bpe::BpeOptions;
use crate::count::{WordCounts, WordSplitter};
use crate::error::{Error, Result};
use crate::normalize::Normalizer;
use crate::pretokenize::PreTokenizer;
use crate::special::SpecialTokens;
use crate::tokenizer::{Model, Tokenizer};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use std::path::PathBuf;
use std::sync::Mutex;

/// Accumulates word counts from texts, files and ready-made word tables.
#[pyclass(module = "tokenmill._core")]
pub struct WordCounter {
    splitter: WordSplitter,
    byte_level: bool,
    counts: Mutex<WordCounts>,
}

impl WordCounter {
    fn absorb(&self, more: WordCounts) {
        let mut counts = self.counts.lock().expect("counter lock");
        let current = std::mem::take(&mut *counts);
        *counts = current.merge(more);
    }
}

#[pymethods]
impl WordCounter {
    #[new]
    #[pyo3(signature = (pattern, normalizer, special_tokens, byte_level))]
    fn new(pattern: &str, normalizer: &str, special_tokens: Vec<String>, byte_level: bool) -> PyResult<Self> {
        let pretokenizer = PreTokenizer::from_spec(pattern).map_err(to_py)?;
        let normalizer = Normalizer::from_spec(normalizer).map_err(to_py)?;
        let specials: Vec<(String, u32)> = special_tokens.into_iter().map(|t| (t, 0)).collect();
        Ok(WordCounter {
            splitter: WordSplitter { normalizer, pretokenizer, specials: SpecialTokens::new(&specials) },
            byte_level,
            counts: Mutex::new(WordCounts::default()),
        })
    }

    /// Counts the words of a batch of texts (on all cores, without the GIL).
    fn add_texts(&self, py: Python<'_>, texts: Vec<PyBackedStr>) -> PyResult<()> {
        let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
        let counts = py.detach(|| self.splitter.count_texts(&texts)).map_err(to_py)?;
        self.absorb(counts);
        Ok(())
    }

    /// Reads and counts a batch of files; returns the number of bytes read.
    fn add_files(&self, py: Python<'_>, paths: Vec<PathBuf>) -> PyResult<u64> {
        let counts = py.detach(|| self.splitter.count_files(&paths, self.byte_level, &|_| Ok(()))).map_err(to_py)?;
        let bytes = counts.text_bytes;
        self.absorb(counts);
        Ok(bytes)
    }

    /// Adds words that are already split (no pre-tokenization) with their counts.
    fn add_words(&self, words: Vec<(PyBackedStr, u64)>) {
        let mut more = WordCounts::default();
        for (word, count) in &words {
            if count > &0 {
                more.add(word.as_bytes(), *count);
                more.text_bytes += word.len() as u64 * count;
            }
        }
        self.absorb(more);
    }

    #[getter]
    fn num_words(&self) -> usize {
        self.counts.lock().expect("counter lock").len()
    }

    #[getter]
    fn total(&self) -> u64 {
        self.counts.lock().expect("counter lock").total()
    }

    #[getter]
    fn text_bytes(&self) -> u64 {
        self.counts.lock().expect("counter lock").text_bytes
    }

    /// The count of one word.
    fn get(&self, word: &str) -> u64 {
        self.counts.lock().expect("counter lock").get(word.as_bytes())
    }
}

/// Trains a BPE tokenizer on the words of `counter`; the tokenizer pre-tokenizes and normalizes
/// the way the counter did. `progress(done, total)` is called now and then.
#[pyfunction]
#[pyo3(signature = (counter, *, vocab_size, num_merges, byte_level, end_of_word_suffix, unk_token,
                    special_tokens, min_frequency, max_token_length, progress))]
#[allow(clippy::too_many_arguments)]
pub fn train_bpe(
    py: Python<'_>,
    counter: &WordCounter,
    vocab_size: Option<usize>,
    num_merges: Option<usize>,
    byte_level: bool,
    end_of_word_suffix: Option<String>,
    unk_token: Option<String>,
    special_tokens: Vec<String>,
    min_frequency: u64,
    max_token_length: Option<usize>,
    progress: Option<Py<PyAny>>,
) -> PyResult<CoreTokenizer> {
    if byte_level && (end_of_word_suffix.is_some() || unk_token.is_some()) {
        return Err(to_py(Error::config(
            "end_of_word_suffix and unk_token are for character-level BPE (byte_level=False); byte-level BPE has no unknown characters",
        )));
    }
    if end_of_word_suffix.as_deref() == Some("") {
        return Err(to_py(Error::config("end_of_word_suffix must not be empty")));
    }
    let config = BpeTrainConfig {
        vocab_size,
        num_merges,
        options: BpeOptions { byte_level, end_of_word_suffix, unk_token, whole_piece_first: false },
        special_tokens,
        min_frequency,
        max_token_length,
    };
    let counts = counter.counts.lock().expect("counter lock").clone();
    let mut python_error: Option<PyErr> = None;
    let mut report = |p: TrainProgress| -> Result<()> {
        // Back under the GIL briefly: deliver Ctrl-C and update the caller's progress display.
        Python::attach(|py| {
            let outcome = py.check_signals().and_then(|_| match &progress {
                Some(cb) => cb.call1(py, (p.merges_done, p.merges_total)).map(|_| ()),
                None => Ok(()),
            });
            outcome.map_err(|e| {
                python_error = Some(e);
                Error::Interrupted
            })
        })
    };
    let result = py.detach(|| train::train(&counts, &config, &mut report));
    let model = match result {
        Ok(model) => model,
        Err(Error::Interrupted) => return Err(python_error.unwrap_or_else(|| to_py(Error::Interrupted))),
        Err(e) => return Err(to_py(e)),
    };
    let splitter = &counter.splitter;
    Ok(CoreTokenizer::new(Tokenizer::new(splitter.normalizer.clone(), splitter.pretokenizer.clone(), Model::Bpe(model))))
}
