//! WordLevel (Hugging Face's `WordLevel` model): each piece the pre-tokenizer cuts is a token
//! as a whole, or the unknown token. No subwords: the vocabulary is a word list.

pub mod file;

use crate::error::{Error, Result};
use crate::models::vocab::Vocab;
use crate::pipeline::decoder::Decoder;
use crate::pipeline::hf_decoder::HfDecoder;
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::pretokenize::PreTokenizer;

#[derive(Debug, Clone)]
pub struct WordLevel {
    vocab: Vocab,
    /// None when the vocabulary lacks the unknown token: an unknown word is then an error, as
    /// in `tokenizers` (which loads such a file and fails on the first unknown word).
    unk_id: Option<u32>,
    unk_token: String,
}

impl WordLevel {
    /// A model over `vocab`, whose unknown token is `unk_token` (when the vocabulary lacks it,
    /// an unknown word is an error).
    ///
    /// ```
    /// use tokenmill::models::{vocab::Vocab, wordlevel::WordLevel};
    /// let mut vocab = Vocab::default();
    /// vocab.insert(0, b"[UNK]").unwrap();
    /// vocab.insert(1, b"hello").unwrap();
    /// let m = WordLevel::new(vocab, "[UNK]").unwrap();
    /// let (mut a, mut b) = (Vec::new(), Vec::new());
    /// m.encode_word("hello", &mut a).unwrap();
    /// m.encode_word("hell", &mut b).unwrap();
    /// assert_eq!((a, b), (vec![1], vec![0]));
    /// ```
    pub fn new(vocab: Vocab, unk_token: &str) -> Result<Self> {
        let unk_id = vocab.any_id(unk_token.as_bytes());
        Ok(WordLevel { vocab, unk_id, unk_token: unk_token.to_string() })
    }

    pub fn unk_token(&self) -> &str {
        &self.unk_token
    }

    /// The word's id, or the unknown token's.
    #[inline]
    pub fn encode_word(&self, word: &str, out: &mut Vec<u32>) -> Result<()> {
        match self.vocab.any_id(word.as_bytes()).or(self.unk_id) {
            Some(id) => out.push(id),
            None => return Err(Error::UnknownWord { word: word.chars().take(100).collect() }),
        }
        Ok(())
    }
}

impl super::PieceModel for WordLevel {
    fn vocab(&self) -> &Vocab {
        &self.vocab
    }
    fn model_type(&self) -> &'static str {
        "wordlevel"
    }
    #[inline]
    fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) -> Result<()> {
        self.encode_word(piece, out)
    }
    /// Every piece is one token, which covers it.
    fn piece_lens(&self, piece: &str, ids: &[u32], _carry: f32) -> Option<Vec<usize>> {
        (ids.len() == 1).then(|| vec![piece.len()])
    }
    /// Words joined with spaces (what `tokenizers` does for a file without a decoder).
    fn decoder(&self, _normalizer: &Normalizer, _pretokenizer: &PreTokenizer) -> Decoder {
        Decoder::Chain(Box::new(HfDecoder::JoinedWithSpaces))
    }
    fn unknown_id(&self) -> Option<u32> {
        self.unk_id
    }
    fn score(&self, _id: u32) -> Option<f32> {
        None
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({"type": "wordlevel", "unk_token": self.unk_token})
    }
}
