//! Counting words: normalize → split out special tokens → pre-tokenize → tally unique pieces.
//!
//! Counting runs on rayon threads over chunks of text; each thread fills its own table and the
//! tables are summed, so the result does not depend on thread count or order. Counts are u64.

use crate::error::{Error, Result};
use crate::io::read::{Block, BlockReader, CutRule};
use crate::io::word_table::{CountCache, WordTable};
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::pretokenize::PreTokenizer;
use crate::pipeline::special::{Segment, SpecialTokens};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Unique words (byte strings) with their counts.
#[derive(Debug, Clone, Default)]
pub struct WordCounts {
    counts: WordTable,
    /// Bytes of text that went into the counts.
    pub text_bytes: u64,
    /// A word whose count would have passed 2^64 - 1 (it was held at the maximum instead);
    /// `check` turns this into an error, so a wrapped count is never trained on.
    overflowed: Option<Box<[u8]>>,
}

impl WordCounts {
    pub fn add(&mut self, word: &[u8], n: u64) {
        if !self.counts.add(word, n) {
            self.overflowed.get_or_insert_with(|| word.into());
        }
    }

    /// Adds every count of `other` (the larger table absorbs the smaller).
    pub fn merge(mut self, mut other: WordCounts) -> WordCounts {
        if other.counts.len() > self.counts.len() {
            std::mem::swap(&mut self, &mut other);
        }
        if self.overflowed.is_none() {
            self.overflowed = other.overflowed.take();
        }
        if let Some(word) = self.counts.absorb(std::mem::take(&mut other.counts)) {
            self.overflowed.get_or_insert(word);
        }
        self.text_bytes = self.text_bytes.saturating_add(other.text_bytes);
        self
    }

    /// An error if some word's count could not be held in a u64.
    pub fn check(&self) -> Result<()> {
        match &self.overflowed {
            None => Ok(()),
            Some(word) => Err(Error::config(format!(
                "the count of word {:?} passed 2^64 - 1 and cannot be held",
                String::from_utf8_lossy(word)
            ))),
        }
    }

