//! `_core.DecodeStream`: the core's streaming decoder (`decode_stream.rs`) for one tokenizer.

use super::errors::to_py;
use super::tokenizer::CoreTokenizer;
use crate::pipeline::decode_stream::DecodeStream;
use crate::tokenizer::Tokenizer;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::{Arc, Mutex};

#[pyclass(frozen, module = "tokenmill._core", name = "DecodeStream")]
pub struct PyDecodeStream {
    tokenizer: Arc<Tokenizer>,
    state: Mutex<DecodeStream>,
}

#[pymethods]
impl PyDecodeStream {
    #[new]
    fn new(tokenizer: &CoreTokenizer, skip_special_tokens: bool) -> Self {
        PyDecodeStream { tokenizer: tokenizer.inner.clone(), state: Mutex::new(DecodeStream::new(skip_special_tokens)) }
    }

    /// The bytes `ids` complete.
    fn step<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let out = state.step(&self.tokenizer, &ids).map_err(to_py)?;
        Ok(PyBytes::new(py, &out))
    }

    /// The bytes still held; the stream starts afresh.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let out = state.finish(&self.tokenizer).map_err(to_py)?;
        Ok(PyBytes::new(py, &out))
    }
}
