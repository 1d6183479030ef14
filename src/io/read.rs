//! Reading corpus files in blocks: plain text, `.gz` and `.zst`, decompressed on the fly.
//!
//! Why blocks: a corpus file can be larger than memory (a 20 GB shard, a 1 GB file with no
//! newline is rarer). A block ends at a place where cutting cannot change the words — after a
//! lone newline (non-space on both sides, see [`CutRule::LoneNewline`]) for text, after any
//! newline for JSON Lines — so counting block by block gives exactly the counts of the whole
//! file. Only a file with no such place at all has to be held whole.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where a block of text may end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutRule {
    /// After a lone `\n`: one that follows a character that is not whitespace and precedes an
    /// ASCII character that is not whitespace. Every preset makes such a newline a piece of its
    /// own (no pattern glues a newline to a following non-space, and with non-space on both
    /// sides no whitespace run spans it, so `\s++$` at a block's end matches just the newline
    /// too). Whitespace before it would change the split: GPT-2 cuts `" \n"` into `" "`, `"\n"`
    /// mid-text but keeps it whole at the end.
    LoneNewline,
    /// After any `\n` (JSON Lines: one document per line).
    AnyNewline,
    /// Nowhere: the file is one block (a file that is one document).
    Never,
}

impl CutRule {
    /// Whether a block may end just before `bytes[i]` (`0 < i < bytes.len()`).
    #[inline]
    pub fn allows(self, bytes: &[u8], i: usize) -> bool {
        match self {
            CutRule::AnyNewline => bytes[i - 1] == b'\n',
            CutRule::Never => false,
            CutRule::LoneNewline => {
                i >= 2
                    && bytes[i - 1] == b'\n'
                    && bytes[i].is_ascii()
                    && !is_space_byte(bytes[i])
                    && !ends_in_whitespace(&bytes[..i - 1])
            }
        }
    }

    /// The last place at or after `from` where `bytes` may be cut, if any. The whole of `bytes`
    /// is context: the character before a newline may start before `from`.
    pub fn last_cut(self, bytes: &[u8], from: usize) -> Option<usize> {
        if self == CutRule::Never {
            return None;
        }
        (from.max(1)..bytes.len()).rev().find(|&i| self.allows(bytes, i))
    }

    /// The first place at or after `from` where `bytes` may be cut, if any.
    pub fn next_cut(self, bytes: &[u8], from: usize) -> Option<usize> {
        (from.max(1)..bytes.len()).find(|&i| self.allows(bytes, i))
    }
}

/// ASCII `\s`: space, \t, \n, \v, \f, \r (`is_ascii_whitespace` lacks \v).
fn is_space_byte(b: u8) -> bool {
    b.is_ascii_whitespace() || b == 0x0b
}

/// Whether the last character of `bytes` is Unicode whitespace (what `\s` matches). Bytes that
/// are not valid UTF-8 count as not whitespace: they are words of their own.
fn ends_in_whitespace(bytes: &[u8]) -> bool {
    let Some(&last) = bytes.last() else { return false };
    if last < 0x80 {
        return is_space_byte(last);
    }
    let start = bytes.len().saturating_sub(4);
    (start..bytes.len())
        .find_map(|k| std::str::from_utf8(&bytes[k..]).ok())
        .and_then(|tail| tail.chars().next_back())
        .is_some_and(char::is_whitespace)
}

/// One piece of a corpus file: its bytes and where they start in the (decompressed) file.
pub struct Block {
    pub path: PathBuf,
    /// Byte offset of the first byte.
    pub offset: u64,
    /// Line number (from 1) of the first byte (kept for JSON Lines only).
    pub line: u64,
    pub bytes: Vec<u8>,
}

/// Reads one corpus file as a sequence of blocks of about `target` bytes.
pub struct BlockReader {
    path: PathBuf,
    source: Box<dyn Read + Send>,
    compressed: Option<&'static str>,
    rule: CutRule,
    target: usize,
    carry: Vec<u8>,
    offset: u64,
    line: u64,
    done: bool,
    /// Blocks end just after an occurrence of this (documents separated by it), in place of `rule`.
    separator: Option<Vec<u8>>,
}

