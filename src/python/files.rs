//! Files of documents encoded in Rust (`src/io/documents.rs`), each batch's ids handed to Python
//! flat: what `encode_corpus` writes shards from and `encode_files` returns, with no Python
//! string per document and no Python int per token.

use super::callback::detach_calling;
use super::columns::flatten;
use super::errors::to_py;
use super::tokenizer::{special_set, CoreTokenizer};
use crate::error::Error;
use crate::io::documents::{encode_files, DocumentFormat};
use crate::io::file_counts::{count_files, Wanted};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::PathBuf;

/// How the files hold documents: JSON Lines with `text_field`, pieces between `separator`
/// occurrences, or one document per file.
fn format(separator: Option<&str>, text_field: Option<&str>) -> crate::error::Result<DocumentFormat> {
    match (separator, text_field) {
        (Some(_), Some(_)) => {
            Err(Error::config("give a separator (text files) or a text_field (JSON Lines), not both"))
        }
        (Some(""), None) => Err(Error::config("the document separator is empty")),
        (Some(s), None) => Ok(DocumentFormat::Separated(s.as_bytes().to_vec())),
        (None, Some(field)) => Ok(DocumentFormat::JsonLines(field.to_string())),
        (None, None) => Ok(DocumentFormat::Whole),
    }
}

#[pymethods]
impl CoreTokenizer {
    /// Encodes the documents of `paths` (plain, .gz, .zst; see `format`) on all cores and calls
    /// `on_batch(ids, counts, bytes_read)` for each batch in order: `ids` the batch's ids back to
    /// back (`end_of_document` after each document when given) as little-endian u16 or u32
    /// bytes, `counts` each document's token count as little-endian u64 bytes.
    #[pyo3(signature = (paths, separator, text_field, allowed_special, end_of_document, id_width, num_threads, on_batch))]
    #[allow(clippy::too_many_arguments)]
    fn encode_files_flat(
        &self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        separator: Option<&str>,
        text_field: Option<&str>,
        allowed_special: &Bound<'_, PyAny>,
        end_of_document: Option<u32>,
        id_width: usize,
        num_threads: Option<usize>,
        on_batch: Py<PyAny>,
    ) -> PyResult<()> {
        let format = format(separator, text_field).map_err(to_py)?;
        let allowed = special_set(allowed_special)?;
        let n_vocab = self.inner.vocab().n_vocab();
        if let Some(id) = end_of_document.filter(|&id| id as usize >= n_vocab) {
            return Err(to_py(Error::IdOutOfRange { id, n_vocab }));
        }
        let max_id = n_vocab.saturating_sub(1) as u32;
        detach_calling(py, |call| {
            encode_files(&self.inner, &paths, &format, &allowed, num_threads, &mut |ids, read| {
                let (ids, counts) = flatten(ids, end_of_document, id_width, max_id)?;
                call(&mut |py| {
                    on_batch.call1(py, (PyBytes::new(py, &ids), PyBytes::new(py, &counts), read)).map(|_| ())
                })
            })
        })
    }
}

/// Counts what the files of `paths` hold for each of `tokenizers` (`src/io/file_counts.rs`): a
/// dict of `bytes_read`, `invalid_bytes`, `text_bytes`, `chars`, `words` (0 unless `words`),
/// `tokens` (a list, per tokenizer) and `id_counts` (per tokenizer, each id's count as
/// little-endian u64 bytes; `None` unless `id_counts`).
#[pyfunction]
#[pyo3(signature = (tokenizers, paths, id_counts, words, num_threads))]
pub fn count_files_for<'py>(
    py: Python<'py>,
    tokenizers: Vec<PyRef<'py, CoreTokenizer>>,
    paths: Vec<PathBuf>,
    id_counts: bool,
    words: bool,
    num_threads: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let inner: Vec<_> = tokenizers.iter().map(|t| t.inner.clone()).collect();
    let wanted = Wanted { id_counts, words };
    let counts = py
        .detach(|| {
            let refs: Vec<&crate::tokenizer::Tokenizer> = inner.iter().map(|t| &**t).collect();
            count_files(&refs, &paths, wanted, num_threads)
        })
        .map_err(to_py)?;
    let out = PyDict::new(py);
    out.set_item("bytes_read", counts.bytes_read)?;
    out.set_item("invalid_bytes", counts.invalid_bytes)?;
    out.set_item("text_bytes", counts.text_bytes)?;
    out.set_item("chars", counts.chars)?;
    out.set_item("words", counts.words)?;
    out.set_item("tokens", counts.tokens)?;
    if id_counts {
        let per: Vec<Bound<'py, PyBytes>> = counts
            .id_counts
            .iter()
            .map(|c| PyBytes::new(py, &c.iter().flat_map(|n| n.to_le_bytes()).collect::<Vec<u8>>()))
            .collect();
        out.set_item("id_counts", per)?;
    } else {
        out.set_item("id_counts", py.None())?;
    }
    Ok(out)
}
