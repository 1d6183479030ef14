//! SentencePiece `.model` files read into a tokenizer: the `ModelProto`
//! (sentencepiece's `src/sentencepiece_model.proto`) decoded with `prost`, its pieces turned
//! into a vocabulary and a Unigram or SentencePiece BPE model, its normalizer spec into
//! SentencePiece's normalizer with the precompiled character map kept as it is.
//!
//! - NORMAL and USER_DEFINED pieces are ordinary tokens (user-defined ones matched whole and
//!   never normalized); UNKNOWN, CONTROL, BYTE and UNUSED pieces are tokens of those kinds.
//! - The text is cut before each `▁` (after it, with `treat_whitespace_as_suffix`) when that
//!   cannot change the cut (`pretokenizer`), which lets the piece cache work.
//!
//! The messages are declared by hand with only the fields a tokenizer uses: prost skips the
//! others (training options, self-test data, extensions) and still checks their framing, so
//! there is no build script and no `protoc`. Decoding is linear in the file's size (prost
//! bounds nesting at 100 levels and checks every length against what is left). A 262,000-piece
//! model's pieces are one `String` each; the file itself is kept, shared, so that
//! `save_sentencepiece` can write it back byte for byte.

use crate::error::{Error, Result};
use crate::models::bpe::{Bpe, BpeOptions};
use crate::models::unigram::{Unigram, DEFAULT_UNKNOWN_SURFACE};
use crate::models::vocab::{byte_spelling, TokenKind, Vocab};
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::normalize_sentencepiece::SentencePieceNormalizerSpec;
use crate::pipeline::precompiled_charsmap::PrecompiledCharsmap;
use crate::pipeline::pretokenize::PreTokenizer;
use crate::tokenizer::{Model, Tokenizer};
use prost::Message;
use std::path::Path;