    /// Number of unique words.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Sum of all counts (wider than a count: a table of many large counts can pass 2^64).
    pub fn total(&self) -> u128 {
        self.counts.iter().map(|(_, n)| n as u128).sum()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> {
        self.counts.iter()
    }

    pub fn get(&self, word: &[u8]) -> u64 {
        self.counts.get(word).unwrap_or(0)
    }

    /// The `n` most frequent words, ties broken by bytes (deterministic).
    pub fn most_common(&self, n: usize) -> Vec<(&[u8], u64)> {
        let mut all: Vec<(&[u8], u64)> = self.iter().collect();
        all.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        all.truncate(n);
        all
    }

    /// Approximate heap bytes held: the word bytes plus the table's per-entry overhead.
    pub fn memory_bytes(&self) -> u64 {
        self.counts.iter().map(|(w, _)| w.len() as u64 + ENTRY_OVERHEAD).sum()
    }

    /// Drops the rarest words until about `budget` bytes remain; returns (words, count mass)
    /// dropped. Words with equal counts go in byte order, so the result is deterministic.
    pub fn prune_to(&mut self, budget: u64) -> (u64, u64) {
        let mut used = self.memory_bytes();
        if used <= budget {
            return (0, 0);
        }
        let mut by_rarity: Vec<(u64, Box<[u8]>)> = self.counts.iter().map(|(w, n)| (n, w.into())).collect();
        by_rarity.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(&a.1)));
        let (mut words, mut mass) = (0u64, 0u64);
        for (n, w) in by_rarity {
            if used <= budget {
                break;
            }
            self.counts.remove(&w);
            used -= w.len() as u64 + ENTRY_OVERHEAD;
            words += 1;
            mass = mass.saturating_add(n);
        }
        (words, mass)
    }

    /// The compact binary form: a header (magic, format version, metadata as JSON), then each
    /// word as LEB128 length, bytes, LEB128 count, in byte order so equal tables give equal files,
    /// then a CRC-32 of everything before it (version 2), so a damaged file is refused.
    pub fn to_bytes(&self, metadata: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.counts.len() * 12 + 64);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&COUNTS_VERSION.to_le_bytes());
        put_varint(&mut out, metadata.len() as u64);
        out.extend_from_slice(metadata.as_bytes());
        put_varint(&mut out, self.text_bytes);
        put_varint(&mut out, self.counts.len() as u64);
        let mut words: Vec<(&[u8], u64)> = self.iter().collect();
        words.sort_unstable();
        for (w, n) in words {
            put_varint(&mut out, w.len() as u64);
            out.extend_from_slice(w);
            put_varint(&mut out, n);
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Reads `to_bytes` output; `path` names the source in errors. Returns the metadata too.
    pub fn from_bytes(data: &[u8], path: &Path) -> Result<(WordCounts, String)> {
        let bad = |reason: &str| Error::Format {
            path: path.to_path_buf(),
            format: "tokenmill word-count",
            reason: reason.to_string(),
        };
        if data.len() < 8 || &data[..4] != MAGIC {
            return Err(bad("no TMWC header"));
        }
        let version = u32::from_le_bytes(data[4..8].try_into().expect("4 bytes"));
        let data = match version {
            // Version 1 files carry no checksum; they still load.
            1 => data,
            COUNTS_VERSION => {
                if data.len() < 12 {
                    return Err(bad("truncated header"));
                }
                let (body, crc) = data.split_at(data.len() - 4);
                if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
                    return Err(bad("checksum mismatch: the file is damaged or truncated"));
                }
                body
            }
            _ => return Err(bad(&format!("format version {version}; this tokenmill reads 1 to {COUNTS_VERSION}"))),
        };
        let mut r = Reader { data, pos: 8 };
        let meta_len = r.varint().ok_or_else(|| bad("truncated header"))? as usize;
        let meta = r.take(meta_len).ok_or_else(|| bad("truncated header"))?;
        let meta = String::from_utf8(meta.to_vec()).map_err(|_| bad("metadata is not UTF-8"))?;
        let text_bytes = r.varint().ok_or_else(|| bad("truncated header"))?;
        let n = r.varint().ok_or_else(|| bad("truncated header"))?;
        let mut counts = WordCounts { text_bytes, ..Default::default() };
        for k in 0..n {
            let truncated = || bad(&format!("truncated at word {k} of {n}"));
            let len = r.varint().ok_or_else(truncated)? as usize;
            let word = r.take(len).ok_or_else(truncated)?;
            let count = r.varint().ok_or_else(truncated)?;
            counts.add(word, count);
        }
        if r.pos != data.len() {
            return Err(bad("trailing bytes after the last word"));
        }
        Ok((counts, meta))
    }
}

const MAGIC: &[u8; 4] = b"TMWC";
const COUNTS_VERSION: u32 = 2;
/// Hash-table slot, box header and allocator rounding per unique word, measured roughly.
const ENTRY_OVERHEAD: u64 = 48;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.data.get(self.pos)?;
            self.pos += 1;
            v |= ((b & 0x7F) as u64) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }
}

/// The stages in front of a model, configured once and shared by counting and encoding.
#[derive(Debug, Clone)]
pub struct WordSplitter {
    pub normalizer: Normalizer,
    pub pretokenizer: PreTokenizer,
    pub specials: SpecialTokens,
}

/// Below this many bytes, counting skips the `CountCache` (setting it up and flushing it would
/// cost more than it saves).
const CACHE_FROM: usize = 256 << 10;
/// Below this size a text is counted on the calling thread.
const CHUNK: usize = 1 << 20;
/// Files are read and counted this many bytes at a time.
const BLOCK: usize = 16 << 20;

