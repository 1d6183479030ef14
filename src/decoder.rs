//! From ids back to text, by what the vocabulary is — never by the pre-tokenizer's name:
//! byte-level and plain character vocabularies concatenate their tokens' bytes; an end-of-word
//! suffix stands for a space (where pre-tokenization dropped whitespace); WordPiece joins words
//! with spaces and continuation pieces (`##`) without; SentencePiece vocabularies spell spaces
//! as `▁`, bytes as `<0xNN>` tokens, and drop control tokens.

use crate::error::Result;
use crate::vocab::{TokenKind, Vocab};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoder {
    Bytes,
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
    /// SentencePiece: `▁` is a space; a byte token is its byte; control tokens are nothing;
    /// the unknown token is `unknown_surface`. With `strip_first_space`, the space that starts
    /// the text (the dummy prefix the normalizer added) goes.
    Metaspace {
        unknown_surface: String,
        strip_first_space: bool,
    },
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
            Decoder::Metaspace { unknown_surface, strip_first_space } => {
                let mut at_start = !follows;
                for &id in ids {
                    let bytes = vocab.token_bytes(id)?;
                    let mut part = match vocab.kind(id) {
                        Some(TokenKind::Byte(b)) => vec![b],
                        Some(TokenKind::Control) => Vec::new(),
                        Some(TokenKind::Unknown) => unknown_surface.as_bytes().to_vec(),
                        _ => replace_metaspace(bytes),
                    };
                    if at_start && !part.is_empty() {
                        if *strip_first_space && part[0] == b' ' {
                            part.remove(0);
                        }
                        at_start = false;
                    }
                    parts.push(part);
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
