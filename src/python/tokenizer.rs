//! `_core.CoreTokenizer`: the Rust pipeline behind `tokenmill.Tokenizer`.

use super::callback::detach_reporting;
use super::errors::to_py;
use super::text::Text;
use crate::io::serialize;
use crate::models::bpe::{Bpe, BpeOptions};
use crate::models::vocab::TokenKind;
use crate::models::PieceModel;
use crate::pipeline::pretokenize::PreTokenizer;
use crate::tokenizer::{SpecialSet, Tokenizer};
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};

#[pyclass(frozen, module = "tokenmill._core")]
pub struct CoreTokenizer {
    pub inner: Arc<Tokenizer>,
    /// One Python int per id, made on first use. Lists of ids are built from these (a reference
    /// count each) instead of allocating an int object per token and freeing it again when the
    /// list dies: that allocation and freeing was a fifth of encoding time. Ints are immutable,
    /// so sharing them is what CPython itself does for small ints.
    id_objects: OnceLock<Vec<Py<PyAny>>>,
}

impl CoreTokenizer {
    pub fn new(inner: Tokenizer) -> Self {
        CoreTokenizer { inner: Arc::new(inner), id_objects: OnceLock::new() }
    }

    /// The model's unknown token. WordPiece's `[UNK]` (and a character-level BPE's unknown
    /// token) is also a special token, matched in text as BERT does; what it is to the model is
    /// the unknown token, and that is the kind reported.
    fn unknown_id(&self) -> Option<u32> {
        self.inner.model().unknown_id()
    }

    /// A Python list of `ids`.
    fn id_list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        let objects = self.id_objects.get_or_init(|| {
            (0..self.inner.vocab().dense_len() as u32)
                .map(|id| id.into_pyobject(py).expect("int").into_any().unbind())
                .collect()
        });
        let len = ffi::Py_ssize_t::try_from(ids.len()).map_err(|_| PyOverflowError::new_err("too many ids"))?;
        // SAFETY: `PyList_New` gives a new list (or NULL with an exception set) whose `len` slots
        // `PyList_SetItem` fills, each taking over the reference made for it just before.
        unsafe {
            let list = ffi::PyList_New(len);
            if list.is_null() {
                return Err(PyErr::fetch(py));
            }
            let list = Bound::from_owned_ptr(py, list).cast_into_unchecked::<PyList>();
            // Each id's int object is a load at a scattered address (a slot of `objects`, then the
            // object itself): without prefetching, the list waited on one cache miss after
            // another (a quarter of encoding's time on English). Slots are fetched two strides
            // ahead, objects one stride ahead, so the misses overlap.
            for &id in ids.iter().take(2 * PREFETCH_AHEAD) {
                prefetch(objects.as_ptr().wrapping_add(id as usize));
            }
            for (i, &id) in ids.iter().enumerate() {
                if let Some(&far) = ids.get(i + 2 * PREFETCH_AHEAD) {
                    prefetch(objects.as_ptr().wrapping_add(far as usize));
                }
                if let Some(near) = ids.get(i + PREFETCH_AHEAD).and_then(|&n| objects.get(n as usize)) {
                    prefetch(near.as_ptr());
                }
                let item = match objects.get(id as usize) {
                    Some(object) => new_reference(object.as_ptr()),
                    None => id.into_pyobject(py)?.into_ptr(),
                };
                if ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, item) != 0 {
                    return Err(PyErr::fetch(py));
                }
            }
            Ok(list)
        }
    }

    /// The BPE model, if this tokenizer's model is BPE.
    pub(crate) fn bpe(&self) -> Option<&Bpe> {
        self.inner.model().as_bpe()
    }

    fn bpe_option(&self, f: impl Fn(&BpeOptions) -> bool) -> bool {
        self.bpe().is_some_and(|b| f(b.options()))
    }

    /// Encodes without the GIL. A long text is encoded with a check for Ctrl-C every megabyte
    /// or so (taking the GIL briefly), so a 100 MB call still stops when asked.
    fn encode_ids(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
    ) -> PyResult<Vec<u32>> {
        if text.len() < LONG_TEXT {
            return py.detach(|| self.inner.encode(text, allowed, disallowed)).map_err(to_py);
        }
        detach_reporting(py, None, |notify| self.inner.encode_checked(text, allowed, disallowed, &mut || notify(&[])))
    }
}

