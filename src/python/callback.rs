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
    detach_calling(py, |call| {
        work(&mut |args: &[u64]| {
            call(&mut |py| match callback {
                Some(cb) => cb.call1(py, PyTuple::new(py, args)?).map(|_| ()),
                None => Ok(()),
            })
        })
    })
}

/// Runs `work` without the GIL. Whenever `work` calls `call(f)`, the GIL is taken briefly to
/// honour Ctrl-C and to run `f` (which may call into Python with values of its making); an
/// exception there stops the work (as `Error::Interrupted`) and is what this function raises.
pub fn detach_calling<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&mut dyn FnMut(&mut dyn FnMut(Python<'_>) -> PyResult<()>) -> Result<()>) -> Result<T> + Send,
) -> PyResult<T> {
    let mut python_error: Option<PyErr> = None;
    let result = {
        let mut call = |f: &mut dyn FnMut(Python<'_>) -> PyResult<()>| -> Result<()> {
            Python::attach(|py| {
                py.check_signals().and_then(|_| f(py)).map_err(|e| {
                    python_error = Some(e);
                    Error::Interrupted
                })
            })
        };
        py.detach(|| work(&mut call))
    };
    result.map_err(|e| match e {
        Error::Interrupted => python_error.take().unwrap_or_else(|| to_py(Error::Interrupted)),
        e => to_py(e),
    })
}
