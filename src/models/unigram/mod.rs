//! Unigram (SentencePiece): every piece has a log-probability score, and a piece of text is
//! cut into the pieces whose scores sum highest (Viterbi over the lattice of all pieces that
//! occur in it). `lattice.rs` holds the lattice and what else it answers: the n best cuts and a
//! cut sampled in proportion to its probability (subword regularization).
//!
//! A character that no piece covers becomes the unknown piece, with a score well below every
//! real piece; with byte fallback the unknown piece is then spelled as its UTF-8 bytes
//! (`<0xE3>` …). User-defined pieces always win where they match: their score grows with their
//! length past anything ordinary pieces can reach.

pub mod file;
pub mod lattice;
pub mod layout;
pub mod seeds;
pub mod train;
pub mod train_huggingface;

use crate::error::{Error, Result};
use crate::models::vocab::{TokenKind, Vocab};
use crate::pipeline::decoder::Decoder;
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::pretokenize::PreTokenizer;
use crate::util::trie::CharTrie;
use rustc_hash::FxHashSet;
use std::hash::BuildHasher;

/// How far below the lowest piece score an unknown character scores (SentencePiece's penalty).
pub const UNKNOWN_PENALTY: f32 = 10.0;

#[derive(Debug, Clone)]
pub struct Unigram {
    vocab: Vocab,
    /// Each id's score as the model file gives it (0 for ids without one).
    scores: Vec<f32>,
    /// The score each piece counts with in the lattice (user-defined pieces boosted), in double
    /// as SentencePiece's encoder holds it.
    lattice_scores: Vec<f64>,
    /// The pieces the lattice can use: ordinary and user-defined, not control, byte or unused.
    trie: CharTrie,
    user_defined: FxHashSet<u32>,
    /// The unknown piece; `NO_UNKNOWN` for a Hugging Face model without one (`unk_id: null`),
    /// which refuses text it would need it for.
    unk_id: u32,
    /// The unknown character's score: SentencePiece's f32 (widened), or Hugging Face's f64.
    unk_score: f64,
    byte_fallback: bool,
    /// Cut as `tokenizers` cuts: every vocabulary entry in the lattice, f64 sums from 0 for
    /// each pre-tokenized piece (see `huggingface`).
    huggingface: bool,
    /// What the unknown token decodes to.
    unknown_surface: String,
    /// Pieces are cut in GPT-2's byte-level spelling (each byte as its printable character), as
    /// tokenizers cuts the pieces of a `ByteLevel` pre-tokenizer; lengths go back to bytes.
    byte_level: bool,
    /// Names this model's entries in the per-thread cache of cuts.
    cache_id: u64,
}

/// `Unigram::unk_id` of a model without an unknown piece: an id no token has.
const NO_UNKNOWN: u32 = u32::MAX;

/// Pieces up to this long have their cuts cached (per thread, per model), up to this many.
const CACHED_PIECE_BYTES: usize = 64;
const CACHED_CUTS: usize = 1 << 16;

/// A cut made from `base`, with its end score and the lowest and highest sums it compared,
/// relative to that base (exact: same binade).
struct CachedCut {
    base: f32,
    end: f32,
    low: f32,
    high: f32,
    ids: Box<[u32]>,
}

struct CutCache {
    owner: u64,
    cuts: rustc_hash::FxHashMap<Box<[u8]>, Vec<CachedCut>>,
    /// One bit per word hash: seen once already.
    seen: Vec<u64>,
    /// Viterbi's path, reused.
    path: Vec<(u32, u32, u32)>,
}

const SEEN_BITS: usize = 1 << 20;

thread_local! {
    static CUTS: std::cell::RefCell<CutCache> = std::cell::RefCell::new(CutCache {
        owner: 0,
        cuts: rustc_hash::FxHashMap::default(),
        seen: vec![0; SEEN_BITS / 64],
        path: Vec::new(),
    });
}

/// What SentencePiece decodes the unknown token to by default: " ⁇ ".
pub const DEFAULT_UNKNOWN_SURFACE: &str = " \u{2047} ";

