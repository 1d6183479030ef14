//! What files hold, counted for `tokenmill.analysis` (`count_tokens`, `fertility`, `audit`):
//! bytes, bytes that are not UTF-8, characters, words, tokens and how often each id occurs, for
//! several tokenizers at once, with no Python string per document and no Python int per token.
//!
//! A file is read in documents of about 64 KB cut only after a lone newline
//! ([`CutRule::LoneNewline`]), where encoding the pieces gives the tokens of the whole. Bytes that
//! are not UTF-8 read as U+FFFD, one per maximal invalid sequence, as Python's `errors="replace"`
//! decodes them (a lone newline is ASCII on both sides, so decoding block by block decodes as the
//! whole file would).

use super::documents::read_ahead;
use crate::error::Result;
use crate::io::read::{BlockReader, CutRule};
use crate::tokenizer::{SpecialSet, Tokenizer};
use rayon::prelude::*;
use std::path::PathBuf;

/// What to count beyond bytes, characters and tokens.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wanted {
    /// How often each id occurs, per tokenizer.
    pub id_counts: bool,
    /// Words as tokens-per-word counts them (`crate::words`).
    pub words: bool,
}

/// The counts of a group of files.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct GroupCounts {
    /// The files' bytes (decompressed).
    pub bytes_read: u64,
    /// Bytes of those that were not UTF-8.
    pub invalid_bytes: u64,
    /// Bytes of the decoded text (a U+FFFD is three).
    pub text_bytes: u64,
    /// Characters of the decoded text.
    pub chars: u64,
    /// Words (0 unless wanted).
    pub words: u64,
    /// Tokens, per tokenizer.
    pub tokens: Vec<u64>,
    /// How often each id occurs, per tokenizer (empty unless wanted).
    pub id_counts: Vec<Vec<u64>>,
}

/// `bytes` as text, each maximal invalid sequence one U+FFFD, and how many bytes were invalid.
pub fn lossy_text(bytes: Vec<u8>) -> (String, u64) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, 0),
        Err(e) => {
            let bytes = e.into_bytes();
            let mut text = String::with_capacity(bytes.len() + 16);
            let mut invalid = 0;
            for chunk in bytes.utf8_chunks() {
                text.push_str(chunk.valid());
                if !chunk.invalid().is_empty() {
                    text.push(char::REPLACEMENT_CHARACTER);
                    invalid += chunk.invalid().len() as u64;
                }
            }
            (text, invalid)
        }
    }
}

/// Documents read for one batch.
#[derive(Default)]
struct Batch {
    texts: Vec<String>,
    bytes_read: u64,
    invalid_bytes: u64,
}

/// Counts every file of `paths` for each of `tokenizers` (special-token text is ordinary text:
/// an analysis measures what text costs), encoding on `num_threads` threads while the next
/// batch is read.
pub fn count_files(
    tokenizers: &[&Tokenizer],
    paths: &[PathBuf],
    wanted: Wanted,
    num_threads: Option<usize>,
) -> Result<GroupCounts> {
    let mut counts = GroupCounts {
        tokens: vec![0; tokenizers.len()],
        id_counts: match wanted.id_counts {
            true => tokenizers.iter().map(|t| vec![0; t.vocab().n_vocab()]).collect(),
            false => Vec::new(),
        },
        ..GroupCounts::default()
    };
    let none = SpecialSet::none();
    let read = |send: &mut dyn FnMut(Batch) -> Result<()>| -> Result<()> {
        let mut batch = Batch::default();
        for path in paths {
            let mut reader = BlockReader::open(path, CutRule::LoneNewline, DOCUMENT_BYTES)?;
            while let Some(block) = reader.next_block()? {
                batch.bytes_read += block.bytes.len() as u64;
                let (text, invalid) = lossy_text(block.bytes);
                batch.invalid_bytes += invalid;
                batch.texts.push(text);
                if batch.bytes_read >= BATCH_BYTES {
                    send(std::mem::take(&mut batch))?;
                }
            }
        }
        if !batch.texts.is_empty() {
            send(batch)?;
        }
        Ok(())
    };
    read_ahead(read, &mut |batch: Batch| {
        let texts: Vec<&str> = batch.texts.iter().map(String::as_str).collect();
        counts.bytes_read += batch.bytes_read;
        counts.invalid_bytes += batch.invalid_bytes;
        counts.text_bytes += texts.iter().map(|t| t.len() as u64).sum::<u64>();
        let (chars, words) = crate::util::threads::install(|| {
            texts
                .par_iter()
                .map(|t| (char_count(t), if wanted.words { crate::words::count_words(t) } else { 0 }))
                .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        });
        counts.chars += chars;
        counts.words += words;
        for (k, tokenizer) in tokenizers.iter().enumerate() {
            let ids = tokenizer.encode_batch(&texts, &none, &none, num_threads)?;
            counts.tokens[k] += ids.iter().map(|d| d.len() as u64).sum::<u64>();
            if let Some(per_id) = counts.id_counts.get_mut(k) {
                for &id in ids.iter().flatten() {
                    // Every id an encoder gives is below n_vocab; an index check, not a panic.
                    if let Some(c) = per_id.get_mut(id as usize) {
                        *c += 1;
                    }
                }
            }
        }
        Ok(())
    })?;
    Ok(counts)
}

/// Characters of `text`: its bytes that do not continue a character.
fn char_count(text: &str) -> u64 {
    text.bytes().filter(|&b| (b as i8) >= -0x40).count() as u64
}

/// About this much text per document: many per batch for the threads to share.
const DOCUMENT_BYTES: usize = 1 << 16;

/// Text per batch, as `encode_files` reads it.
const BATCH_BYTES: u64 = 8 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossy_text_replaces_each_maximal_invalid_sequence() {
        assert_eq!(lossy_text(b"ok".to_vec()), ("ok".to_string(), 0));
        // A truncated 3-byte sequence is one replacement; a stray continuation byte is one each.
        assert_eq!(lossy_text(b"a\xe2\x82b\x80\x80".to_vec()), ("a\u{FFFD}b\u{FFFD}\u{FFFD}".to_string(), 4));
        assert_eq!(lossy_text(b"\xf0\x9f\x98\x80\xff".to_vec()), ("😀\u{FFFD}".to_string(), 1));
    }

    #[test]
    fn char_count_counts_characters() {
        for text in ["", "abc", "é😀日本", "\u{FFFD}x"] {
            assert_eq!(char_count(text), text.chars().count() as u64);
        }
    }
}