#[derive(Clone, PartialEq, prost::Message)]
struct ModelProto {
    #[prost(message, repeated, tag = "1")]
    pieces: Vec<SentencePiece>,
    #[prost(message, optional, tag = "2")]
    trainer_spec: Option<TrainerSpec>,
    #[prost(message, optional, tag = "3")]
    normalizer_spec: Option<NormalizerSpec>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct SentencePiece {
    /// A `string` in the proto, read as bytes that share the file's buffer: a 262k-piece model
    /// would otherwise allocate (and free) a string per piece. `read` checks the UTF-8.
    #[prost(bytes = "bytes", optional, tag = "1")]
    piece: Option<bytes::Bytes>,
    #[prost(float, optional, tag = "2")]
    score: Option<f32>,
    /// `Type`, an enum; as an int so that an unknown value gets our message.
    #[prost(int32, optional, tag = "3")]
    kind: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct TrainerSpec {
    #[prost(int32, optional, tag = "3")]
    model_type: Option<i32>,
    #[prost(bool, optional, tag = "24")]
    treat_whitespace_as_suffix: Option<bool>,
    #[prost(bool, optional, tag = "35")]
    byte_fallback: Option<bool>,
    #[prost(string, optional, tag = "44")]
    unk_surface: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct NormalizerSpec {
    #[prost(bytes = "vec", optional, tag = "2")]
    precompiled_charsmap: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "3")]
    add_dummy_prefix: Option<bool>,
    #[prost(bool, optional, tag = "4")]
    remove_extra_whitespaces: Option<bool>,
    #[prost(bool, optional, tag = "5")]
    escape_whitespaces: Option<bool>,
}

impl SentencePiece {
    /// The piece's text (`read` has checked that every piece is UTF-8).
    fn text(&self) -> &str {
        std::str::from_utf8(self.piece.as_deref().unwrap_or_default()).unwrap_or_default()
    }
}

// The enums' values in the proto.
const UNIGRAM: i32 = 1;
const BPE: i32 = 2;
const NORMAL: i32 = 1;
const UNKNOWN: i32 = 2;
const CONTROL: i32 = 3;
const USER_DEFINED: i32 = 4;
const UNUSED: i32 = 5;
const BYTE: i32 = 6;

const METASPACE: char = '\u{2581}';

/// The tokenizer a `.model` file's bytes describe; `path` names it in errors.
pub fn read(data: &[u8], path: &Path) -> Result<Tokenizer> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), format: "SentencePiece model", reason };
    let proto = ModelProto::decode(bytes::Bytes::copy_from_slice(data)).map_err(|e| bad(e.to_string()))?;
    let trainer = proto.trainer_spec.unwrap_or_default();
    let norm = proto.normalizer_spec.unwrap_or_default();
    let model_type = trainer.model_type.unwrap_or(UNIGRAM);
    if model_type != UNIGRAM && model_type != BPE {
        let name = match model_type {
            3 => "WORD".to_string(),
            4 => "CHAR".to_string(),
            other => format!("type-{other}"),
        };
        return Err(bad(format!(
            "SentencePiece {name} models are not supported (Unigram and BPE models are; WORD and CHAR models \
             are rarely used)"
        )));
    }
    let pieces = &proto.pieces;
    if pieces.is_empty() {
        return Err(bad("no pieces".into()));
    }

    let mut vocab = Vocab::default();
    vocab.reserve(pieces.len());
    let mut scores = Vec::with_capacity(pieces.len());
    let mut user_defined = Vec::new();
    let mut unknown = None;
    let mut has_unused = false;
    for (i, p) in pieces.iter().enumerate() {
        let id = i as u32;
        let text = std::str::from_utf8(p.piece.as_deref().unwrap_or_default())
            .map_err(|e| bad(format!("piece {i} is not UTF-8 ({e})")))?;
        if text.is_empty() {
            return Err(bad(format!("piece {i} is empty")));
        }
        // A piece seen before: the vocabulary refuses a second id for a spelling of the same
        // sort (checked here only then, to name both ids); across sorts, after the loop.
        let twice = |first: u32| bad(format!("piece {text:?} appears twice (ids {first} and {i})"));
        let score = p.score.unwrap_or(0.0);
        if !score.is_finite() {
            return Err(bad(format!("piece {i} ({text:?}) has score {score}")));
        }
        scores.push(score);
        let kind = match p.kind.unwrap_or(NORMAL) {
            NORMAL | USER_DEFINED => None,
            UNKNOWN => Some(TokenKind::Unknown),
            CONTROL => Some(TokenKind::Control),
            UNUSED => Some(TokenKind::Unused),
            BYTE => Some(TokenKind::Byte(
                byte_spelling(text).ok_or_else(|| bad(format!("byte piece {i} ({text:?}) is not spelled <0xNN>")))?,
            )),
            other => return Err(bad(format!("piece {i} ({text:?}) has unknown type {other}"))),
        };
        match kind {
            None => {
                if let Err(e) = vocab.insert(id, text.as_bytes()) {
                    return Err(match vocab.id(text.as_bytes()) {
                        Some(first) => twice(first),
                        None => bad(e.to_string()),
                    });
                }
                if p.kind == Some(USER_DEFINED) {
                    user_defined.push(id);
                }
            }
            Some(kind) => {
                if let Err(e) = vocab.push_kind(text, id, kind) {
                    return Err(match vocab.kind_id(text) {
                        Some(first) => twice(first),
                        None => bad(e.to_string()),
                    });
                }
                if kind == TokenKind::Unknown && unknown.is_none() {
                    unknown = Some(text);
                }
                has_unused |= kind == TokenKind::Unused;
            }
        }
    }
    for (kinded_id, text, _) in vocab.kinded() {
        if let Some(normal_id) = vocab.id(text.as_bytes()) {
            let (first, second) = (kinded_id.min(normal_id), kinded_id.max(normal_id));
            return Err(bad(format!("piece {text:?} appears twice (ids {first} and {second})")));
        }
    }
    let unknown = unknown.ok_or_else(|| bad("the model has no unknown piece (type UNKNOWN)".into()))?;

    let charsmap = match norm.precompiled_charsmap.as_deref() {
        None | Some([]) => None, // no map: the text stays as it is
        Some(blob) => Some(PrecompiledCharsmap::new(blob).map_err(|e| bad(format!("precompiled_charsmap: {e}")))?),
    };
    let suffix = trainer.treat_whitespace_as_suffix.unwrap_or(false);
    let escape = norm.escape_whitespaces.unwrap_or(true);
    let spec = SentencePieceNormalizerSpec {
        rules: Vec::new(),
        keep: user_defined.iter().map(|&id| pieces[id as usize].text().to_string()).collect(),
        add_dummy_prefix: norm.add_dummy_prefix.unwrap_or(true),
        remove_extra_whitespaces: norm.remove_extra_whitespaces.unwrap_or(true),
        escape_whitespaces: escape,
        treat_whitespace_as_suffix: suffix,
        precompiled_charsmap: charsmap,
        metaspace_prefix: Default::default(),
    };
    let cut = if escape && !(model_type == BPE && has_unused) { metaspace_cut(pieces, suffix) } else { "none" };
    let pretokenizer = PreTokenizer::from_spec(cut)?;

    let byte_fallback = trainer.byte_fallback.unwrap_or(false);
    let surface = trainer.unk_surface.as_deref().unwrap_or(DEFAULT_UNKNOWN_SURFACE);
    let model = if model_type == UNIGRAM {
        let unigram = Unigram::new(vocab, scores, user_defined, byte_fallback).map_err(|e| bad(e.to_string()))?;
        Model::from(unigram.with_unknown_surface(surface))
    } else {
        // Character-level; a run of unknown characters is one unknown token (SentencePiece
        // joins them when it reports pieces).
        let options = BpeOptions {
            byte_level: false,
            end_of_word_suffix: None,
            unk_token: Some(unknown.to_string()),
            whole_piece_first: false,
            byte_fallback,
            fuse_unk: true,
            drop_unknown: false,
            ..BpeOptions::default()
        };
        Model::from(Bpe::from_scores(vocab, scores, user_defined, options, surface).map_err(|e| bad(e.to_string()))?)
    };
    let normalizer = Normalizer::default().with_sentencepiece(spec);
    Ok(Tokenizer::new(normalizer, pretokenizer, model).with_sentencepiece_source(data.into()))
}

