//! `_core.train_wordpiece`: WordPiece training on a counter's words, returning the tokenizer
//! (BERT's pre-tokenizer and template, the counter's normalizer) built in Rust.

use super::callback::detach_reporting;
use super::errors::to_py;
use super::tokenizer::CoreTokenizer;
use super::train::WordCounter;
use crate::error::Error;
use crate::io::wordpiece::{self, WordPieceSettings};
use crate::models::wordpiece::train::{self, WordPieceProgress, WordPieceTrainConfig};
use crate::pipeline::postprocess::ModelInputs;
use pyo3::prelude::*;

#[pyfunction]
#[pyo3(signature = (counter, *, vocab_size, prefix, special_tokens, min_frequency, limit_alphabet,
                    unk_token, max_input_chars_per_word, normalizer, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn train_wordpiece(
    py: Python<'_>,
    counter: &WordCounter,
    vocab_size: usize,
    prefix: String,
    special_tokens: Vec<String>,
    min_frequency: u64,
    limit_alphabet: Option<usize>,
    unk_token: &str,
    max_input_chars_per_word: usize,
    normalizer: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<CoreTokenizer> {
    let config =
        WordPieceTrainConfig { vocab_size, prefix: prefix.clone(), special_tokens, min_frequency, limit_alphabet };
    let counts = counter.shared_counts();
    let tokens = detach_reporting(py, progress.as_ref(), |notify| {
        let mut report = |p: WordPieceProgress| notify(&[p.tokens, p.target]);
        train::train(&counts, &config, &mut report)
    })?;
    py.detach(|| {
        let tokens = tokens
            .into_iter()
            .enumerate()
            .map(|(id, t)| {
                let text = String::from_utf8(t).map_err(|_| Error::config("a trained WordPiece token is not UTF-8"))?;
                Ok((text, id as u32))
            })
            .collect::<crate::error::Result<Vec<_>>>()?;
        let inputs = ModelInputs { post_processor: wordpiece::bert_template(&tokens), ..ModelInputs::default() };
        let prefix = &prefix;
        let settings = WordPieceSettings {
            unk_token,
            prefix,
            max_input_chars_per_word,
            cleanup: true,
            normalizer,
            pretokenizer: "bert",
            inputs,
        };
        wordpiece::build(&tokens, &config.special_tokens, settings)
    })
    .map(CoreTokenizer::new)
    .map_err(to_py)
}
