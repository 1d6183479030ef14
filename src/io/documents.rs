//! Files of documents → token ids, with no Python object per document: files are read in blocks
//! (plain, `.gz`, `.zst`) on a reader thread while the previous batch is encoded on the pool, and
//! each batch's ids are handed on flat.
//!
//! A file holds its documents one of three ways ([`DocumentFormat`]): the whole file is one
//! document; documents are separated by a string (which belongs to none of them; empty pieces
//! are no documents, as `gigatoken`'s `TextFileSource` has it); or JSON Lines, one object per
//! line whose field names the text (a JSON null is an empty document, so ids stay row-aligned).

use crate::error::{Error, Result};
use crate::io::read::{Block, BlockReader, CutRule};
use crate::tokenizer::{SpecialSet, Tokenizer};
use std::path::PathBuf;
use std::sync::mpsc;

/// How a file holds its documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentFormat {
    /// The whole file is one document.
    Whole,
    /// Documents separated by these bytes (not empty).
    Separated(Vec<u8>),
    /// JSON Lines: this field of each line's object.
    JsonLines(String),
}

/// Documents read from files, owned: blocks of text and where each document lies in them.
#[derive(Default)]
pub struct DocumentBatch {
    blocks: Vec<String>,
    /// (block, start, end) of each document, in order.
    spans: Vec<(usize, usize, usize)>,
    /// Bytes of the files read for this batch (decompressed).
    pub bytes_read: u64,
}

impl DocumentBatch {
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    pub fn texts(&self) -> Vec<&str> {
        self.spans.iter().map(|&(b, start, end)| &self.blocks[b][start..end]).collect()
    }

    fn add_block(&mut self, block: Block, format: &DocumentFormat) -> Result<()> {
        self.bytes_read += block.bytes.len() as u64;
        let index = self.blocks.len();
        match format {
            DocumentFormat::JsonLines(field) => {
                for text in crate::io::json_lines::block_texts(&block, field)? {
                    self.spans.push((self.blocks.len(), 0, text.len()));
                    self.blocks.push(text);
                }
            }
            DocumentFormat::Whole => {
                let text = utf8(block)?;
                self.spans.push((index, 0, text.len()));
                self.blocks.push(text);
            }
            DocumentFormat::Separated(separator) => {
                let text = utf8(block)?;
                let mut start = 0;
                for at in memchr::memmem::find_iter(text.as_bytes(), separator) {
                    if at > start {
                        self.spans.push((index, start, at));
                    }
                    start = at + separator.len();
                }
                if text.len() > start {
                    self.spans.push((index, start, text.len()));
                }
                self.blocks.push(text);
            }
        }
        Ok(())
    }
}

/// A block's bytes as text; invalid UTF-8 is an error naming the file and the byte offset.
fn utf8(block: Block) -> Result<String> {
    String::from_utf8(block.bytes).map_err(|e| Error::InvalidUtf8 {
        path: block.path.clone(),
        offset: block.offset + e.utf8_error().valid_up_to() as u64,
    })
}

/// Reads `paths` in order into batches of about `batch_bytes` of text, each cut where a document
/// ends (a document larger than that is a batch of its own), and hands each to `each`.
pub fn read_batches(
    paths: &[PathBuf],
    format: &DocumentFormat,
    batch_bytes: usize,
    each: &mut dyn FnMut(DocumentBatch) -> Result<()>,
) -> Result<()> {
    let mut batch = DocumentBatch::default();
    for path in paths {
        let mut reader = match format {
            DocumentFormat::Whole => BlockReader::open(path, CutRule::Never, batch_bytes)?,
            DocumentFormat::Separated(separator) => BlockReader::open_separated(path, separator, batch_bytes)?,
            DocumentFormat::JsonLines(_) => BlockReader::open(path, CutRule::AnyNewline, batch_bytes)?,
        };
        while let Some(block) = reader.next_block()? {
            batch.add_block(block, format)?;
            if batch.bytes_read as usize >= batch_bytes {
                each(std::mem::take(&mut batch))?;
            }
        }
    }
    if batch.bytes_read > 0 {
        each(batch)?;
    }
    Ok(())
}

