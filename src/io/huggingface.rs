//! Hugging Face `tokenizer.json`, read in one pass by serde: the model's vocabulary, merges and
//! added tokens become Rust values here (the per-token work: a cl100k-sized file has 100k tokens
//! and 100k merges), while the small component sections — normalizer, pre-tokenizer,
//! post-processor, decoder, truncation, padding, the model's options — come back as one JSON
//! document of their own, a few kilobytes, for the caller to read.
//!
//! Before this reader, Python parsed the whole file, converted every token and checked every id
//! in Python, wrote a description of it as JSON and Rust parsed that again: 1.2 s for cl100k
//! against 0.32 s for `tokenizers.Tokenizer.from_file`.
//!
//! Byte-level BPE files spell each byte as a printable character: bytes printable in Latin-1
//! stand for themselves, the other 68 are moved to code points from U+0100 on, in order.

use crate::error::{Error, Result};
use crate::models::bpe::{Bpe, BpeOptions};
use crate::models::unigram::Unigram;
use crate::models::vocab::{byte_spelling, TokenKind, Vocab};
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::normalize_sentencepiece::SentencePieceNormalizerSpec;
use crate::pipeline::postprocess::ModelInputs;
use crate::pipeline::pretokenize::PreTokenizer;
use crate::tokenizer::Tokenizer;
use rustc_hash::FxHashMap;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::fmt;
use std::path::{Path, PathBuf};

/// A `tokenizer.json` read: the big tables as values, everything else as JSON.
pub struct HfDocument {
    path: PathBuf,
    /// The model's vocabulary, token text → id, in file order.
    pub vocab: Vec<(String, u32)>,
    /// The score of each id when the vocabulary is a list of `[piece, score]` (Unigram).
    pub scores: Option<Vec<f64>>,
    /// BPE merges as the two token texts, in rank order (empty for other models).
    pub merges: Vec<(String, String)>,
    /// `added_tokens` as (content, id).
    pub added: Vec<(String, u32)>,
    /// The added tokens marked `special`: what decoding that skips special tokens leaves out
    /// (the others are matched in text all the same).
    pub special: Vec<u32>,
    /// The added tokens that take in the whitespace around them: (content, lstrip, rstrip).
    pub strips: Vec<(String, bool, bool)>,
    /// The added tokens matched only as words of their own.
    pub single_words: Vec<String>,
    /// The added tokens matched in the normalized text (`normalized: true`).
    pub normalized: Vec<String>,
    /// The `post_processor`, `truncation` and `padding` sections (`huggingface_inputs.rs`).
    pub inputs: ModelInputs,
    /// The `decoder` section (also in `sections`), for models that decode with it.
    decoder: Option<serde_json::Value>,
    /// A BPE model's `continuing_subword_prefix` and `end_of_word_suffix` (None where absent,
    /// null or empty: an empty mark changes nothing).
    marks: (Option<String>, Option<String>),
    /// The document without `model.vocab`, `model.merges`, `added_tokens` and the sections read
    /// into `inputs`.
    pub sections: String,
}

/// The model's vocabulary in file order, and the scores of a list of `[piece, score]`.
#[derive(Deserialize)]
struct VocabEntries(#[serde(deserialize_with = "vocab_entries")] (Vec<(String, u32)>, Option<Vec<f64>>));

/// A merge as `"left right"` (older files) or `["left", "right"]` (newer ones, which allow
/// spaces in tokens).
#[derive(Deserialize)]
#[serde(untagged)]
enum Merge {
    Joined(String),
    Pair(String, String),
}

#[derive(Deserialize)]
struct AddedToken {
    content: String,
    id: u32,
    /// Whether decoding that skips special tokens leaves it out (files without the field: yes).
    #[serde(default = "yes")]
    special: bool,
    /// Whether a match takes in the whitespace before / after it.
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    /// Whether it is matched only as a word of its own.
    #[serde(default)]
    single_word: bool,
    /// Whether it is matched in the normalized text (as the normalizer spells it); files without
    /// the field: the ordinary added tokens are, the special ones not (as `tokenizers` reads them).
    normalized: Option<bool>,
}

fn yes() -> bool {
    true
}

/// Reads the vocabulary as a list in file order whether it is a map (BPE, WordPiece) or a list
/// of `[piece, score]` (Unigram: ids are positions; the scores stay with the caller).
#[allow(clippy::type_complexity)]
fn vocab_entries<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<(Vec<(String, u32)>, Option<Vec<f64>>), D::Error> {
    struct Entries;
    impl<'de> Visitor<'de> for Entries {
        type Value = (Vec<(String, u32)>, Option<Vec<f64>>);
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map of token to id, or a list of [token, score]")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
            while let Some(entry) = map.next_entry::<String, u32>()? {
                out.push(entry);
            }
            Ok((out, None))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            let mut scores = Vec::with_capacity(out.capacity());
            while let Some((piece, score)) = seq.next_element::<(String, f64)>()? {
                let id = u32::try_from(out.len()).map_err(serde::de::Error::custom)?;
                out.push((piece, id));
                scores.push(score);
            }
            Ok((out, Some(scores)))
        }
    }
    d.deserialize_any(Entries)
}

