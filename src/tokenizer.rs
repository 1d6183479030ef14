//! The pipeline: special tokens → normalize → pre-tokenize → model → ids, and ids → bytes.

use crate::error::{Error, Result};
use crate::io::count::WordSplitter;
use crate::models::piece_cache;
use crate::models::unigram::Unigram;
use crate::models::vocab::Vocab;
pub use crate::models::{Model, PieceModel};
use crate::pipeline::decoder::Decoder;
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::postprocess::ModelInputs;
use crate::pipeline::pretokenize::PreTokenizer;
use crate::pipeline::special::{Segment, SpecialTokens};
use crate::util::rng::with_thread_uniform;
use rustc_hash::FxHashSet;

/// Which special tokens a call means: all of them or a named set.
#[derive(Debug, Clone)]
pub enum SpecialSet {
    All,
    Only(FxHashSet<String>),
}

impl SpecialSet {
    pub fn none() -> Self {
        SpecialSet::Only(FxHashSet::default())
    }

    pub fn contains(&self, token: &str) -> bool {
        match self {
            SpecialSet::All => true,
            SpecialSet::Only(set) => set.contains(token),
        }
    }
}

/// Whether special token `token` found in text is a token (else ordinary text), under tiktoken's
/// rules: one `disallowed` names, or any not `allowed` when all are disallowed, is an error.
fn recognise(token: &str, allowed: &SpecialSet, disallowed: &SpecialSet) -> Result<bool> {
    let named = matches!(disallowed, SpecialSet::Only(set) if set.contains(token));
    if named || (!allowed.contains(token) && matches!(disallowed, SpecialSet::All)) {
        Err(Error::DisallowedSpecial { token: token.to_string() })
    } else {
        Ok(allowed.contains(token))
    }
}

/// Cuts `text` at the tokens of `specials` that `recognise` makes tokens under `sets`
/// (allowed, disallowed): their ids go to `out`, the text between them to `encode`.
fn each_segment(
    specials: &SpecialTokens,
    text: &str,
    (allowed, disallowed): (&SpecialSet, &SpecialSet),
    out: &mut Vec<u32>,
    encode: &mut (impl FnMut(&str, &mut Vec<u32>) -> Result<()> + ?Sized),
) -> Result<()> {
    specials.for_each_segment(
        text,
        |token| recognise(token, allowed, disallowed),
        |segment| match segment {
            Segment::Text(t) => encode(t, out),
            Segment::Special { id, .. } => {
                out.push(id);
                Ok(())
            }
        },
    )
}

/// The most n-best work one call may ask for, in cuts × bytes of text.
pub(crate) const NBEST_BUDGET: usize = 1 << 24;

pub use crate::util::rng::SplitMix64;

/// Below this much text per thread, starting a thread costs more than it saves (a thread start
/// is tens of microseconds; encoding 64 KiB takes about a millisecond).
const MIN_BATCH_BYTES_PER_THREAD: usize = 64 << 10;

/// How many threads `encode_batch` uses: the number asked for (the pool's size if `None`), but
/// no more than there are texts or than the text gives each thread enough work. A batch too small
/// to share is decided before anything else is asked: asking the OS for the number of cores
/// (`available_parallelism` reads cgroup files) took 20 µs, twice the time of encoding a
/// sentence.
pub fn batch_threads(texts: &[&str], num_threads: Option<usize>) -> usize {
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    let most = texts.len().min(bytes / MIN_BATCH_BYTES_PER_THREAD);
    if most <= 1 {
        return 1;
    }
    num_threads.unwrap_or_else(crate::util::threads::count).min(most).max(1)
}

/// Text is encoded in stretches of about this many bytes between checks for Ctrl-C.
const INTERRUPT_CHECK_BYTES: usize = 1 << 20;

