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
use crate::models::file::{FileModel, OtherTokens};
use crate::models::PieceModel;
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::normalize_sentencepiece::SentencePieceNormalizerSpec;
use crate::pipeline::postprocess::ModelInputs;
use crate::pipeline::pretokenize::PreTokenizer;
use crate::tokenizer::Tokenizer;
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
    /// Special tokens that take in the whitespace around them: (text, lstrip, rstrip).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    special_strips: Vec<(String, bool, bool)>,
    /// Special tokens matched only as words of their own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    single_word_specials: Vec<String>,
    /// Special tokens matched in the normalized text, as the normalizer spells them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    normalized_specials: Vec<String>,
    /// The tokens decoding leaves out when it skips special tokens, where the tokenizer came with
    /// such a list (`Tokenizer::skip_list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skipped_on_decode: Option<Vec<u32>>,
    /// Special tokens decode through the byte-level table (`Tokenizer::added_through_byte_level`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    added_through_byte_level: bool,
    /// A `tokenizer.json`'s own decoder steps, when the tokenizer came with them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hf_decoder: Option<crate::pipeline::hf_decoder::HfDecoder>,
    /// A new cut on every encode (`Tokenizer::with_draw`: a file's BPE dropout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    draw: Option<crate::models::Draw>,
}

/// The tokenizer as a JSON string.
pub fn to_json(tok: &Tokenizer) -> String {
    let vocab = tok.vocab();
    let model = FileModel::of(tok.model());
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
        hf_decoder: tok.hf_decoder().cloned(),
        skipped_on_decode: tok.skip_list().map(<[u32]>::to_vec),
        added_through_byte_level: tok.added_through_byte_level(),
        draw: tok.draw(),
        special_strips: tok.special_strips(),
        single_word_specials: tok.single_word_specials(),
        normalized_specials: tok.normalized_specials(),
        model,
    };
    serde_json::to_string(&file).expect("tokenizer serializes")
}

/// A tokenizer from the JSON text of a tokenmill file; `path` names the source in errors.
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

fn assemble(file: File) -> Result<Tokenizer> {
    let pretokenizer = PreTokenizer::from_spec(&file.pretokenizer)?;
    let pretokenizer = if file.pretokenizer_keeps_gaps { pretokenizer.keeping_gaps() } else { pretokenizer };
    let others = OtherTokens { specials: &file.special_tokens, kinded: &file.other_tokens };
    let model = file.model.into_model(others)?;
    let mut normalizer = Normalizer::from_spec(&file.normalizer)?;
    if let Some(spec) = file.sentencepiece_normalizer {
        if spec.precompiled_charsmap.is_some() && !spec.rules.is_empty() {
            return Err(Error::config("a SentencePiece normalizer has rules or a precompiled_charsmap, not both"));
        }
        normalizer = normalizer.with_sentencepiece(spec);
    }
    let mut tok = Tokenizer::new(normalizer, pretokenizer, model);
    tok = tok
        .with_special_strips(&file.special_strips)?
        .with_single_word_specials(&file.single_word_specials)?
        .with_normalized_specials(&file.normalized_specials)?;
    if let Some(ids) = file.skipped_on_decode {
        if let Some(&id) = ids.iter().find(|&&id| tok.vocab().token_bytes(id).is_err()) {
            return Err(Error::config(format!("skipped_on_decode names id {id}, which no token holds")));
        }
        tok = tok.with_skipped_on_decode(ids);
    }
    if file.added_through_byte_level {
        tok = tok.with_added_through_byte_level();
    }
    if let Some(chain) = file.hf_decoder {
        tok = tok.with_hf_decoder(chain)?;
    }
    file.model_inputs.check(tok.vocab())?;
    tok.inputs = file.model_inputs;
    tok.with_draw(file.draw)
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
    let merges = tok.model().merge_list();
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
