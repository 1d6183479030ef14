//! tokenmill's own file format (versioned JSON, written atomically) and the human-readable
//! vocabulary listing.
//!
//! ```text
//! {"format": "tokenmill", "version": 2, "normalizer": "none", "pretokenizer": "cl100k",
//!  "special_tokens": [["<|endoftext|>", 0]],
//!  "model": {"type": "bpe", "byte_level": true, "end_of_word_suffix": null, "unk_token": null,
//!            "whole_piece_first": false,
//!            "tokens": [null, "AA==", ...],      // base64 bytes by id; null for specials and gaps
//!            "merges": [[116, 104], ...]}}       // pairs of ids in rank order
//! ```
//!
//! Version 2 adds the `wordpiece` model (`unk_token`, `continuing_subword_prefix`,
//! `max_input_chars_per_word`, `decoder_cleanup`) and `model_inputs`; version 3 adds the
//! `unigram` model (`scores` by id, `user_defined`, `byte_fallback`, `unknown_surface`), tokens of
//! other kinds (`other_tokens`: `[text, id, kind]` for control, unknown, byte and unused tokens)
//! and the SentencePiece normalizer (`sentencepiece_normalizer`); version 4 lets that normalizer
//! hold a `.model` file's character map as it is (`precompiled_charsmap`, base64) instead of
//! `rules`. Older files load as they always did, and a file of a newer version is refused
//! rather than half read.

use crate::error::{Error, Result};
use crate::models::bpe::{Bpe, BpeOptions};
use crate::models::unigram::Unigram;
use crate::models::wordpiece::WordPiece;
use crate::normalize::Normalizer;
use crate::normalize_sentencepiece::SentencePieceNormalizerSpec;
use crate::postprocess::ModelInputs;
use crate::pretokenize::PreTokenizer;
use crate::tokenizer::{Model, Tokenizer};
use crate::vocab::{TokenKind, Vocab};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

pub const FORMAT: &str = "tokenmill";
pub const VERSION: u32 = 4;

