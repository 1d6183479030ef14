//! `_core.WordCounter` and `_core.train_bpe`: the training half of the bindings.

use super::callback::detach_reporting;
use super::errors::to_py;
use super::text::Text;
use super::tokenizer::CoreTokenizer;
use crate::error::Error;
use crate::io::count::{WordCounts, WordSplitter};
use crate::models::bpe::train::{self, BpeTrainConfig, TrainProgress};
use crate::models::bpe::BpeOptions;
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::pretokenize::PreTokenizer;
use crate::pipeline::special::SpecialTokens;
use crate::tokenizer::Tokenizer;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Accumulates word counts from texts, files and ready-made word tables.
#[pyclass(module = "tokenmill._core")]
pub struct WordCounter {
    splitter: WordSplitter,
    byte_level: bool,
    special_tokens: Vec<String>,
    /// Shared copy-on-write: training and saving take a handle instead of copying the table.
    counts: Mutex<Arc<WordCounts>>,
}

/// What a counter was configured with, stored in word-count files.
#[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
struct CounterConfig {
    pattern: String,
    keep_gaps: bool,
    normalizer: String,
    special_tokens: Vec<String>,
    byte_level: bool,
}

impl WordCounter {
    /// A shared handle on the counts (copied only if the counter changes meanwhile).
    pub(crate) fn shared_counts(&self) -> Arc<WordCounts> {
        self.counts.lock().expect("counter lock").clone()
    }

    fn config(&self) -> CounterConfig {
        CounterConfig {
            pattern: self.splitter.pretokenizer.spec().to_string(),
            keep_gaps: self.splitter.pretokenizer.keeps_gaps(),
            normalizer: self.splitter.normalizer.spec(),
            special_tokens: self.special_tokens.clone(),
            byte_level: self.byte_level,
        }
    }

    /// Counts the words of texts (on all cores); the caller releases the GIL.
    pub(super) fn count_texts(&self, texts: &[&str]) -> crate::error::Result<WordCounts> {
        self.splitter.count_texts(texts)
    }

    fn build(
        pattern: &str,
        normalizer: &str,
        special_tokens: Vec<String>,
        byte_level: bool,
    ) -> crate::error::Result<Self> {
        let pretokenizer = PreTokenizer::from_spec(pattern)?;
        let normalizer = Normalizer::from_spec(normalizer)?;
        let specials: Vec<(String, u32)> = special_tokens.iter().map(|t| (t.clone(), 0)).collect();
        Ok(WordCounter {
            splitter: WordSplitter { normalizer, pretokenizer, specials: SpecialTokens::new(&specials) },
            byte_level,
            special_tokens,
            counts: Mutex::new(Arc::default()),
        })
    }

    /// A counter holding `counts`, configured as `meta` (the saved JSON header) says.
    fn from_saved(counts: WordCounts, meta: &str, path: &std::path::Path) -> PyResult<Self> {
        let config: CounterConfig = serde_json::from_str(meta).map_err(|e| {
            to_py(Error::Format { path: path.to_path_buf(), format: "tokenmill word-count", reason: e.to_string() })
        })?;
        let mut counter =
            WordCounter::build(&config.pattern, &config.normalizer, config.special_tokens, config.byte_level).map_err(
                |e| {
                    let reason = format!("the header's settings are not valid: {e}");
                    to_py(Error::Format { path: path.to_path_buf(), format: "tokenmill word-count", reason })
                },
            )?;
        if config.keep_gaps {
            counter.splitter.pretokenizer = counter.splitter.pretokenizer.keeping_gaps();
        }
        counter.counts = Mutex::new(Arc::new(counts));
        Ok(counter)
    }

    pub(super) fn absorb(&self, more: WordCounts) {
        let mut guard = self.counts.lock().expect("counter lock");
        let counts = Arc::make_mut(&mut guard);
        let current = std::mem::take(counts);
        *counts = current.merge(more);
    }
}

#[pymethods]
impl WordCounter {
    #[new]
    #[pyo3(signature = (pattern, normalizer, special_tokens, byte_level))]
    fn new(pattern: &str, normalizer: &str, special_tokens: Vec<String>, byte_level: bool) -> PyResult<Self> {
        Self::build(pattern, normalizer, special_tokens, byte_level).map_err(to_py)
    }

