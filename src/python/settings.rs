//! Model-input settings as typed Python objects: `_core.Truncation` and `_core.Padding` check
//! their arguments once, when made; a tokenizer holds them, and a call that asks for other
//! settings hands its own objects to `with_settings`, with no JSON in between. Both are frozen
//! and hashable, so a call's settings can key a cache.

use super::errors::to_py;
use super::tokenizer::CoreTokenizer;
use crate::error::Error;
use crate::pipeline::postprocess::{ModelInputs, Padding, Side, Truncation, TruncationStrategy};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};

/// A non-negative (or, with `positive`, at least 1) Python int; a bool is refused.
fn count(name: &str, value: &Bound<'_, PyAny>, positive: bool) -> PyResult<usize> {
    let min = usize::from(positive);
    let n = if value.is_instance_of::<PyBool>() { None } else { value.extract::<i128>().ok() };
    match n {
        Some(n) if n >= min as i128 && n <= usize::MAX as i128 => Ok(n as usize),
        _ => Err(to_py(Error::config(format!(
            "{name} must be a {} int, got {value}",
            if positive { "positive" } else { "non-negative" }
        )))),
    }
}

fn side(direction: &str) -> PyResult<Side> {
    match direction {
        "left" => Ok(Side::Left),
        "right" => Ok(Side::Right),
        _ => Err(to_py(Error::config(format!("direction must be 'left' or 'right', got {direction:?}")))),
    }
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::Left => "left",
        Side::Right => "right",
    }
}

/// Truncation: at most `max_length` tokens per input (template tokens included), what is cut
/// off returned as windows overlapping by `stride`.
///
/// >>> Truncation(128, stride=16).as_dict()["max_length"]
/// 128
#[pyclass(frozen, eq, hash, module = "tokenmill._core", name = "Truncation")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyTruncation {
    pub inner: Truncation,
}

#[pymethods]
impl PyTruncation {
    #[new]
    #[pyo3(signature = (max_length, *, stride=None, strategy="longest_first", direction="right",
                        whole_below_template=false))]
    fn new(
        max_length: &Bound<'_, PyAny>,
        stride: Option<&Bound<'_, PyAny>>,
        strategy: &str,
        direction: &str,
        whole_below_template: bool,
    ) -> PyResult<Self> {
        let strategy = match strategy {
            "longest_first" => TruncationStrategy::LongestFirst,
            "only_first" => TruncationStrategy::OnlyFirst,
            "only_second" => TruncationStrategy::OnlySecond,
            other => {
                return Err(to_py(Error::config(format!(
                    "strategy must be longest_first, only_first or only_second, got {other:?}"
                ))))
            }
        };
        let stride = match stride {
            Some(s) => count("stride", s, false)?,
            None => 0,
        };
        Ok(PyTruncation {
            inner: Truncation {
                max_length: count("max_length", max_length, false)?,
                stride,
                strategy,
                side: side(direction)?,
                whole_below_template,
            },
        })
    }

    #[getter]
    fn max_length(&self) -> usize {
        self.inner.max_length
    }

    #[getter]
    fn stride(&self) -> usize {
        self.inner.stride
    }

    /// The settings as a dict: `max_length`, `stride`, `strategy`, `side`.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("max_length", self.inner.max_length)?;
        d.set_item("stride", self.inner.stride)?;
        let strategy = match self.inner.strategy {
            TruncationStrategy::LongestFirst => "longest_first",
            TruncationStrategy::OnlyFirst => "only_first",
            TruncationStrategy::OnlySecond => "only_second",
        };
        d.set_item("strategy", strategy)?;
        d.set_item("side", side_name(self.inner.side))?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!("Truncation({}, stride={})", self.inner.max_length, self.inner.stride)
    }
}

/// Padding with `pad_id` (spelled `pad_token`) to `length`, or to the longest input of a batch
/// when `length` is None; then up to a multiple of `pad_to_multiple_of`.
///
/// >>> Padding(0, "[PAD]", length=8).as_dict()["length"]
/// 8
#[pyclass(frozen, eq, hash, module = "tokenmill._core", name = "Padding")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyPadding {
    pub inner: Padding,
}

#[pymethods]
impl PyPadding {
    #[new]
    #[pyo3(signature = (pad_id, pad_token, *, length=None, pad_to_multiple_of=None, pad_type_id=None,
                        direction="right"))]
    fn new(
        pad_id: &Bound<'_, PyAny>,
        pad_token: String,
        length: Option<&Bound<'_, PyAny>>,
        pad_to_multiple_of: Option<&Bound<'_, PyAny>>,
        pad_type_id: Option<&Bound<'_, PyAny>>,
        direction: &str,
    ) -> PyResult<Self> {
        let id = |name: &str, v: &Bound<'_, PyAny>| -> PyResult<u32> {
            u32::try_from(count(name, v, false)?)
                .map_err(|_| to_py(Error::config(format!("{name} {v} is larger than any token id"))))
        };
        Ok(PyPadding {
            inner: Padding {
                length: length.map(|v| count("length", v, true)).transpose()?,
                multiple_of: pad_to_multiple_of.map(|v| count("pad_to_multiple_of", v, true)).transpose()?,
                pad_id: id("pad_id", pad_id)?,
                pad_type_id: pad_type_id.map(|v| id("pad_type_id", v)).transpose()?.unwrap_or(0),
                pad_token,
                side: side(direction)?,
            },
        })
    }

    #[getter]
    fn pad_id(&self) -> u32 {
        self.inner.pad_id
    }

    #[getter]
    fn pad_token(&self) -> &str {
        &self.inner.pad_token
    }

    #[getter]
    fn pad_type_id(&self) -> u32 {
        self.inner.pad_type_id
    }

    #[getter]
    fn direction(&self) -> &'static str {
        side_name(self.inner.side)
    }

    /// The settings as a dict: `length`, `multiple_of`, `pad_id`, `pad_type_id`, `pad_token`, `side`.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("length", self.inner.length)?;
        d.set_item("multiple_of", self.inner.multiple_of)?;
        d.set_item("pad_id", self.inner.pad_id)?;
        d.set_item("pad_type_id", self.inner.pad_type_id)?;
        d.set_item("pad_token", &self.inner.pad_token)?;
        d.set_item("side", side_name(self.inner.side))?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!("Padding({}, {:?}, length={:?})", self.inner.pad_id, self.inner.pad_token, self.inner.length)
    }
}