/// Where the text can be cut without changing SentencePiece's cut (which runs over the whole
/// text), so that the piece cache works: before each `▁` (after it, with `▁` as a suffix) when
/// `▁` alone is a piece and no piece holds a `▁` elsewhere than at its start (end);
/// before each `▁` that follows another character when the pieces holding an inner `▁` hold
/// only a run of them at their start (vocabularies with whitespace-only pieces such as `▁▁▁▁`,
/// Llama 2's and Mistral's): no piece then reaches across such a cut. Otherwise nowhere. A BPE
/// model with unused pieces is never cut: SentencePiece splits an unused piece back by the pair
/// that last formed it anywhere in the text.
fn metaspace_cut(pieces: &[SentencePiece], suffix: bool) -> &'static str {
    let mut alone = false;
    let mut inner = false;
    for p in pieces {
        if !matches!(p.kind.unwrap_or(NORMAL), NORMAL | USER_DEFINED) {
            continue;
        }
        let text = p.text();
        let mut chars = text.chars();
        if suffix {
            chars.next_back();
        } else {
            chars.next();
        }
        if chars.as_str().contains(METASPACE) {
            if suffix || text.trim_start_matches(METASPACE).contains(METASPACE) {
                return "none";
            }
            inner = true;
        }
        alone |= text.len() == METASPACE.len_utf8() && text.starts_with(METASPACE);
    }
    match (inner, alone, suffix) {
        (true, _, _) => "metaspace_runs",
        (false, true, false) => "metaspace",
        (false, true, true) => "metaspace_suffix",
        (false, false, _) => "none",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(text: &str, score: f32, kind: i32) -> SentencePiece {
        SentencePiece {
            piece: Some(bytes::Bytes::copy_from_slice(text.as_bytes())),
            score: Some(score),
            kind: Some(kind),
        }
    }

    fn model(pieces: Vec<SentencePiece>, model_type: i32) -> Vec<u8> {
        ModelProto {
            pieces,
            trainer_spec: Some(TrainerSpec { model_type: Some(model_type), ..Default::default() }),
            normalizer_spec: None,
        }
        .encode_to_vec()
    }

    fn small() -> Vec<SentencePiece> {
        let mut pieces = vec![piece("<unk>", 0.0, UNKNOWN), piece("<s>", 0.0, CONTROL)];
        for (text, score) in [("\u{2581}", -1.0), ("a", -2.0), ("b", -2.5), ("ab", -1.5), ("\u{2581}ab", -1.0)] {
            pieces.push(piece(text, score, NORMAL));
        }
        pieces
    }

    #[test]
    fn reads_unigram_and_bpe() {
        for model_type in [UNIGRAM, BPE] {
            let tok = read(&model(small(), model_type), Path::new("m.model")).unwrap();
            let ids = tok.encode_ordinary("ab ab").unwrap();
            assert_eq!(ids, vec![6, 6], "model type {model_type}");
            assert!(tok.sentencepiece_source().is_some());
        }
    }

    #[test]
    fn bad_models_name_the_file_and_the_fault() {
        let err = |data: &[u8]| read(data, Path::new("m.model")).unwrap_err().to_string();
        assert!(err(b"\x0a\xff").starts_with("m.model: not a valid SentencePiece model file"));
        assert!(err(&model(vec![], UNIGRAM)).contains("no pieces"));
        assert!(err(&model(small(), 3)).contains("WORD models are not supported"));
        let mut twice = small();
        twice.push(piece("a", -3.0, CONTROL));
        assert!(err(&model(twice, UNIGRAM)).contains("appears twice (ids 3 and 7)"));
        let mut nan = small();
        nan[3].score = Some(f32::NAN);
        assert!(err(&model(nan, UNIGRAM)).contains("has score NaN"));
        let mut no_unknown = small();
        no_unknown[0].kind = Some(CONTROL);
        assert!(err(&model(no_unknown, UNIGRAM)).contains("no unknown piece"));
        let mut odd = small();
        odd[4].kind = Some(9);
        assert!(err(&model(odd, UNIGRAM)).contains("unknown type 9"));
        let mut empty = small();
        empty[4].piece = None;
        assert!(err(&model(empty, BPE)).contains("piece 4 is empty"));
    }
}