    /// Counts the words of a batch of texts (on all cores, without the GIL).
    fn add_texts(&self, py: Python<'_>, texts: Vec<Text>) -> PyResult<()> {
        let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
        let counts = py.detach(|| self.count_texts(&texts)).map_err(to_py)?;
        self.absorb(counts);
        Ok(())
    }

    /// Reads and counts files (plain, .gz, .zst; JSON Lines with `text_field`) block by block;
    /// after each block's counts are added, `on_block(bytes_read)` runs (progress, pruning) and
    /// Ctrl-C is honoured. Returns the number of bytes read.
    #[pyo3(signature = (paths, text_field=None, on_block=None))]
    fn add_files(
        &self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        text_field: Option<&str>,
        on_block: Option<Py<PyAny>>,
    ) -> PyResult<u64> {
        let mut total = 0;
        detach_reporting(py, on_block.as_ref(), |notify| {
            self.splitter.count_files(&paths, self.byte_level, text_field, &mut |counts, read| {
                self.absorb(counts);
                total += read;
                notify(&[read])
            })
        })?;
        Ok(total)
    }

    /// Adds the counts of another counter configured the same way.
    fn merge(&self, other: &WordCounter) -> PyResult<()> {
        if self.config() != other.config() {
            return Err(to_py(Error::config(format!(
                "cannot add word counts made differently: {:?} vs {:?}",
                self.config(),
                other.config()
            ))));
        }
        let more = other.counts.lock().expect("counter lock").clone();
        self.absorb(Arc::unwrap_or_clone(more));
        Ok(())
    }

    /// A new counter with the same configuration and counts.
    fn copy(&self) -> Self {
        WordCounter {
            splitter: self.splitter.clone(),
            byte_level: self.byte_level,
            special_tokens: self.special_tokens.clone(),
            counts: Mutex::new(self.counts.lock().expect("counter lock").clone()),
        }
    }

    /// The `n` most frequent words as (bytes, count).
    fn most_common<'py>(&self, py: Python<'py>, n: usize) -> Vec<(Bound<'py, pyo3::types::PyBytes>, u64)> {
        let counts = self.counts.lock().expect("counter lock");
        counts.most_common(n).into_iter().map(|(w, c)| (pyo3::types::PyBytes::new(py, w), c)).collect()
    }

    /// Drops the rarest words until the table holds about `budget` bytes; returns
    /// (words dropped, count mass dropped).
    fn prune_to(&self, budget: u64) -> (u64, u64) {
        Arc::make_mut(&mut self.counts.lock().expect("counter lock")).prune_to(budget)
    }

    #[getter]
    fn memory_bytes(&self) -> u64 {
        self.counts.lock().expect("counter lock").memory_bytes()
    }

    #[getter]
    fn pattern(&self) -> String {
        self.splitter.pretokenizer.spec().to_string()
    }

    #[getter]
    fn normalizer(&self) -> String {
        self.splitter.normalizer.spec()
    }

    #[getter]
    fn special_tokens(&self) -> Vec<String> {
        self.special_tokens.clone()
    }

    #[getter]
    fn byte_level(&self) -> bool {
        self.byte_level
    }

    /// Writes the counts and the configuration (compact binary, versioned, atomic).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let meta = serde_json::to_string(&self.config()).expect("config serializes");
        let counts = self.counts.lock().expect("counter lock").clone();
        py.detach(|| crate::io::serialize::write_atomically(&path, &counts.to_bytes(&meta))).map_err(to_py)
    }

    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let (counts, meta) = py
            .detach(|| {
                let data = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
                WordCounts::from_bytes(&data, &path)
            })
            .map_err(to_py)?;
        Self::from_saved(counts, &meta, &path)
    }

    /// The bytes `save` writes, in memory (how `WordCounts` pickles).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let meta = serde_json::to_string(&self.config()).expect("config serializes");
        let counts = self.counts.lock().expect("counter lock").clone();
        let data = py.detach(|| counts.to_bytes(&meta));
        pyo3::types::PyBytes::new(py, &data)
    }

    /// Reads `to_bytes` output (or a saved file's contents).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let source = PathBuf::from("<word-count bytes>");
        let (counts, meta) = py.detach(|| WordCounts::from_bytes(data, &source)).map_err(to_py)?;
        Self::from_saved(counts, &meta, &source)
    }

    /// Adds words that are already split (no pre-tokenization) with their counts.
    fn add_words(&self, words: Vec<(Text, u64)>) {
        let mut more = WordCounts::default();
        for (word, count) in &words {
            if count > &0 {
                more.add(word.as_bytes(), *count);
                more.text_bytes = more.text_bytes.saturating_add((word.len() as u64).saturating_mul(*count));
            }
        }
        self.absorb(more);
    }

    #[getter]
    fn num_words(&self) -> usize {
        self.counts.lock().expect("counter lock").len()
    }

    #[getter]
    fn total(&self) -> u128 {
        self.counts.lock().expect("counter lock").total()
    }

    #[getter]
    fn text_bytes(&self) -> u64 {
        self.counts.lock().expect("counter lock").text_bytes
    }

    /// The count of one word (str or bytes).
    fn get(&self, word: &[u8]) -> u64 {
        self.counts.lock().expect("counter lock").get(word)
    }
}

