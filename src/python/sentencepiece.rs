//! SentencePiece `.model` files: read in Rust (`sentencepiece_model`), and what
//! `save_sentencepiece` and the Hugging Face export need to write one back.

use super::errors::to_py;
use super::tokenizer::CoreTokenizer;
use crate::error::Error;
use crate::io::sentencepiece as sentencepiece_model;
use crate::pipeline::precompiled_charsmap::PrecompiledCharsmap;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;

#[pymethods]
impl CoreTokenizer {
    /// The tokenizer of a `.model` file's bytes; `path` names the file in errors.
    #[staticmethod]
    fn from_sentencepiece(py: Python<'_>, data: &[u8], path: PathBuf) -> PyResult<Self> {
        py.detach(|| sentencepiece_model::read(data, &path)).map(CoreTokenizer::new).map_err(to_py)
    }

    /// The `.model` file this tokenizer was read from, while its model is unchanged.
    fn sentencepiece_source<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.inner.sentencepiece_source().map(|data| PyBytes::new(py, data))
    }

    /// This tokenizer, remembering that it was read from `data` (for unpickling: the caller
    /// vouches that `data` is the file this very tokenizer was read from).
    fn with_sentencepiece_source(&self, data: &[u8]) -> CoreTokenizer {
        CoreTokenizer::new((*self.inner).clone().with_sentencepiece_source(data.into()))
    }
}

/// For each of `prefixes`, whether some key of the precompiled character map `blob` starts
/// with it (the map is checked once for all of them: that check is the cost).
#[pyfunction]
pub fn charsmap_starts_keys(blob: &[u8], prefixes: Vec<String>) -> PyResult<Vec<bool>> {
    let map = PrecompiledCharsmap::new(blob).map_err(|reason| {
        to_py(Error::Format { path: "precompiled_charsmap".into(), format: "precompiled character map", reason })
    })?;
    Ok(prefixes.iter().map(|p| map.starts_key(p)).collect())
}
