//! Model inputs from Python: `_core.Encoding`, and batches straight into array buffers with no
//! per-token Python object (the settings are `settings.rs`).

use super::errors::to_py;
use super::text::Text;
use super::tokenizer::CoreTokenizer;
use crate::error::Error;
use crate::pipeline::postprocess::Encoding;
use crate::tokenizer::Tokenizer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Arc;

/// One input's model inputs: ids and everything aligned with them.
#[pyclass(frozen, module = "tokenmill._core", name = "Encoding")]
pub struct PyEncoding {
    inner: Encoding,
    tokenizer: Arc<Tokenizer>,
}

#[pymethods]
impl PyEncoding {
    #[getter]
    fn ids(&self) -> Vec<u32> {
        self.inner.ids.clone()
    }
    #[getter]
    fn type_ids(&self) -> Vec<u32> {
        self.inner.type_ids.clone()
    }
    #[getter]
    fn attention_mask(&self) -> Vec<u32> {
        self.inner.attention_mask.iter().map(|&m| m as u32).collect()
    }
    #[getter]
    fn special_tokens_mask(&self) -> Vec<u32> {
        self.inner.special_tokens_mask.iter().map(|&m| m as u32).collect()
    }
    /// Character offsets `(start, end)` into the original text.
    #[getter]
    fn offsets(&self) -> Vec<(u32, u32)> {
        self.inner.offsets.clone()
    }
    #[getter]
    fn word_ids(&self) -> Vec<Option<u32>> {
        self.inner.word_ids.clone()
    }
    #[getter]
    fn sequence_ids(&self) -> Vec<Option<u32>> {
        self.inner.sequence_ids().into_iter().map(|s| s.map(u32::from)).collect()
    }
    #[getter]
    fn n_sequences(&self) -> usize {
        self.inner.n_sequences()
    }
    /// (sequence, start, stop) token ranges as Hugging Face records them (none without a
    /// post-processor; a window of a pair records only its second text).
    #[getter]
    fn sequence_ranges(&self) -> Vec<(u32, usize, usize)> {
        self.inner.sequence_ranges.iter().map(|(s, r)| (u32::from(*s), r.start, r.end)).collect()
    }
    /// The tokens as the vocabulary spells them (`Ġworld` in a byte-level vocabulary, `▁world`,
    /// `##ing`), as Hugging Face's `Encoding.tokens` — an added token found in the text as the
    /// text it matched, and a Hugging Face Unigram model's unknown token as the text it covers.
    #[getter]
    fn tokens(&self) -> Vec<String> {
        let mut tokens: Vec<String> =
            self.inner.ids.iter().map(|&id| self.tokenizer.token_string(id).unwrap_or_default()).collect();
        // Added tokens and Unigram's unknown token as the text they matched, as Hugging Face.
        for (at, surface) in &self.inner.surfaces {
            tokens[*at as usize] = surface.to_string();
        }
        tokens
    }
    /// The windows truncation cut off, each a full encoding.
    #[getter]
    fn overflowing(&self) -> Vec<PyEncoding> {
        self.inner
            .overflowing
            .iter()
            .map(|o| PyEncoding { inner: o.clone(), tokenizer: Arc::clone(&self.tokenizer) })
            .collect()
    }
    fn __len__(&self) -> usize {
        self.inner.len()
    }
    fn __repr__(&self) -> String {
        format!("<tokenmill.Encoding {} tokens, {} overflowing>", self.inner.len(), self.inner.overflowing.len())
    }
}

/// The inputs of a batch: first texts and, for pairs, second texts.
fn pairs<'a>(firsts: &'a [Text], seconds: &'a Option<Vec<Text>>) -> PyResult<Vec<(&'a str, Option<&'a str>)>> {
    match seconds {
        None => Ok(firsts.iter().map(|a| (&**a, None)).collect()),
        Some(seconds) if seconds.len() == firsts.len() => {
            Ok(firsts.iter().zip(seconds).map(|(a, b)| (&**a, Some(&**b))).collect())
        }
        Some(seconds) => Err(to_py(Error::config(format!(
            "{} texts but {} second texts: pairs need one of each",
            firsts.len(),
            seconds.len()
        )))),
    }
}