#[derive(Debug, Clone)]
pub struct Tokenizer {
    /// Shared like the model: copies with other model-input settings (a `tok(...)` call's) cost
    /// two reference counts, not a copy of the normalizer, pre-tokenizer and special-token
    /// automaton.
    pub(crate) splitter: std::sync::Arc<WordSplitter>,
    /// Shared, so that a copy with other model-input settings costs no copy of the vocabulary.
    pub(crate) model: std::sync::Arc<Model>,
    /// How ids become text: chosen by the model (and, for an end-of-word suffix, whether the
    /// pieces kept their whitespace), never by the pre-tokenizer's name alone.
    decoder: Decoder,
    /// Names this tokenizer's tables in the per-thread piece cache (a clone shares them: same
    /// model, same ids).
    pub(crate) cache_owner: u64,
    /// What turns ids into model inputs (`postprocess`): template, truncation, padding.
    pub inputs: ModelInputs,
    /// The SentencePiece `.model` file this tokenizer was read from, so that saving it as one
    /// gives that very file back. Nothing changes a tokenizer's model after `new`; a clone with
    /// other `inputs` (which a `.model` file has no place for) keeps it.
    sentencepiece_source: Option<std::sync::Arc<[u8]>>,
    /// The tokens decoding leaves out when told to skip special tokens, where a file lists them
    /// (a `tokenizer.json`'s added tokens marked `special`: not Qwen 3's `<think>`, which Hugging
    /// Face matches in text but keeps; T5's unknown token, which it skips); sorted. None: the
    /// special tokens.
    skipped_on_decode: Option<std::sync::Arc<[u32]>>,
    /// Special (added) tokens decode through the byte-level table, as tokenizers' `ByteLevel`
    /// decoder decodes every token string: a token all of whose characters are byte-level
    /// characters becomes those bytes (`Ġx` a space and `x`, `ção` bytes that are not UTF-8),
    /// any other its own text.
    added_through_byte_level: bool,
    /// Special tokens that model inputs read as ordinary text where they occur (tokenizers'
    /// `encode_special_tokens`, which leaves only its non-special added tokens matched).
    specials_as_text: Option<std::sync::Arc<rustc_hash::FxHashSet<String>>>,
    /// A new cut drawn on every encode, as tokenizers' sampling models do (BPE `dropout`,
    /// Unigram `alpha`); None: the best cut, through the piece cache.
    draw: Option<crate::models::Draw>,
}

impl Tokenizer {
    pub fn new(normalizer: Normalizer, pretokenizer: PreTokenizer, model: impl Into<Model>) -> Self {
        let model = model.into();
        let specials = SpecialTokens::new(model.vocab().specials());
        let decoder = model.decoder(&normalizer, &pretokenizer);
        Tokenizer {
            splitter: std::sync::Arc::new(WordSplitter { normalizer, pretokenizer, specials }),
            model: std::sync::Arc::new(model),
            decoder,
            cache_owner: piece_cache::next_owner_id(),
            inputs: ModelInputs::default(),
            sentencepiece_source: None,
            skipped_on_decode: None,
            added_through_byte_level: false,
            specials_as_text: None,
            draw: None,
        }
    }

    /// This tokenizer drawing a new cut of each piece on every encode as tokenizers' models
    /// do when they sample (`Draw`), or with `None` the best cut again.
    pub fn with_draw(mut self, draw: Option<crate::models::Draw>) -> Result<Self> {
        if let Some(d) = draw {
            if !(d.p.is_finite() && d.p >= 0.0) {
                return Err(Error::config(format!("a sampling parameter must be a finite number >= 0, got {}", d.p)));
            }
            match &*self.model {
                Model::Bpe(_) if d.p > 1.0 => {
                    return Err(Error::config(format!("dropout is a probability between 0 and 1, got {}", d.p)))
                }
                Model::Bpe(_) | Model::Unigram(_) => {}
                _ => return Err(self.model.no_sampling()),
            }
        }
        self.draw = draw;
        Ok(self)
    }

    /// The sampling `with_draw` set.
    pub fn draw(&self) -> Option<crate::models::Draw> {
        self.draw
    }

    /// This tokenizer with the special tokens `strips` names (text, lstrip, rstrip) taking in the
    /// whitespace before or after them, as Hugging Face's added tokens may.
    pub fn with_special_strips(self, strips: &[(String, bool, bool)]) -> Result<Self> {
        if strips.is_empty() {
            return Ok(self);
        }
        self.with_specials_changed(|specials| specials.with_strips(strips))
    }