#[derive(Serialize, Deserialize)]
struct File {
    format: String,
    version: u32,
    normalizer: String,
    pretokenizer: String,
    /// A user regex whose unmatched stretches are pieces too (Hugging Face `Split`, `Isolated`).
    #[serde(default)]
    pretokenizer_keeps_gaps: bool,
    special_tokens: Vec<(String, u32)>,
    /// Control, unknown, byte and unused tokens: (text, id, kind).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    other_tokens: Vec<(String, u32, String)>,
    /// SentencePiece's normalizer, applied after `normalizer`'s steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sentencepiece_normalizer: Option<SentencePieceNormalizerSpec>,
    model: FileModel,
    /// Post-processor, truncation and padding, when set.
    #[serde(default, skip_serializing_if = "ModelInputs::is_empty")]
    model_inputs: ModelInputs,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum FileModel {
    Bpe {
        byte_level: bool,
        end_of_word_suffix: Option<String>,
        unk_token: Option<String>,
        whole_piece_first: bool,
        tokens: Vec<Option<String>>,
        /// Tokens whose ids lie far past the rest, as (id, base64 bytes): a list by id would
        /// hold a null for every id in between.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        far_tokens: Vec<(u32, String)>,
        /// `null` for rank-based models (tiktoken): ranks are ids, merges are implied; and for
        /// SentencePiece models, whose merges the `scores` imply.
        merges: Option<Vec<(u32, u32)>>,
        #[serde(default, skip_serializing_if = "is_false")]
        byte_fallback: bool,
        #[serde(default, skip_serializing_if = "is_false")]
        fuse_unk: bool,
        /// SentencePiece BPE: the score of each id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scores: Option<Vec<f32>>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        user_defined: Vec<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unknown_surface: Option<String>,
    },
    WordPiece {
        tokens: Vec<Option<String>>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        far_tokens: Vec<(u32, String)>,
        unk_token: String,
        continuing_subword_prefix: String,
        max_input_chars_per_word: usize,
        #[serde(default = "yes")]
        decoder_cleanup: bool,
    },
    Unigram {
        tokens: Vec<Option<String>>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        far_tokens: Vec<(u32, String)>,
        /// The score of each id (0 for ids that are not pieces).
        scores: Vec<f32>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        user_defined: Vec<u32>,
        byte_fallback: bool,
        #[serde(default = "default_unknown_surface")]
        unknown_surface: String,
    },
}

fn default_unknown_surface() -> String {
    crate::models::unigram::DEFAULT_UNKNOWN_SURFACE.to_string()
}

fn yes() -> bool {
    true
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The ordinary tokens of `vocab` by id (base64), and those far past the rest separately.
fn token_lists(vocab: &Vocab) -> (Vec<Option<String>>, Vec<(u32, String)>) {
    let mut tokens = vec![None; vocab.dense_len()];
    let mut far_tokens = Vec::new();
    for (id, bytes) in vocab.ordinary() {
        match tokens.get_mut(id as usize) {
            Some(slot) => *slot = Some(BASE64.encode(bytes)),
            None => far_tokens.push((id, BASE64.encode(bytes))),
        }
    }
    (tokens, far_tokens)
}

/// The tokenizer as a JSON string.
pub fn to_json(tok: &Tokenizer) -> String {
    let vocab = tok.vocab();
    let (tokens, far_tokens) = token_lists(vocab);
    let model = match tok.model() {
        Model::Bpe(bpe) => {
            let options = bpe.options();
            let sp = bpe.sentencepiece();
            FileModel::Bpe {
                byte_level: options.byte_level,
                end_of_word_suffix: options.end_of_word_suffix.clone(),
                unk_token: options.unk_token.clone(),
                whole_piece_first: options.whole_piece_first,
                tokens,
                far_tokens,
                merges: if bpe.is_rank_based() || sp.is_some() { None } else { Some(bpe.merges().to_vec()) },
                byte_fallback: options.byte_fallback,
                fuse_unk: options.fuse_unk,
                scores: sp.map(|sp| sp.scores().to_vec()),
                user_defined: sp.map(|sp| sp.user_defined().to_vec()).unwrap_or_default(),
                unknown_surface: sp.map(|sp| sp.unknown_surface().to_string()),
            }
        }
        Model::WordPiece(wp) => FileModel::WordPiece {
            tokens,
            far_tokens,
            unk_token: wp.unk_token().to_string(),
            continuing_subword_prefix: wp.prefix().to_string(),
            max_input_chars_per_word: wp.max_input_chars_per_word(),
            decoder_cleanup: wp.cleanup(),
        },
        Model::Unigram(u) => FileModel::Unigram {
            tokens,
            far_tokens,
            scores: u.scores().to_vec(),
            user_defined: u.user_defined(),
            byte_fallback: u.byte_fallback(),
            unknown_surface: u.unknown_surface().to_string(),
        },
    };
    let file = File {
        format: FORMAT.into(),
        version: VERSION,
        normalizer: tok.normalizer().spec(),
        pretokenizer: tok.pretokenizer().spec().to_string(),
        pretokenizer_keeps_gaps: tok.pretokenizer().keeps_gaps(),
        special_tokens: vocab.specials().to_vec(),
        other_tokens: vocab
            .kinded()
            .into_iter()
            .map(|(id, text, kind)| (text.to_string(), id, kind.name().into()))
            .collect(),
        // The basic one is named in the spec string already.
        sentencepiece_normalizer: tok.normalizer().sentencepiece().filter(|sp| !sp.is_basic()).cloned(),
        model_inputs: tok.inputs.clone(),
        model,
    };
    serde_json::to_string(&file).expect("tokenizer serializes")
}

/// A vocabulary from the token lists of a file and its special tokens.
fn read_vocab(
    tokens: &[Option<String>],
    far_tokens: &[(u32, String)],
    specials: &[(String, u32)],
    others: &[(String, u32, String)],
    bad: &dyn Fn(String) -> Error,
) -> Result<Vocab> {
    let mut vocab = Vocab::default();
    let listed = tokens.iter().enumerate().filter_map(|(id, t)| t.as_ref().map(|t| (id as u32, t)));
    for (id, b64) in listed.chain(far_tokens.iter().map(|(id, t)| (*id, t))) {
        let bytes = BASE64.decode(b64).map_err(|e| bad(format!("token {id}: bad base64: {e}")))?;
        vocab.insert(id, &bytes).map_err(|e| bad(e.to_string()))?;
    }
    for (text, id) in specials {
        vocab.push_special(text, Some(*id)).map_err(|e| bad(e.to_string()))?;
    }
    for (text, id, kind) in others {
        let kind = TokenKind::parse(kind, text).map_err(|e| bad(e.to_string()))?;
        vocab.push_kind(text, *id, kind).map_err(|e| bad(e.to_string()))?;
    }
    Ok(vocab)
}

/// A tokenizer from the JSON text of a tokenmill file; `path` names the source in errors.
/// This is the one way a tokenizer is assembled from a description: every importer (tiktoken,
/// `tokenizer.json`, `vocab.txt`) writes this description and hands it here.
pub fn from_json(text: &str, path: &Path) -> Result<Tokenizer> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), format: "tokenmill tokenizer", reason };
    // Read the header first, so a file of another kind or version gets a message that says so.
    #[derive(Deserialize)]
    struct Header {
        format: Option<serde_json::Value>,
        version: Option<serde_json::Value>,
    }
    let header: Header = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    if header.format.as_ref().and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(bad("no \"format\": \"tokenmill\" header (is it a file of another library?)".into()));
    }
    match header.version.as_ref().and_then(|v| v.as_u64()) {
        Some(v) if (1..=VERSION as u64).contains(&v) => {}
        _ => {
            let found = header.version.map_or("none".to_string(), |v| v.to_string());
            return Err(bad(format!(
                "format version {found}; this tokenmill reads versions 1 to {VERSION} (a newer tokenmill wrote it?)"
            )));
        }
    }
    let file: File = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    assemble(file).map_err(|e| bad(e.to_string()))
}

