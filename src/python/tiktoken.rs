//! tiktoken vocabularies into cores: a `.tiktoken` file read by Rust (`io/tiktoken.rs`), or
//! (rank, token) pairs a caller already holds.

use super::errors::to_py;
use super::tokenizer::CoreTokenizer;
use crate::error::Error;
use crate::io::tiktoken;
use pyo3::prelude::*;
use std::path::PathBuf;

#[pymethods]
impl CoreTokenizer {
    /// A tiktoken-style tokenizer from a `.tiktoken` (or `.tiktoken.gz`) file.
    #[staticmethod]
    fn from_tiktoken_file(
        py: Python<'_>,
        path: PathBuf,
        pattern: &str,
        special_tokens: Vec<(String, u32)>,
    ) -> PyResult<CoreTokenizer> {
        py.detach(|| {
            let ranks = tiktoken::read_ranks(&path)?;
            tiktoken::ranked_tokenizer(&ranks, &special_tokens, pattern).map_err(|e| match e {
                // A token listed twice is the file's fault, not the caller's.
                Error::Config(reason) if reason.starts_with("token ") => {
                    Error::Format { path: path.clone(), format: "tiktoken", reason }
                }
                // Other faults of the ranks (a missing single byte) name the file too.
                Error::Config(reason) => Error::Config(format!("{}: {reason}", path.display())),
                other => other,
            })
        })
        .map(CoreTokenizer::new)
        .map_err(to_py)
    }

    /// A tiktoken-style tokenizer from (rank, token) pairs.
    #[staticmethod]
    fn from_ranks(
        py: Python<'_>,
        ranks: Vec<(u32, Vec<u8>)>,
        pattern: &str,
        special_tokens: Vec<(String, u32)>,
    ) -> PyResult<CoreTokenizer> {
        py.detach(|| tiktoken::ranked_tokenizer(&ranks, &special_tokens, pattern))
            .map(CoreTokenizer::new)
            .map_err(to_py)
    }
}