impl HfDocument {
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&bytes, path)
    }

    pub fn parse(bytes: &[u8], path: &Path) -> Result<Self> {
        let bad = |reason: String| Error::Format { path: path.to_path_buf(), format: "tokenizer.json", reason };
        let text = std::str::from_utf8(bytes)
            .map_err(|e| Error::InvalidUtf8 { path: path.to_path_buf(), offset: e.valid_up_to() as u64 })?;
        let mut top: serde_json::Map<String, serde_json::Value> = serde_json::Map::new();
        let raw: std::collections::BTreeMap<&str, &RawValue> = serde_json::from_str(text)
            .map_err(|e| Error::Format { path: path.to_path_buf(), format: "JSON", reason: e.to_string() })?;
        let mut model = None;
        let mut added = Vec::new();
        let mut special = Vec::new();
        let mut strips = Vec::new();
        let mut single_words = Vec::new();
        let mut normalized = Vec::new();
        for (key, value) in raw {
            match key {
                "model" => {
                    let section: std::collections::BTreeMap<&str, &RawValue> =
                        serde_json::from_str(value.get()).map_err(|e| bad(format!("model: {e}")))?;
                    model = Some(section);
                }
                "added_tokens" => {
                    let tokens: Option<Vec<AddedToken>> =
                        serde_json::from_str(value.get()).map_err(|e| bad(format!("added_tokens: {e}")))?;
                    let tokens = tokens.unwrap_or_default();
                    special = tokens.iter().filter(|t| t.special).map(|t| t.id).collect();
                    single_words = tokens.iter().filter(|t| t.single_word).map(|t| t.content.clone()).collect();
                    normalized = tokens
                        .iter()
                        .filter(|t| t.normalized.unwrap_or(!t.special))
                        .map(|t| t.content.clone())
                        .collect();
                    strips = tokens
                        .iter()
                        .filter(|t| t.lstrip || t.rstrip)
                        .map(|t| (t.content.clone(), t.lstrip, t.rstrip))
                        .collect();
                    added = tokens.into_iter().map(|t| (t.content, t.id)).collect();
                }
                _ => {
                    let value = serde_json::from_str(value.get()).map_err(|e| bad(format!("{key}: {e}")))?;
                    top.insert(key.to_string(), value);
                }
            }
        }
        let model = model.ok_or_else(|| bad("no model section (is it a Hugging Face tokenizer.json?)".into()))?;
        let mut rest = serde_json::Map::new();
        let (mut vocab, mut scores, mut merges) = (Vec::new(), None, Vec::new());
        for (key, value) in model {
            let field = |e: serde_json::Error| bad(format!("model.{key}: {e}"));
            match key {
                "vocab" => (vocab, scores) = serde_json::from_str::<VocabEntries>(value.get()).map_err(field)?.0,
                "merges" => merges = serde_json::from_str::<Vec<Merge>>(value.get()).map_err(field)?,
                _ => {
                    rest.insert(key.to_string(), serde_json::from_str(value.get()).map_err(field)?);
                }
            }
        }
        let mark = |key: &str| -> Result<Option<String>> {
            match rest.get(key) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(serde_json::Value::String(s)) => Ok((!s.is_empty()).then(|| s.clone())),
                Some(other) => Err(bad(format!("model.{key} is {other}, not a string"))),
            }
        };
        let marks = (mark("continuing_subword_prefix")?, mark("end_of_word_suffix")?);
        top.insert("model".into(), serde_json::Value::Object(rest));
        let decoder = top.get("decoder").filter(|d| !d.is_null()).cloned();
        let inputs = crate::io::huggingface_inputs::read(
            top.remove("post_processor").as_ref(),
            top.remove("truncation").as_ref(),
            top.remove("padding").as_ref(),
            &bad,
        )?;
        let merges = merges
            .into_iter()
            .enumerate()
            .map(|(n, merge)| match merge {
                Merge::Pair(left, right) => Ok((left, right)),
                Merge::Joined(joined) => match joined.split_once(' ') {
                    Some((left, right)) if !right.contains(' ') => Ok((left.to_string(), right.to_string())),
                    _ => Err(bad(format!("merge {n} ({joined:?}) is not two tokens separated by one space"))),
                },
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(HfDocument {
            path: path.to_path_buf(),
            vocab,
            scores,
            merges,
            added,
            special,
            strips,
            single_words,
            normalized,
            inputs,
            decoder,
            marks,
            sections: serde_json::Value::Object(top).to_string(),
        })
    }

    fn error(&self, reason: String) -> Error {
        Error::Format { path: self.path.clone(), format: "tokenizer.json", reason }
    }

    /// A list vocabulary gives ids by position (Unigram's `[piece, score]`); a BPE or WordPiece
    /// model names its ids, and reading a list as one would give them silently wrong.
    fn vocab_is_a_map(&self, model: &str) -> Result<()> {
        match self.scores {
            Some(_) => Err(self.error(format!("a {model} model's vocab maps each token to its id, not a list"))),
            None => Ok(()),
        }
    }

    /// A byte-level BPE tokenizer from this file: the added tokens are special tokens, every
    /// other token is read as byte-level text, the merges become pairs of ids; `settings` are
    /// what the caller read of the components.
    pub fn byte_level_bpe(&self, settings: ByteLevelSettings) -> Result<Tokenizer> {
        self.vocab_is_a_map("BPE")?;
        let parts =
            ByteLevelParts { vocab: &self.vocab, merges: &self.merges, added: &self.added, marks: self.marks.clone() };
        let tok = parts.tokenizer(&|reason| self.error(reason), settings)?;
        // Byte-level tokens decode as the bytes they spell (the `ByteLevel` decoder); a file
        // without a decoder joins the token strings with spaces, as tokenizers does.
        let tok = match self.decoder.as_ref().map(|d| d.get("type").and_then(|t| t.as_str())) {
            None => self.with_own_decoder(tok)?,
            Some(Some("ByteLevel")) => tok.with_added_through_byte_level(),
            Some(other) => {
                let name = other.unwrap_or("without a type");
                return Err(self.error(format!("decoder {name} on a byte-level BPE file is not supported")));
            }
        };
        self.finish(tok)
    }

    /// The tokenizer decoding with this file's own decoder steps (none: the tokens' strings
    /// joined), as `tokenizers` decodes.
    fn with_own_decoder(&self, tok: Tokenizer) -> Result<Tokenizer> {
        let chain = match &self.decoder {
            Some(d) => serde_json::from_value(d.clone()).map_err(|e| self.error(format!("decoder: {e}")))?,
            None => crate::pipeline::hf_decoder::HfDecoder::JoinedWithSpaces,
        };
        tok.with_hf_decoder(chain).map_err(|e| self.error(e.to_string()))
    }

    /// What every reader adds last: which tokens decoding leaves out when it skips special ones.
    fn finish(&self, tok: Tokenizer) -> Result<Tokenizer> {
        let tok = tok
            .with_special_strips(&self.strips)
            .and_then(|tok| tok.with_single_word_specials(&self.single_words))
            .and_then(|tok| tok.with_normalized_specials(&self.normalized))
            .map_err(|e| self.error(format!("added_tokens: {e}")))?;
        // tokenizers skips a special token by its string, which for a normalized one is its
        // normalized spelling: one the normalizer changes into no special token's content (a
        // lowercased `[MASK]`) is kept.
        let contents: rustc_hash::FxHashSet<&str> =
            self.added.iter().filter(|(_, id)| self.special.contains(id)).map(|(t, _)| t.as_str()).collect();
        let skipped = self
            .special
            .iter()
            .copied()
            .filter(|&id| tok.normalized_spelling(id).is_none_or(|spelled| contents.contains(spelled)))
            .collect();
        Ok(tok.with_skipped_on_decode(skipped))
    }

    /// A character-level BPE tokenizer from this file: the added tokens are special tokens (the
    /// unknown token among them), `<0xNN>` tokens byte tokens when the model falls back to
    /// bytes, the others their text; merges by rank; the file's own decoder steps.
    pub fn char_bpe(&self, settings: CharBpeSettings) -> Result<Tokenizer> {
        self.vocab_is_a_map("BPE")?;
        let unk_token = settings.unk_token.clone();
        let vocab = self.piece_vocab(|_, text| Some(text) == unk_token.as_deref(), settings.byte_fallback)?;
        let id_of: FxHashMap<&str, u32> = self.vocab.iter().map(|(t, id)| (t.as_str(), *id)).collect();
        let merges = self
            .merges
            .iter()
            .enumerate()
            .map(|(n, (l, r))| match (id_of.get(l.as_str()), id_of.get(r.as_str())) {
                (Some(&a), Some(&b)) => Ok((a, b)),
                _ => Err(self.error(format!("merge {n} ({l:?}, {r:?}) names a token the vocabulary lacks"))),
            })
            .collect::<Result<Vec<_>>>()?;
        let (prefix, suffix) = self.marks.clone();
        let options = BpeOptions {
            byte_level: false,
            joined_suffix: suffix.is_some(),
            end_of_word_suffix: suffix,
            continuing_subword_prefix: prefix,
            unk_token: settings.unk_token,
            whole_piece_first: settings.whole_piece_first,
            byte_fallback: settings.byte_fallback,
            fuse_unk: settings.fuse_unk,
            // tokenizers' BPE without an unknown token leaves such characters out.
            drop_unknown: true,
        };
        let bpe = Bpe::from_merges(vocab, merges, options).map_err(|e| self.error(e.to_string()))?;
        let normalizer = Normalizer::from_spec(&settings.steps)?.with_sentencepiece(settings.normalizer);
        let mut tok = Tokenizer::new(normalizer, PreTokenizer::from_spec(&settings.pretokenizer)?, bpe);
        tok = self.with_own_decoder(tok)?;
        self.inputs.check(tok.vocab()).map_err(|e| self.error(e.to_string()))?;
        tok.inputs = self.inputs.clone();
        self.finish(tok)
    }

    /// A WordLevel tokenizer from this file: the model's words, the added tokens special, the
    /// normalizer and pre-tokenizer specs the caller read, the file's own decoder steps.
    pub fn wordlevel(&self, unk_token: &str, normalizer: &str, pretokenizer: &str) -> Result<Tokenizer> {
        self.vocab_is_a_map("WordLevel")?;
        let vocab = self.piece_vocab(|_, text| text == unk_token, false)?;
        let model =
            crate::models::wordlevel::WordLevel::new(vocab, unk_token).map_err(|e| self.error(e.to_string()))?;
        let mut tok = Tokenizer::new(Normalizer::from_spec(normalizer)?, PreTokenizer::from_spec(pretokenizer)?, model);
        tok = self.with_own_decoder(tok)?;
        self.inputs.check(tok.vocab()).map_err(|e| self.error(e.to_string()))?;
        tok.inputs = self.inputs.clone();
        self.finish(tok)
    }

    /// A WordPiece tokenizer from this file: the model's vocabulary with the added tokens (an
    /// added token the model lacks joins it at its id), each added token special.
    pub fn wordpiece(&self, settings: crate::io::wordpiece::WordPieceSettings) -> Result<Tokenizer> {
        self.vocab_is_a_map("WordPiece")?;
        let mut tokens = self.vocab.clone();
        let known: rustc_hash::FxHashSet<&str> = self.vocab.iter().map(|(t, _)| t.as_str()).collect();
        tokens.extend(self.added.iter().filter(|(t, _)| !known.contains(t.as_str())).cloned());
        let specials: Vec<String> = self.added.iter().map(|(t, _)| t.clone()).collect();
        crate::io::wordpiece::build(&tokens, &specials, settings)
            .map_err(|e| match e {
                Error::Config(reason) => self.error(reason),
                other => other,
            })
            .and_then(|tok| self.finish(tok))
    }
}

