//! WordPiece (BERT): each word becomes the longest vocabulary piece that starts it, then the
//! longest continuation piece (spelled with a prefix, `##`) that starts the rest, and so on; a
//! word that cannot be covered this way, or is longer than `max_input_chars_per_word`, is the
//! unknown token as a whole.

pub mod file;
pub mod train;

use crate::error::{Error, Result};
use crate::models::vocab::Vocab;
use crate::pipeline::decoder::Decoder;
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::pretokenize::PreTokenizer;

#[derive(Debug, Clone)]
pub struct WordPiece {
    vocab: Vocab,
    unk_id: u32,
    unk_token: String,
    prefix: String,
    max_input_chars_per_word: usize,
    /// The longest token, in bytes without the prefix: no candidate longer than this is looked
    /// up, so a long word costs its length times this, not its length squared.
    longest: usize,
    /// Whether decoding removes the space before punctuation and contractions.
    cleanup: bool,
}

impl WordPiece {
    pub fn new(
        vocab: Vocab,
        unk_token: &str,
        prefix: &str,
        max_input_chars_per_word: usize,
        cleanup: bool,
    ) -> Result<Self> {
        let unk_id = vocab
            .any_id(unk_token.as_bytes())
            .ok_or_else(|| Error::config(format!("unk_token {unk_token:?} is not in the vocabulary")))?;
        if prefix.is_empty() {
            return Err(Error::config("continuing_subword_prefix must not be empty"));
        }
        let longest =
            vocab.ordinary().map(|(_, b)| b.strip_prefix(prefix.as_bytes()).unwrap_or(b).len()).max().unwrap_or(0);
        Ok(WordPiece {
            vocab,
            unk_id,
            unk_token: unk_token.to_string(),
            prefix: prefix.to_string(),
            max_input_chars_per_word,
            longest,
            cleanup,
        })
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    pub fn unk_token(&self) -> &str {
        &self.unk_token
    }

    pub fn unk_id(&self) -> u32 {
        self.unk_id
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn max_input_chars_per_word(&self) -> usize {
        self.max_input_chars_per_word
    }

    pub fn cleanup(&self) -> bool {
        self.cleanup
    }

    /// Appends the ids of one word, and (if given) how many bytes of the word each covers.
    pub fn encode_word(&self, word: &str, out: &mut Vec<u32>, mut lens: Option<&mut Vec<usize>>) {
        let first = out.len();
        let unknown = |out: &mut Vec<u32>, lens: Option<&mut Vec<usize>>| {
            out.truncate(first);
            out.push(self.unk_id);
            if let Some(lens) = lens {
                lens.push(word.len());
            }
        };
        if word.chars().nth(self.max_input_chars_per_word).is_some() {
            return unknown(out, lens);
        }
        let lens_first = lens.as_ref().map_or(0, |l| l.len());
        let mut buf = Vec::with_capacity(self.prefix.len() + self.longest.min(word.len()) + 4);
        let mut start = 0;
        while start < word.len() {
            let mut end = floor_boundary(word, (start + self.longest).min(word.len()));
            let mut found = None;
            while start < end {
                buf.clear();
                if start > 0 {
                    buf.extend_from_slice(self.prefix.as_bytes());
                }
                buf.extend_from_slice(&word.as_bytes()[start..end]);
                if let Some(id) = self.vocab.id(&buf) {
                    found = Some(id);
                    break;
                }
                end = floor_boundary(word, end - 1);
            }
            match found {
                Some(id) => {
                    out.push(id);
                    if let Some(lens) = lens.as_deref_mut() {
                        lens.push(end - start);
                    }
                    start = end;
                }
                None => {
                    if let Some(lens) = lens.as_deref_mut() {
                        lens.truncate(lens_first);
                    }
                    return unknown(out, lens);
                }
            }
        }
    }
}

/// The largest character boundary of `s` at or below `i`.
fn floor_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl super::PieceModel for WordPiece {
    fn vocab(&self) -> &Vocab {
        &self.vocab
    }
    fn model_type(&self) -> &'static str {
        "wordpiece"
    }
    #[inline]
    fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) -> Result<()> {
        self.encode_word(piece, out, None);
        Ok(())
    }
    /// The first token covers its own length, each continuation its length without the prefix;
    /// the unknown token covers the whole word.
    fn piece_lens(&self, piece: &str, ids: &[u32], _carry: f32) -> Option<Vec<usize>> {
        if ids == [self.unk_id] {
            return Some(vec![piece.len()]);
        }
        let prefix = self.prefix.len();
        ids.iter()
            .enumerate()
            .map(|(i, &id)| {
                let len = self.vocab.token_bytes(id).ok()?.len();
                Some(if i == 0 { len } else { len.checked_sub(prefix)? })
            })
            .collect()
    }
    fn decoder(&self, _normalizer: &Normalizer, _pretokenizer: &PreTokenizer) -> Decoder {
        Decoder::WordPiece { prefix: self.prefix.clone(), cleanup: self.cleanup }
    }
    fn unknown_id(&self) -> Option<u32> {
        Some(self.unk_id)
    }
    fn score(&self, _id: u32) -> Option<f32> {
        None
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({"type": "wordpiece", "unk_token": self.unk_token,
            "continuing_subword_prefix": self.prefix,
            "max_input_chars_per_word": self.max_input_chars_per_word, "decoder_cleanup": self.cleanup})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(tokens: &[&str]) -> WordPiece {
        let mut v = Vocab::default();
        v.push_special("[UNK]", None).unwrap();
        for t in tokens {
            v.push(t.as_bytes());
        }
        WordPiece::new(v, "[UNK]", "##", 100, true).unwrap()
    }

    fn pieces(m: &WordPiece, word: &str) -> Vec<String> {
        let mut ids = Vec::new();
        let mut lens = Vec::new();
        m.encode_word(word, &mut ids, Some(&mut lens));
        assert_eq!(lens.iter().sum::<usize>(), word.len());
        ids.iter().map(|&i| String::from_utf8_lossy(m.vocab.token_bytes(i).unwrap()).into_owned()).collect()
    }

    #[test]
    fn longest_match_first_with_continuations() {
        let m = model(&["un", "##aff", "##able", "una", "##ffa", "##ble", "é", "##é"]);
        assert_eq!(pieces(&m, "unaffable"), ["una", "##ffa", "##ble"]);
        assert_eq!(pieces(&m, "éé"), ["é", "##é"]);
        assert_eq!(pieces(&m, "unx"), ["[UNK]"]);
        let long = "é".repeat(101);
        assert_eq!(pieces(&m, &long), ["[UNK]"]);
    }
}