/// Appends `rows` of equal length to `out` as little-endian integers of `width` bytes.
fn put<T: Copy + Into<i64>>(out: &mut Vec<u8>, values: &[T], wide: bool) {
    for &v in values {
        let v: i64 = v.into();
        if wide {
            out.extend_from_slice(&v.to_le_bytes());
        } else {
            out.extend_from_slice(&(v as i32).to_le_bytes());
        }
    }
}

#[pymethods]
impl CoreTokenizer {
    #[pyo3(signature = (text, pair=None, add_special_tokens=true))]
    fn encode_for_model(
        &self,
        py: Python<'_>,
        text: Text,
        pair: Option<Text>,
        add_special_tokens: bool,
    ) -> PyResult<PyEncoding> {
        let inner =
            py.detach(|| self.inner.encode_for_model(&text, pair.as_deref(), add_special_tokens)).map_err(to_py)?;
        Ok(PyEncoding { inner, tokenizer: Arc::clone(&self.inner) })
    }

    /// Truncation, the template and padding applied to encodings made elsewhere (Hugging Face's
    /// `post_process`).
    #[pyo3(signature = (encoding, pair=None, add_special_tokens=true))]
    fn post_process(
        &self,
        py: Python<'_>,
        encoding: PyRef<'_, PyEncoding>,
        pair: Option<PyRef<'_, PyEncoding>>,
        add_special_tokens: bool,
    ) -> PyResult<PyEncoding> {
        let (a, b) = (encoding.inner.clone(), pair.map(|p| p.inner.clone()));
        let inner = py.detach(|| self.inner.post_process(a, b, add_special_tokens)).map_err(to_py)?;
        Ok(PyEncoding { inner, tokenizer: Arc::clone(&self.inner) })
    }

    /// A core encoding from Hugging Face's per-token lists (an `Encoding` changed in Python),
    /// its `tokens` kept as given where the vocabulary spells an id otherwise.
    #[pyo3(signature = (ids, type_ids, tokens, word_ids, offsets, special_tokens_mask, attention_mask, sequence_ranges, overflowing))]
    #[allow(clippy::too_many_arguments)]
    fn encoding_from_lists(
        &self,
        ids: Vec<u32>,
        type_ids: Vec<u32>,
        tokens: Vec<String>,
        word_ids: Vec<Option<u32>>,
        offsets: Vec<(u32, u32)>,
        special_tokens_mask: Vec<u8>,
        attention_mask: Vec<u8>,
        sequence_ranges: Vec<(u8, usize, usize)>,
        overflowing: Vec<PyRef<'_, PyEncoding>>,
    ) -> PyResult<PyEncoding> {
        let n = ids.len();
        let lengths = [type_ids.len(), tokens.len(), word_ids.len(), offsets.len(), special_tokens_mask.len()];
        if lengths.iter().chain([&attention_mask.len()]).any(|&len| len != n) {
            return Err(to_py(Error::config("an encoding's lists must all have one entry per token")));
        }
        if sequence_ranges.iter().any(|&(_, start, stop)| start > stop || stop > n) {
            return Err(to_py(Error::config("a sequence range lies outside the encoding")));
        }
        let surfaces = ids
            .iter()
            .zip(&tokens)
            .enumerate()
            .filter(|(_, (&id, token))| self.inner.token_string(id).ok().as_deref() != Some(token.as_str()))
            .map(|(at, (_, token))| (at as u32, Box::<str>::from(token.as_str())))
            .collect();
        let inner = Encoding {
            ids,
            type_ids,
            offsets,
            word_ids,
            special_tokens_mask,
            attention_mask,
            sequence_ranges: sequence_ranges.into_iter().map(|(s, start, stop)| (s, start..stop)).collect(),
            overflowing: overflowing.iter().map(|o| o.inner.clone()).collect(),
            surfaces,
        };
        Ok(PyEncoding { inner, tokenizer: Arc::clone(&self.inner) })
    }

