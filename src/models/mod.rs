//! The subword models, one folder each: what a model is (its vocabulary and encoding loop), how
//! it is trained, and its part of tokenmill's file. `PieceModel` is what the pipeline asks of a
//! model; `Model` is the one enum that names them and delegates each method once, so a new
//! capability is one trait method and one delegating arm here, never a `match` on the model in
//! the pipeline, the bindings or the file format.
//!
//! The contract: a model turns one pre-tokenized piece of normalized text into ids, and
//! (`piece_lens`) can say how many bytes of the piece each id covers, so offsets follow from the
//! ids rather than from a second path.

pub mod bpe;
pub mod file;
pub mod piece_cache;
pub mod unigram;
pub mod vocab;
pub mod wordlevel;
pub mod wordpiece;

use crate::error::{Error, Result};
use crate::models::vocab::Vocab;
use crate::pipeline::decoder::{Decoder, StripLeading};
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::pretokenize::PreTokenizer;
use bpe::Bpe;
use piece_cache::PieceCache;
use unigram::Unigram;
use wordpiece::WordPiece;

/// `encode_piece` through this thread's cache of frequent pieces (for models whose cut of a
/// piece depends on the piece alone).
#[inline]
pub(crate) fn encode_through_cache<M: PieceModel + ?Sized>(
    model: &M,
    cache: &mut PieceCache,
    piece: &str,
    out: &mut Vec<u32>,
) -> Result<()> {
    if piece.len() <= piece_cache::MAX_PIECE {
        cache.ids(piece.as_bytes(), out, |out| model.encode_piece(piece, out))
    } else if piece.len() <= piece_cache::MAX_RUN_PIECE && piece.is_ascii() {
        cache.run_ids(piece.as_bytes(), out, |out| model.encode_piece(piece, out))
    } else {
        model.encode_piece(piece, out)
    }
}

/// Byte ranges of tokens `lens` long, each right after the one before.
pub(crate) fn spans_one_after_another(lens: Vec<usize>) -> Vec<(usize, usize)> {
    let mut at = 0;
    lens.into_iter()
        .map(|len| {
            at += len;
            (at - len, at)
        })
        .collect()
}

/// What the pipeline asks of a subword model.
pub trait PieceModel {
    fn vocab(&self) -> &Vocab;

    /// `"bpe"`, `"wordpiece"` or `"unigram"`.
    fn model_type(&self) -> &'static str;

    /// Appends the ids of one pre-tokenized piece to `out`.
    fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) -> Result<()>;

    /// `encode_piece` through this thread's cache of frequent pieces. `carry` is what the
    /// text's pieces before this one leave for the next (Unigram's running score; see
    /// `Unigram::encode_cached`); other models ignore it.
    #[inline]
    fn encode_cached(&self, cache: &mut PieceCache, piece: &str, carry: &mut f32, out: &mut Vec<u32>) -> Result<()> {
        let _ = carry;
        encode_through_cache(self, cache, piece, out)
    }

    /// How many bytes of `piece` each of its `ids` covers, when that can be told (`None` for
    /// tokens that stand for text they do not spell, such as a character-level unknown token).
    /// `carry`: as for `encode_cached`, the value before this piece. Where the model left
    /// characters out (Hugging Face's BPE without an unknown token) they sum to less than the
    /// piece, and each token is placed right after the one before.
    fn piece_lens(&self, piece: &str, ids: &[u32], carry: f32) -> Option<Vec<usize>>;

    /// Where in `piece` each of its `ids` lies, as byte ranges: by default one after another
    /// (`piece_lens`). A model that places tokens otherwise says so here.
    fn piece_spans(&self, piece: &str, ids: &[u32], carry: f32) -> Option<Vec<(usize, usize)>> {
        self.piece_lens(piece, ids, carry).map(spans_one_after_another)
    }

    /// The decoder that suits this model, given how the text is normalized and pre-tokenized.
    fn decoder(&self, normalizer: &Normalizer, pretokenizer: &PreTokenizer) -> Decoder;

    /// The id that stands for text the vocabulary cannot spell, if the model has one.
    fn unknown_id(&self) -> Option<u32>;

    /// The score of a token (Unigram and SentencePiece BPE), `None` for models without scores.
    fn score(&self, id: u32) -> Option<f32>;

    /// The model's options (not its vocabulary) as JSON, e.g. `{"type": "wordpiece", ...}`.
    fn config(&self) -> serde_json::Value;

    /// Merges in rank order (BPE; empty for other models).
    fn merge_list(&self) -> Vec<(u32, u32)> {
        Vec::new()
    }

    /// Appends one piece's ids cut by sampling: `alpha` as `check_sampling` accepts it, `uniform`
    /// draws from [0, 1).
    fn encode_sampled(
        &self,
        piece: &str,
        alpha: f32,
        uniform: &mut dyn FnMut() -> f64,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        let _ = (piece, alpha, uniform, out);
        Err(self.no_sampling())
    }

    /// Whether this model can sample with `alpha` (finite and >= 0 is checked before).
    fn check_sampling(&self, alpha: f32) -> Result<()> {
        let _ = alpha;
        Err(self.no_sampling())
    }

    /// Appends the ids of a cut of `piece` drawn as tokenizers' models draw one on every encode
    /// when they sample (`Draw`), and returns where each lies in the piece (None: tokens that do
    /// not spell their text). The piece cache, which holds best cuts, is never touched.
    fn encode_drawn(
        &self,
        _piece: &str,
        _draw: Draw,
        _uniform: &mut dyn FnMut() -> f64,
        _out: &mut Vec<u32>,
    ) -> Result<Option<Vec<(usize, usize)>>> {
        Err(self.no_sampling())
    }
    fn no_sampling(&self) -> Error {
        Error::config(format!("sampling needs a Unigram or BPE model; this one is {}", self.model_type()))
    }
}