impl Unigram {
    /// A model from a vocabulary (whose unknown token has kind `Unknown`), a score per id,
    /// the ids of user-defined pieces, and whether unknown text falls back to byte tokens.
    pub fn new(vocab: Vocab, scores: Vec<f32>, user_defined: Vec<u32>, byte_fallback: bool) -> Result<Self> {
        Self::checked(vocab, scores, user_defined, byte_fallback, true)
    }

    /// `new`, its lattice's trie built only if `with_trie` (`huggingface` builds its own).
    fn checked(
        vocab: Vocab,
        scores: Vec<f32>,
        user_defined: Vec<u32>,
        byte_fallback: bool,
        with_trie: bool,
    ) -> Result<Self> {
        let unk_id = vocab.kinded().into_iter().find(|&(_, _, kind)| kind == TokenKind::Unknown).map(|(id, _, _)| id);
        // Only Hugging Face's models (built without the trie here) may lack one.
        let unk_id = match unk_id {
            Some(id) => id,
            None if !with_trie => NO_UNKNOWN,
            None => return Err(Error::config("a Unigram model needs a token of kind unknown (such as <unk>)")),
        };
        if scores.len() < vocab.dense_len() && vocab.ordinary().any(|(id, _)| id as usize >= scores.len()) {
            return Err(Error::config(format!(
                "a Unigram model needs a score for every piece: {} scores for {} ids",
                scores.len(),
                vocab.n_vocab()
            )));
        }
        if let Some(bad) = scores.iter().position(|s| !s.is_finite()) {
            return Err(Error::config(format!("piece {bad} has score {}, which is not a finite number", scores[bad])));
        }
        // SentencePiece's byte fallback assumes all 256 byte pieces; Hugging Face's (`huggingface`,
        // without the trie) takes what the vocabulary has and falls back to unknown past that.
        if byte_fallback && with_trie && !vocab.has_all_bytes() {
            return Err(Error::config("byte fallback needs a byte token <0x00> … <0xFF> for each of the 256 bytes"));
        }
        let user_defined: FxHashSet<u32> = user_defined.into_iter().collect();
        for &id in &user_defined {
            if vocab.kind(id) != Some(TokenKind::Normal) {
                return Err(Error::config(format!("user-defined piece {id} is not an ordinary token")));
            }
        }
        let pieces: Vec<(u32, &[u8])> = vocab.ordinary().collect();
        let score_of = |id: u32| scores.get(id as usize).copied().unwrap_or(0.0);
        let normal = || pieces.iter().filter(|(id, _)| !user_defined.contains(id)).map(|&(id, _)| score_of(id));
        // SentencePiece starts this at FLT_MAX.
        let min_score = normal().fold(f32::MAX, f32::min);
        let mut lattice_scores = vec![0.0f64; vocab.n_vocab()];
        for &(id, bytes) in &pieces {
            lattice_scores[id as usize] = if user_defined.contains(&id) {
                // sentencepiece 0.2.3's score: 0.1 per byte after the first, computed in double
                // and kept as a float. Never negative, so a user-defined piece beats any cut
                // of ordinary pieces, and the longest one wins among overlapping ones.
                (0.1 * (bytes.len() as f64 - 1.0)) as f32 as f64
            } else {
                score_of(id) as f64
            };
        }
        let mut trie = CharTrie::default();
        if with_trie {
            trie = CharTrie::new(
                pieces.iter().filter_map(|&(id, bytes)| std::str::from_utf8(bytes).ok().map(|text| (text, id))),
            );
            // Every lattice score here is an f32 (widened): exact in the trie.
            trie.attach_scores(|id| lattice_scores[id as usize] as f32);
        }
        Ok(Unigram {
            scores,
            lattice_scores,
            trie,
            user_defined,
            unk_id,
            unk_score: (min_score - UNKNOWN_PENALTY) as f64,
            byte_fallback,
            huggingface: false,
            unknown_surface: DEFAULT_UNKNOWN_SURFACE.to_string(),
            byte_level: false,
            cache_id: crate::models::piece_cache::next_owner_id(),
            vocab,
        })
    }