/// `object` with its reference count raised by one, as the stable ABI of Python 3.10 (which this
/// module is built against) defines `Py_INCREF`: an increment of `ob_refcnt` in place. pyo3 calls
/// the interpreter's `_Py_IncRef` instead, a function call per id that was 7% of encoding
/// English. Later interpreters accept the in-place increment from such modules, immortal objects
/// included (PEP 683); free-threaded ones do not load abi3 modules at all. Holds the GIL.
#[inline(always)]
fn new_reference(object: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: `object` is a live object owned by `id_objects`, and the caller holds the GIL.
    unsafe { (*object).ob_refcnt += 1 };
    object
}

/// How many ids ahead `id_list` prefetches int objects (their slots twice as far ahead).
const PREFETCH_AHEAD: usize = 8;

/// Asks the CPU to start loading `p`'s cache line; a hint, never a fault, whatever `p` is.
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch does not access memory architecturally; any address is allowed.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// One thread encodes a batch in groups of about this many bytes of text, then makes their lists.
const ONE_THREAD_GROUP: usize = 64 << 10;

/// Texts at least this long are encoded with checks for Ctrl-C along the way.
const LONG_TEXT: usize = 1 << 20;

/// `"all"` or a collection of special-token strings.
pub(super) fn special_set(value: &Bound<'_, PyAny>) -> PyResult<SpecialSet> {
    if let Ok(s) = value.cast::<PyString>() {
        return match s.extract::<String>()?.as_str() {
            "all" => Ok(SpecialSet::All),
            other => Err(PyTypeError::new_err(format!(
                "expected \"all\" or a collection of special tokens, got the string {other:?}"
            ))),
        };
    }
    let mut set = rustc_hash::FxHashSet::default();
    for item in value.try_iter()? {
        set.insert(item?.extract::<String>()?);
    }
    Ok(SpecialSet::Only(set))
}

