//! `_core.TokenizerJson`: a Hugging Face `tokenizer.json` read by Rust (`io/huggingface.rs`).

use super::errors::to_py;
use super::sentencepiece::PyPrecompiledCharsmap;
use super::tokenizer::CoreTokenizer;
use crate::io::huggingface::{ByteLevelSettings, CharBpeSettings, HfDocument, UnigramSettings};
use crate::io::wordpiece::{self, WordPieceSettings};
use crate::pipeline::normalize_sentencepiece::SentencePieceNormalizerSpec;
use pyo3::prelude::*;
use std::path::PathBuf;

#[pyclass(frozen, module = "tokenmill._core", name = "TokenizerJson")]
pub struct PyTokenizerJson {
    inner: HfDocument,
}

#[pymethods]
impl PyTokenizerJson {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py.detach(|| HfDocument::read(&path)).map_err(to_py)?;
        Ok(PyTokenizerJson { inner })
    }

    /// The document without the model's vocabulary and merges and without `added_tokens`.
    #[getter]
    fn sections(&self) -> &str {
        &self.inner.sections
    }

    /// `added_tokens` as (content, id).
    #[getter]
    fn added_tokens(&self) -> Vec<(String, u32)> {
        self.inner.added.clone()
    }

    /// The model's vocabulary as (token, id) in file order.
    #[getter]
    fn vocab(&self) -> Vec<(String, u32)> {
        self.inner.vocab.clone()
    }

    /// The WordPiece tokenizer this file describes, given what its components say.
    #[pyo3(signature = (*, unk_token, prefix, max_input_chars_per_word, cleanup, normalizer, pretokenizer))]
    #[allow(clippy::too_many_arguments)]
    fn wordpiece(
        &self,
        py: Python<'_>,
        unk_token: &str,
        prefix: &str,
        max_input_chars_per_word: usize,
        cleanup: bool,
        normalizer: &str,
        pretokenizer: &str,
    ) -> PyResult<CoreTokenizer> {
        let inputs = self.inner.inputs.clone();
        let settings = WordPieceSettings {
            unk_token,
            prefix,
            max_input_chars_per_word,
            cleanup,
            normalizer,
            pretokenizer,
            inputs,
        };
        py.detach(|| self.inner.wordpiece(settings)).map(CoreTokenizer::new).map_err(to_py)
    }

    /// The WordLevel tokenizer this file describes, given its unknown token and the specs of
    /// its normalizer and pre-tokenizer.
    #[pyo3(signature = (*, unk_token, normalizer, pretokenizer))]
    fn wordlevel(
        &self,
        py: Python<'_>,
        unk_token: &str,
        normalizer: &str,
        pretokenizer: &str,
    ) -> PyResult<CoreTokenizer> {
        py.detach(|| self.inner.wordlevel(unk_token, normalizer, pretokenizer)).map(CoreTokenizer::new).map_err(to_py)
    }

    /// How many entries the model's vocabulary has, and whether it came with scores (a Unigram
    /// model's list of `[piece, score]`).
    #[getter]
    fn vocab_shape(&self) -> (usize, bool) {
        (self.inner.vocab.len(), self.inner.scores.is_some())
    }

    /// The Unigram tokenizer this file describes, given what its components say: the unknown
    /// piece's id, byte fallback, SentencePiece's whitespace flags and `Precompiled` map, and the
    /// pre-tokenizer (`metaspace` or `none`).
    #[pyo3(signature = (*, unk_id, byte_fallback, add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces,
                        treat_whitespace_as_suffix, precompiled_charsmap, pretokenizer, steps="none".to_string(),
                        huggingface=false, metaspace_prefix="never", byte_level=false))]
    #[allow(clippy::too_many_arguments)]
    fn unigram(
        &self,
        py: Python<'_>,
        unk_id: Option<u32>,
        byte_fallback: bool,
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool,
        precompiled_charsmap: Option<PyRef<'_, PyPrecompiledCharsmap>>,
        pretokenizer: String,
        steps: String,
        huggingface: bool,
        metaspace_prefix: &str,
        byte_level: bool,
    ) -> PyResult<CoreTokenizer> {
        let inputs = self.inner.inputs.clone();
        let charsmap = precompiled_charsmap.map(|map| map.inner.clone());
        let metaspace_prefix = metaspace_scheme(metaspace_prefix).map_err(to_py)?;
        py.detach(|| {
            let normalizer = SentencePieceNormalizerSpec {
                rules: Vec::new(),
                keep: Vec::new(),
                add_dummy_prefix,
                remove_extra_whitespaces,
                escape_whitespaces,
                treat_whitespace_as_suffix,
                precompiled_charsmap: charsmap,
                metaspace_prefix,
            };
            self.inner.unigram(UnigramSettings {
                unk_id,
                byte_fallback,
                normalizer,
                steps,
                pretokenizer,
                inputs,
                huggingface,
                byte_level,
            })
        })
        .map(CoreTokenizer::new)
        .map_err(to_py)
    }

    /// The character-level BPE tokenizer this file describes (SentencePiece BPE as transformers
    /// converts it), given its whitespace steps: the `▁` prefix (`prepend` for a `Prepend("▁")`
    /// normalizer, or a `Metaspace` scheme: `always`, `first`, `never`; `off` when spaces stay
    /// spaces), the pre-tokenizer (`metaspace`, `none`, or Hugging Face's splitting steps) and the
    /// other normalizer steps (`steps`, a normalizer spec run before the whitespace steps).
    #[pyo3(signature = (*, unk_token, byte_fallback, fuse_unk, whole_piece_first, metaspace_prefix, pretokenizer, steps = "none".to_string()))]
    #[allow(clippy::too_many_arguments)]
    fn char_bpe(
        &self,
        py: Python<'_>,
        unk_token: Option<String>,
        byte_fallback: bool,
        fuse_unk: bool,
        whole_piece_first: bool,
        metaspace_prefix: &str,
        pretokenizer: String,
        steps: String,
    ) -> PyResult<CoreTokenizer> {
        let metaspace_prefix_name = metaspace_prefix;
        let metaspace_prefix = metaspace_scheme(metaspace_prefix).map_err(to_py)?;
        let normalizer = SentencePieceNormalizerSpec {
            rules: Vec::new(),
            keep: Vec::new(),
            add_dummy_prefix: false,
            remove_extra_whitespaces: false,
            // `off`: the file has no whitespace steps at all, spaces stay spaces.
            escape_whitespaces: metaspace_prefix_name != "off",
            treat_whitespace_as_suffix: false,
            precompiled_charsmap: None,
            metaspace_prefix,
        };
        let settings =
            CharBpeSettings { unk_token, byte_fallback, fuse_unk, whole_piece_first, normalizer, pretokenizer, steps };
        py.detach(|| self.inner.char_bpe(settings)).map(CoreTokenizer::new).map_err(to_py)
    }

    /// The byte-level BPE tokenizer this file describes, given what its components say.
    #[pyo3(signature = (*, pattern, keep_gaps, normalizer, whole_piece_first, drop_unknown))]
    fn byte_level_bpe(
        &self,
        py: Python<'_>,
        pattern: &str,
        keep_gaps: bool,
        normalizer: &str,
        whole_piece_first: bool,
        drop_unknown: bool,
    ) -> PyResult<CoreTokenizer> {
        let inputs = self.inner.inputs.clone();
        let settings = ByteLevelSettings { pattern, keep_gaps, normalizer, whole_piece_first, drop_unknown, inputs };
        let tok = py.detach(|| self.inner.byte_level_bpe(settings)).map_err(to_py)?;
        Ok(CoreTokenizer::new(tok))
    }
}