/// What a character-level BPE file's components say (SentencePiece BPE as transformers
/// converts it: Llama 2, Mistral), as the caller read them.
pub struct CharBpeSettings {
    /// The model's `unk_token`, if it names one.
    pub unk_token: Option<String>,
    pub byte_fallback: bool,
    pub fuse_unk: bool,
    /// A piece that is a token stays whole (`ignore_merges`).
    pub whole_piece_first: bool,
    /// The whitespace steps (`Prepend`/`Replace` normalizers, or a `Metaspace` pre-tokenizer)
    /// as SentencePiece-normalizer flags.
    pub normalizer: SentencePieceNormalizerSpec,
    /// `metaspace` (a `Metaspace` that splits), `none`, or Hugging Face's splitting steps.
    pub pretokenizer: String,
    /// The file's other normalizer steps (a normalizer spec), run before the whitespace steps.
    pub steps: String,
}

/// What a byte-level BPE file's components say besides its tables.
pub struct ByteLevelSettings<'a> {
    /// A preset name or a regex; `keep_gaps` for a Split whose unmatched stretches are pieces.
    pub pattern: &'a str,
    pub keep_gaps: bool,
    /// A normalizer spec.
    pub normalizer: &'a str,
    /// A piece that is a token stays whole (`ignore_merges`).
    pub whole_piece_first: bool,
    /// Bytes the vocabulary lacks are left out (`tokenizers`, without an unknown token)
    /// rather than refused.
    pub drop_unknown: bool,
    pub inputs: ModelInputs,
}