impl WordSplitter {
    /// Counts the words of one text into `into` (one thread).
    pub fn count_text(&self, text: &str, into: &mut WordCounts) -> Result<()> {
        into.text_bytes += text.len() as u64;
        if text.len() < CACHE_FROM {
            return self.for_each_word(text, |word, _| into.add(word, 1));
        }
        let mut cache = CountCache::new();
        self.count_cached(text, into, &mut cache)?;
        cache.flush(&mut |word, n| into.add(word, n));
        Ok(())
    }

    /// Counts through `cache`; the caller flushes it into `into` when done.
    fn count_cached(&self, text: &str, into: &mut WordCounts, cache: &mut CountCache) -> Result<()> {
        self.for_each_word(text, |word, tail| cache.add(word, tail, &mut |word, n| into.add(word, n)))
    }

    /// Hands every word (pre-tokenized piece) of `text` to `add`, with the text from the word on.
    fn for_each_word(&self, text: &str, mut add: impl FnMut(&[u8], &[u8])) -> Result<()> {
        self.specials.for_each_segment(
            text,
            |_| Ok(true),
            |segment| match segment {
                Segment::Text(t) => {
                    let normalized = self.normalizer.apply_at(t, t.as_ptr() == text.as_ptr());
                    let all = normalized.as_bytes();
                    self.pretokenizer.for_each_piece(&normalized, |piece| {
                        // Pieces are slices of the text; the rest of it from the piece on lets
                        // the cache read a whole 16 bytes at once.
                        let start = (piece.as_ptr() as usize).wrapping_sub(all.as_ptr() as usize);
                        add(piece.as_bytes(), all.get(start..).unwrap_or(piece.as_bytes()));
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
        let total: usize = chunks.iter().map(|c| c.len()).sum();
        crate::util::threads::install(|| {
            chunks
                .par_iter()
                .with_min_len(per_thread(chunks.len()))
                .try_fold(
                    || (WordCounts::default(), (total >= CACHE_FROM).then(CountCache::new)),
                    |(mut acc, mut cache), chunk| {
                        acc.text_bytes += chunk.len() as u64;
                        match &mut cache {
                            Some(cache) => self.count_cached(chunk, &mut acc, cache)?,
                            None => self.for_each_word(chunk, |word, _| acc.add(word, 1))?,
                        }
                        Ok((acc, cache))
                    },
                )
                .map(|folded: Result<(WordCounts, Option<CountCache>)>| {
                    let (mut acc, cache) = folded?;
                    if let Some(cache) = cache {
                        cache.flush(&mut |word, n| acc.add(word, n));
                    }
                    Ok(acc)
                })
                .try_reduce(WordCounts::default, |a, b| Ok(a.merge(b)))
        })
    }

    /// Counts raw bytes read from `path`. Byte-level training keeps invalid UTF-8 as words of
    /// raw bytes; otherwise invalid UTF-8 is an error naming the file and offset.
    /// `offset` is where `bytes` start in the file, for error messages.
    pub fn count_bytes(&self, bytes: &[u8], path: &Path, offset: u64, byte_level: bool) -> Result<WordCounts> {
        // Binary data breaks into millions of valid runs; listing them all before counting took
        // 16 bytes per run twice over (about 20 times the file's size), so runs are counted in
        // batches of this many.
        const BATCH_RUNS: usize = 1 << 16;
        let mut counted = WordCounts::default();
        let mut texts = Vec::new();
        let mut raw = WordCounts::default();
        let mut rest = bytes;
        let mut offset = offset;
        loop {
            match simdutf8::compat::from_utf8(rest) {
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
                    if texts.len() >= BATCH_RUNS {
                        counted = counted.merge(self.count_texts(&texts)?);
                        texts.clear();
                    }
                    let bad_len = e.error_len().unwrap_or(tail.len());
                    raw.add(&tail[..bad_len], 1);
                    raw.text_bytes += bad_len as u64;
                    rest = &tail[bad_len..];
                    offset = bad_at + bad_len as u64;
                }
            }
        }
        Ok(counted.merge(self.count_texts(&texts)?).merge(raw))
    }

    /// Reads and counts files (plain, `.gz` or `.zst`) in blocks, handing the counts of each
    /// batch of blocks to `sink` with the number of bytes read, so memory stays bounded
    /// whatever the size of a file. With `text_field`, each line is a JSON object whose field
    /// of that name is one document.
    pub fn count_files(
        &self,
        paths: &[PathBuf],
        byte_level: bool,
        text_field: Option<&str>,
        sink: &mut dyn FnMut(WordCounts, u64) -> Result<()>,
    ) -> Result<()> {
        self.count_files_in_blocks(paths, byte_level, text_field, BLOCK, sink)
    }

    fn count_files_in_blocks(
        &self,
        paths: &[PathBuf],
        byte_level: bool,
        text_field: Option<&str>,
        block_size: usize,
        sink: &mut dyn FnMut(WordCounts, u64) -> Result<()>,
    ) -> Result<()> {
        let rule = if text_field.is_some() { CutRule::AnyNewline } else { CutRule::LoneNewline };
        let mut batch: Vec<Block> = Vec::new();
        let mut batch_bytes = 0;
        let mut flush = |batch: &mut Vec<Block>| -> Result<()> {
            let read: u64 = batch.iter().map(|b| b.bytes.len() as u64).sum();
            let counts = crate::util::threads::install(|| {
                batch
                    .par_iter()
                    .with_min_len(per_thread(batch.len()))
                    .map(|block| match text_field {
                        None => self.count_bytes(&block.bytes, &block.path, block.offset, byte_level),
                        Some(field) => self.count_json_lines(block, field),
                    })
                    .try_reduce(WordCounts::default, |a, b| Ok(a.merge(b)))
            })?;
            batch.clear();
            sink(counts, read)
        };
        for path in paths {
            let mut reader = BlockReader::open(path, rule, block_size)?;
            while let Some(block) = reader.next_block()? {
                batch_bytes += block.bytes.len();
                batch.push(block);
                if batch_bytes >= block_size {
                    flush(&mut batch)?;
                    batch_bytes = 0;
                }
            }
        }
        if !batch.is_empty() {
            flush(&mut batch)?;
        }
        Ok(())
    }

    /// Counts JSON Lines: every line is an object whose string field `field` is a document.
    fn count_json_lines(&self, block: &Block, field: &str) -> Result<WordCounts> {
        let texts = crate::io::json_lines::block_texts(block, field)?;
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        self.count_texts(&texts)
    }
}

/// How many of `n` work items one rayon task takes: all threads stay busy, yet no more than one
/// word table per thread is being filled at a time (each is a large share of the memory peak).
fn per_thread(n: usize) -> usize {
    n.div_ceil(crate::util::threads::count()).max(1)
}

/// Cuts `text` into pieces of about `target` bytes after lone newlines ([`CutRule::LoneNewline`]),
/// where the cut never changes the words of a preset. (A user regex that joins a newline to its
/// neighbours would see words cut there.)
pub fn split_for_threads(text: &str, target: usize) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    while bytes.len() - start > target {
        match CutRule::LoneNewline.next_cut(bytes, start + target + 1) {
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
        let text = "fn main() {\n    let x = 1;\n}\n\nhello  world<|eot|>hello\nagain \nx\n".repeat(5000);
        // Here every newline before a letter follows another newline: no safe cut exists.
        let blank_lines = "a b c\n\nd e f ".repeat(5000);
        let no_cut = split_for_threads(&blank_lines, 1000);
        assert_eq!(no_cut.len(), 1, "a newline after whitespace is no place to cut");
        for pattern in ["gpt2", "cl100k", "o200k"] {
            let s = splitter(pattern);
            let mut one = WordCounts::default();
            s.count_text(&text, &mut one).unwrap();
            let chunks = split_for_threads(&text, 1000);
            assert!(chunks.len() > 10);
            let many = s.count_texts(&chunks).unwrap();
            assert_eq!(one.len(), many.len());
            for (w, n) in one.iter() {
                assert_eq!(many.get(w), n, "{pattern}: {:?}", String::from_utf8_lossy(w));
            }
            assert_eq!(one.get(b"<|eot|>"), 0, "special tokens are not counted as words");
            assert_eq!(one.get(b"hello"), 10_000);
        }
    }

    #[test]
    fn files_counted_in_blocks_equal_the_whole_text() {
        let text = "fn main() {\n    let x = 1;\n}\nhello  world\n\nagain \u{e9}t\u{e9}\nx\n".repeat(3000);
        let dir = std::env::temp_dir().join(format!("tokenmill-count-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.txt");
        std::fs::write(&path, &text).unwrap();
        let s = splitter("cl100k");
        let mut whole = WordCounts::default();
        s.count_text(&text, &mut whole).unwrap();
        let (mut blocks, mut read) = (WordCounts::default(), 0);
        let mut sink = |c: WordCounts, n: u64| {
            blocks = std::mem::take(&mut blocks).merge(c);
            read += n;
            Ok(())
        };
        s.count_files_in_blocks(std::slice::from_ref(&path), false, None, 4096, &mut sink).unwrap();
        assert_eq!(read, text.len() as u64);
        assert_eq!((blocks.len(), blocks.total()), (whole.len(), whole.total()));
        for (w, n) in whole.iter() {
            assert_eq!(blocks.get(w), n, "{:?}", String::from_utf8_lossy(w));
        }
        // JSON Lines errors name the line of the file, not of the block.
        let lines = "{\"text\": \"ok\"}\n".repeat(1000) + "{\"other\": 1}\n";
        std::fs::write(&path, lines).unwrap();
        let err = s.count_files_in_blocks(&[path], false, Some("text"), 1000, &mut |_, _| Ok(())).unwrap_err();
        assert!(err.to_string().contains("line 1001:"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cutting_at_lone_newlines_never_changes_counts() {
        // Random text from characters that stress the cut rule: newlines next to spaces, CR,
        // tabs, vertical tab, ideographic space, punctuation, letters in and out of ASCII.
        let alphabet: Vec<char> = "\n\n\n \r\t\u{b}\u{3000}#}a1中é'\u{301}".chars().collect();
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        for pattern in ["gpt2", "cl100k", "o200k"] {
            let s = splitter(pattern);
            for _ in 0..300 {
                let text: String = (0..400)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        alphabet[(seed % alphabet.len() as u64) as usize]
                    })
                    .collect();
                let mut whole = WordCounts::default();
                s.count_text(&text, &mut whole).unwrap();
                let chunks = split_for_threads(&text, 8);
                let mut parts = WordCounts::default();
                for chunk in &chunks {
                    s.count_text(chunk, &mut parts).unwrap();
                }
                assert_eq!(parts.len(), whole.len(), "{pattern}: {text:?} cut as {chunks:?}");
                for (w, n) in whole.iter() {
                    assert_eq!(parts.get(w), n, "{pattern}: {:?} in {text:?}", String::from_utf8_lossy(w));
                }
            }
        }
    }

    #[test]
    fn text_without_a_newline_is_one_chunk() {
        // One thread then counts it all; the cut search scans it once, so this stays linear.
        let text = "word ".repeat(10_000);
        assert_eq!(split_for_threads(&text, 1000), [text.as_str()]);
    }

    #[test]
    fn invalid_utf8_is_raw_bytes_or_an_error() {
        let s = splitter("gpt2");
        let bytes = b"ok \xff\xfe ok";
        let counts = s.count_bytes(bytes, Path::new("f.txt"), 0, true).unwrap();
        assert_eq!(counts.get(b"\xff"), 1);
        assert_eq!(counts.get(b" ok"), 1);
        let err = s.count_bytes(bytes, Path::new("f.txt"), 0, false).unwrap_err();
        assert_eq!(err.to_string(), "f.txt: invalid UTF-8 at byte offset 3");
    }

    /// Long mixed input (the SIMD validator works in 64-byte strides): the invalid bytes counted
    /// as raw words, and the offset of the first one in an error, are those std finds.
    #[test]
    fn invalid_utf8_is_found_where_std_finds_it() {
        let s = splitter("gpt2");
        let parts: [&[u8]; 7] = [b"abc ", "日本語".as_bytes(), b"\xff", b"\xe6\x97", b"\xc3", b" x\n", "é".as_bytes()];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for round in 0..200 {
            let mut bytes = Vec::new();
            while bytes.len() < 40 + round * 3 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Invalid parts are rare, so many inputs are valid for long stretches.
                let k = (state % 40) as usize;
                bytes.extend_from_slice(parts[if k < 36 { k % 2 } else { k - 34 }]);
            }
            // What std says: each invalid run's bytes, and where the first begins.
            let (mut raw, mut first_bad, mut rest, mut at) = (WordCounts::default(), None, &bytes[..], 0);
            while let Err(e) = std::str::from_utf8(rest) {
                let bad = e.error_len().unwrap_or(rest.len() - e.valid_up_to());
                raw.add(&rest[e.valid_up_to()..e.valid_up_to() + bad], 1);
                first_bad.get_or_insert(at + e.valid_up_to());
                at += e.valid_up_to() + bad;
                rest = &rest[e.valid_up_to() + bad..];
            }
            let counts = s.count_bytes(&bytes, Path::new("f.txt"), 0, true).unwrap();
            for (word, n) in raw.iter() {
                assert_eq!(counts.get(word), n, "round {round}: raw word {word:?}");
            }
            match (s.count_bytes(&bytes, Path::new("f.txt"), 100, false), first_bad) {
                (Ok(_), None) => {}
                (Err(e), Some(at)) => {
                    assert_eq!(e.to_string(), format!("f.txt: invalid UTF-8 at byte offset {}", 100 + at))
                }
                (got, want) => panic!("round {round}: {:?} against std's {want:?}", got.map(|_| ())),
            }
        }
    }

    #[test]
    fn binary_form_round_trips_and_rejects_damage() {
        let mut c = WordCounts::default();
        c.add(b"hello", 3);
        c.add(b"\xff\x00", u64::MAX / 3);
        c.text_bytes = 99;
        let bytes = c.to_bytes("{\"pattern\":\"cl100k\"}");
        let (back, meta) = WordCounts::from_bytes(&bytes, Path::new("c.bin")).unwrap();
        assert_eq!(meta, "{\"pattern\":\"cl100k\"}");
        assert_eq!((back.get(b"hello"), back.get(b"\xff\x00"), back.text_bytes), (3, u64::MAX / 3, 99));
        for cut in [3, 9, bytes.len() - 1] {
            assert!(WordCounts::from_bytes(&bytes[..cut], Path::new("c.bin")).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn pruning_drops_the_rarest_first() {
        let mut c = WordCounts::default();
        for (w, n) in [(&b"a"[..], 10), (b"b", 1), (b"c", 1), (b"d", 5)] {
            c.add(w, n);
        }
        let (words, mass) = c.prune_to(2 * (1 + ENTRY_OVERHEAD));
        assert_eq!((words, mass), (2, 2));
        assert_eq!((c.get(b"a"), c.get(b"d"), c.len()), (10, 5, 2));
    }

    #[test]
    fn counts_pass_u32() {
        let mut c = WordCounts::default();
        c.add(b"a", u32::MAX as u64);
        c.add(b"a", 2);
        assert_eq!(c.get(b"a"), u32::MAX as u64 + 2);
    }
}
