//! Documents stored back to back in one buffer — an Arrow string column's data and offsets
//! buffers — counted and encoded with no Python string per document; and batches encoded into
//! one flat id buffer (what token shards are written from) with no Python int per token.

use super::errors::to_py;
use super::text::Text;
use super::tokenizer::{special_set, CoreTokenizer};
use super::train::WordCounter;
use crate::error::{Error, Result};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The documents of a column: `data[offsets[i]..offsets[i + 1]]`, offsets little-endian of
/// `offset_width` bytes (4 for Arrow `string`, 8 for `large_string`).
fn documents<'a>(data: &'a [u8], offsets: &[u8], offset_width: usize) -> Result<Vec<&'a str>> {
    if offset_width != 4 && offset_width != 8 {
        return Err(Error::config(format!("offset_width must be 4 or 8, not {offset_width}")));
    }
    if offsets.len() % offset_width != 0 {
        return Err(Error::config(format!(
            "the offsets buffer holds {} bytes, not a whole number of {offset_width}-byte offsets",
            offsets.len()
        )));
    }
    let read = |i: usize| -> i64 {
        let b = &offsets[i * offset_width..(i + 1) * offset_width];
        match offset_width {
            4 => i32::from_le_bytes(b.try_into().expect("4 bytes")) as i64,
            _ => i64::from_le_bytes(b.try_into().expect("8 bytes")),
        }
    };
    let n = offsets.len() / offset_width;
    let mut docs = Vec::with_capacity(n.saturating_sub(1));
    for i in 1..n {
        let (start, end) = (read(i - 1), read(i));
        if start < 0 || end < start || end as u64 > data.len() as u64 {
            return Err(Error::config(format!(
                "document {}: offsets {start}..{end} do not lie within the {}-byte data buffer",
                i - 1,
                data.len()
            )));
        }
        let bytes = &data[start as usize..end as usize];
        let text = std::str::from_utf8(bytes).map_err(|e| {
            Error::config(format!(
                "document {}: invalid UTF-8 at byte {} of the document (byte {} of the buffer)",
                i - 1,
                e.valid_up_to(),
                start as usize + e.valid_up_to()
            ))
        })?;
        docs.push(text);
    }
    Ok(docs)
}

#[pymethods]
impl WordCounter {
    /// Counts the words of the documents of a column buffer (see `documents`), on all cores
    /// without the GIL.
    fn add_column(&self, py: Python<'_>, data: &[u8], offsets: &[u8], offset_width: usize) -> PyResult<()> {
        let counts = py
            .detach(|| documents(data, offsets, offset_width).and_then(|docs| self.count_texts(&docs)))
            .map_err(to_py)?;
        self.absorb(counts);
        Ok(())
    }
}

/// Ids of a batch back to back, `separator` after each document when given, as little-endian
/// u16 (`id_width` 2) or u32 (4) bytes; and each document's token count (separator included)
/// as little-endian u64 bytes.
pub(super) fn flatten(
    batch: Vec<Vec<u32>>,
    separator: Option<u32>,
    id_width: usize,
    max_id: u32,
) -> Result<(Vec<u8>, Vec<u8>)> {
    if id_width != 2 && id_width != 4 {
        return Err(Error::config(format!("id_width must be 2 or 4, not {id_width}")));
    }
    if id_width == 2 && max_id > u16::MAX as u32 {
        return Err(Error::config(format!("ids up to {max_id} do not fit in 16 bits; use id_width=4")));
    }
    let extra = separator.is_some() as usize;
    let total: usize = batch.iter().map(|ids| ids.len() + extra).sum();
    let mut ids_out = Vec::with_capacity(total * id_width);
    let mut counts = Vec::with_capacity(batch.len() * 8);
    for ids in &batch {
        for &id in ids.iter().chain(separator.as_ref()) {
            if id_width == 2 {
                ids_out.extend_from_slice(&(id as u16).to_le_bytes());
            } else {
                ids_out.extend_from_slice(&id.to_le_bytes());
            }
        }
        counts.extend_from_slice(&((ids.len() + extra) as u64).to_le_bytes());
    }
    Ok((ids_out, counts))
}

#[pymethods]
impl CoreTokenizer {
    /// Encodes texts into one flat id buffer and per-document token counts (see `flatten`).
    #[pyo3(signature = (texts, allowed_special, disallowed_special, separator=None, id_width=4, num_threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_flat<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Text>,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
        separator: Option<u32>,
        id_width: usize,
        num_threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
        self.flat(py, &texts, allowed_special, disallowed_special, separator, id_width, num_threads)
    }

    /// `encode_flat` on the documents of a column buffer (see `documents`).
    #[pyo3(signature = (data, offsets, offset_width, allowed_special, disallowed_special, separator=None,
                        id_width=4, num_threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn encode_column<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
        offsets: &[u8],
        offset_width: usize,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
        separator: Option<u32>,
        id_width: usize,
        num_threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let texts = documents(data, offsets, offset_width).map_err(to_py)?;
        self.flat(py, &texts, allowed_special, disallowed_special, separator, id_width, num_threads)
    }
}

impl CoreTokenizer {
    #[allow(clippy::too_many_arguments)]
    fn flat<'py>(
        &self,
        py: Python<'py>,
        texts: &[&str],
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
        separator: Option<u32>,
        id_width: usize,
        num_threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let allowed = special_set(allowed_special)?;
        let disallowed = special_set(disallowed_special)?;
        let n_vocab = self.inner.vocab().n_vocab();
        if let Some(id) = separator.filter(|&id| id as usize >= n_vocab) {
            return Err(to_py(Error::IdOutOfRange { id, n_vocab }));
        }
        let max_id = n_vocab.saturating_sub(1) as u32;
        let (ids, counts) = py
            .detach(|| {
                let batch = self.inner.encode_batch(texts, &allowed, &disallowed, num_threads)?;
                flatten(batch, separator, id_width, max_id)
            })
            .map_err(to_py)?;
        Ok((PyBytes::new(py, &ids), PyBytes::new(py, &counts)))
    }
}