#[pymethods]
impl CoreTokenizer {
    fn encode_ordinary<'py>(&self, py: Python<'py>, text: Text) -> PyResult<Bound<'py, PyList>> {
        let none = SpecialSet::none();
        let ids = self.encode_ids(py, &text, &none, &none)?;
        self.id_list(py, &ids)
    }

    /// Byte-level BPE over raw bytes as one piece: no normalization, no pre-tokenization.
    fn encode_piece_bytes<'py>(&self, py: Python<'py>, piece: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let Some(bpe) = self.bpe().filter(|b| b.options().byte_level) else {
            return Err(to_py(crate::Error::config("encoding raw bytes needs a byte-level BPE vocabulary")));
        };
        let mut ids = Vec::with_capacity(piece.len() / 2);
        py.detach(|| bpe.encode_bytes(piece, &mut ids)).map_err(to_py)?;
        self.id_list(py, &ids)
    }

    /// What each id contributes to the decoded bytes (the parts concatenate to `decode_bytes`);
    /// `trim_end=False` keeps the space a final end-of-word suffix stands for.
    /// With `follows=True` the ids continue earlier ones (a stream).
    #[pyo3(signature = (ids, trim_end=true, follows=false))]
    fn decode_parts<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<u32>,
        trim_end: bool,
        follows: bool,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let parts = py.detach(|| self.inner.decode_parts(&ids, trim_end, follows)).map_err(to_py)?;
        Ok(parts.iter().map(|p| PyBytes::new(py, p)).collect())
    }

    /// The ids of the ordinary (non-special) tokens, in increasing order.
    fn ordinary_ids(&self) -> Vec<u32> {
        self.inner.vocab().ordinary().map(|(id, _)| id).collect()
    }

    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: Text,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let allowed = special_set(allowed_special)?;
        let disallowed = special_set(disallowed_special)?;
        let ids = self.encode_ids(py, &text, &allowed, &disallowed)?;
        self.id_list(py, &ids)
    }

    /// Encodes texts on `num_threads` threads: this one and pool threads. Building the Python
    /// lists is a third of the work and only this thread (holding the GIL) can do it, so it
    /// turns finished results into lists as they arrive and encodes texts itself in between;
    /// taking texts from the same counter as the workers balances the two kinds of work.
    /// (Two workers plus a list-building thread were three busy threads on two cores: 1.6×.)
    #[pyo3(signature = (texts, allowed_special, disallowed_special, num_threads=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Text>,
        allowed_special: &Bound<'_, PyAny>,
        disallowed_special: &Bound<'_, PyAny>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let allowed = special_set(allowed_special)?;
        let disallowed = special_set(disallowed_special)?;
        let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
        let n = texts.len();
        let threads = crate::tokenizer::batch_threads(&texts, num_threads);
        if threads == 1 {
            // In groups of about 64 KiB of text: each group's ids are still in the cache when
            // they become lists (all ids first, then all lists, was 6% slower on 8 MB).
            let mut lists = Vec::with_capacity(n);
            let mut start = 0;
            while start < n {
                let mut end = start;
                let mut bytes = 0;
                while end < n && (end == start || bytes < ONE_THREAD_GROUP) {
                    bytes += texts[end].len();
                    end += 1;
                }
                let group = &texts[start..end];
                let batch =
                    py.detach(|| self.inner.encode_batch(group, &allowed, &disallowed, Some(1))).map_err(to_py)?;
                for ids in &batch {
                    lists.push(self.id_list(py, ids)?);
                }
                start = end;
            }
            return PyList::new(py, lists);
        }
        let out = PyList::new(py, (0..n).map(|_| py.None()))?;
        let next = AtomicUsize::new(0);
        let (tx, rx) = mpsc::sync_channel::<(usize, crate::Result<Vec<u32>>)>(1024);
        let mut first_error = None;
        let mut take = |(i, result): (usize, crate::Result<Vec<u32>>)| -> PyResult<()> {
            match result {
                Ok(ids) => out.set_item(i, self.id_list(py, &ids)?)?,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
            Ok(())
        };
        // The workers are the process's pool threads, whose piece caches stay warm from one
        // call to the next (fresh threads would start every batch with empty caches).
        crate::util::threads::pool().in_place_scope(|scope| -> PyResult<()> {
            let mut rx = rx; // dropped on an early return, so that blocked workers stop
            for _ in 1..threads {
                let (tx, next, texts, inner) = (tx.clone(), &next, &texts, &self.inner);
                let (allowed, disallowed) = (&allowed, &disallowed);
                scope.spawn(move |_| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= texts.len() || tx.send((i, inner.encode(texts[i], allowed, disallowed))).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            loop {
                if let Ok(message) = rx.try_recv() {
                    take(message)?;
                    continue;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let ids = py.detach(|| self.inner.encode(texts[i], &allowed, &disallowed));
                take((i, ids))?;
            }
            // No text left to take: the workers' last results, waited for without the GIL.
            loop {
                let (back, message) = py.detach(move || {
                    let message = rx.recv();
                    (rx, message)
                });
                rx = back;
                match message {
                    Ok(message) => take(message)?,
                    Err(_) => return Ok(()),
                }
            }
        })?;
        match first_error {
            Some(e) => Err(to_py(e)),
            None => Ok(out),
        }
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<u32>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| self.inner.decode_bytes(&ids)).map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The bytes of one token (special tokens included).
    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.inner.vocab().token_bytes(id).map_err(to_py)?;
        Ok(PyBytes::new(py, bytes))
    }

    /// The id of a token given as bytes, or None.
    fn token_id(&self, token: &[u8]) -> Option<u32> {
        self.inner.vocab().any_id(token)
    }

    /// The id of a special token, or None.
    fn special_id(&self, text: &str) -> Option<u32> {
        self.inner.vocab().special_id(text)
    }

    fn is_special(&self, id: u32) -> bool {
        self.inner.vocab().is_special(id)
    }

    /// The special tokens that take in the whitespace around them: (text, lstrip, rstrip).
    fn special_strips(&self) -> Vec<(String, bool, bool)> {
        self.inner.special_strips()
    }

    /// The special tokens matched only as words of their own (Hugging Face's `single_word`).
    fn single_word_specials(&self) -> Vec<String> {
        self.inner.single_word_specials()
    }

    /// The special tokens matched in the normalized text (Hugging Face's `normalized: true`).
    fn normalized_specials(&self) -> Vec<String> {
        self.inner.normalized_specials()
    }

    /// A token as its vocabulary spells it (`Ġworld` in a byte-level vocabulary).
    fn token_string(&self, id: u32) -> PyResult<String> {
        self.inner.token_string(id).map_err(to_py)
    }

    /// Whether decoding with `skip_special_tokens` leaves `id` out (a special token, unless the
    /// file says decoding keeps it).
    fn skipped_on_decode(&self, id: u32) -> bool {
        self.inner.skipped_on_decode(id)
    }

    /// Merges in rank order as token bytes (implied by the ranks for tiktoken vocabularies).
    fn merges<'py>(&self, py: Python<'py>) -> PyResult<Vec<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>> {
        let vocab = self.inner.vocab();
        self.inner
            .model()
            .merge_list()
            .into_iter()
            .map(|(l, r)| {
                Ok((
                    PyBytes::new(py, vocab.token_bytes(l).map_err(to_py)?),
                    PyBytes::new(py, vocab.token_bytes(r).map_err(to_py)?),
                ))
            })
            .collect()
    }

    /// Merges in rank order as pairs of ids.
    /// This BPE tokenizer cut to `vocab_size` tokens, as training with that size would give.
    fn truncated(&self, py: Python<'_>, vocab_size: usize) -> PyResult<CoreTokenizer> {
        py.detach(|| self.inner.truncated(vocab_size)).map(CoreTokenizer::new).map_err(to_py)
    }

    fn merge_ids(&self) -> Vec<(u32, u32)> {
        self.inner.model().merge_list()
    }

    /// Ids as a NumPy uint32 array that owns the encoder's buffer (no list, no copy). The
    /// special-token sets as `encode_ids` takes them; `None` for both: ordinary text.
    #[pyo3(signature = (text, allowed_special=None, disallowed_special=None))]
    fn encode_to_array<'py>(
        &self,
        py: Python<'py>,
        text: Text,
        allowed_special: Option<&Bound<'_, PyAny>>,
        disallowed_special: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, numpy::PyArray1<u32>>> {
        let allowed = allowed_special.map(special_set).transpose()?.unwrap_or_else(SpecialSet::none);
        let disallowed = disallowed_special.map(special_set).transpose()?.unwrap_or_else(SpecialSet::none);
        let ids = self.encode_ids(py, &text, &allowed, &disallowed)?;
        numpy_array(py, ids)
    }

    /// The bytes of every ordinary token, sorted (tiktoken's `token_byte_values`).
    fn token_byte_values<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        let vocab = self.inner.vocab();
        let mut values: Vec<&[u8]> = vocab.ordinary().map(|(_, b)| b).collect();
        // tiktoken lists every rank, the empty token of Whisper's multilingual file (held as
        // an unused id: no text spells it) among them.
        let empty = vocab.kinded().into_iter().any(|(_, text, kind)| text.is_empty() && kind == TokenKind::Unused);
        if empty {
            values.push(b"");
        }
        values.sort_unstable();
        values.into_iter().map(|b| PyBytes::new(py, b)).collect()
    }

    /// `"bpe"` or `"wordpiece"`.
    #[getter]
    fn model_type(&self) -> &'static str {
        self.inner.model().model_type()
    }

    /// The model's options (not its tokens) as JSON: what `model_config()` shows in Python.
    fn model_config_json(&self) -> String {
        let config = self.inner.model().config();
        config.to_string()
    }

    #[getter]
    fn is_rank_based(&self) -> bool {
        self.bpe().is_some_and(Bpe::is_rank_based)
    }

    #[getter]
    fn whole_piece_first(&self) -> bool {
        self.bpe_option(|o| o.whole_piece_first)
    }

    #[getter]
    fn keeps_gaps(&self) -> bool {
        self.inner.pretokenizer().keeps_gaps()
    }

    fn special_tokens(&self) -> Vec<(String, u32)> {
        self.inner.vocab().specials().to_vec()
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.vocab().n_vocab()
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab().len()
    }

    #[getter]
    fn pattern(&self) -> String {
        self.inner.pretokenizer().spec().to_string()
    }

    #[getter]
    fn normalizer(&self) -> String {
        self.inner.normalizer().spec()
    }

    #[getter]
    fn byte_level(&self) -> bool {
        self.bpe_option(|o| o.byte_level)
    }

    #[getter]
    fn end_of_word_suffix(&self) -> Option<String> {
        self.bpe().and_then(|b| b.options().end_of_word_suffix.clone())
    }

    #[getter]
    fn unk_token(&self) -> Option<String> {
        match self.bpe() {
            // A character-level BPE names its unknown token even when no id holds it.
            Some(b) => b.options().unk_token.clone(),
            None => self.inner.model().unk_token(),
        }
    }

    /// What the token at `id` is: `normal`, `special`, `control`, `unknown`, `byte` or `unused`.
    fn token_kind(&self, id: u32) -> Option<&'static str> {
        let kind = self.inner.vocab().kind(id)?;
        Some(if self.unknown_id() == Some(id) { "unknown" } else { kind.name() })
    }

    /// Every id's bytes and kind (as `token_bytes` and `token_kind` give them; None for ids no
    /// token has), in one call: the analyses need them for the whole vocabulary.
    #[allow(clippy::type_complexity)]
    fn token_table<'py>(&self, py: Python<'py>) -> (Vec<Option<Bound<'py, PyBytes>>>, Vec<Option<&'static str>>) {
        let vocab = self.inner.vocab();
        let unknown = self.unknown_id();
        (0..vocab.n_vocab() as u32)
            .map(|id| match vocab.kind(id) {
                Some(kind) => (
                    vocab.token_bytes(id).ok().map(|b| PyBytes::new(py, b)),
                    Some(if unknown == Some(id) { "unknown" } else { kind.name() }),
                ),
                None => (None, None),
            })
            .unzip()
    }

    /// A piece's score: a Unigram piece's log-probability, a SentencePiece BPE piece's merge
    /// priority.
    fn score(&self, id: u32) -> Option<f32> {
        self.inner.vocab().kind(id)?;
        self.inner.model().score(id)
    }

    /// The `n` best cuts of `text` with their scores (Unigram).
    fn nbest(&self, py: Python<'_>, text: Text, n: usize) -> PyResult<Vec<(Vec<u32>, f32)>> {
        let text: &str = &text;
        py.detach(|| self.inner.nbest(text, n)).map_err(to_py)
    }

    /// `text` cut by sampling with `alpha` and `seed` (Unigram subword regularization, BPE-dropout).
    #[pyo3(signature = (text, alpha, seed, allowed_special=None, disallowed_special=None))]
    fn encode_sampled(
        &self,
        py: Python<'_>,
        text: Text,
        alpha: f32,
        seed: u64,
        allowed_special: Option<&Bound<'_, PyAny>>,
        disallowed_special: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<u32>> {
        let text: &str = &text;
        let allowed = allowed_special.map(special_set).transpose()?.unwrap_or_else(SpecialSet::none);
        let disallowed = disallowed_special.map(special_set).transpose()?.unwrap_or_else(SpecialSet::none);
        py.detach(|| self.inner.encode_sampled(text, &allowed, &disallowed, alpha, seed)).map_err(to_py)
    }

    /// `text` after normalization (what the pre-tokenizer sees).
    fn normalize(&self, text: Text) -> String {
        self.inner.normalizer().apply(&text).into_owned()
    }

    fn pre_tokenize(&self, py: Python<'_>, text: Text) -> PyResult<Vec<String>> {
        let text: &str = &text;
        py.detach(|| self.inner.pre_tokenize(text)).map_err(to_py)
    }

    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| serialize::save(&self.inner, &path)).map_err(to_py)
    }

    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        py.detach(|| serialize::load(&path)).map(CoreTokenizer::new).map_err(to_py)
    }

    fn to_json(&self) -> String {
        serialize::to_json(&self.inner)
    }

    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Self> {
        serialize::from_json(text, std::path::Path::new("<string>")).map(CoreTokenizer::new).map_err(to_py)
    }

    fn vocab_listing(&self) -> String {
        serialize::vocab_listing(&self.inner)
    }

    fn save_vocab_listing(&self, path: PathBuf) -> PyResult<()> {
        serialize::write_atomically(&path, serialize::vocab_listing(&self.inner).as_bytes()).map_err(to_py)
    }
}