/// Trains a BPE tokenizer on the words of `counter`; the tokenizer pre-tokenizes and normalizes
/// the way the counter did. `progress(done, total)` is called now and then.
#[pyfunction]
#[pyo3(signature = (counter, *, vocab_size, num_merges, byte_level, end_of_word_suffix, unk_token,
                    special_tokens, min_frequency, max_token_length, progress, base=None,
                    limit_alphabet=None, initial_alphabet=Vec::new(), ties_by_id=false,
                    continuing_subword_prefix=None, join_suffix=false))]
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
    base: Option<PyRef<'_, CoreTokenizer>>,
    limit_alphabet: Option<usize>,
    initial_alphabet: Vec<String>,
    ties_by_id: bool,
    continuing_subword_prefix: Option<String>,
    join_suffix: bool,
) -> PyResult<CoreTokenizer> {
    if byte_level && (end_of_word_suffix.is_some() || unk_token.is_some() || continuing_subword_prefix.is_some()) {
        return Err(to_py(Error::config(
            "end_of_word_suffix, continuing_subword_prefix and unk_token are for character-level BPE (byte_level=False); byte-level BPE has no unknown characters",
        )));
    }
    if end_of_word_suffix.as_deref() == Some("") || continuing_subword_prefix.as_deref() == Some("") {
        return Err(to_py(Error::config("end_of_word_suffix and continuing_subword_prefix must not be empty")));
    }
    if join_suffix && end_of_word_suffix.is_none() {
        return Err(to_py(Error::config("join_suffix needs an end_of_word_suffix")));
    }
    if base.is_some() && (join_suffix || continuing_subword_prefix.is_some()) {
        return Err(to_py(Error::config("continued training keeps the base tokenizer's word marks; give none")));
    }
    let initial_alphabet = initial_alphabet
        .iter()
        .map(|s| {
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(c),
                _ => Err(to_py(Error::config(format!(
                    "initial_alphabet holds single characters; got {s:?} ({} characters)",
                    s.chars().count()
                )))),
            }
        })
        .collect::<PyResult<Vec<char>>>()?;
    let config = BpeTrainConfig {
        vocab_size,
        num_merges,
        options: BpeOptions {
            byte_level,
            end_of_word_suffix,
            joined_suffix: join_suffix,
            continuing_subword_prefix,
            unk_token,
            ..Default::default()
        },
        special_tokens,
        min_frequency,
        max_token_length,
        limit_alphabet,
        initial_alphabet,
        ties_by_id,
    };
    // A shared handle, not a copy: the table is copied only if the counter changes meanwhile.
    let counts = counter.counts.lock().expect("counter lock").clone();
    let base_model = match &base {
        Some(b) => Some(
            b.bpe()
                .ok_or_else(|| to_py(Error::config("continued training needs a BPE tokenizer as its base")))?
                .clone(),
        ),
        None => None,
    };
    let model = detach_reporting(py, progress.as_ref(), |notify| {
        let mut report = |p: TrainProgress| notify(&[p.merges_done, p.merges_total]);
        match &base_model {
            Some(model) => train::continue_training(model, &counts, &config, &mut report),
            None => train::train(&counts, &config, &mut report),
        }
    })?;
    let splitter = &counter.splitter;
    Ok(CoreTokenizer::new(Tokenizer::new(splitter.normalizer.clone(), splitter.pretokenizer.clone(), model)))
}
