//! The pipeline: special tokens → normalize → pre-tokenize → model → ids, and ids → bytes.

use crate::count::WordSplitter;
use crate::decoder::{Decoder, StripLeading};
use crate::error::{Error, Result};
use crate::models::bpe::Bpe;
use crate::models::unigram::Unigram;
use crate::models::wordpiece::WordPiece;
use crate::normalize::Normalizer;
use crate::piece_cache;
use crate::postprocess::ModelInputs;
use crate::pretokenize::PreTokenizer;
use crate::special::{Segment, SpecialTokens};
use crate::vocab::Vocab;
use rustc_hash::FxHashSet;

/// The subword model at the heart of a tokenizer; the match happens once per piece, and each
/// arm is the model's own monomorphic loop.
#[derive(Debug, Clone)]
pub enum Model {
    Bpe(Bpe),
    WordPiece(WordPiece),
    Unigram(Unigram),
}

impl Model {
    pub fn vocab(&self) -> &Vocab {
        match self {
            Model::Bpe(m) => m.vocab(),
            Model::WordPiece(m) => m.vocab(),
            Model::Unigram(m) => m.vocab(),
        }
    }

    /// `"bpe"`, `"wordpiece"` or `"unigram"`.
    pub fn model_type(&self) -> &'static str {
        match self {
            Model::Bpe(_) => "bpe",
            Model::WordPiece(_) => "wordpiece",
            Model::Unigram(_) => "unigram",
        }
    }

    pub(crate) fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) -> Result<()> {
        match self {
            Model::Bpe(m) => m.encode_piece(piece, out),
            Model::WordPiece(m) => {
                m.encode_word(piece, out, None);
                Ok(())
            }
            Model::Unigram(m) => {
                m.encode_piece(piece, out);
                Ok(())
            }
        }
    }

    /// How many bytes of `piece` each of its `ids` covers, when that can be told (`None` for
    /// tokens that stand for text they do not spell, such as a character-level unknown token).
    /// `unigram_base`: what the text's pieces before this one scored (Unigram; see
    /// `Tokenizer::encode_piece`).
    pub fn piece_lens(&self, piece: &str, ids: &[u32], unigram_base: f32) -> Option<Vec<usize>> {
        match self {
            Model::Bpe(m) => m.piece_lens(piece, ids),
            Model::WordPiece(m) => {
                if ids == [m.unk_id()] {
                    return Some(vec![piece.len()]);
                }
                let prefix = m.prefix().len();
                ids.iter()
                    .enumerate()
                    .map(|(i, &id)| {
                        let len = m.vocab().token_bytes(id).ok()?.len();
                        Some(if i == 0 { len } else { len.checked_sub(prefix)? })
                    })
                    .collect()
            }
            Model::Unigram(m) => m.piece_lens(piece, ids, unigram_base),
        }
    }

    /// The decoder that suits this model, given how the text was pre-tokenized.
    fn decoder(&self, normalizer: &Normalizer, pretokenizer: &PreTokenizer) -> Decoder {
        match self {
            Model::Bpe(m) if m.sentencepiece().is_some() => Decoder::Metaspace {
                unknown_surface: m.sentencepiece().map(|sp| sp.unknown_surface().to_string()).unwrap_or_default(),
                strip_leading: strip_leading(normalizer),
            },
            Model::Bpe(m) => match &m.options().end_of_word_suffix {
                Some(suffix) => Decoder::Suffix {
                    suffix: suffix.clone(),
                    replacement: if pretokenizer.pieces_keep_whitespace() { "" } else { " " },
                },
                None => Decoder::Bytes,
            },
            Model::WordPiece(m) => Decoder::WordPiece { prefix: m.prefix().to_string(), cleanup: m.cleanup() },
            Model::Unigram(m) => Decoder::Metaspace {
                unknown_surface: m.unknown_surface().to_string(),
                strip_leading: strip_leading(normalizer),
            },
        }
    }
}

/// Where SentencePiece's decoder drops the leading `▁` of the text: one piece's when the
/// normalizer added a dummy prefix, every piece's until some text when it removed extra spaces.
fn strip_leading(normalizer: &Normalizer) -> StripLeading {
    match normalizer.sentencepiece() {
        Some(sp) if sp.remove_extra_whitespaces => StripLeading::All,
        Some(sp) if sp.add_dummy_prefix => StripLeading::One,
        _ => StripLeading::Never,
    }
}

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

/// The most n-best work one call may ask for, in cuts × bytes of text.
const NBEST_BUDGET: usize = 1 << 24;

/// A small, fast, seedable generator (SplitMix64): sampling must repeat exactly for a seed on
/// every platform, which a generator of our own guarantees.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Below this much text per thread, starting a thread costs more than it saves (a thread start
/// is tens of microseconds; encoding 64 KiB takes about a millisecond).
const MIN_BATCH_BYTES_PER_THREAD: usize = 64 << 10;

/// How many threads `encode_batch` uses: the number asked for (all cores if `None`), but no more
/// than there are texts or than the text gives each thread enough work.
pub fn batch_threads(texts: &[&str], num_threads: Option<usize>) -> usize {
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    num_threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(texts.len())
        .min(bytes / MIN_BATCH_BYTES_PER_THREAD)
        .max(1)
}

/// Text is encoded in stretches of about this many bytes between checks for Ctrl-C.
const INTERRUPT_CHECK_BYTES: usize = 1 << 20;

#[derive(Debug, Clone)]
pub struct Tokenizer {
    pub(crate) splitter: WordSplitter,
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
}