    /// A model that cuts as Hugging Face's `tokenizers` does for a `tokenizer.json` Unigram
    /// model: the lattice holds every entry of the vocabulary (control, byte and unused pieces
    /// included), scores are the file's f64 values and sums run in f64 from 0 in each
    /// pre-tokenized piece, the unknown character scoring 10 below the lowest score of all.
    /// (SentencePiece's own cut, `new`, sums in f32 across the whole text over its ordinary
    /// pieces; on most text both agree.)
    pub fn huggingface(vocab: Vocab, scores: Vec<f64>, byte_fallback: bool) -> Result<Self> {
        if let Some(bad) = scores.iter().position(|s| !s.is_finite()) {
            return Err(Error::config(format!("piece {bad} has score {}, which is not a finite number", scores[bad])));
        }
        let narrow: Vec<f32> = scores.iter().map(|&s| s as f32).collect();
        let mut model = Unigram::checked(vocab, narrow, Vec::new(), byte_fallback, false)?;
        let n = model.vocab.n_vocab();
        let vocab = &model.vocab;
        let mut entries: Vec<(u32, &[u8])> = vocab.ordinary().collect();
        entries.extend(vocab.kinded().into_iter().map(|(id, text, _)| (id, text.as_bytes())));
        // Added tokens past the model's own pieces (those with no score) are matched in text
        // only, never cut by the lattice, as in tokenizers.
        entries.extend(
            vocab
                .specials()
                .iter()
                .filter(|(_, id)| (*id as usize) < scores.len())
                .map(|(text, id)| (*id, text.as_bytes())),
        );
        // A text spelled twice in the vocabulary is the last id that spells it, as in
        // `tokenizers`' map from token to id (the trie keeps a key's first value).
        entries.sort_unstable_by_key(|&(id, _)| std::cmp::Reverse(id));
        let trie = CharTrie::new(
            entries.iter().filter_map(|&(id, bytes)| std::str::from_utf8(bytes).ok().map(|text| (text, id))),
        );
        model.trie = trie;
        let mut lattice_scores = vec![0.0f64; n];
        for (id, score) in lattice_scores.iter_mut().enumerate() {
            *score = scores.get(id).copied().unwrap_or(0.0);
        }
        let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
        model.unk_score = if min.is_finite() { min } else { 0.0 } - UNKNOWN_PENALTY as f64;
        model.lattice_scores = lattice_scores;
        model.huggingface = true;
        Ok(model)
    }

    /// The same model cutting each piece in its byte-level spelling (a Hugging Face model
    /// behind a `ByteLevel` pre-tokenizer, whose vocabulary is spelled so).
    pub fn with_byte_level(mut self, on: bool) -> Self {
        self.byte_level = on;
        self
    }

    pub fn is_byte_level(&self) -> bool {
        self.byte_level
    }

