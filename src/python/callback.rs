//! Long Rust work that reports back to Python now and then (progress bars, memory budgets).

use super::errors::to_py;
use crate::error::{Error, Result};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Runs `work` without the GIL. Whenever `work` calls `notify(args)`, the GIL is taken briefly to
/// honour Ctrl-C and to call `callback(*args)`; an exception there stops the work (as
/// `Error::Interrupted`) and is what this function raises.
pub fn detach_reporting<T: Send>(
    py: Python<'_>,
    callback: Option<&Py<PyAny>>,
    work: impl FnOnce(&mut dyn FnMut(&[u64]) -> Result<()>) -> Result<T> + Send,
) -> PyResult<T> {
    let mut python_error: Option<PyErr> = None;
    let result = {
        let mut notify = |args: &[u64]| -> Result<()> {
            Python::attach(|py| {
                let outcome = py.check_signals().and_then(|_| match callback {
                    Some(cb) => cb.call1(py, PyTuple::new(py, args)?).map(|_| ()),
                    None => Ok(()),
                });
                outcome.map_err(|e| {
                    python_error = Some(e);
                    Error::Interrupted
                })
            })
        };
        py.detach(|| work(&mut notify))
    };
    result.map_err(|e| match e {
        Error::Interrupted => python_error.take().unwrap_or_else(|| to_py(Error::Interrupted)),
        e => to_py(e),
    })
}
