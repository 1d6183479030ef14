//! Python bindings (`tokenmill._core`). Thin: argument conversion, GIL release around every loop
//! over text, and error mapping in `errors`. The Python package wraps these in friendlier classes.

mod callback;
mod columns;
mod components;
mod decode_stream;
mod errors;
mod files;
mod huggingface;
mod inputs;
mod sentencepiece;
mod settings;
mod text;
mod tiktoken;
mod tokenizer;
mod train;
mod train_parity;
mod train_unigram;
mod train_wordpiece;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<tokenizer::CoreTokenizer>()?;
    m.add_class::<train::WordCounter>()?;
    m.add_class::<inputs::PyEncoding>()?;
    m.add_class::<settings::PyTruncation>()?;
    m.add_class::<settings::PyPadding>()?;
    m.add_class::<decode_stream::PyDecodeStream>()?;
    m.add_class::<huggingface::PyTokenizerJson>()?;
    m.add_function(wrap_pyfunction!(train::train_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(train_wordpiece::train_wordpiece, m)?)?;
    m.add_function(wrap_pyfunction!(train_unigram::train_unigram, m)?)?;
    m.add_function(wrap_pyfunction!(train_unigram::train_unigram_huggingface, m)?)?;
    m.add_function(wrap_pyfunction!(train_parity::train_parity_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(tokenizer::split, m)?)?;
    m.add_function(wrap_pyfunction!(huggingface::wordpiece_from_vocab_txt, m)?)?;
    m.add_function(wrap_pyfunction!(huggingface::gpt2_files, m)?)?;
    m.add_function(wrap_pyfunction!(tokenizer::count_pieces, m)?)?;
    m.add_function(wrap_pyfunction!(tokenizer::count_words, m)?)?;
    m.add_function(wrap_pyfunction!(files::count_files_for, m)?)?;
    m.add_function(wrap_pyfunction!(components::normalize_with, m)?)?;
    m.add_function(wrap_pyfunction!(components::pre_tokenize_with, m)?)?;
    m.add_function(wrap_pyfunction!(components::normalize_batch_with, m)?)?;
    m.add_function(wrap_pyfunction!(components::split_batch_with, m)?)?;
    m.add_function(wrap_pyfunction!(components::count_pieces_with, m)?)?;
    m.add_function(wrap_pyfunction!(components::decode_tokens_with, m)?)?;
    m.add_class::<sentencepiece::PyPrecompiledCharsmap>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FORMAT_VERSION", crate::io::serialize::VERSION)?;
    m.add("PRESET_NAMES", crate::pipeline::pretokenize::PRESET_NAMES.to_vec())?;
    m.add("PRESET_PATTERNS", crate::pipeline::pretokenize::preset_patterns())?;
    m.add_function(wrap_pyfunction!(preset_for_pattern, m)?)?;
    Ok(())
}

/// The preset that splits exactly as `pattern` does, when it is spelled as one we know.
#[pyfunction]
fn preset_for_pattern(pattern: &str) -> Option<&'static str> {
    crate::pipeline::pretokenize::PreTokenizer::preset_for_pattern(pattern)
}
