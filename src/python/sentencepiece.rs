//! SentencePiece `.model` files: read in Rust (`sentencepiece_model`), and what
//! `save_sentencepiece` and the Hugging Face export need to write one back.

use super::errors::to_py;
use super::text::Text;
use super::tokenizer::CoreTokenizer;
use crate::cuts::CutPiece;
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

    /// The pieces `encode_ordinary` gives, as (id, normalized text, start, end) with character
    /// offsets into `text` (for `tokenmill.sentencepiece`'s pieces and protos).
    fn best_pieces(&self, py: Python<'_>, text: Text) -> PyResult<Vec<PieceTuple>> {
        let text: &str = &text;
        let pieces = py.detach(|| self.inner.best_pieces(text)).map_err(to_py)?;
        Ok(pieces.into_iter().map(piece_tuple).collect())
    }

    /// The `n` best cuts as pieces (see `best_pieces`) with their scores (Unigram).
    fn nbest_pieces(&self, py: Python<'_>, text: Text, n: usize) -> PyResult<Vec<(Vec<PieceTuple>, f32)>> {
        let text: &str = &text;
        let cuts = py.detach(|| self.inner.nbest_pieces(text, n)).map_err(to_py)?;
        Ok(cuts.into_iter().map(|(pieces, score)| (pieces.into_iter().map(piece_tuple).collect(), score)).collect())
    }

    /// A sampled cut as pieces (see `best_pieces`) with its log-probability (Unigram).
    fn sampled_pieces(&self, py: Python<'_>, text: Text, alpha: f32, seed: u64) -> PyResult<(Vec<PieceTuple>, f64)> {
        let text: &str = &text;
        let (pieces, log_p) = py.detach(|| self.inner.sampled_pieces(text, alpha, seed)).map_err(to_py)?;
        Ok((pieces.into_iter().map(piece_tuple).collect(), log_p))
    }

    /// The entropy of sampling `text`'s cuts with `alpha` (Unigram).
    fn entropy(&self, py: Python<'_>, text: Text, alpha: f32) -> PyResult<f64> {
        let text: &str = &text;
        py.detach(|| self.inner.entropy(text, alpha)).map_err(to_py)
    }

    /// `text` normalized, and for each byte of it (and its end) the byte of `text` it is at, as
    /// SentencePiece's `normalize(..., with_offsets=True)` on bytes gives them.
    fn normalize_aligned(&self, text: Text) -> (String, Vec<u32>) {
        let text: &str = &text;
        let (normalized, align) = self.inner.normalizer().apply_aligned(text);
        let normalizer = self.inner.normalizer();
        let positions = crate::cuts::sentencepiece_positions(normalizer, text, &normalized, align.as_deref());
        (normalized.into_owned(), positions)
    }
}

/// A piece for Python: (id, normalized text, start, end).
type PieceTuple = (u32, String, u32, u32);

fn piece_tuple(p: CutPiece) -> PieceTuple {
    (p.id, p.normalized, p.start, p.end)
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