/// What a Unigram `tokenizer.json`'s components say, as the caller read them.
pub struct UnigramSettings {
    /// None: the model has no unknown piece (Hugging Face's cut only), and text that would
    /// need one is an error, as in tokenizers.
    pub unk_id: Option<u32>,
    pub byte_fallback: bool,
    /// SentencePiece's normalizer: the whitespace flags and the `Precompiled` map.
    pub normalizer: SentencePieceNormalizerSpec,
    /// Normalizer steps before the map (a spec: `none`, or Hugging Face's as `hf:` + JSON).
    pub steps: String,
    /// `metaspace` or `none`, or with `huggingface` any pre-tokenizer spec.
    pub pretokenizer: String,
    pub inputs: ModelInputs,
    /// Cut as `tokenizers` cuts (`Unigram::huggingface`); the normalizer is then `steps` (the
    /// file's whole chain) followed by `normalizer` (its `Metaspace` replacement and prefix).
    pub huggingface: bool,
    /// Behind a `ByteLevel` pre-tokenizer (Hugging Face's cut only): pieces are cut in their
    /// byte-level spelling, as the vocabulary spells them.
    pub byte_level: bool,
}

impl HfDocument {
    /// A Unigram tokenizer from this file: the vocabulary's pieces and scores, the added tokens
    /// as special tokens (an added token at a piece's id must spell that piece), `unk_id` the
    /// unknown piece, and with byte fallback each `<0xNN>` piece a byte token.
    pub fn unigram(&self, settings: UnigramSettings) -> Result<Tokenizer> {
        let scores = self
            .scores
            .as_ref()
            .ok_or_else(|| self.error("a Unigram model's vocab is a list of [piece, score]".into()))?;
        match settings.unk_id {
            Some(unk) if unk as usize >= self.vocab.len() => {
                return Err(self.error(format!("unk_id {unk} is past the model's {} pieces", self.vocab.len())))
            }
            None if !settings.huggingface => {
                return Err(
                    self.error("a Unigram model without an unknown piece is read with Hugging Face's cut only".into())
                )
            }
            _ => {}
        }
        let vocab = self.piece_vocab(|id, _| Some(id) == settings.unk_id, settings.byte_fallback)?;
        // One score per piece of the model's own vocabulary: added tokens past it have none,
        // and are matched in text only.
        let scores = scores.clone();
        if settings.byte_level && !settings.huggingface {
            return Err(self.error("a byte-level Unigram model is read with Hugging Face's cut only".into()));
        }
        let model = if settings.huggingface {
            Unigram::huggingface(vocab, scores, settings.byte_fallback).map(|m| m.with_byte_level(settings.byte_level))
        } else {
            let narrow = scores.iter().map(|&s| s as f32).collect();
            Unigram::new(vocab, narrow, Vec::new(), settings.byte_fallback)
        };
        let model = model.map_err(|e| self.error(e.to_string()))?;
        let normalizer = Normalizer::from_spec(&settings.steps)?.with_sentencepiece(settings.normalizer);
        let tok = Tokenizer::new(normalizer, PreTokenizer::from_spec(&settings.pretokenizer)?, model);
        let mut tok = self.with_own_decoder(tok)?;
        settings.inputs.check(tok.vocab()).map_err(|e| self.error(e.to_string()))?;
        tok.inputs = settings.inputs;
        self.finish(tok)
    }
}