    /// `piece` as the lattice reads it: its byte-level spelling for a byte-level model.
    fn spelled<'a>(&self, piece: &'a str) -> std::borrow::Cow<'a, str> {
        if self.byte_level {
            crate::io::huggingface::byte_level_spelling(piece.as_bytes()).into()
        } else {
            piece.into()
        }
    }

    /// Whether this model cuts as Hugging Face's does (`huggingface`).
    pub fn is_huggingface(&self) -> bool {
        self.huggingface
    }

    /// The f64 score of each id the lattice weighs (the file's own, for a Hugging Face model).
    pub fn exact_scores(&self) -> &[f64] {
        &self.lattice_scores
    }

    /// The same model, decoding the unknown token to `surface`.
    pub fn with_unknown_surface(mut self, surface: &str) -> Self {
        self.unknown_surface = surface.to_string();
        self
    }

    pub fn unknown_surface(&self) -> &str {
        &self.unknown_surface
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    pub fn unk_id(&self) -> u32 {
        self.unk_id
    }

    pub fn byte_fallback(&self) -> bool {
        self.byte_fallback
    }

    /// The score of `id` as the model gives it.
    pub fn score(&self, id: u32) -> f32 {
        self.scores.get(id as usize).copied().unwrap_or(0.0)
    }

    pub fn scores(&self) -> &[f32] {
        &self.scores
    }

    /// The user-defined pieces' ids, sorted.
    pub fn user_defined(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self.user_defined.iter().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Appends the ids of the best cut of `piece`. A run of unknown characters is one unknown
    /// id, or with byte fallback the byte tokens of its UTF-8 bytes.
    pub fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) {
        self.encode_piece_from(piece, 0.0, out);
    }

    /// `encode_piece` continuing a text whose pieces so far scored `base` (see
    /// `lattice::viterbi`); returns the score after this piece.
    pub fn encode_piece_from(&self, piece: &str, base: f32, out: &mut Vec<u32>) -> f32 {
        thread_local! {
            static PATH: std::cell::RefCell<Vec<(u32, u32, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        PATH.with_borrow_mut(|path| {
            if self.huggingface {
                lattice::viterbi_f64(self, piece, path);
                self.emit(piece, path.iter().rev().copied(), |id, _| out.push(id));
                return base;
            }
            let end = lattice::viterbi(self, piece, base, path);
            self.emit(piece, path.iter().rev().copied(), |id, _| out.push(id));
            end
        })
    }

    /// `encode_piece` for a model without an unknown piece: text that needs one (an unknown
    /// edge became the best way into some position, where tokenizers stops) is an error.
    fn encode_without_unknown(&self, piece: &str, out: &mut Vec<u32>) -> Result<()> {
        let mut path = Vec::new();
        if lattice::viterbi_f64(self, piece, &mut path) {
            return Err(Error::MissingUnknownPiece);
        }
        self.emit(piece, path.iter().rev().copied(), |id, _| out.push(id));
        Ok(())
    }

    /// Turns a cut, (start, end, id) in order, into ids with the length of text each covers:
    /// unknown runs merged or spelled as bytes.
    pub(crate) fn emit(
        &self,
        text: &str,
        cut: impl Iterator<Item = (u32, u32, u32)>,
        mut push: impl FnMut(u32, usize),
    ) {
        if self.huggingface {
            return self.emit_huggingface(text, cut, push);
        }
        let mut pending_unknown = 0;
        for (start, end, id) in cut {
            if id != self.unk_id {
                if pending_unknown > 0 {
                    push(self.unk_id, pending_unknown);
                    pending_unknown = 0;
                }
                push(id, (end - start) as usize);
            } else if self.byte_fallback {
                for &b in &text.as_bytes()[start as usize..end as usize] {
                    push(self.vocab.byte_id(b).expect("byte fallback has all 256 byte tokens"), 1);
                }
            } else {
                pending_unknown += (end - start) as usize;
            }
        }
        if pending_unknown > 0 {
            push(self.unk_id, pending_unknown);
        }
    }

    /// `emit` as `tokenizers` does it: a run of unknown pieces is one text, looked up in the
    /// vocabulary as a whole (the text `<unk>` itself is the unknown piece), else spelled as its
    /// bytes with byte fallback, else the unknown id.
    fn emit_huggingface(
        &self,
        text: &str,
        cut: impl Iterator<Item = (u32, u32, u32)>,
        mut push: impl FnMut(u32, usize),
    ) {
        let mut run: Option<(u32, u32)> = None;
        let flush = |run: &mut Option<(u32, u32)>, push: &mut dyn FnMut(u32, usize)| {
            let Some((start, end)) = run.take() else { return };
            let unknown = &text[start as usize..end as usize];
            match self.trie.longest_prefix(unknown).filter(|&(len, _)| len == unknown.len()) {
                Some((_, id)) => push(id, unknown.len()),
                // Byte tokens only when the vocabulary has one for every byte of the run.
                None if self.byte_fallback && unknown.bytes().all(|b| self.vocab.byte_id(b).is_some()) => {
                    for b in unknown.bytes() {
                        push(self.vocab.byte_id(b).expect("checked just above"), 1);
                    }
                }
                None => push(self.unk_id, unknown.len()),
            }
        };
        for (start, end, id) in cut {
            if id == self.unk_id {
                run = Some((run.map_or(start, |r| r.0), end));
            } else {
                flush(&mut run, &mut push);
                push(id, (end - start) as usize);
            }
        }
        flush(&mut run, &mut push);
    }

    /// Appends the ids of `piece`'s cut continuing from `base` and returns the new base, through
    /// this thread's cache of cuts. A cut is cached with the binade of the base it was made from
    /// and the range of sums it compared (`lattice::viterbi_in_binade`); from another base of
    /// that binade whose sums stay inside it, the cut and its score (less the base) are exactly
    /// what Viterbi would compute.
    pub fn encode_cached(&self, piece: &str, base: f32, out: &mut Vec<u32>) -> f32 {
        // Small bases (the text's first piece) change binade at every step: not worth caching.
        if piece.len() > CACHED_PIECE_BYTES || base.is_nan() || base > -1.0 {
            return self.encode_piece_from(piece, base, out);
        }
        CUTS.with_borrow_mut(|cache| {
            if cache.owner != self.cache_id {
                cache.owner = self.cache_id;
                cache.cuts.clear();
                cache.seen.fill(0);
            }
            // A text's running score passes through a dozen binades, and every text starts
            // again from 0: a word keeps one cut per binade.
            if let Some(cuts) = cache.cuts.get(piece.as_bytes()) {
                for cut in cuts {
                    if lattice::same_binade(cut.base, base)
                        && lattice::same_binade(base + cut.low, base)
                        && lattice::same_binade(base + cut.high, base)
                        && no_reset(base + cut.low, base + cut.high)
                    {
                        out.extend_from_slice(&cut.ids);
                        return base + cut.end;
                    }
                }
            }
            let path = &mut cache.path;
            let (end, low, high, on_grid) = lattice::viterbi_in_binade(self, piece, base, path);
            let start = out.len();
            self.emit(piece, path.iter().rev().copied(), |id, _| out.push(id));
            // Words seen once are the most numerous and mostly never come back: a word is kept
            // from its second sighting on (one bit per hash remembers the first).
            let hash = rustc_hash::FxBuildHasher.hash_one(piece.as_bytes());
            let bit = (hash >> (64 - SEEN_BITS.trailing_zeros())) as usize;
            let seen = cache.seen[bit / 64] & (1 << (bit % 64)) != 0;
            cache.seen[bit / 64] |= 1 << (bit % 64);
            if seen
                && on_grid
                && lattice::same_binade(low, base)
                && lattice::same_binade(high, base)
                && no_reset(low, high)
            {
                if cache.cuts.len() >= CACHED_CUTS {
                    cache.cuts.clear();
                    cache.seen.fill(0);
                }
                let cut =
                    CachedCut { base, end: end - base, low: low - base, high: high - base, ids: out[start..].into() };
                let cuts = cache.cuts.entry(piece.as_bytes().into()).or_default();
                match cuts.iter_mut().find(|c| lattice::same_binade(c.base, base)) {
                    Some(old) => *old = cut,
                    None => cuts.push(cut),
                }
            }
            end
        })
    }

    /// The text lengths (bytes of `piece`) that the ids of its cut cover, when the piece was
    /// cut after pieces that scored `base`.
    pub fn piece_lens(&self, piece: &str, ids: &[u32], base: f32) -> Option<Vec<usize>> {
        let spelled = self.spelled(piece);
        let piece = spelled.as_ref();
        let mut path = Vec::new();
        if self.huggingface {
            lattice::viterbi_f64(self, piece, &mut path);
        } else {
            lattice::viterbi(self, piece, base, &mut path);
        }
        let mut lens = Vec::with_capacity(ids.len());
        let mut again = Vec::with_capacity(ids.len());
        self.emit(piece, path.iter().rev().copied(), |id, len| {
            again.push(id);
            lens.push(len);
        });
        if self.byte_level {
            // One byte-level character per byte of the piece.
            let mut at = 0;
            for len in &mut lens {
                let chars = piece[at..at + *len].chars().count();
                at += *len;
                *len = chars;
            }
        }
        (again == ids).then_some(lens)
    }
}

impl lattice::Pieces for Unigram {
    fn trie(&self) -> &CharTrie {
        &self.trie
    }

    #[inline]
    fn lattice_score(&self, id: u32) -> f64 {
        self.lattice_scores[id as usize]
    }

    fn unk_id(&self) -> u32 {
        self.unk_id
    }

    fn unk_score(&self) -> f64 {
        self.unk_score
    }
}

pub(crate) use crate::util::utf8::utf8_len;

impl super::PieceModel for Unigram {
    fn vocab(&self) -> &Vocab {
        &self.vocab
    }
    fn model_type(&self) -> &'static str {
        "unigram"
    }
    #[inline]
    fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) -> Result<()> {
        let spelled = self.spelled(piece);
        let piece = spelled.as_ref();
        if self.unk_id == NO_UNKNOWN {
            return self.encode_without_unknown(piece, out);
        }
        Unigram::encode_piece(self, piece, out);
        Ok(())
    }
    /// Unigram keeps a cache of its own: its cut of a word can depend (through f32 rounding,
    /// between near-equal cuts) on the score of the text before it — `carry`, passed from
    /// piece to piece — as in SentencePiece's one lattice over the whole text.
    #[inline]
    fn encode_cached(
        &self,
        _cache: &mut crate::models::piece_cache::PieceCache,
        piece: &str,
        carry: &mut f32,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        if self.huggingface {
            // Each piece is cut alone: the generic cache of pieces serves.
            return super::encode_through_cache(self, _cache, piece, out);
        }
        *carry = Unigram::encode_cached(self, piece, *carry, out);
        Ok(())
    }
    fn piece_lens(&self, piece: &str, ids: &[u32], carry: f32) -> Option<Vec<usize>> {
        Unigram::piece_lens(self, piece, ids, carry)
    }
    /// As `piece_lens`, except that tokenizers gives every byte token a run of unknown
    /// characters falls back to the whole run's place (a byte token of one character its
    /// character's, which is the same thing for a run of one).
    fn piece_spans(&self, piece: &str, ids: &[u32], carry: f32) -> Option<Vec<(usize, usize)>> {
        let lens = Unigram::piece_lens(self, piece, ids, carry)?;
        Some(self.spans(ids, lens))
    }
    /// tokenizers' subword regularization: with `nbest` a cut drawn among the n best, with
    /// probability proportional to exp(`p` × its score), else from all cuts (forward filtering,
    /// backward sampling).
    fn encode_drawn(
        &self,
        piece: &str,
        draw: super::Draw,
        uniform: &mut dyn FnMut() -> f64,
        out: &mut Vec<u32>,
    ) -> Result<Option<Vec<(usize, usize)>>> {
        let spelled = self.spelled(piece);
        let text = spelled.as_ref();
        if self.unk_id == NO_UNKNOWN && !text.is_empty() {
            // tokenizers' sampling cut checks every token against the unknown piece's id, so
            // without one it refuses any text.
            return Err(Error::MissingUnknownPiece);
        }
        let mut cut = Vec::new();
        if draw.nbest > 0 {
            if draw.nbest.saturating_mul(text.len()) > crate::tokenizer::NBEST_BUDGET {
                return Err(Error::config(format!(
                    "nbest_size {} over a piece of {} bytes is too much work",
                    draw.nbest,
                    text.len()
                )));
            }
            let cuts = lattice::nbest(self, text, draw.nbest);
            let weights: Vec<f64> = cuts.iter().map(|(_, score)| (draw.p * *score as f64).exp()).collect();
            let total: f64 = weights.iter().sum();
            let mut left = uniform() * total;
            let chosen = weights.iter().position(|w| {
                left -= w;
                left < 0.0
            });
            if let Some((chosen, _)) = chosen.and_then(|k| cuts.into_iter().nth(k)) {
                cut = chosen;
            } else {
                lattice::viterbi_f64(self, text, &mut cut);
                cut.reverse();
            }
        } else if self.huggingface {
            lattice::sample_huggingface(self, text, draw.p, &mut { uniform }, &mut cut);
        } else {
            lattice::sample(self, text, draw.p as f32, &mut { uniform }, &mut cut);
        }
        let (start, mut lens) = (out.len(), Vec::with_capacity(cut.len()));
        self.emit(text, cut.into_iter(), |id, len| {
            out.push(id);
            lens.push(len);
        });
        if self.byte_level {
            let mut at = 0;
            for len in &mut lens {
                let chars = text[at..at + *len].chars().count();
                at += *len;
                *len = chars;
            }
        }
        Ok(Some(self.spans(&out[start..], lens)))
    }
    fn decoder(&self, normalizer: &Normalizer, _pretokenizer: &PreTokenizer) -> Decoder {
        Decoder::Metaspace {
            unknown_surface: self.unknown_surface().to_string(),
            strip_leading: super::strip_leading(normalizer),
        }
    }
    fn unknown_id(&self) -> Option<u32> {
        Some(self.unk_id()).filter(|&id| id != NO_UNKNOWN)
    }
    fn score(&self, id: u32) -> Option<f32> {
        Some(Unigram::score(self, id))
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({"type": "unigram",
            "unk_token": String::from_utf8_lossy(self.vocab.token_bytes(self.unk_id()).unwrap_or_default()),
            "byte_fallback": self.byte_fallback(), "user_defined": self.user_defined(),
            "huggingface": self.huggingface, "byte_level": self.byte_level,
            "unknown_surface": self.unknown_surface()})
    }
    /// Subword regularization: the cut drawn with probability proportional to exp(`alpha` ×
    /// score).
    fn encode_sampled(
        &self,
        piece: &str,
        alpha: f32,
        uniform: &mut dyn FnMut() -> f64,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        let spelled = self.spelled(piece);
        let piece = spelled.as_ref();
        let mut cut = Vec::new();
        lattice::sample(self, piece, alpha, &mut { uniform }, &mut cut);
        self.emit(piece, cut.into_iter(), |id, _| out.push(id));
        Ok(())
    }
    fn check_sampling(&self, _alpha: f32) -> Result<()> {
        Ok(())
    }
}