/// Encodes every document of `paths` (ordinary text, but for the special tokens in `allowed`)
/// and hands each batch's ids, one list per document, with the bytes read, to `each` in file
/// order. The next batch is read on another thread while one is encoded.
pub fn encode_files(
    tokenizer: &Tokenizer,
    paths: &[PathBuf],
    format: &DocumentFormat,
    allowed: &SpecialSet,
    num_threads: Option<usize>,
    each: &mut dyn FnMut(Vec<Vec<u32>>, u64) -> Result<()>,
) -> Result<()> {
    // (An empty separator is refused where a file is opened with it: `BlockReader::open_separated`.)
    let disallowed = SpecialSet::none();
    let read = |send: &mut dyn FnMut(DocumentBatch) -> Result<()>| read_batches(paths, format, BATCH_BYTES, send);
    read_ahead(read, &mut |batch: DocumentBatch| {
        let ids = tokenizer.encode_batch(&batch.texts(), allowed, &disallowed, num_threads)?;
        each(ids, batch.bytes_read)
    })
}

/// Runs `read` on a thread of its own, which hands each batch it makes to `each` here, in
/// order: the next batch is read while one is used. One batch waits in the channel and one is
/// being read, so memory stays at about three batches. An error on either side stops both.
pub fn read_ahead<B: Send>(
    read: impl FnOnce(&mut dyn FnMut(B) -> Result<()>) -> Result<()> + Send,
    each: &mut dyn FnMut(B) -> Result<()>,
) -> Result<()> {
    let (send, receive) = mpsc::sync_channel::<Result<B>>(1);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let sent = read(&mut |batch| send.send(Ok(batch)).map_err(|_| Error::Interrupted));
            if let Err(e) = sent {
                // The receiver stopped (an error there) or reading failed: pass the failure on.
                let _ = send.send(Err(e));
            }
        });
        // Dropping the receiver on an early return unblocks the reader, which then stops.
        for batch in receive {
            each(batch?)?;
        }
        Ok(())
    })
}

/// Text per batch: enough for every thread to have many documents, small enough that three
/// batches in flight are a small share of memory.
const BATCH_BYTES: usize = 8 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn batches(content: &[u8], name: &str, format: &DocumentFormat, batch_bytes: usize) -> Result<Vec<Vec<String>>> {
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tokenmill-documents-{}-{call}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        let mut out = Vec::new();
        let result = read_batches(&[path], format, batch_bytes, &mut |batch| {
            out.push(batch.texts().iter().map(|t| t.to_string()).collect());
            Ok(())
        });
        std::fs::remove_dir_all(&dir).unwrap();
        result.map(|_| out)
    }

    /// Splitting the whole text at the separator, left to right, empty pieces dropped.
    fn split_whole(text: &str, separator: &str) -> Vec<String> {
        text.split(separator).filter(|d| !d.is_empty()).map(str::to_string).collect()
    }

    #[test]
    fn separated_documents_are_the_pieces_of_the_whole_file_whatever_the_batch_size() {
        let mut rng = crate::util::rng::SplitMix64(7);
        let mut below = |n: usize| (rng.next_u64() % n as u64) as usize;
        for separator in ["\n\n", "<|endoftext|>", "aa", "\n"] {
            for _ in 0..40 {
                let pieces = ["a", "b", "\n", "\n\n", "<|endoftext|>", "é", "aa", "<|end"];
                let n = below(60);
                let text: String = (0..n).map(|_| pieces[below(pieces.len())]).collect();
                let format = DocumentFormat::Separated(separator.as_bytes().to_vec());
                for batch_bytes in [1, 3, 7, 1000] {
                    let got: Vec<String> = batches(text.as_bytes(), "t.txt", &format, batch_bytes).unwrap().concat();
                    assert_eq!(got, split_whole(&text, separator), "{text:?} {separator:?} {batch_bytes}");
                }
            }
        }
    }

    #[test]
    fn a_whole_file_is_one_document_and_invalid_utf8_names_the_offset() {
        let got = batches(b"one\n\ntwo", "t.txt", &DocumentFormat::Whole, 2).unwrap();
        assert_eq!(got, [["one\n\ntwo"]]);
        let e = batches(b"ok\n\nbad \xff here", "t.txt", &DocumentFormat::Separated(b"\n\n".to_vec()), 1000);
        assert!(e.unwrap_err().to_string().contains("invalid UTF-8 at byte offset 8"));
    }

    #[test]
    fn json_lines_keep_empty_and_null_documents() {
        let lines = b"{\"text\": \"a\"}\n{\"text\": \"\"}\n\n{\"text\": null}\n{\"text\": \"b\"}\n";
        let got = batches(lines, "t.jsonl", &DocumentFormat::JsonLines("text".into()), 1000).unwrap().concat();
        assert_eq!(got, ["a", "", "", "b"]);
    }
}
