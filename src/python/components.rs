//! Hugging Face components run on their own (`tokenmill.tokenizers.normalizers.Lowercase().
//! normalize_str(...)` and the like): a normalizer, a pre-tokenizer or a decoder given as its
//! `tokenizer.json` node (or a tokenmill spec), run by the same code a loaded tokenizer runs.

use super::errors::to_py;
use super::text::Text;
use crate::error::Result;
use crate::pipeline::hf_decoder::HfDecoder;
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::pretokenize::PreTokenizer;
use pyo3::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The normalizers and pre-tokenizers specs have built, kept: components are called once per
/// text (a tokenizer trained through `tokenmill.tokenizers` normalizes and cuts each line), and
/// building one compiles its regexes. A few dozen specs at most are live at once; past that the
/// cache starts over.
type Cache<T> = Mutex<Option<HashMap<String, Arc<T>>>>;
static NORMALIZERS: Cache<Normalizer> = Mutex::new(None);
static PRE_TOKENIZERS: Cache<PreTokenizer> = Mutex::new(None);

fn cached<T>(cache: &Cache<T>, spec: &str, build: impl FnOnce(&str) -> Result<T>) -> PyResult<Arc<T>> {
    let mut guard = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let map = guard.get_or_insert_with(HashMap::new);
    if let Some(found) = map.get(spec) {
        return Ok(Arc::clone(found));
    }
    let made = Arc::new(build(spec).map_err(to_py)?);
    if map.len() >= 64 {
        map.clear();
    }
    map.insert(spec.to_string(), Arc::clone(&made));
    Ok(made)
}

/// `text` through the normalizer `spec` (a tokenmill spec, or `hf:` and a Hugging Face node).
#[pyfunction]
pub fn normalize_with(spec: &str, text: Text) -> PyResult<String> {
    Ok(cached(&NORMALIZERS, spec, Normalizer::from_spec)?.apply(&text).into_owned())
}

/// The pieces the pre-tokenizer `spec` cuts `text` into, each with its (start, end) in
/// characters of `text`.
#[pyfunction]
pub fn pre_tokenize_with(py: Python<'_>, spec: &str, text: Text) -> PyResult<Vec<(String, (usize, usize))>> {
    let pre = cached(&PRE_TOKENIZERS, spec, PreTokenizer::from_spec)?;
    let text: &str = &text;
    py.detach(|| {
        let pieces = pre.split(text)?;
        // Every piece is a slice of `text` (the splitters cut, never rewrite): its place is its
        // address. Characters are counted once, left to right, as the pieces come in order.
        let base = text.as_ptr() as usize;
        let mut out = Vec::with_capacity(pieces.len());
        let (mut byte, mut chars) = (0, 0);
        for piece in pieces {
            let start = (piece.as_ptr() as usize).wrapping_sub(base);
            if start > text.len() || start < byte {
                return Err(crate::error::Error::config("a pre-tokenizer piece is not a slice of the text, in order"));
            }
            chars += text[byte..start].chars().count();
            let len = piece.chars().count();
            out.push((piece.to_string(), (chars, chars + len)));
            chars += len;
            byte = start + piece.len();
        }
        Ok(out)
    })
    .map_err(to_py)
}

/// Each text through the normalizer `spec`: `normalize_with` over a batch, in one call (training
/// through `tokenmill.tokenizers` normalizes every line).
#[pyfunction]
pub fn normalize_batch_with(py: Python<'_>, spec: &str, texts: Vec<String>) -> PyResult<Vec<String>> {
    let normalizer = cached(&NORMALIZERS, spec, Normalizer::from_spec)?;
    Ok(py.detach(|| texts.iter().map(|t| normalizer.apply(t).into_owned()).collect()))
}

/// The pieces the pre-tokenizer `spec` cuts each text into, without their places, and whether
/// the first of them starts the text (what Metaspace's `first` scheme asks): `pre_tokenize_with`
/// over a batch, for counting words.
#[pyfunction]
pub fn split_batch_with(py: Python<'_>, spec: &str, texts: Vec<String>) -> PyResult<Vec<(Vec<String>, bool)>> {
    let pre = cached(&PRE_TOKENIZERS, spec, PreTokenizer::from_spec)?;
    py.detach(|| {
        texts
            .iter()
            .map(|text| {
                let pieces = pre.split(text)?;
                let starts = pieces.first().is_some_and(|p| p.as_ptr() == text.as_ptr());
                Ok((pieces.iter().map(|p| p.to_string()).collect(), starts))
            })
            .collect::<Result<Vec<_>>>()
    })
    .map_err(to_py)
}

/// The pieces of `texts` counted, each text through the normalizer `normalizer` (if any), a space
/// put in front when `prefix_space` and it has none (ByteLevel's `add_prefix_space`), then cut by
/// the pre-tokenizer `spec`: training through `tokenmill.tokenizers` counts its words here when
/// its pre-tokenizer is a splitting one or a lone ByteLevel, without a Python string per piece.
#[pyfunction]
#[pyo3(signature = (normalizer, spec, prefix_space, texts))]
pub fn count_pieces_with(
    py: Python<'_>,
    normalizer: Option<&str>,
    spec: &str,
    prefix_space: bool,
    texts: Vec<String>,
) -> PyResult<Vec<(String, u64)>> {
    let normalizer = normalizer.map(|n| cached(&NORMALIZERS, n, Normalizer::from_spec)).transpose()?;
    let pre = cached(&PRE_TOKENIZERS, spec, PreTokenizer::from_spec)?;
    py.detach(|| {
        let mut counts: rustc_hash::FxHashMap<String, u64> = rustc_hash::FxHashMap::default();
        let mut spaced = String::new();
        for text in &texts {
            let normalized = match &normalizer {
                Some(n) => n.apply(text),
                None => std::borrow::Cow::Borrowed(text.as_str()),
            };
            let mut text: &str = &normalized;
            if text.is_empty() {
                continue;
            }
            if prefix_space && !text.starts_with(' ') {
                spaced.clear();
                spaced.push(' ');
                spaced.push_str(text);
                text = &spaced;
            }
            for piece in pre.split(text)? {
                match counts.get_mut(piece) {
                    Some(n) => *n += 1,
                    None => {
                        counts.insert(piece.to_string(), 1);
                    }
                }
            }
        }
        Ok(counts.into_iter().collect())
    })
    .map_err(to_py)
}

/// The text of token strings through a Hugging Face decoder node (its JSON).
#[pyfunction]
pub fn decode_tokens_with(json: &str, tokens: Vec<String>) -> PyResult<String> {
    let decoder: HfDecoder =
        serde_json::from_str(json).map_err(|e| to_py(crate::error::Error::config(format!("decoder {json}: {e}"))))?;
    decoder.check().map_err(to_py)?;
    Ok(decoder.decode(tokens, false, true).concat())
}