/// How many pieces a pre-tokenizer preset or regex cuts `texts` into (empty pieces not
/// counted), on the pool's threads: counting words for tokens/word without a table of them.
#[pyfunction]
pub fn count_pieces(py: Python<'_>, pattern: &str, texts: Vec<Text>) -> PyResult<u64> {
    use rayon::prelude::*;
    let pre = PreTokenizer::from_spec(pattern).map_err(to_py)?;
    let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
    py.detach(|| {
        crate::util::threads::install(|| {
            texts
                .par_iter()
                .map(|text| {
                    let mut n = 0u64;
                    pre.for_each_piece(text, |piece| {
                        n += !piece.is_empty() as u64;
                        Ok(())
                    })?;
                    Ok(n)
                })
                .sum::<crate::Result<u64>>()
        })
    })
    .map_err(to_py)
}

/// The words in `texts` as tokens-per-word counts them (`crate::words`), on the pool's threads.
#[pyfunction]
pub fn count_words(py: Python<'_>, texts: Vec<Text>) -> u64 {
    use rayon::prelude::*;
    let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
    py.detach(|| crate::util::threads::install(|| texts.par_iter().map(|text| crate::words::count_words(text)).sum()))
}

/// Splits `text` with a pre-tokenizer preset or regex: `split("cl100k", "Hi there")`.
#[pyfunction]
pub fn split(py: Python<'_>, pattern: &str, text: Text) -> PyResult<Vec<String>> {
    let pre = PreTokenizer::from_spec(pattern).map_err(to_py)?;
    let text: &str = &text;
    py.detach(|| pre.split(text).map(|v| v.into_iter().map(str::to_string).collect())).map_err(to_py)
}

/// `ids` as a NumPy array owning the vector; a clear error when NumPy is not installed.
fn numpy_array(py: Python<'_>, ids: Vec<u32>) -> PyResult<Bound<'_, numpy::PyArray1<u32>>> {
    // numpy's C API panics when NumPy is missing: look for it first (once; it stays imported).
    static FOUND: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !FOUND.load(std::sync::atomic::Ordering::Relaxed) {
        if py.import("numpy").is_err() {
            return Err(to_py(crate::Error::config("arrays need numpy: pip install numpy")));
        }
        FOUND.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(numpy::PyArray1::from_vec(py, ids))
}
