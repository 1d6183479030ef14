//! Decoding ids as they arrive (a server sending generated text), one mechanism for every
//! decoder: keep a short window of ids, decode the window whole, and emit only what it adds past
//! the text already emitted. No decoder knows about streams, so the stream cannot disagree with
//! `decode` — the bug the window prevents is a decoder that needs to know what came before
//! (WordPiece's space between words, SentencePiece's leading `▁`), which a stream decoding each
//! id alone gets wrong ("helloworld").
//!
//! The window is the ids of the last emission (the context) followed by the ids not yet emitted.
//! Decoding is concatenative: `decode(a ++ b) = decode(a) ++ decode_following(b)` where
//! `decode_following` treats `b` as continuing text (the decoder's `follows` flag). That holds
//! once some text has been emitted, which is when the window first moves. Two things make the
//! end of a decode provisional, and the stream holds them back:
//! - a trailing U+FFFD may be a byte run (SentencePiece's `<0xNN>` pieces) whose character is
//!   not complete yet: held until the decode stops ending in one;
//! - the space an end-of-word suffix stands for exists only if another token follows: the window
//!   is decoded with the end trimmed, and the space comes out with the next token.
//!
//! Cost: each step decodes the window, a few tokens. A run of invalid bytes would keep the
//! decode ending in U+FFFD; past `MAX_PENDING` held ids the stream emits all but the last
//! characters of the run, whose meaning can still change (a byte decision looks at most 3
//! bytes ahead), so the window stays short.

use crate::error::Result;
use crate::tokenizer::Tokenizer;

const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

/// Held ids past which a decode that still ends in U+FFFD is emitted up to its last few parts.
const MAX_PENDING: usize = 16;

/// Parts kept back when a long U+FFFD run is emitted early: a byte's decision depends on at
/// most the 3 bytes after it, so parts before the last 4 are final.
const UNSETTLED_PARTS: usize = 4;

#[derive(Debug, Clone, Default)]
pub struct DecodeStream {
    /// The window: `context` ids already emitted, then the ids waiting.
    ids: Vec<u32>,
    context: usize,
    /// Bytes of the window's decode already emitted.
    emitted: usize,
    /// The window does not start the stream: its first id continues earlier text.
    follows: bool,
    skip_special: bool,
}

impl DecodeStream {
    pub fn new(skip_special: bool) -> Self {
        DecodeStream { skip_special, ..Default::default() }
    }

    /// Adds `ids`; returns the bytes they complete (often none). The bytes of all steps and of
    /// `finish`, joined, are `decode_bytes` of all the ids (special tokens left out when the
    /// stream skips them). An id outside the vocabulary is an error and changes nothing.
    pub fn step(&mut self, tok: &Tokenizer, ids: &[u32]) -> Result<Vec<u8>> {
        let vocab = tok.vocab();
        for &id in ids {
            vocab.token_bytes(id)?;
        }
        self.ids.extend(ids.iter().copied().filter(|&id| !(self.skip_special && tok.skipped_on_decode(id))));
        if self.ids.len() == self.context {
            return Ok(Vec::new());
        }
        let parts = tok.decode_parts(&self.ids, true, self.follows)?;
        let text = parts.concat();
        let cut = if !text.ends_with(REPLACEMENT) {
            parts.len()
        } else if parts.len() - self.context > MAX_PENDING {
            // Cut where a part starts a character (a byte run's later bytes are parts of their
            // own, each a continuation byte), so the next window decodes the rest as this one did.
            let starts_char = |p: &Vec<u8>| p.first().is_some_and(|&b| !(0x80..0xC0).contains(&b));
            match (self.context + 1..=parts.len() - UNSETTLED_PARTS).rev().find(|&i| starts_char(&parts[i])) {
                Some(cut) => cut,
                None => return Ok(Vec::new()),
            }
        } else {
            return Ok(Vec::new());
        };
        let upto: usize = parts[..cut].iter().map(Vec::len).sum();
        if upto <= self.emitted {
            return Ok(Vec::new());
        }
        let out = text[self.emitted..upto].to_vec();
        // The ids up to `cut` become the context; the old context is dropped (the decoder's state
        // after it is "text has begun", which `follows` carries).
        self.emitted = parts[self.context..cut].iter().map(Vec::len).sum();
        if self.context > 0 {
            self.ids.drain(..self.context);
            self.follows = true;
            self.context = cut - self.context;
        } else {
            self.context = cut;
        }
        Ok(out)
    }

    /// Ends the stream: what the held ids decode to (a suffix space at the very end is dropped,
    /// as `decode` drops it). The stream starts afresh afterwards.
    pub fn finish(&mut self, tok: &Tokenizer) -> Result<Vec<u8>> {
        let text = tok.decode_parts(&self.ids, true, self.follows)?.concat();
        let out = text.get(self.emitted..).unwrap_or_default().to_vec();
        *self = DecodeStream::new(self.skip_special);
        Ok(out)
    }
}