#[pymethods]
impl CoreTokenizer {
    #[getter]
    fn truncation(&self) -> Option<PyTruncation> {
        self.inner.inputs.truncation.clone().map(|inner| PyTruncation { inner })
    }

    #[getter]
    fn padding(&self) -> Option<PyPadding> {
        self.inner.inputs.padding.clone().map(|inner| PyPadding { inner })
    }

    /// The post-processor in tokenmill's JSON shape, or None.
    fn post_processor_json(&self) -> Option<String> {
        self.inner.inputs.post_processor.as_ref().map(|p| serde_json::to_string(p).expect("settings serialize"))
    }

    /// Whether the post-processor gives the second input type ids of its own (BERT-style).
    #[getter]
    fn pair_type_ids(&self) -> bool {
        self.inner.inputs.post_processor.as_ref().is_some_and(|p| p.pair_type_ids())
    }

    /// A tokenizer like this one with this truncation and padding (None: none) and the same
    /// post-processor; the vocabulary and model are shared, not copied.
    #[pyo3(signature = (truncation, padding))]
    fn with_settings(
        &self,
        truncation: Option<PyRef<'_, PyTruncation>>,
        padding: Option<PyRef<'_, PyPadding>>,
    ) -> PyResult<CoreTokenizer> {
        let inputs = ModelInputs {
            post_processor: self.inner.inputs.post_processor.clone(),
            truncation: truncation.map(|t| t.inner.clone()),
            padding: padding.map(|p| p.inner.clone()),
        };
        self.with_inputs(inputs)
    }

    /// A tokenizer like this one whose model inputs read the special tokens `names` as
    /// ordinary text (tokenizers' `encode_special_tokens`; empty: all matched).
    fn with_specials_as_text(&self, names: Vec<String>) -> CoreTokenizer {
        CoreTokenizer::new((*self.inner).clone().with_specials_as_text(names))
    }

    /// A tokenizer like this one drawing a new cut on every encode as tokenizers' sampling
    /// models do: BPE-dropout with probability `p`, or Unigram with `alpha` `p` among the
    /// `nbest` best cuts (0: all); `p` None for the best cut.
    #[pyo3(signature = (p, nbest=0))]
    fn with_draw(&self, p: Option<f64>, nbest: usize) -> PyResult<CoreTokenizer> {
        let draw = p.map(|p| crate::models::Draw { p, nbest });
        (*self.inner).clone().with_draw(draw).map(CoreTokenizer::new).map_err(to_py)
    }

    /// A tokenizer like this one with another post-processor (tokenmill's JSON shape; None: none).
    fn with_post_processor_json(&self, json: Option<&str>) -> PyResult<CoreTokenizer> {
        let post_processor = json
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| to_py(Error::config(format!("post-processor: {e}"))))?;
        self.with_inputs(ModelInputs { post_processor, ..self.inner.inputs.clone() })
    }

    /// The `post_processor`, `truncation` and `padding` sections of a `tokenizer.json` (JSON, in
    /// Hugging Face's shape); `token_of(id)` spells a token as the file's vocabulary does.
    fn hf_model_inputs_json(&self, token_of: &Bound<'_, PyAny>) -> PyResult<String> {
        // The writer takes a plain Fn: the first Python error waits in a cell.
        let failed_cell = std::cell::RefCell::new(None);
        let spell_fn = |id: u32| -> String {
            match token_of.call1((id,)).and_then(|t| t.extract::<String>()) {
                Ok(text) => text,
                Err(e) => {
                    failed_cell.borrow_mut().get_or_insert(e);
                    String::new()
                }
            }
        };
        let value = crate::io::huggingface_inputs::write(&self.inner.inputs, &spell_fn);
        match failed_cell.into_inner() {
            Some(e) => Err(e),
            None => Ok(value.to_string()),
        }
    }
}

impl CoreTokenizer {
    fn with_inputs(&self, inputs: ModelInputs) -> PyResult<CoreTokenizer> {
        inputs.check(self.inner.vocab()).map_err(to_py)?;
        let mut tok = (*self.inner).clone();
        tok.inputs = inputs;
        Ok(CoreTokenizer::new(tok))
    }
}