impl HfDocument {
    /// The vocabulary of a SentencePiece-style model (Unigram, character-level BPE): an added
    /// token at a piece's id must spell that piece and becomes a special token; the unknown piece
    /// (`is_unk`) stays the unknown token — listed as added, it is matched in text and skipped as
    /// a special token too, as Hugging Face does —; with byte fallback each `<0xNN>` piece is a
    /// byte token; the other pieces are their text.
    fn piece_vocab(&self, is_unk: impl Fn(u32, &str) -> bool, byte_fallback: bool) -> Result<Vocab> {
        let added: FxHashMap<u32, &str> = self.added.iter().map(|(t, id)| (*id, t.as_str())).collect();
        let mut vocab = Vocab::default();
        vocab.reserve(self.vocab.len());
        for (text, id) in &self.vocab {
            let unknown = is_unk(*id, text);
            if let Some(&spelled) = added.get(id) {
                if spelled != text {
                    return Err(
                        self.error(format!("added token {spelled:?} has id {id}, which is {text:?} in the model"))
                    );
                }
                if !unknown {
                    continue;
                }
            }
            let made = if unknown {
                vocab.push_kind(text, *id, TokenKind::Unknown)
            } else if let Some(b) = byte_piece(text).filter(|_| byte_fallback) {
                vocab.push_kind(text, *id, TokenKind::Byte(b))
            } else {
                vocab.insert(*id, text.as_bytes())
            };
            made.map_err(|e| self.error(e.to_string()))?;
        }
        let mut specials: Vec<(u32, &str)> = added.into_iter().collect();
        specials.sort_unstable();
        for (id, text) in specials {
            vocab.push_special(text, Some(id)).map_err(|e| self.error(e.to_string()))?;
        }
        Ok(vocab)
    }
}

