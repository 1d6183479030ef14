//! The pipeline: special tokens → normalize → pre-tokenize → model → ids, and ids → bytes.

use crate::bpe::Bpe;
use crate::count::WordSplitter;
use crate::error::{Error, Result};
use crate::normalize::Normalizer;
use crate::piece_cache;
use crate::pretokenize::PreTokenizer;
use crate::special::{Segment, SpecialTokens};
use crate::vocab::Vocab;
use rustc_hash::FxHashSet;

/// The subword model at the heart of a tokenizer. WordPiece and Unigram join BPE here.
#[derive(Debug, Clone)]
pub enum Model {
    Bpe(Bpe),
}

impl Model {
    pub fn vocab(&self) -> &Vocab {
        match self {
            Model::Bpe(m) => m.vocab(),
        }
    }

    fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) -> Result<()> {
        match self {
            Model::Bpe(m) => m.encode_piece(piece, out),
        }
    }

    fn decode_token(&self, id: u32, suffix_replacement: &str, out: &mut Vec<u8>) -> Result<()> {
        match self {
            Model::Bpe(m) => m.decode_token(id, suffix_replacement, out),
        }
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

    fn contains(&self, token: &str) -> bool {
        match self {
            SpecialSet::All => true,
            SpecialSet::Only(set) => set.contains(token),
        }
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

#[derive(Debug, Clone)]
pub struct Tokenizer {
    splitter: WordSplitter,
    model: Model,
    /// Names this tokenizer's tables in the per-thread piece cache (a clone shares them: same
    /// model, same ids).
    cache_owner: u64,
}

impl Tokenizer {
    pub fn new(normalizer: Normalizer, pretokenizer: PreTokenizer, model: Model) -> Self {
        let specials = SpecialTokens::new(model.vocab().specials());
        Tokenizer {
            splitter: WordSplitter { normalizer, pretokenizer, specials },
            model,
            cache_owner: piece_cache::next_owner_id(),
        }
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
        self.encode_text(text, &mut out)?;
        Ok(out)
    }

    /// Encodes `text` with tiktoken's rules: special tokens in `allowed` become their ids; any in
    /// `disallowed` that appears in the text is an error; the rest are ordinary text.
    pub fn encode(&self, text: &str, allowed: &SpecialSet, disallowed: &SpecialSet) -> Result<Vec<u32>> {
        let none = |set: &SpecialSet| matches!(set, SpecialSet::Only(s) if s.is_empty());
        if self.splitter.specials.is_empty() || (none(allowed) && none(disallowed)) {
            return self.encode_ordinary(text);
        }
        let mut out = Vec::with_capacity(text.len() / 3);
        self.splitter.specials.for_each_segment(
            text,
            |token| {
                if allowed.contains(token) {
                    Ok(true)
                } else if disallowed.contains(token) {
                    Err(Error::DisallowedSpecial { token: token.to_string() })
                } else {
                    Ok(false)
                }
            },
            |segment| match segment {
                Segment::Text(t) => self.encode_text(t, &mut out),
                Segment::Special { id, .. } => {
                    out.push(id);
                    Ok(())
                }
            },
        )?;
        Ok(out)
    }

    fn encode_text(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        let normalized = self.splitter.normalizer.apply(text);
        piece_cache::with_cache(self.cache_owner, |cache| {
            self.splitter.pretokenizer.for_each_piece(&normalized, |piece| {
                if piece.len() <= piece_cache::MAX_PIECE {
                    cache.ids(piece.as_bytes(), out, |out| self.model.encode_piece(piece, out))
                } else {
                    self.model.encode_piece(piece, out)
                }
            })
        })
    }

    /// Encodes many texts on `num_threads` scoped threads (all cores if `None`). Scoped threads,
    /// not a global pool, so a forked child process can still encode.
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
        let parts: Vec<Result<Vec<Vec<u32>>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = bounds
                .windows(2)
                .map(|w| {
                    let slice = &texts[w[0]..w[1]];
                    scope.spawn(move || slice.iter().map(|t| self.encode(t, allowed, disallowed)).collect())
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::config("encoder thread panicked"))))
                .collect()
        });
        let mut out = Vec::with_capacity(texts.len());
        for part in parts {
            out.extend(part?);
        }
        Ok(out)
    }

    /// The bytes that `ids` stand for.
    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        let lossless = self.splitter.pretokenizer.is_lossless();
        let replacement = if lossless { "" } else { " " };
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            self.model.decode_token(id, replacement, &mut out)?;
        }
        if !lossless && out.last() == Some(&b' ') && ids.last().is_some_and(|&id| !self.vocab().is_special(id)) {
            out.pop();
        }
        Ok(out)
    }

    /// The pieces the pre-tokenizer cuts `text` into (after normalization).
    pub fn pre_tokenize(&self, text: &str) -> Result<Vec<String>> {
        let normalized = self.splitter.normalizer.apply(text);
        Ok(self.splitter.pretokenizer.split(&normalized)?.into_iter().map(str::to_string).collect())
    }
}