/// A tokenizer from a description an importer built in memory (tiktoken ranks, GPT-2 files, a
/// `tokenizer.json`): unlike a file's, its errors keep their own kind (a bad pattern is a
/// pattern error, a missing byte a configuration error) and name no file.
pub fn from_description(text: &str) -> Result<Tokenizer> {
    let file: File = serde_json::from_str(text).map_err(|e| Error::Format {
        path: "<description>".into(),
        format: "tokenmill description",
        reason: e.to_string(),
    })?;
    assemble(file)
}

fn assemble(file: File) -> Result<Tokenizer> {
    let pretokenizer = PreTokenizer::from_spec(&file.pretokenizer)?;
    let pretokenizer = if file.pretokenizer_keeps_gaps { pretokenizer.keeping_gaps() } else { pretokenizer };
    let model = match file.model {
        FileModel::Bpe {
            byte_level,
            end_of_word_suffix,
            unk_token,
            whole_piece_first,
            tokens,
            far_tokens,
            merges,
            byte_fallback,
            fuse_unk,
            scores,
            user_defined,
            unknown_surface,
        } => {
            let vocab = read_vocab(&tokens, &far_tokens, &file.special_tokens, &file.other_tokens, &Error::config)?;
            let options =
                BpeOptions { byte_level, end_of_word_suffix, unk_token, whole_piece_first, byte_fallback, fuse_unk };
            let bpe = match (scores, merges) {
                (Some(_), Some(_)) => Err(Error::config("a BPE model has merges or scores, not both")),
                (Some(scores), None) => {
                    let surface = unknown_surface.as_deref().unwrap_or(crate::models::unigram::DEFAULT_UNKNOWN_SURFACE);
                    Bpe::from_scores(vocab, scores, user_defined, options, surface)
                }
                (None, Some(merges)) => Bpe::from_merges(vocab, merges, options),
                (None, None) => Bpe::from_ranks(vocab, options),
            }?;
            Model::Bpe(bpe)
        }
        FileModel::WordPiece {
            tokens,
            far_tokens,
            unk_token,
            continuing_subword_prefix,
            max_input_chars_per_word,
            decoder_cleanup,
        } => {
            let vocab = read_vocab(&tokens, &far_tokens, &file.special_tokens, &file.other_tokens, &Error::config)?;
            let model = WordPiece::new(
                vocab,
                &unk_token,
                &continuing_subword_prefix,
                max_input_chars_per_word,
                decoder_cleanup,
            )?;
            Model::WordPiece(model)
        }
        FileModel::Unigram { tokens, far_tokens, scores, user_defined, byte_fallback, unknown_surface } => {
            let vocab = read_vocab(&tokens, &far_tokens, &file.special_tokens, &file.other_tokens, &Error::config)?;
            let model = Unigram::new(vocab, scores, user_defined, byte_fallback)?;
            Model::Unigram(model.with_unknown_surface(&unknown_surface))
        }
    };
    let mut normalizer = Normalizer::from_spec(&file.normalizer)?;
    if let Some(spec) = file.sentencepiece_normalizer {
        if spec.precompiled_charsmap.is_some() && !spec.rules.is_empty() {
            return Err(Error::config("a SentencePiece normalizer has rules or a precompiled_charsmap, not both"));
        }
        normalizer = normalizer.with_sentencepiece(spec);
    }
    let mut tok = Tokenizer::new(normalizer, pretokenizer, model);
    file.model_inputs.check(tok.vocab())?;
    tok.inputs = file.model_inputs;
    Ok(tok)
}

