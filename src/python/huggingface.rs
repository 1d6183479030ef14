//! `_core.TokenizerJson`: a Hugging Face `tokenizer.json` read by Rust (`io/huggingface.rs`).

use super::errors::to_py;
use super::tokenizer::CoreTokenizer;
use crate::io::huggingface::HfDocument;
use crate::postprocess::ModelInputs;
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

    /// The byte-level BPE tokenizer this file describes, given what its components say.
    #[pyo3(signature = (*, pattern, keep_gaps, normalizer, whole_piece_first, model_inputs_json))]
    fn byte_level_bpe(
        &self,
        py: Python<'_>,
        pattern: &str,
        keep_gaps: bool,
        normalizer: &str,
        whole_piece_first: bool,
        model_inputs_json: Option<&str>,
    ) -> PyResult<CoreTokenizer> {
        let inputs: ModelInputs = match model_inputs_json {
            Some(text) => serde_json::from_str(text)
                .map_err(|e| to_py(crate::error::Error::config(format!("model-input settings: {e}"))))?,
            None => ModelInputs::default(),
        };
        let tok = py
            .detach(|| self.inner.byte_level_bpe(pattern, keep_gaps, normalizer, whole_piece_first, inputs))
            .map_err(to_py)?;
        Ok(CoreTokenizer::new(tok))
    }
}