impl BlockReader {
    pub fn open(path: &Path, rule: CutRule, target: usize) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let compressed = match extension {
            "gz" => Some("gzip"),
            "zst" | "zstd" => Some("zstd"),
            _ => None,
        };
        // An empty .gz/.zst holds no text (Python's gzip.decompress(b"") agrees), so an empty
        // shard among good ones counts as absent instead of failing as a broken archive. Plain
        // files need no check, and a pipe or /proc file reports size 0 yet has data.
        let empty = compressed.is_some() && file.metadata().is_ok_and(|m| m.is_file() && m.len() == 0);
        let source: Box<dyn Read + Send> = match compressed {
            _ if empty => Box::new(std::io::empty()),
            Some("gzip") => Box::new(flate2::read::MultiGzDecoder::new(file)),
            Some(_) => Box::new(zstd::Decoder::new(file).map_err(|e| Error::io(path, e))?),
            None => Box::new(file),
        };
        Ok(BlockReader {
            path: path.to_path_buf(),
            source,
            compressed,
            rule,
            target: target.max(1),
            carry: Vec::new(),
            offset: 0,
            line: 1,
            done: false,
            separator: None,
        })
    }

    /// A reader whose blocks end just after an occurrence of `separator` (not empty), so no
    /// document separated by it spans two blocks.
    pub fn open_separated(path: &Path, separator: &[u8], target: usize) -> Result<Self> {
        if separator.is_empty() {
            return Err(Error::config("the document separator is empty"));
        }
        let mut reader = Self::open(path, CutRule::Never, target)?;
        reader.separator = Some(separator.to_vec());
        Ok(reader)
    }

    /// The end of the last occurrence of the separator in `carry`, searching only where one
    /// may start that was not searched before (`searched`: the carry's length then). The carry
    /// starts just after an occurrence (or at the file's start) and held none before `searched`,
    /// so occurrences found from there, left to right without overlap, are the ones splitting
    /// the whole file would find.
    fn last_separator_end(&self, searched: usize) -> Option<usize> {
        let separator = self.separator.as_deref()?;
        let from = searched.saturating_sub(separator.len() - 1);
        let last = memchr::memmem::find_iter(&self.carry[from..], separator).last()?;
        Some(from + last + separator.len())
    }

    /// The next block, or `None` at the end of the file.
    pub fn next_block(&mut self) -> Result<Option<Block>> {
        loop {
            if self.done {
                if self.carry.is_empty() {
                    return Ok(None);
                }
                let bytes = std::mem::take(&mut self.carry);
                return Ok(Some(self.emit(bytes)));
            }
            let searched = self.carry.len();
            self.fill()?;
            if self.done {
                continue;
            }
            // Only places that need a byte read just now are new (a cut before `carry[i]` needs
            // `carry[i]`): a carry without a cut is never searched twice, so a file with no
            // place to cut is still read in linear time.
            let cut = match self.separator {
                Some(_) => self.last_separator_end(searched),
                None => self.rule.last_cut(&self.carry, searched),
            };
            if let Some(cut) = cut {
                let rest = self.carry.split_off(cut);
                let bytes = std::mem::replace(&mut self.carry, rest);
                return Ok(Some(self.emit(bytes)));
            }
        }
    }

    fn emit(&mut self, bytes: Vec<u8>) -> Block {
        let block = Block { path: self.path.clone(), offset: self.offset, line: self.line, bytes };
        self.offset += block.bytes.len() as u64;
        if self.rule == CutRule::AnyNewline {
            self.line += block.bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        }
        block
    }

    /// Reads until the carry holds `target` more bytes or the file ends.
    fn fill(&mut self) -> Result<()> {
        let want = self.target as u64;
        // Room for exactly one more block: letting `read_to_end` double the buffer would hold
        // up to twice the block size per block in flight.
        self.carry.reserve_exact(self.target + 1);
        let got = (&mut self.source).take(want).read_to_end(&mut self.carry).map_err(|e| match self.compressed {
            Some(format) => {
                Error::Format { path: self.path.clone(), format, reason: format!("{e} (truncated or corrupt?)") }
            }
            None => Error::io(&self.path, e),
        })?;
        if (got as u64) < want {
            self.done = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(text: &[u8], rule: CutRule, target: usize) -> Vec<Block> {
        // A directory per call: tests run in parallel.
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tokenmill-read-{}-{call}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("corpus.txt");
        std::fs::write(&path, text).unwrap();
        let mut reader = BlockReader::open(&path, rule, target).unwrap();
        let out = std::iter::from_fn(|| reader.next_block().unwrap()).collect();
        std::fs::remove_dir_all(&dir).unwrap();
        out
    }

    #[test]
    fn blocks_cover_the_file_and_end_at_allowed_places() {
        let text = "fn main() {\n    x;\n}\nlet y = 2;\nz\n\nw\n".repeat(300);
        let parts = blocks(text.as_bytes(), CutRule::LoneNewline, 100);
        assert!(parts.len() > 10);
        let mut joined = Vec::new();
        for block in &parts {
            assert_eq!(block.offset, joined.len() as u64);
            joined.extend_from_slice(&block.bytes);
            if joined.len() < text.len() {
                assert!(CutRule::LoneNewline.allows(text.as_bytes(), joined.len()));
            }
        }
        assert_eq!(joined, text.as_bytes());
    }

    #[test]
    fn cuts_only_after_lone_newlines() {
        let rule = CutRule::LoneNewline;
        for (text, ok) in [
            ("x\n#define", true),
            ("x;\nint", true),
            ("x \nint", false),
            ("x\r\nint", false),
            ("x\n\tint", false),
            ("x\n\nint", false),
            ("\u{3000}\nint", false),
            ("\u{a0}\nint", false),
            ("\u{4e2d}\nint", true),
            ("x\n\u{4e2d}", false),
        ] {
            let cut = text.find('\n').unwrap() + 1;
            assert_eq!(rule.allows(text.as_bytes(), cut), ok, "{text:?}");
        }
    }

    #[test]
    fn whitespace_before_a_newline_is_seen_across_reads() {
        // The newline is the last byte of the first read and the ideographic space (3 bytes)
        // before it ends the read too: cutting after the newline would split " \n" wrongly.
        let text = format!("{}\u{3000}\nword {}", "a".repeat(60), "b".repeat(100));
        assert_eq!(text.find('\n'), Some(63));
        let parts = blocks(text.as_bytes(), CutRule::LoneNewline, 64);
        assert_eq!(parts.len(), 1, "no lone newline, so no cut");
    }

    #[test]
    fn text_without_a_place_to_cut_is_one_block() {
        let text = "word ".repeat(5_000);
        let parts = blocks(text.as_bytes(), CutRule::LoneNewline, 64);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].bytes, text.as_bytes());
    }

    #[test]
    fn json_lines_cut_after_any_newline() {
        let text = "{\"text\": \"a\"}\n".repeat(100);
        let parts = blocks(text.as_bytes(), CutRule::AnyNewline, 50);
        assert!(parts.len() > 10);
        assert!(parts.iter().all(|b| b.bytes.ends_with(b"\n")));
    }
}
