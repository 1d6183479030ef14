//! Text from Python, one rule at every entry point: a `str` holding lone surrogates (which
//! UTF-8 cannot spell, and which Python strings may hold) comes in with each as U+FFFD, as
//! tiktoken encodes them — encoding, batches, model inputs, pre-tokenizing, counting and
//! training alike.

use pyo3::exceptions::PyUnicodeEncodeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;

/// A Python `str` as UTF-8 (borrowed from the object where it has no lone surrogates).
pub struct Text(PyBackedStr);

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl FromPyObject<'_, '_> for Text {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
        let text = obj.cast::<PyString>()?;
        match PyBackedStr::try_from(text.to_owned()) {
            Ok(utf8) => Ok(Text(utf8)),
            Err(e) if e.is_instance_of::<PyUnicodeEncodeError>(obj.py()) => {
                // Through UTF-16, where a lone surrogate is a unit the decoder replaces.
                let replaced = text
                    .call_method1("encode", ("utf-16", "surrogatepass"))?
                    .call_method1("decode", ("utf-16", "replace"))?;
                Ok(Text(PyBackedStr::try_from(replaced.cast_into::<PyString>()?)?))
            }
            Err(e) => Err(e),
        }
    }
}