/// The byte a `<0xNN>` piece stands for (upper-case hex, as SentencePiece writes them).
fn byte_piece(text: &str) -> Option<u8> {
    let upper = text.bytes().all(|c| !c.is_ascii_lowercase() || c == b'x');
    byte_spelling(text).filter(|_| upper)
}

/// GPT-2's `vocab.json` + `merges.txt`: byte-level BPE with GPT-2's pattern; the `<|...|>` tokens
/// of the vocabulary are special tokens.
pub fn gpt2_files(vocab_path: &Path, merges_path: &Path) -> Result<Tokenizer> {
    let raw = std::fs::read(vocab_path).map_err(|e| Error::io(vocab_path, e))?;
    let (vocab, scores) = serde_json::from_slice::<VocabEntries>(&raw)
        .map_err(|e| Error::Format {
            path: vocab_path.to_path_buf(),
            format: "GPT-2 vocab.json",
            reason: e.to_string(),
        })?
        .0;
    if scores.is_some() {
        let reason = "expected a map of token to id, not a list".to_string();
        return Err(Error::Format { path: vocab_path.to_path_buf(), format: "GPT-2 vocab.json", reason });
    }
    let raw = std::fs::read(merges_path).map_err(|e| Error::io(merges_path, e))?;
    let text = std::str::from_utf8(&raw)
        .map_err(|e| Error::InvalidUtf8 { path: merges_path.to_path_buf(), offset: e.valid_up_to() as u64 })?;
    let mut merges = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with("#version") {
            continue;
        }
        match line.split_once(' ') {
            Some((left, right)) if !right.contains(' ') => merges.push((left.to_string(), right.to_string())),
            _ => {
                let shown: String = line.chars().take(60).collect();
                return Err(Error::Format {
                    path: format!("{}:{}", merges_path.display(), index + 1).into(),
                    format: "merges.txt",
                    reason: format!("not two tokens separated by one space: {shown:?}"),
                });
            }
        }
    }
    let added: Vec<(String, u32)> =
        vocab.iter().filter(|(t, _)| t.starts_with("<|") && t.ends_with("|>") && t.len() > 4).cloned().collect();
    let parts = ByteLevelParts { vocab: &vocab, merges: &merges, added: &added, marks: (None, None) };
    let bad = |reason| Error::Format { path: vocab_path.to_path_buf(), format: "GPT-2 vocab.json", reason };
    let settings = ByteLevelSettings {
        pattern: "gpt2",
        keep_gaps: false,
        normalizer: "none",
        whole_piece_first: false,
        drop_unknown: false,
        inputs: ModelInputs::default(),
    };
    // Decoded as tokenizers' ByteLevel decoder decodes them, added tokens included.
    let tok = parts.tokenizer(&bad, settings).map_err(|e| match e {
        // What the vocabulary and merges cannot make (a missing single byte) names the files.
        Error::Config(reason) => {
            Error::Config(format!("{} and {}: {reason}", vocab_path.display(), merges_path.display()))
        }
        other => other,
    })?;
    Ok(tok.with_added_through_byte_level())
}

