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

/// `_core.PrecompiledCharsmap`: a SentencePiece precompiled character map, checked once (the
/// check is its cost), asked about its keys and handed on to a tokenizer as it is.
#[pyclass(frozen, module = "tokenmill._core", name = "PrecompiledCharsmap")]
pub struct PyPrecompiledCharsmap {
    pub(super) inner: PrecompiledCharsmap,
}

#[pymethods]
impl PyPrecompiledCharsmap {
    #[new]
    fn new(blob: &[u8]) -> PyResult<Self> {
        let inner = PrecompiledCharsmap::new(blob).map_err(|reason| {
            to_py(Error::Format { path: "precompiled_charsmap".into(), format: "precompiled character map", reason })
        })?;
        Ok(PyPrecompiledCharsmap { inner })
    }

    /// Whether some key of the map starts with `prefix`.
    fn starts_key(&self, prefix: &str) -> bool {
        self.inner.starts_key(prefix)
    }
}
