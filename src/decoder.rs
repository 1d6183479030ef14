//! From ids back to text, by what the vocabulary is — never by the pre-tokenizer's name:
//! byte-level and plain character vocabularies concatenate their tokens' bytes; an end-of-word
//! suffix stands for a space (where pre-tokenization dropped whitespace); WordPiece joins words
//! with spaces and continuation pieces (`##`) without.

use crate::error::Result;
use crate::vocab::Vocab;

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
}

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
        }
        Ok(parts)
    }
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
