//! Counting words: normalize → split out special tokens → pre-tokenize → tally unique pieces.
//!
//! Counting runs on rayon threads over chunks of text; each thread fills its own table and the
//! tables are summed, so the result does not depend on thread count or order. Counts are u64.

use crate::error::{Error, Result};
use crate::normalize::Normalizer;
use crate::pretokenize::PreTokenizer;
use crate::special::{Segment, SpecialTokens};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};

/// Unique words (byte strings) with their counts.
#[derive(Debug, Clone, Default)]
pub struct WordCounts {
    counts: FxHashMap<Box<[u8]>, u64>,
    /// Bytes of text that went into the counts.
    pub text_bytes: u64,
}

impl WordCounts {
    pub fn add(&mut self, word: &[u8], n: u64) {
        if let Some(c) = self.counts.get_mut(word) {
            *c += n;
        } else {
            self.counts.insert(word.into(), n);
        }
    }

    /// Adds every count of `other` (the larger table absorbs the smaller).
    pub fn merge(mut self, mut other: WordCounts) -> WordCounts {
        if other.counts.len() > self.counts.len() {
            std::mem::swap(&mut self, &mut other);
        }
        for (w, n) in other.counts {
            *self.counts.entry(w).or_insert(0) += n;
        }
        self.text_bytes += other.text_bytes;
        self
    }

    /// Number of unique words.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Sum of all counts.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> {
        self.counts.iter().map(|(w, &n)| (&w[..], n))
    }

    pub fn get(&self, word: &[u8]) -> u64 {
        self.counts.get(word).copied().unwrap_or(0)
    }
}

/// The stages in front of a model, configured once and shared by counting and encoding.
#[derive(Debug, Clone)]
pub struct WordSplitter {
    pub normalizer: Normalizer,
    pub pretokenizer: PreTokenizer,
    pub specials: SpecialTokens,
}

/// Below this size a text is counted on the calling thread.
const CHUNK: usize = 1 << 20;

impl WordSplitter {
    /// Counts the words of one text into `into` (one thread).
    pub fn count_text(&self, text: &str, into: &mut WordCounts) -> Result<()> {
        into.text_bytes += text.len() as u64;
        self.specials.for_each_segment(
            text,
            |_| Ok(true),
            |segment| match segment {
                Segment::Text(t) => {
                    let normalized = self.normalizer.apply(t);
                    self.pretokenizer.for_each_piece(&normalized, |piece| {
                        into.add(piece.as_bytes(), 1);
                        Ok(())
                    })
                }
                Segment::Special { .. } => Ok(()),
            },
        )
    }

    /// Counts many texts in parallel.
    pub fn count_texts(&self, texts: &[&str]) -> Result<WordCounts> {
        let chunks: Vec<&str> = texts.iter().flat_map(|t| split_for_threads(t, CHUNK)).collect();
        chunks
            .par_iter()
            .try_fold(WordCounts::default, |mut acc, chunk| {
                self.count_text(chunk, &mut acc)?;
                Ok(acc)
            })
            .try_reduce(WordCounts::default, |a, b| Ok(a.merge(b)))
    }

    /// Counts raw bytes read from `path`. Byte-level training keeps invalid UTF-8 as words of
    /// raw bytes; otherwise invalid UTF-8 is an error naming the file and offset.
    pub fn count_bytes(&self, bytes: &[u8], path: &Path, byte_level: bool) -> Result<WordCounts> {
        let mut texts = Vec::new();
        let mut raw = WordCounts::default();
        let mut rest = bytes;
        let mut offset = 0u64;
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    texts.push(text);
                    break;
                }
                Err(e) => {
                    let bad_at = offset + e.valid_up_to() as u64;
                    if !byte_level {
                        return Err(Error::InvalidUtf8 { path: path.to_path_buf(), offset: bad_at });
                    }
                    let (good, tail) = rest.split_at(e.valid_up_to());
                    texts.push(std::str::from_utf8(good).expect("validated prefix"));
                    let bad_len = e.error_len().unwrap_or(tail.len());
                    raw.add(&tail[..bad_len], 1);
                    raw.text_bytes += bad_len as u64;
                    rest = &tail[bad_len..];
                    offset = bad_at + bad_len as u64;
                }
            }
        }
        Ok(self.count_texts(&texts)?.merge(raw))
    }

    /// Reads and counts files; `on_file` is told each file's size as it is done.
    pub fn count_files(
        &self,
        paths: &[PathBuf],
        byte_level: bool,
        on_file: &(dyn Fn(u64) -> Result<()> + Sync),
    ) -> Result<WordCounts> {
        paths
            .par_iter()
            .map(|path| {
                let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
                let counts = self.count_bytes(&bytes, path, byte_level)?;
                on_file(bytes.len() as u64)?;
                Ok(counts)
            })
            .try_reduce(WordCounts::default, |a, b| Ok(a.merge(b)))
    }
}

/// Cuts `text` into pieces of about `target` bytes at line starts that begin with an ASCII
/// letter or digit: no preset pattern joins a newline to such a character, so the cut never
/// changes the words. (A user regex that does would see words cut at these line starts.)
pub fn split_for_threads(text: &str, target: usize) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    while bytes.len() - start > target {
        let mut cut = start + target;
        let mut found = None;
        while cut + 1 < bytes.len() {
            if bytes[cut] == b'\n' && bytes[cut + 1].is_ascii_alphanumeric() {
                found = Some(cut + 1);
                break;
            }
            cut += 1;
        }
        match found {
            Some(c) => {
                out.push(&text[start..c]);
                start = c;
            }
            None => break,
        }
    }
    out.push(&text[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splitter(pattern: &str) -> WordSplitter {
        WordSplitter {
            normalizer: Normalizer::default(),
            pretokenizer: PreTokenizer::from_spec(pattern).unwrap(),
            specials: SpecialTokens::new(&[("<|eot|>".into(), 0)]),
        }
    }

    #[test]
    fn counts_are_independent_of_chunking() {
        let text = "fn main() {\n    let x = 1;\n}\n\nhello  world<|eot|>hello\n".repeat(5000);
        let s = splitter("cl100k");
        let mut one = WordCounts::default();
        s.count_text(&text, &mut one).unwrap();
        let chunks = split_for_threads(&text, 1000);
        assert!(chunks.len() > 10);
        let many = s.count_texts(&chunks).unwrap();
        assert_eq!(one.len(), many.len());
        for (w, n) in one.iter() {
            assert_eq!(many.get(w), n, "{:?}", String::from_utf8_lossy(w));
        }
        assert_eq!(one.get(b"<|eot|>"), 0, "special tokens are not counted as words");
        assert_eq!(one.get(b"hello"), 10_000);
    }

    #[test]
    fn invalid_utf8_is_raw_bytes_or_an_error() {
        let s = splitter("gpt2");
        let bytes = b"ok \xff\xfe ok";
        let counts = s.count_bytes(bytes, Path::new("f.txt"), true).unwrap();
        assert_eq!(counts.get(b"\xff"), 1);
        assert_eq!(counts.get(b" ok"), 1);
        let err = s.count_bytes(bytes, Path::new("f.txt"), false).unwrap_err();
        assert_eq!(err.to_string(), "f.txt: invalid UTF-8 at byte offset 3");
    }

    #[test]
    fn counts_pass_u32() {
        let mut c = WordCounts::default();
        c.add(b"a", u32::MAX as u64);
        c.add(b"a", 2);
        assert_eq!(c.get(b"a"), u32::MAX as u64 + 2);
    }
}
