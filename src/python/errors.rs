//! The one place where core errors become Python exceptions.

use crate::error::Error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pyo3::create_exception!(tokenmill, TokenmillError, PyValueError, "Base class of every error tokenmill raises.");
pyo3::create_exception!(tokenmill, ConfigError, TokenmillError, "A parameter is out of range or contradicts another.");
pyo3::create_exception!(
    tokenmill,
    CorpusError,
    TokenmillError,
    "A corpus file is missing, unreadable, not UTF-8 where it must be, or empty."
);
pyo3::create_exception!(
    tokenmill,
    FormatError,
    TokenmillError,
    "A tokenizer or vocabulary file is truncated, corrupt or of another format."
);
pyo3::create_exception!(
    tokenmill,
    PatternError,
    TokenmillError,
    "A pre-tokenizer pattern does not compile or names no preset."
);
pyo3::create_exception!(
    tokenmill,
    OutOfVocabularyError,
    TokenmillError,
    "Text holds a character the vocabulary cannot represent."
);
pyo3::create_exception!(tokenmill, TokenIdError, TokenmillError, "A token id the vocabulary does not hold.");
pyo3::create_exception!(
    tokenmill,
    DisallowedSpecialError,
    TokenmillError,
    "Text holds a special token the call disallowed."
);

pub fn to_py(err: Error) -> PyErr {
    let msg = err.to_string();
    match err {
        Error::Io { .. } | Error::InvalidUtf8 { .. } | Error::EmptyCorpus(_) => CorpusError::new_err(msg),
        Error::Config(_) => ConfigError::new_err(msg),
        Error::Pattern { .. } => PatternError::new_err(msg),
        Error::OutOfVocabulary { .. } | Error::UnknownWord { .. } | Error::MissingUnknownPiece => {
            OutOfVocabularyError::new_err(msg)
        }
        Error::IdOutOfRange { .. } | Error::UnusedId { .. } => TokenIdError::new_err(msg),
        Error::DisallowedSpecial { .. } => DisallowedSpecialError::new_err(msg),
        Error::Format { .. } => FormatError::new_err(msg),
        Error::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(msg),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TokenmillError", py.get_type::<TokenmillError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("CorpusError", py.get_type::<CorpusError>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("PatternError", py.get_type::<PatternError>())?;
    m.add("OutOfVocabularyError", py.get_type::<OutOfVocabularyError>())?;
    m.add("TokenIdError", py.get_type::<TokenIdError>())?;
    m.add("DisallowedSpecialError", py.get_type::<DisallowedSpecialError>())?;
    Ok(())
}