pub fn load(path: &Path) -> Result<Tokenizer> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|e| Error::InvalidUtf8 { path: path.to_path_buf(), offset: e.valid_up_to() as u64 })?;
    from_json(text, path)
}

pub fn save(tok: &Tokenizer, path: &Path) -> Result<()> {
    write_atomically(path, to_json(tok).as_bytes())
}

/// Writes to a temporary file beside `path`, then renames it over `path`, so a crash or a full
/// disk never leaves a half-written file under the real name. The temporary file is
/// `.NAME.PID.NONCE.tmp`, created exclusively (two saves at once never share one) with the mode
/// any new file gets; the Python layer removes those that killed saves left behind.
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SAVES: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| Error::config(format!("{}: not a file path", path.display())))?;
    let clock = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let nonce =
        (clock ^ SAVES.fetch_add(1, Ordering::Relaxed).rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    let tmp = dir.join(format!(".{}.{}.{nonce:08x}.tmp", name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// The merges in rank order: the model's list, or the one implied by its ranks.
pub fn merge_list(bpe: &Bpe) -> Vec<(u32, u32)> {
    if bpe.is_rank_based() || bpe.sentencepiece().is_some() {
        bpe.ranked_pairs().into_iter().map(|(l, r, _)| (l, r)).collect()
    } else {
        bpe.merges().to_vec()
    }
}

/// A token's bytes for people: a quoted string with escapes, or `b"..."` when not UTF-8.
pub fn display_token(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => format!("{s:?}"),
        Err(_) => format!("b\"{}\"", bytes.escape_ascii()),
    }
}

/// One line per id: `id <TAB> token <TAB> left + right` (the merge that made it, if any).
pub fn vocab_listing(tok: &Tokenizer) -> String {
    let vocab = tok.vocab();
    let merges = match tok.model() {
        Model::Bpe(bpe) => merge_list(bpe),
        Model::WordPiece(_) | Model::Unigram(_) => Vec::new(),
    };
    let mut made_by: rustc_hash::FxHashMap<u32, (u32, u32)> = rustc_hash::FxHashMap::default();
    for (l, r) in merges {
        let mut joined = vocab.token_bytes(l).unwrap_or_default().to_vec();
        joined.extend_from_slice(vocab.token_bytes(r).unwrap_or_default());
        if let Some(id) = vocab.id(&joined) {
            made_by.entry(id).or_insert((l, r));
        }
    }
    let mut out = String::from("# id\ttoken\tmerged from\n");
    for id in vocab.ids_in_order() {
        let Ok(bytes) = vocab.token_bytes(id) else {
            continue;
        };
        let mut line = format!("{id}\t{}", display_token(bytes));
        if vocab.is_special(id) {
            line.push_str("\t(special)");
        } else if let Some(&(l, r)) = made_by.get(&id) {
            let show = |t: u32| display_token(vocab.token_bytes(t).unwrap_or_default());
            line.push_str(&format!("\t{} + {}", show(l), show(r)));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