/// A WordPiece tokenizer from BERT's `vocab.txt`, with BERT's template when the vocabulary
/// holds `[CLS]` and `[SEP]`; `special_tokens` present in the vocabulary are special.
#[pyfunction]
#[pyo3(signature = (path, *, special_tokens, unk_token, prefix, max_input_chars_per_word, normalizer))]
pub fn wordpiece_from_vocab_txt(
    py: Python<'_>,
    path: PathBuf,
    special_tokens: Vec<String>,
    unk_token: &str,
    prefix: &str,
    max_input_chars_per_word: usize,
    normalizer: &str,
) -> PyResult<CoreTokenizer> {
    py.detach(|| {
        let tokens = wordpiece::read_vocab_txt(&path)?;
        let inputs = crate::pipeline::postprocess::ModelInputs {
            post_processor: wordpiece::bert_template(&tokens),
            ..Default::default()
        };
        let settings = WordPieceSettings {
            unk_token,
            prefix,
            max_input_chars_per_word,
            cleanup: true,
            normalizer,
            pretokenizer: "bert",
            inputs,
        };
        wordpiece::build(&tokens, &special_tokens, settings).map_err(|e| match e {
            crate::error::Error::Config(reason) if reason.starts_with("the unknown token") => {
                crate::error::Error::Config(format!("{}: {reason}", path.display()))
            }
            other => other,
        })
    })
    .map(CoreTokenizer::new)
    .map_err(to_py)
}

/// A byte-level BPE tokenizer from GPT-2's `vocab.json` and `merges.txt`.
#[pyfunction]
pub fn gpt2_files(py: Python<'_>, vocab_path: PathBuf, merges_path: PathBuf) -> PyResult<CoreTokenizer> {
    py.detach(|| crate::io::huggingface::gpt2_files(&vocab_path, &merges_path)).map(CoreTokenizer::new).map_err(to_py)
}

/// A `Metaspace` prefix scheme by name (`prepend`: a `Prepend("▁")` normalizer's).
fn metaspace_scheme(name: &str) -> crate::error::Result<crate::pipeline::normalize_sentencepiece::MetaspacePrefix> {
    use crate::pipeline::normalize_sentencepiece::MetaspacePrefix;
    Ok(match name {
        "always" => MetaspacePrefix::Always,
        "first" => MetaspacePrefix::First,
        "prepend" => MetaspacePrefix::Prepend,
        "never" | "none" | "off" => MetaspacePrefix::None,
        other => {
            return Err(crate::error::Error::config(format!(
                "metaspace_prefix must be always, first, prepend, never or off, got {other:?}"
            )))
        }
    })
}