impl Unigram {
    /// Where tokens of `lens` bytes each lie in their piece: one after another, except that
    /// tokenizers gives every byte token a run of unknown characters falls back to the whole
    /// run's place.
    fn spans(&self, ids: &[u32], lens: Vec<usize>) -> Vec<(usize, usize)> {
        let mut spans = super::spans_one_after_another(lens.clone());
        if self.huggingface && self.byte_fallback {
            let fallen = |k: usize| lens[k] == 1 && matches!(self.vocab.kind(ids[k]), Some(TokenKind::Byte(_)));
            let mut k = 0;
            while k < ids.len() {
                let run_end = (k..ids.len()).find(|&j| !fallen(j)).unwrap_or(ids.len());
                if run_end > k + 1 {
                    let whole = (spans[k].0, spans[run_end - 1].1);
                    spans[k..run_end].iter_mut().for_each(|s| *s = whole);
                }
                k = run_end.max(k + 1);
            }
        }
        spans
    }
}

/// Whether sums between `low` and `high` stay where SentencePiece never resets the running
/// score (`lattice::SCORE_RESET`): a cut is reused only from a base where it would not be.
fn no_reset(low: f32, high: f32) -> bool {
    low >= -lattice::SCORE_RESET && high <= lattice::SCORE_RESET
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model over `pieces` with their scores, `<unk>` at id 0.
    pub(crate) fn model(pieces: &[(&str, f32)], byte_fallback: bool) -> Unigram {
        let mut vocab = Vocab::default();
        vocab.push_kind("<unk>", 0, TokenKind::Unknown).unwrap();
        let mut scores = vec![0.0];
        let mut next = 1;
        if byte_fallback {
            for b in 0..=255u8 {
                vocab.push_kind(&format!("<0x{b:02X}>"), next, TokenKind::Byte(b)).unwrap();
                scores.push(0.0);
                next += 1;
            }
        }
        for (piece, score) in pieces {
            vocab.insert(next, piece.as_bytes()).unwrap();
            scores.push(*score);
            next += 1;
        }
        Unigram::new(vocab, scores, Vec::new(), byte_fallback).unwrap()
    }

    fn cut(m: &Unigram, text: &str) -> Vec<String> {
        let mut ids = Vec::new();
        m.encode_piece(text, &mut ids);
        ids.iter().map(|&id| String::from_utf8_lossy(m.vocab().token_bytes(id).unwrap()).into_owned()).collect()
    }

    #[test]
    fn the_highest_scoring_cut_wins() {
        let m = model(&[("▁ab", -1.0), ("▁a", -1.0), ("b", -1.0), ("c", -2.0), ("bc", -2.5), ("▁", -3.0)], false);
        assert_eq!(cut(&m, "▁abc"), ["▁ab", "c"]); // -3 against ▁a + bc = -3.5
        assert_eq!(cut(&m, "▁ad"), ["▁a", "<unk>"]);
        assert_eq!(cut(&m, "▁adde"), ["▁a", "<unk>"], "a run of unknown characters is one unknown");
    }

    #[test]
    fn cached_cuts_equal_fresh_ones_from_every_base() {
        // Scores with many near-ties, words that reuse them, bases across several binades. Three
        // kinds of scores: thousandths; eighths (exact ties, and sums exactly halfway between two
        // floats in the middle binades); and scores whose lowest bit is each binade's halfway
        // point in turn. Long words of unknown characters push poor paths below the binade.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let styles: [&dyn Fn(u64) -> f32; 3] =
            [&|r| -((r % 4000) as f32) / 1000.0 - 0.5, &|r| -((r % 64) as f32) / 8.0 - 0.5, &|r| {
                -(1.0 + (r % 7) as f32) - (2f32).powi(-((r % 20) as i32) - 4)
            }];
        for (style, score) in styles.iter().enumerate() {
            let pieces: Vec<(String, f32)> = ["▁", "a", "b", "c", "ab", "bc", "abc", "ca", "▁a", "▁ab", "cab", "bca"]
                .iter()
                .map(|p| (p.to_string(), score(next())))
                .collect();
            let refs: Vec<(&str, f32)> = pieces.iter().map(|(p, s)| (p.as_str(), *s)).collect();
            let m = model(&refs, false);
            let words: Vec<String> = (0..300)
                .map(|_| {
                    let len = 1 + next() % 24;
                    let letters = ['a', 'b', 'c', 'd', 'a', 'b', 'c'];
                    "▁".to_string() + &(0..len).map(|_| letters[(next() % 7) as usize]).collect::<String>()
                })
                .collect();
            let mut base = -1.5f32;
            for round in 0..20_000 {
                let word = &words[(next() % words.len() as u64) as usize];
                let (mut cached, mut fresh) = (Vec::new(), Vec::new());
                let a = m.encode_cached(word, base, &mut cached);
                let b = m.encode_piece_from(word, base, &mut fresh);
                assert_eq!(
                    (cached, a.to_bits()),
                    (fresh, b.to_bits()),
                    "style {style}: {word} from {base} (round {round})"
                );
                base = if a < -70_000.0 { -1.5 - (next() % 100) as f32 / 64.0 } else { a };
            }
        }
    }

    #[test]
    fn unknown_characters_fall_back_to_bytes() {
        let m = model(&[("▁a", -1.0)], true);
        assert_eq!(cut(&m, "▁aé"), ["▁a", "<0xC3>", "<0xA9>"]);
        let mut ids = Vec::new();
        m.encode_piece("▁aé", &mut ids);
        assert_eq!(m.piece_lens("▁aé", &ids, 0.0), Some(vec![4, 1, 1]));
    }

    #[test]
    fn a_model_needs_an_unknown_token_and_finite_scores() {
        let mut vocab = Vocab::default();
        vocab.insert(0, b"a").unwrap();
        assert!(Unigram::new(vocab.clone(), vec![0.0], Vec::new(), false).is_err());
        vocab.push_kind("<unk>", 1, TokenKind::Unknown).unwrap();
        assert!(Unigram::new(vocab.clone(), vec![f32::NAN, 0.0], Vec::new(), false).is_err());
        assert!(Unigram::new(vocab.clone(), vec![-1.0, 0.0], Vec::new(), true).is_err(), "no byte tokens");
        assert!(Unigram::new(vocab, vec![-1.0, 0.0], Vec::new(), false).is_ok());
    }
}