/// A byte-level BPE vocabulary as files spell it: tokens in byte-level characters with ids,
/// merges as pairs of such tokens, and the added (special) tokens.
struct ByteLevelParts<'a> {
    vocab: &'a [(String, u32)],
    merges: &'a [(String, String)],
    added: &'a [(String, u32)],
    /// The model's `continuing_subword_prefix` and `end_of_word_suffix`, spelled in byte-level
    /// characters as the tokens are.
    marks: (Option<String>, Option<String>),
}

impl ByteLevelParts<'_> {
    /// The tokenizer: every token but the added ones read as byte-level text, the merges as
    /// pairs of ids; `bad` makes a file's error.
    fn tokenizer(&self, bad: &dyn Fn(String) -> Error, settings: ByteLevelSettings) -> Result<Tokenizer> {
        let decode = byte_decoder();
        let special_ids: rustc_hash::FxHashSet<u32> = self.added.iter().map(|&(_, id)| id).collect();
        let mut vocab = Vocab::default();
        vocab.reserve(self.vocab.len());
        let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
        ids.reserve(self.vocab.len());
        let mut bytes = Vec::new();
        for (text, id) in self.vocab {
            ids.insert(text.as_str(), *id);
            if special_ids.contains(id) {
                continue;
            }
            bytes.clear();
            for c in text.chars() {
                match decode.get(c as usize).copied().flatten() {
                    Some(b) => bytes.push(b),
                    None => {
                        return Err(bad(format!(
                            "token {text:?} has {c:?}, which is not a byte-level character \
                             (only byte-level BPE files are supported)"
                        )))
                    }
                }
            }
            vocab.insert(*id, &bytes).map_err(|e| bad(e.to_string()))?;
        }
        for (text, id) in self.added {
            vocab.push_special(text, Some(*id)).map_err(|e| bad(e.to_string()))?;
        }
        let mut merges = Vec::with_capacity(self.merges.len());
        for (n, (left, right)) in self.merges.iter().enumerate() {
            match (ids.get(left.as_str()), ids.get(right.as_str())) {
                (Some(&l), Some(&r)) => merges.push((l, r)),
                _ => return Err(bad(format!("merge {n} ({left:?}, {right:?}) names a token not in the vocabulary"))),
            }
        }
        // The marks, like the tokens, are spelled in byte-level characters; the model joins
        // their bytes.
        let mark = |spelled: &Option<String>| -> Result<Option<String>> {
            let Some(spelled) = spelled else { return Ok(None) };
            let bytes: Option<Vec<u8>> = spelled.chars().map(|c| decode.get(c as usize).copied().flatten()).collect();
            bytes
                .and_then(|b| String::from_utf8(b).ok())
                .map(Some)
                .ok_or_else(|| bad(format!("the word mark {spelled:?} is not byte-level text of a UTF-8 string")))
        };
        let (prefix, suffix) = (mark(&self.marks.0)?, mark(&self.marks.1)?);
        let options = BpeOptions {
            byte_level: true,
            joined_suffix: suffix.is_some(),
            end_of_word_suffix: suffix,
            continuing_subword_prefix: prefix,
            whole_piece_first: settings.whole_piece_first,
            drop_unknown: settings.drop_unknown,
            ..BpeOptions::default()
        };
        let model = Bpe::from_merges(vocab, merges, options)?;
        let pretokenizer = PreTokenizer::from_spec(settings.pattern)?;
        let pretokenizer = if settings.keep_gaps { pretokenizer.keeping_gaps() } else { pretokenizer };
        let mut tok = Tokenizer::new(Normalizer::from_spec(settings.normalizer)?, pretokenizer, model);
        settings.inputs.check(tok.vocab())?;
        tok.inputs = settings.inputs;
        Ok(tok)
    }
}