impl Tokenizer {
    pub fn new(normalizer: Normalizer, pretokenizer: PreTokenizer, model: Model) -> Self {
        let specials = SpecialTokens::new(model.vocab().specials());
        let decoder = model.decoder(&normalizer, &pretokenizer);
        Tokenizer {
            splitter: WordSplitter { normalizer, pretokenizer, specials },
            model: std::sync::Arc::new(model),
            decoder,
            cache_owner: piece_cache::next_owner_id(),
            inputs: ModelInputs::default(),
            sentencepiece_source: None,
        }
    }

    /// This tokenizer, remembering that it was read from the SentencePiece model `file`.
    pub fn with_sentencepiece_source(mut self, file: std::sync::Arc<[u8]>) -> Self {
        self.sentencepiece_source = Some(file);
        self
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
        self.encode_text(text, &mut out, &mut || Ok(()))?;
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
        self.for_each_segment(text, allowed, disallowed, &mut out, &mut |t, out| self.encode_text(t, out, check))?;
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
        self.splitter.specials.for_each_segment(
            text,
            |token| {
                let named = matches!(disallowed, SpecialSet::Only(set) if set.contains(token));
                if named || (!allowed.contains(token) && matches!(disallowed, SpecialSet::All)) {
                    Err(Error::DisallowedSpecial { token: token.to_string() })
                } else {
                    Ok(allowed.contains(token))
                }
            },
            |segment| match segment {
                Segment::Text(t) => encode_text(t, out),
                Segment::Special { id, .. } => {
                    out.push(id);
                    Ok(())
                }
            },
        )
    }

    fn encode_text(&self, text: &str, out: &mut Vec<u32>, check: &mut dyn FnMut() -> Result<()>) -> Result<()> {
        let normalized = self.splitter.normalizer.apply(text);
        let mut unchecked = 0;
        let mut unigram_base = 0.0;
        piece_cache::with_cache(self.cache_owner, |cache| {
            self.splitter.pretokenizer.for_each_piece(&normalized, |piece| {
                unchecked += piece.len();
                if unchecked >= INTERRUPT_CHECK_BYTES {
                    unchecked = 0;
                    check()?;
                }
                self.encode_piece(cache, piece, &mut unigram_base, out)
            })
        })
    }

    /// Encodes one pre-tokenized piece through the piece cache. Unigram has a cache of its own:
    /// its cut of a word can depend (through f32 rounding, between near-equal cuts) on the score
    /// of the text before it — `unigram_base`, carried from piece to piece — as in
    /// SentencePiece's one lattice over the whole text.
    #[inline]
    pub(crate) fn encode_piece(
        &self,
        cache: &mut piece_cache::PieceCache,
        piece: &str,
        unigram_base: &mut f32,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        if let Model::Unigram(m) = &*self.model {
            *unigram_base = m.encode_cached(piece, *unigram_base, out);
            return Ok(());
        }
        if piece.len() <= piece_cache::MAX_PIECE {
            cache.ids(piece.as_bytes(), out, |out| self.model.encode_piece(piece, out))
        } else if piece.len() <= piece_cache::MAX_RUN_PIECE && piece.is_ascii() {
            cache.run_ids(piece.as_bytes(), out, |out| self.model.encode_piece(piece, out))
        } else {
            self.model.encode_piece(piece, out)
        }
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
        crate::threads::pool().in_place_scope(|scope| {
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
            let vocab = self.vocab();
            let mut out = Vec::with_capacity(ids.len() * 4);
            for &id in ids {
                out.extend_from_slice(vocab.token_bytes(id)?);
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
        self.decoder.parts(self.vocab(), ids, follows, trim_end)
    }

    /// The Unigram model, or an error naming what needs one.
    fn unigram(&self, what: &str) -> Result<&Unigram> {
        match self.model() {
            Model::Unigram(m) => Ok(m),
            other => Err(Error::config(format!("{what} needs a Unigram model; this one is {}", other.model_type()))),
        }
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
        match self.model() {
            Model::Bpe(_) if alpha > 1.0 => {
                return Err(Error::config(format!("dropout is a probability between 0 and 1, got {alpha}")))
            }
            Model::WordPiece(_) => {
                return Err(Error::config("sampling needs a Unigram or BPE model; this one is wordpiece"))
            }
            _ => {}
        }
        let mut rng = SplitMix64(seed);
        let mut uniform = || rng.next_f64();
        let mut cut = Vec::new();
        let mut out = Vec::with_capacity(text.len() / 3);
        self.for_each_segment(text, allowed, disallowed, &mut out, &mut |text, out| {
            let normalized = self.splitter.normalizer.apply(text);
            self.splitter.pretokenizer.for_each_piece(&normalized, |piece| match self.model() {
                Model::Unigram(model) => {
                    cut.clear();
                    crate::models::unigram::lattice::sample(model, piece, alpha, &mut uniform, &mut cut);
                    model.emit(piece, cut.iter().copied(), |id, _| out.push(id));
                    Ok(())
                }
                Model::Bpe(model) => model.encode_piece_dropout(piece, alpha as f64, &mut uniform, out),
                Model::WordPiece(_) => unreachable!("refused above"),
            })
        })?;
        Ok(out)
    }

    /// The pieces the pre-tokenizer cuts `text` into (after normalization).
    pub fn pre_tokenize(&self, text: &str) -> Result<Vec<String>> {
        let normalized = self.splitter.normalizer.apply(text);
        Ok(self.splitter.pretokenizer.split(&normalized)?.into_iter().map(str::to_string).collect())
    }
}