    /// This tokenizer with its special tokens as `change` makes them (the splitter is shared
    /// between clones, so it is rebuilt rather than changed in place).
    fn with_specials_changed(mut self, change: impl FnOnce(SpecialTokens) -> Result<SpecialTokens>) -> Result<Self> {
        let splitter = &self.splitter;
        let specials = change(splitter.specials.clone())?;
        self.splitter = std::sync::Arc::new(WordSplitter {
            normalizer: splitter.normalizer.clone(),
            pretokenizer: splitter.pretokenizer.clone(),
            specials,
        });
        Ok(self)
    }

    /// The special tokens that take in whitespace: (text, lstrip, rstrip).
    pub fn special_strips(&self) -> Vec<(String, bool, bool)> {
        self.splitter.specials.strips()
    }

    /// This tokenizer with the special tokens `words` names matched only as words of their own
    /// (Hugging Face's `single_word`).
    pub fn with_single_word_specials(self, words: &[String]) -> Result<Self> {
        if words.is_empty() {
            return Ok(self);
        }
        self.with_specials_changed(|specials| specials.with_single_words(words))
    }

    /// The special tokens matched only as words of their own.
    pub fn single_word_specials(&self) -> Vec<String> {
        self.splitter.specials.single_words()
    }

    /// This tokenizer with the special tokens `names` names matched in the normalized text, as
    /// the normalizer spells them (Hugging Face's `normalized: true` added tokens). Apply after
    /// `with_special_strips` and `with_single_word_specials`, which find tokens in raw text.
    pub fn with_normalized_specials(self, names: &[String]) -> Result<Self> {
        if names.is_empty() {
            return Ok(self);
        }
        // Hugging Face matches these before ByteLevel's prefix space or Metaspace's `▁` is put in
        // front of each stretch between them: their own spelling has neither.
        let normalizer = self.splitter.normalizer.for_added_tokens();
        self.with_specials_changed(|specials| specials.with_normalized(names, |t| normalizer.apply(t).into_owned()))
    }

    /// The special tokens matched in the normalized text.
    pub fn normalized_specials(&self) -> Vec<String> {
        self.splitter.specials.normalized_names()
    }

    /// This tokenizer, leaving out exactly `ids` when decoding skips special tokens.
    pub fn with_skipped_on_decode(mut self, mut ids: Vec<u32>) -> Self {
        ids.sort_unstable();
        ids.dedup();
        self.skipped_on_decode = Some(ids.into());
        self
    }

    /// The tokens decoding leaves out when it skips special tokens, where a file listed them.
    pub fn skip_list(&self) -> Option<&[u32]> {
        self.skipped_on_decode.as_deref()
    }

    /// A token as its vocabulary spells it — what Hugging Face's `id_to_token` and
    /// `Encoding.tokens` give: a special token's text, a byte-level token's printable spelling
    /// (`Ġworld`), any other token's text (`▁world`, `##ing`, `<0x41>`), bytes that are not
    /// UTF-8 as U+FFFD.
    pub fn token_string(&self, id: u32) -> Result<String> {
        let bytes = self.vocab().token_bytes(id)?;
        let byte_level = self.model().as_bpe().is_some_and(|b| b.options().byte_level);
        Ok(if byte_level && !self.vocab().is_special(id) {
            crate::io::huggingface::byte_level_spelling(bytes)
        } else {
            String::from_utf8_lossy(bytes).into_owned()
        })
    }

    /// This tokenizer with the special tokens `names` read as ordinary text in model inputs
    /// (none: every one matched). A match of one still takes its place, so a token overlapping
    /// it is not matched there, as in tokenizers.
    pub fn with_specials_as_text(mut self, names: Vec<String>) -> Self {
        self.specials_as_text = (!names.is_empty()).then(|| std::sync::Arc::new(names.into_iter().collect()));
        self
    }

    /// Whether model inputs make special token `name` a token where it occurs in text.
    pub(crate) fn matches_special(&self, name: &str) -> bool {
        self.specials_as_text.as_ref().is_none_or(|names| !names.contains(name))
    }

    /// This tokenizer decoding its special tokens through the byte-level table (see the field).
    pub fn with_added_through_byte_level(mut self) -> Self {
        self.added_through_byte_level = true;
        self
    }