/// How tokenizers' models draw a new cut on every encode: BPE with `dropout` `p` (each merge
/// skipped with probability `p`), Unigram with `alpha` `p` (a cut drawn with probability
/// proportional to exp(`p` × score), among the `nbest` best cuts, or all of them when 0).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Draw {
    pub p: f64,
    pub nbest: usize,
}

/// The subword model at the heart of a tokenizer; the match happens once per piece, and each
/// arm is the model's own monomorphic loop.
#[derive(Debug, Clone)]
pub enum Model {
    Bpe(Bpe),
    WordPiece(WordPiece),
    Unigram(Unigram),
    WordLevel(wordlevel::WordLevel),
}

macro_rules! each_model {
    ($model:expr, $m:ident => $body:expr) => {
        match $model {
            Model::Bpe($m) => $body,
            Model::WordPiece($m) => $body,
            Model::Unigram($m) => $body,
            Model::WordLevel($m) => $body,
        }
    };
}

impl PieceModel for Model {
    fn vocab(&self) -> &Vocab {
        each_model!(self, m => PieceModel::vocab(m))
    }
    fn model_type(&self) -> &'static str {
        each_model!(self, m => PieceModel::model_type(m))
    }
    #[inline]
    fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) -> Result<()> {
        each_model!(self, m => PieceModel::encode_piece(m, piece, out))
    }
    #[inline]
    fn encode_cached(&self, cache: &mut PieceCache, piece: &str, carry: &mut f32, out: &mut Vec<u32>) -> Result<()> {
        each_model!(self, m => PieceModel::encode_cached(m, cache, piece, carry, out))
    }
    fn piece_lens(&self, piece: &str, ids: &[u32], carry: f32) -> Option<Vec<usize>> {
        each_model!(self, m => PieceModel::piece_lens(m, piece, ids, carry))
    }
    fn piece_spans(&self, piece: &str, ids: &[u32], carry: f32) -> Option<Vec<(usize, usize)>> {
        each_model!(self, m => PieceModel::piece_spans(m, piece, ids, carry))
    }
    fn decoder(&self, normalizer: &Normalizer, pretokenizer: &PreTokenizer) -> Decoder {
        each_model!(self, m => PieceModel::decoder(m, normalizer, pretokenizer))
    }
    fn unknown_id(&self) -> Option<u32> {
        each_model!(self, m => PieceModel::unknown_id(m))
    }
    fn score(&self, id: u32) -> Option<f32> {
        each_model!(self, m => PieceModel::score(m, id))
    }
    fn config(&self) -> serde_json::Value {
        each_model!(self, m => PieceModel::config(m))
    }
    fn merge_list(&self) -> Vec<(u32, u32)> {
        each_model!(self, m => PieceModel::merge_list(m))
    }
    fn encode_sampled(
        &self,
        piece: &str,
        alpha: f32,
        uniform: &mut dyn FnMut() -> f64,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        each_model!(self, m => PieceModel::encode_sampled(m, piece, alpha, uniform, out))
    }
    fn check_sampling(&self, alpha: f32) -> Result<()> {
        each_model!(self, m => PieceModel::check_sampling(m, alpha))
    }
    fn encode_drawn(
        &self,
        piece: &str,
        draw: Draw,
        uniform: &mut dyn FnMut() -> f64,
        out: &mut Vec<u32>,
    ) -> Result<Option<Vec<(usize, usize)>>> {
        each_model!(self, m => PieceModel::encode_drawn(m, piece, draw, uniform, out))
    }
}

impl Model {
    /// The BPE model, when this is one (its merges, options and rank tables).
    pub fn as_bpe(&self) -> Option<&Bpe> {
        match self {
            Model::Bpe(m) => Some(m),
            _ => None,
        }
    }

    /// The Unigram model, when this is one (n-best and its lattice).
    pub fn as_unigram(&self) -> Option<&Unigram> {
        match self {
            Model::Unigram(m) => Some(m),
            _ => None,
        }
    }

    /// The unknown token's text, when the model has one.
    pub fn unk_token(&self) -> Option<String> {
        let id = self.unknown_id()?;
        self.vocab().token_bytes(id).ok().map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

impl From<Bpe> for Model {
    fn from(m: Bpe) -> Self {
        Model::Bpe(m)
    }
}

impl From<WordPiece> for Model {
    fn from(m: WordPiece) -> Self {
        Model::WordPiece(m)
    }
}

impl From<wordlevel::WordLevel> for Model {
    fn from(m: wordlevel::WordLevel) -> Self {
        Model::WordLevel(m)
    }
}

impl From<Unigram> for Model {
    fn from(m: Unigram) -> Self {
        Model::Unigram(m)
    }
}

/// Where SentencePiece's decoder drops the leading `▁` of the text: one piece's when the
/// normalizer added a dummy prefix, every piece's until some text when it removed extra spaces.
pub(crate) fn strip_leading(normalizer: &Normalizer) -> StripLeading {
    match normalizer.sentencepiece() {
        Some(sp) if sp.remove_extra_whitespaces => StripLeading::All,
        Some(sp) if sp.add_dummy_prefix => StripLeading::One,
        _ => StripLeading::Never,
    }
}