    #[pyo3(signature = (texts, pairs_=None, add_special_tokens=true, num_threads=None))]
    fn encode_batch_for_model(
        &self,
        py: Python<'_>,
        texts: Vec<Text>,
        pairs_: Option<Vec<Text>>,
        add_special_tokens: bool,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<PyEncoding>> {
        let inputs = pairs(&texts, &pairs_)?;
        let batch =
            py.detach(|| self.inner.encode_batch_for_model(&inputs, add_special_tokens, num_threads)).map_err(to_py)?;
        Ok(batch.into_iter().map(|inner| PyEncoding { inner, tokenizer: Arc::clone(&self.inner) }).collect())
    }

    /// Encodes a batch into row-major buffers: a dict of name → (bytes, rows, columns). With
    /// `overflow`, each input's overflowing windows follow it as rows of their own and
    /// `overflow_to_sample` says which input each row came from. Every row must have the same
    /// length (set padding), as an array needs.
    #[pyo3(signature = (texts, pairs_=None, add_special_tokens=true, num_threads=None, wide=true,
                        offsets=false, overflow=false, special_tokens_mask=false))]
    #[allow(clippy::too_many_arguments)]
    fn encode_batch_arrays<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Text>,
        pairs_: Option<Vec<Text>>,
        add_special_tokens: bool,
        num_threads: Option<usize>,
        wide: bool,
        offsets: bool,
        overflow: bool,
        special_tokens_mask: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let inputs = pairs(&texts, &pairs_)?;
        type Buffers = Vec<(&'static str, Vec<u8>, usize)>;
        let (buffers, rows, columns): (Buffers, usize, usize) = py
            .detach(|| -> crate::Result<_> {
                let batch = self.inner.encode_batch_for_model(&inputs, add_special_tokens, num_threads)?;
                let mut rows: Vec<(&Encoding, usize)> = Vec::with_capacity(batch.len());
                for (i, e) in batch.iter().enumerate() {
                    rows.push((e, i));
                    if overflow {
                        rows.extend(e.overflowing.iter().map(|o| (o, i)));
                    }
                }
                let columns = rows.first().map_or(0, |(e, _)| e.len());
                if let Some((e, i)) = rows.iter().find(|(e, _)| e.len() != columns) {
                    return Err(Error::config(format!(
                        "rows differ in length ({columns} and {} tokens, input {i}): pad them to the longest (padding=True), or truncate them to the padded length (truncation=True), to make arrays",
                        e.len()
                    )));
                }
                let width = if wide { 8 } else { 4 };
                let cells = rows.len() * columns;
                let mut ids = Vec::with_capacity(cells * width);
                let mut mask = Vec::with_capacity(cells * width);
                let mut types = Vec::with_capacity(cells * width);
                let mut special = Vec::new();
                let mut spans = Vec::new();
                let mut samples = Vec::new();
                for (e, sample) in &rows {
                    put(&mut ids, &e.ids, wide);
                    put(&mut mask, &e.attention_mask, wide);
                    put(&mut types, &e.type_ids, wide);
                    if special_tokens_mask {
                        put(&mut special, &e.special_tokens_mask, wide);
                    }
                    if offsets {
                        let flat: Vec<u32> = e.offsets.iter().flat_map(|&(s, t)| [s, t]).collect();
                        put(&mut spans, &flat, wide);
                    }
                    put(&mut samples, &[*sample as u32], wide);
                }
                let mut out: Buffers = vec![
                    ("input_ids", ids, columns),
                    ("attention_mask", mask, columns),
                    ("token_type_ids", types, columns),
                ];
                if special_tokens_mask {
                    out.push(("special_tokens_mask", special, columns));
                }
                if offsets {
                    out.push(("offset_mapping", spans, columns * 2));
                }
                if overflow {
                    out.push(("overflow_to_sample_mapping", samples, 1));
                }
                Ok((out, rows.len(), columns))
            })
            .map_err(to_py)?;
        let _ = columns;
        let dict = PyDict::new(py);
        for (name, bytes, cols) in buffers {
            dict.set_item(name, (PyBytes::new(py, &bytes), rows, cols))?;
        }
        Ok(dict)
    }
}