    pub fn added_through_byte_level(&self) -> bool {
        self.added_through_byte_level
    }

    /// How a special token matched in normalized text is spelled there (Hugging Face's
    /// `normalized: true` added tokens, which tokenizers decodes as that spelling).
    pub(crate) fn normalized_spelling(&self, id: u32) -> Option<&str> {
        let after = self.splitter.specials.after_normalizing()?;
        after.tokens().iter().find(|(_, i)| *i == id).map(|(t, _)| t.as_str())
    }

    /// The string a decoder's steps see for token `id`: a byte-level token's printable
    /// spelling, a normalized added token's normalized spelling, else its text.
    fn decoder_string(&self, id: u32) -> Result<String> {
        if let Some(spelled) = self.vocab().is_special(id).then(|| self.normalized_spelling(id)).flatten() {
            return Ok(spelled.to_string());
        }
        self.token_string(id)
    }

    /// The bytes token `id` decodes to under `Decoder::Bytes`.
    fn decoded_token(&self, id: u32) -> Result<std::borrow::Cow<'_, [u8]>> {
        let mut bytes = self.vocab().token_bytes(id)?;
        if self.vocab().is_special(id) {
            bytes = self.normalized_spelling(id).map_or(bytes, str::as_bytes);
        }
        if self.added_through_byte_level && self.vocab().is_special(id) {
            if let Some(decoded) = std::str::from_utf8(bytes).ok().and_then(crate::io::huggingface::byte_level_bytes) {
                return Ok(decoded.into());
            }
        }
        Ok(bytes.into())
    }

    /// Whether decoding that skips special tokens leaves `id` out.
    pub fn skipped_on_decode(&self, id: u32) -> bool {
        match &self.skipped_on_decode {
            Some(ids) => ids.binary_search(&id).is_ok(),
            None => self.vocab().is_special(id),
        }
    }

    /// This tokenizer, remembering that it was read from the SentencePiece model `file`.
    pub fn with_sentencepiece_source(mut self, file: std::sync::Arc<[u8]>) -> Self {
        self.sentencepiece_source = Some(file);
        self
    }

    /// This tokenizer decoding with a `tokenizer.json`'s own decoder steps (checked first).
    pub fn with_hf_decoder(mut self, chain: crate::pipeline::hf_decoder::HfDecoder) -> Result<Self> {
        chain.check()?;
        self.decoder = Decoder::Chain(Box::new(chain));
        Ok(self)
    }

    /// The `tokenizer.json` decoder steps this tokenizer decodes with, if it has its own.
    pub fn hf_decoder(&self) -> Option<&crate::pipeline::hf_decoder::HfDecoder> {
        match &self.decoder {
            Decoder::Chain(chain) => Some(chain),
            _ => None,
        }
    }

    /// The SentencePiece model file this tokenizer was read from, if it was.
    pub fn sentencepiece_source(&self) -> Option<&std::sync::Arc<[u8]>> {
        self.sentencepiece_source.as_ref()
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    pub fn vocab(&self) -> &Vocab {
        self.model.vocab()
    }

    pub fn normalizer(&self) -> &Normalizer {
        &self.splitter.normalizer
    }

    pub fn pretokenizer(&self) -> &PreTokenizer {
        &self.splitter.pretokenizer
    }

    /// Encodes `text` with no special-token handling: special-token text is ordinary text.
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 3);
        self.encode_text(text, true, None, &mut out, &mut || Ok(()))?;
        Ok(out)
    }

    /// Encodes `text` with tiktoken's rules: special tokens in `allowed` become their ids; any in
    /// `disallowed` that appears in the text is an error; the rest are ordinary text.
    ///
    /// A token named in both sets is disallowed (tiktoken checks the disallowed set first);
    /// `disallowed` = all means every special token not in `allowed`.
    pub fn encode(&self, text: &str, allowed: &SpecialSet, disallowed: &SpecialSet) -> Result<Vec<u32>> {
        self.encode_checked(text, allowed, disallowed, &mut || Ok(()))
    }

    /// `encode`, calling `check` every megabyte or so of text; an error from it (Ctrl-C seen by
    /// Python) stops encoding.
    pub fn encode_checked(
        &self,
        text: &str,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
        check: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 3);
        // Long texts only (asking the pool its size takes a lock), and not on one of the pool's
        // threads: a batch already keeps them busy.
        let long = text.len() >= crate::long_text::PARALLEL_TEXT && rayon::current_thread_index().is_none();
        let threads = if long && self.encodes_in_parts() { crate::util::threads::count() } else { 1 };
        let in_parts = threads > 1;
        self.for_each_segment(text, allowed, disallowed, &mut out, &mut |t, out| {
            if in_parts && t.len() >= crate::long_text::PARALLEL_TEXT {
                return self.encode_in_parts(t, threads, out, check);
            }
            self.encode_text(t, t.as_ptr() == text.as_ptr(), Some((allowed, disallowed)), out, check)
        })?;
        Ok(out)
    }

    /// Cuts `text` at the special tokens that `allowed`/`disallowed` make tokens: their ids go
    /// to `out`, the text between them to `encode_text`.
    fn for_each_segment(
        &self,
        text: &str,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
        out: &mut Vec<u32>,
        encode_text: &mut dyn FnMut(&str, &mut Vec<u32>) -> Result<()>,
    ) -> Result<()> {
        let none = |set: &SpecialSet| matches!(set, SpecialSet::Only(s) if s.is_empty());
        if self.splitter.specials.is_empty() || (none(allowed) && none(disallowed)) {
            return encode_text(text, out);
        }
        each_segment(&self.splitter.specials, text, (allowed, disallowed), out, encode_text)
    }

    /// Encodes a stretch of text between special tokens; `at_start`: it starts the input.
    /// `specials`: the (allowed, disallowed) sets special tokens are judged by, for those
    /// matched in the normalized text; `None` leaves them ordinary text.
    pub(crate) fn encode_text(
        &self,
        text: &str,
        at_start: bool,
        specials: Option<(&SpecialSet, &SpecialSet)>,
        out: &mut Vec<u32>,
        check: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        // Tokens matched in the normalized text are found before a prefix space (ByteLevel) or
        // Metaspace's `▁` is put in front of each stretch between them, as Hugging Face's
        // pre-tokenizers do.
        let normalizer = &self.splitter.normalizer;
        let per_stretch = specials.is_some() && self.splitter.specials.after_normalizing().is_some();
        let spaced_stretches = per_stretch && normalizer.adds_prefix_space();
        let metaspace = if per_stretch { normalizer.metaspace_stretches() } else { None };
        let normalized = if spaced_stretches {
            normalizer.without_prefix_space().apply_at(text, at_start).into_owned().into()
        } else if let Some((plain, _)) = &metaspace {
            plain.apply_at(text, at_start).into_owned().into()
        } else {
            normalizer.apply_at(text, at_start)
        };
        let text_start = normalized.as_ptr() as usize;
        let mut unchecked = 0;
        let mut unigram_base = 0.0;
        piece_cache::with_cache(self.cache_owner, |cache| {
            let mut encode = |stretch: &str, out: &mut Vec<u32>| {
                let spaced;
                let stretch = if spaced_stretches && !stretch.is_empty() && !stretch.starts_with(' ') {
                    spaced = format!(" {stretch}");
                    spaced.as_str()
                } else if let Some((_, part)) = &metaspace {
                    let starts_input = at_start && stretch.as_ptr() as usize == text_start;
                    spaced = part.apply(stretch, starts_input, None);
                    spaced.as_str()
                } else {
                    stretch
                };
                self.splitter.pretokenizer.for_each_piece(stretch, |piece| {
                    unchecked += piece.len();
                    if unchecked >= INTERRUPT_CHECK_BYTES {
                        unchecked = 0;
                        check()?;
                    }
                    self.encode_piece(cache, piece, &mut unigram_base, out)
                })
            };
            self.for_each_normalized_stretch(&normalized, specials, out, &mut encode)
        })
    }

    /// Cuts normalized text at the special tokens matched there (`normalized: true` added
    /// tokens), judged by `specials` (allowed, disallowed): their ids go to `out`, the text
    /// between them to `encode`. `None`: the whole text is ordinary.
    fn for_each_normalized_stretch(
        &self,
        normalized: &str,
        specials: Option<(&SpecialSet, &SpecialSet)>,
        out: &mut Vec<u32>,
        encode: &mut impl FnMut(&str, &mut Vec<u32>) -> Result<()>,
    ) -> Result<()> {
        let (Some(after), Some((allowed, disallowed))) = (self.splitter.specials.after_normalizing(), specials) else {
            return encode(normalized, out);
        };
        each_segment(after, normalized, (allowed, disallowed), out, encode)
    }

    /// Encodes one pre-tokenized piece through the piece cache; `carry` goes from piece to piece
    /// (see `PieceModel::encode_cached`).
    #[inline]
    pub(crate) fn encode_piece(
        &self,
        cache: &mut piece_cache::PieceCache,
        piece: &str,
        carry: &mut f32,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        if let Some(draw) = self.draw {
            return with_thread_uniform(|uniform| self.model.encode_drawn(piece, draw, uniform, out)).map(drop);
        }
        self.model.encode_cached(cache, piece, carry, out)
    }

    /// `encode_piece`, and where each of the ids it appends lies in the piece (None: tokens
    /// that do not spell their text; see `PieceModel::piece_spans`).
    pub(crate) fn encode_piece_placed(
        &self,
        cache: &mut piece_cache::PieceCache,
        piece: &str,
        carry: &mut f32,
        out: &mut Vec<u32>,
    ) -> Result<Option<Vec<(usize, usize)>>> {
        if let Some(draw) = self.draw {
            return with_thread_uniform(|uniform| self.model.encode_drawn(piece, draw, uniform, out));
        }
        let (start, before) = (out.len(), *carry);
        self.model.encode_cached(cache, piece, carry, out)?;
        Ok(self.model.piece_spans(piece, &out[start..], before))
    }

    /// Encodes many texts on `num_threads` threads (all cores if `None`) of the process's pool
    /// (`threads.rs`, rebuilt in a forked child), whose piece caches stay warm between calls.
    pub fn encode_batch(
        &self,
        texts: &[&str],
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
        num_threads: Option<usize>,
    ) -> Result<Vec<Vec<u32>>> {
        let threads = batch_threads(texts, num_threads);
        if threads == 1 {
            return texts.iter().map(|t| self.encode(t, allowed, disallowed)).collect();
        }
        // Contiguous slices of about equal bytes keep the output in order.
        let total: usize = texts.iter().map(|t| t.len() + 1).sum();
        let mut bounds = vec![0];
        let mut acc = 0;
        for (i, t) in texts.iter().enumerate() {
            acc += t.len() + 1;
            if acc * threads >= total * bounds.len() && bounds.len() < threads {
                bounds.push(i + 1);
            }
        }
        bounds.push(texts.len());
        bounds.dedup();
        let mut parts: Vec<Result<Vec<Vec<u32>>>> = (1..bounds.len()).map(|_| Ok(Vec::new())).collect();
        crate::util::threads::pool().in_place_scope(|scope| {
            for (part, w) in parts.iter_mut().zip(bounds.windows(2)) {
                let slice = &texts[w[0]..w[1]];
                scope.spawn(move |_| *part = slice.iter().map(|t| self.encode(t, allowed, disallowed)).collect());
            }
        });
        let mut out = Vec::with_capacity(texts.len());
        for part in parts {
            out.extend(part?);
        }
        Ok(out)
    }

    /// The bytes that `ids` stand for.
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        if self.decoder == Decoder::Bytes {
            let mut out = Vec::with_capacity(ids.len() * 4);
            for &id in ids {
                out.extend_from_slice(&self.decoded_token(id)?);
            }
            return Ok(out);
        }
        Ok(self.decode_parts(ids, true, false)?.concat())
    }

    /// What each id contributes to `decode_bytes(ids)`: the parts concatenate to it exactly.
    /// With `trim_end` false the last part keeps the space an end-of-word suffix stands for
    /// (what it contributes when more ids follow); with `follows`, the ids continue earlier
    /// ones (WordPiece then puts a space before the first). Streaming decoders use both.
    pub fn decode_parts(&self, ids: &[u32], trim_end: bool, follows: bool) -> Result<Vec<Vec<u8>>> {
        match &self.decoder {
            // A file's own steps work on the tokens' strings: for a byte-level vocabulary their
            // printable spellings (`Ġworld`), for normalized added tokens their normalized
            // spellings, as in tokenizers.
            Decoder::Chain(chain) => {
                let tokens = ids.iter().map(|&id| self.decoder_string(id)).collect::<Result<Vec<String>>>()?;
                Ok(chain.decode(tokens, follows, trim_end).into_iter().map(String::into_bytes).collect())
            }
            Decoder::Bytes if self.added_through_byte_level || self.splitter.specials.after_normalizing().is_some() => {
                ids.iter().map(|&id| self.decoded_token(id).map(|b| b.into_owned())).collect()
            }
            decoder => decoder.parts(self.vocab(), ids, follows, trim_end),
        }
    }

    /// The Unigram model, or an error naming what needs one.
    pub(crate) fn unigram(&self, what: &str) -> Result<&Unigram> {
        self.model().as_unigram().ok_or_else(|| {
            Error::config(format!("{what} needs a Unigram model; this one is {}", self.model().model_type()))
        })
    }

    /// The `n` best cuts of `text` (special-token text is ordinary text) with their scores,
    /// best first. The whole normalized text is one lattice, as SentencePiece's n-best is.
    pub fn nbest(&self, text: &str, n: usize) -> Result<Vec<(Vec<u32>, f32)>> {
        let model = self.unigram("n-best encoding")?;
        let normalized = self.splitter.normalizer.apply(text);
        // Every position keeps n ways in: memory and time grow with n × length.
        if n.saturating_mul(normalized.len()) > NBEST_BUDGET {
            return Err(Error::config(format!(
                "n-best of {n} cuts over {} bytes of text is too much work (n × bytes is at most {NBEST_BUDGET}); \
                 ask for fewer cuts or split the text",
                normalized.len()
            )));
        }
        let cuts = crate::models::unigram::lattice::nbest(model, &normalized, n);
        Ok(cuts
            .into_iter()
            .map(|(cut, score)| {
                let mut ids = Vec::with_capacity(cut.len());
                model.emit(&normalized, cut.into_iter(), |id, _| ids.push(id));
                (ids, score)
            })
            .collect())
    }

    /// `text` cut by sampling (subword regularization), with the special-token rules of
    /// `encode`. Unigram: each piece's cut is drawn with probability proportional to
    /// exp(`alpha` × score). BPE: BPE-dropout, each merge skipped with probability `alpha`.
    /// `seed` makes the draw repeatable. Never touches the piece cache, which holds best cuts.
    pub fn encode_sampled(
        &self,
        text: &str,
        allowed: &SpecialSet,
        disallowed: &SpecialSet,
        alpha: f32,
        seed: u64,
    ) -> Result<Vec<u32>> {
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(Error::config(format!("alpha must be a finite number >= 0, got {alpha}")));
        }
        self.model().check_sampling(alpha)?;
        let mut rng = SplitMix64(seed);
        let mut uniform = || rng.next_f64();
        let mut out = Vec::with_capacity(text.len() / 3);
        self.for_each_segment(text, allowed, disallowed, &mut out, &mut |text, out| {
            let normalized = self.splitter.normalizer.apply(text);
            let mut sample = |stretch: &str, out: &mut Vec<u32>| {
                self.splitter
                    .pretokenizer
                    .for_each_piece(stretch, |piece| self.model().encode_sampled(piece, alpha, &mut uniform, out))
            };
            self.for_each_normalized_stretch(&normalized, Some((allowed, disallowed)), out, &mut sample)
        })?;
        Ok(out)
    }

    /// The pieces the pre-tokenizer cuts `text` into (after normalization).
    pub fn pre_tokenize(&self, text: &str) -> Result<Vec<String>> {
        let normalized = self.splitter.normalizer.apply(text);
        Ok(self.splitter.pretokenizer.split(&normalized)?.into_iter().map(str::to_string).collect())
    }
}
