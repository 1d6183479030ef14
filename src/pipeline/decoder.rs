//! From ids back to text, by what the vocabulary is — never by the pre-tokenizer's name:
//! byte-level and plain character vocabularies concatenate their tokens' bytes; an end-of-word
//! suffix stands for a space (where pre-tokenization dropped whitespace); WordPiece joins words
//! with spaces and continuation pieces (`##`) without; SentencePiece vocabularies spell spaces
//! as `▁`, bytes as `<0xNN>` tokens, and drop control tokens.

use crate::error::Result;
use crate::models::vocab::{TokenKind, Vocab};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoder {
    Bytes,
    /// A `tokenizer.json`'s own decoder steps, run on the tokens' strings as `tokenizers` runs
    /// them (`hf_decoder.rs`).
    Chain(Box<crate::pipeline::hf_decoder::HfDecoder>),
    /// Tokens ending in `suffix` end a word: the suffix becomes `replacement` (a space, or
    /// nothing where the pieces kept their whitespace); a final such space is dropped.
    Suffix {
        suffix: String,
        replacement: &'static str,
    },
    /// A token is preceded by a space unless it is the first or starts with `prefix` (which is
    /// removed). With `cleanup`, the space before punctuation and English contractions goes
    /// (Hugging Face's WordPiece decoder).
    WordPiece {
        prefix: String,
        cleanup: bool,
    },
    /// SentencePiece: `▁` is a space; byte tokens are their bytes (a byte that is not part of
    /// valid UTF-8 becomes U+FFFD on its own); control tokens are nothing; the unknown token is
    /// `unknown_surface`; `strip_leading` says which spaces that start the text go.
    Metaspace {
        unknown_surface: String,
        strip_leading: StripLeading,
    },
}

/// Which leading `▁` a SentencePiece decoder drops: none, the first piece's (the dummy prefix
/// the normalizer added), or every piece's until text appears (the normalizer also removed
/// leading whitespace, so none of it was in the input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StripLeading {
    Never,
    One,
    All,
}

/// The parts of a run of byte tokens: each valid UTF-8 character's bytes as they are, each byte
/// that starts no valid character as U+FFFD, one part per byte token.
fn byte_run_parts(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut parts = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let len = crate::util::utf8::utf8_len(bytes[i]);
        if i + len <= bytes.len() && std::str::from_utf8(&bytes[i..i + len]).is_ok() {
            parts.extend(bytes[i..i + len].iter().map(|&b| vec![b]));
            i += len;
        } else {
            parts.push("\u{FFFD}".as_bytes().to_vec());
            i += 1;
        }
    }
    parts
}

/// The space marker of SentencePiece vocabularies, U+2581.
pub const METASPACE: &str = "\u{2581}";

impl Decoder {
    /// What each id contributes to the text. `follows`: the ids continue earlier ones (a
    /// stream), so the first is not the start of the text. `trim_end`: this is the end (a final
    /// suffix space is dropped).
    pub fn parts(&self, vocab: &Vocab, ids: &[u32], follows: bool, trim_end: bool) -> Result<Vec<Vec<u8>>> {
        let mut parts = Vec::with_capacity(ids.len());
        match self {
            Decoder::Bytes => {
                for &id in ids {
                    parts.push(vocab.token_bytes(id)?.to_vec());
                }
            }
            Decoder::Chain(chain) => {
                let tokens = ids
                    .iter()
                    .map(|&id| Ok(String::from_utf8_lossy(vocab.token_bytes(id)?).into_owned()))
                    .collect::<Result<Vec<String>>>()?;
                parts.extend(chain.decode(tokens, follows, trim_end).into_iter().map(String::into_bytes));
            }
            Decoder::Suffix { suffix, replacement } => {
                let mut replaced_last = false;
                for &id in ids {
                    let bytes = vocab.token_bytes(id)?;
                    let stem = bytes.strip_suffix(suffix.as_bytes()).filter(|_| !vocab.is_special(id));
                    replaced_last = stem.is_some();
                    let mut part = stem.unwrap_or(bytes).to_vec();
                    if replaced_last {
                        part.extend_from_slice(replacement.as_bytes());
                    }
                    parts.push(part);
                }
                if let (true, Some(last)) = (trim_end && replaced_last && !replacement.is_empty(), parts.last_mut()) {
                    last.truncate(last.len() - replacement.len());
                }
            }
            Decoder::WordPiece { prefix, cleanup } => {
                for (i, &id) in ids.iter().enumerate() {
                    let bytes = vocab.token_bytes(id)?;
                    let mut part = Vec::with_capacity(bytes.len() + 1);
                    match bytes.strip_prefix(prefix.as_bytes()) {
                        Some(rest) if i > 0 || follows => part.extend_from_slice(rest),
                        _ if i > 0 || follows => {
                            part.push(b' ');
                            part.extend_from_slice(bytes);
                        }
                        _ => part.extend_from_slice(bytes),
                    }
                    if *cleanup {
                        part = clean_up(&part);
                    }
                    parts.push(part);
                }
            }
            Decoder::Metaspace { unknown_surface, strip_leading } => {
                // SentencePiece's rules: at the start, pieces lose their leading `▁` (one piece,
                // or every piece until some text appears when extra whitespace is removed);
                // control tokens and the unknown token never lose anything.
                let mut at_start = !follows;
                let mut stripped_one = false;
                let mut i = 0;
                while i < ids.len() {
                    if let Some(TokenKind::Byte(_)) = vocab.kind(ids[i]) {
                        let run = ids[i..].iter().take_while(|&&id| matches!(vocab.kind(id), Some(TokenKind::Byte(_))));
                        let bytes: Vec<u8> = run
                            .filter_map(|&id| match vocab.kind(id) {
                                Some(TokenKind::Byte(b)) => Some(b),
                                _ => None,
                            })
                            .collect();
                        parts.extend(byte_run_parts(&bytes));
                        at_start = false;
                        i += bytes.len();
                        continue;
                    }
                    let id = ids[i];
                    if stripped_one {
                        at_start = false;
                    }
                    let part = match vocab.kind(id) {
                        Some(TokenKind::Control) => Vec::new(),
                        Some(TokenKind::Unknown) => unknown_surface.as_bytes().to_vec(),
                        _ => {
                            let mut bytes = vocab.token_bytes(id)?;
                            if at_start && *strip_leading != StripLeading::Never {
                                if let Some(rest) = bytes.strip_prefix(METASPACE.as_bytes()) {
                                    bytes = rest;
                                    stripped_one = *strip_leading == StripLeading::One;
                                }
                            }
                            replace_metaspace(bytes)
                        }
                    };
                    if !part.is_empty() {
                        at_start = false;
                    }
                    parts.push(part);
                    i += 1;
                }
            }
        }
        Ok(parts)
    }
}

/// `bytes` with each `▁` turned into a space.
fn replace_metaspace(bytes: &[u8]) -> Vec<u8> {
    let marker = METASPACE.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(marker) {
            out.push(b' ');
            i += marker.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// The spaces WordPiece decoding removes, applied to one token's text as Hugging Face does.
fn clean_up(part: &[u8]) -> Vec<u8> {
    const RULES: [(&str, &str); 11] = [
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" do not", " don't"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ];
    let Ok(mut text) = String::from_utf8(part.to_vec()) else {
        return part.to_vec();
    };
    for (from, to) in RULES {
        if text.contains(from) {
            text = text.replace(from, to);
        }
    }
    text.into_bytes()
}