/// The bytes a string of byte-level characters spells, or None when one of its characters is
/// not one (tokenizers' `ByteLevel` decoder then keeps the string's own bytes).
pub fn byte_level_bytes(spelled: &str) -> Option<Vec<u8>> {
    static DECODE: std::sync::OnceLock<Vec<Option<u8>>> = std::sync::OnceLock::new();
    let decode = DECODE.get_or_init(byte_decoder);
    spelled.chars().map(|c| decode.get(c as usize).copied().flatten()).collect()
}

/// A byte-level token's bytes as `tokenizer.json` spells them: each byte as its printable
/// character (`Ġ` for a space).
pub fn byte_level_spelling(bytes: &[u8]) -> String {
    static CHARS: std::sync::OnceLock<[char; 256]> = std::sync::OnceLock::new();
    let chars = CHARS.get_or_init(|| {
        let mut chars = ['\0'; 256];
        for (code, byte) in byte_decoder().into_iter().enumerate() {
            if let Some(b) = byte {
                chars[b as usize] = char::from_u32(code as u32).expect("code points below 0x200");
            }
        }
        chars
    });
    bytes.iter().map(|&b| chars[b as usize]).collect()
}

/// The byte each byte-level character stands for, by code point (`None`: not such a character).
fn byte_decoder() -> Vec<Option<u8>> {
    let printable = |b: u8| matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut table = vec![None; 0x100 + 68];
    let mut moved = 0;
    for b in 0..=255u8 {
        if printable(b) {
            table[b as usize] = Some(b);
        } else {
            table[0x100 + moved] = Some(b);
            moved += 1;
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_level_characters_cover_every_byte_once() {
        let table = byte_decoder();
        let mut seen = [false; 256];
        for b in table.iter().flatten() {
            assert!(!seen[*b as usize]);
            seen[*b as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(table['Ġ' as usize], Some(b' '));
        assert_eq!(table['a' as usize], Some(b'a'));
    }

    #[test]
    fn sections_keep_everything_but_the_tables() {
        let doc = br#"{"version": "1.0", "added_tokens": [{"id": 3, "content": "<s>", "special": true}],
            "pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},
            "merges": ["a b"], "ignore_merges": true}}"#;
        let doc = HfDocument::parse(doc, Path::new("t.json")).unwrap();
        assert_eq!(doc.vocab, vec![("a".into(), 0), ("b".into(), 1), ("ab".into(), 2)]);
        assert_eq!(doc.merges, vec![("a".into(), "b".into())]);
        assert_eq!(doc.added, vec![("<s>".into(), 3)]);
        let sections: serde_json::Value = serde_json::from_str(&doc.sections).unwrap();
        assert_eq!(sections["model"], serde_json::json!({"type": "BPE", "ignore_merges": true}));
        assert_eq!(sections["pre_tokenizer"]["type"], "ByteLevel");
        assert!(sections.get("added_tokens").is_none());
    }

    #[test]
    fn bad_files_name_what_is_wrong() {
        let cases: [(&[u8], &str); 4] = [
            (b"[1, 2]", "not a valid JSON file"),
            (br#"{"version": "1.0"}"#, "no model"),
            (br#"{"model": {"vocab": {"a": -1}}}"#, "model.vocab:"),
            (br#"{"model": {"vocab": {"a": 0}, "merges": ["a b c"]}}"#, "merge 0"),
        ];
        for (text, expected) in cases {
            let err = HfDocument::parse(text, Path::new("t.json")).err().map(|e| e.to_string()).expect("refused");
            assert!(err.contains(expected) && err.contains("t.json"), "{err}");
        }
    }

    #[test]
    fn a_list_vocabulary_is_refused_for_models_that_name_their_ids() {
        let doc = br#"{"model": {"type": "BPE", "vocab": [["b", 1.0], ["a", 0.0]], "merges": []}}"#;
        let doc = HfDocument::parse(doc, Path::new("t.json")).unwrap();
        let settings = ByteLevelSettings {
            pattern: "gpt2",
            keep_gaps: false,
            normalizer: "none",
            whole_piece_first: false,
            drop_unknown: false,
            inputs: ModelInputs::default(),
        };
        let err = doc.byte_level_bpe(settings).err().map(|e| e.to_string()).expect("refused");
        assert!(err.contains("maps each token to its id"), "{err}");
    }
}
