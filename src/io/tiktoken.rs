//! tiktoken's `.tiktoken` files (one `<base64 token> <rank>` per line; a token's rank is its id),
//! plain or gzip-compressed, read in Rust: in Python, splitting 200k lines, decoding base64 and
//! checking each rank, then writing them out again as a description for Rust, took 1.8x
//! tiktoken's own load.

use crate::error::{Error, Result};
use crate::models::bpe::{Bpe, BpeOptions};
use crate::models::vocab::{TokenKind, Vocab};
use crate::pipeline::normalize::Normalizer;
use crate::pipeline::pretokenize::PreTokenizer;
use crate::tokenizer::Tokenizer;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use rustc_hash::FxHashMap;
use std::io::Read;
use std::path::Path;

/// The (rank, token) pairs of a `.tiktoken` file (`.gz`: gzip-compressed).
pub fn read_ranks(path: &Path) -> Result<Vec<(u32, Vec<u8>)>> {
    let raw = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let raw = if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::with_capacity(raw.len() * 2);
        flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut out).map_err(|e| Error::Format {
            path: path.to_path_buf(),
            format: "tiktoken",
            reason: e.to_string(),
        })?;
        out
    } else {
        raw
    };
    parse_ranks(&raw, path)
}

/// The (rank, token) pairs of a `.tiktoken` file's contents; `path` names it in errors, with the
/// line.
pub fn parse_ranks(raw: &[u8], path: &Path) -> Result<Vec<(u32, Vec<u8>)>> {
    let bad = |line: usize, reason: String| Error::Format {
        path: format!("{}:{line}", path.display()).into(),
        format: "tiktoken",
        reason,
    };
    let mut pairs = Vec::with_capacity(raw.len() / 12);
    let mut line_of_rank: FxHashMap<u32, usize> = FxHashMap::default();
    let mut buffer = Vec::new();
    for (index, line) in raw.split(|&b| b == b'\n').enumerate() {
        let lineno = index + 1;
        let mut fields = line.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty());
        let (token, rank) = match (fields.next(), fields.next(), fields.next()) {
            (None, _, _) => continue,
            (Some(token), Some(rank), None) => (token, rank),
            _ => return Err(bad(lineno, "expected '<base64 token> <rank>'".into())),
        };
        let rank = std::str::from_utf8(rank)
            .ok()
            .filter(|r| r.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|r| r.parse::<u32>().ok())
            .filter(|&r| r != u32::MAX)
            .ok_or_else(|| bad(lineno, "expected '<base64 token> <rank>' with a rank from 0 to 2^32-2".into()))?;
        buffer.clear();
        // Whisper's multilingual vocabulary has an empty token, written as a lone "=" (which
        // Python's lenient base64 reads as no bytes).
        let empty = token.iter().all(|&b| b == b'=');
        if !empty {
            BASE64.decode_vec(token, &mut buffer).map_err(|_| {
                let shown = String::from_utf8_lossy(&token[..token.len().min(40)]).into_owned();
                bad(lineno, format!("bad base64 {shown:?}"))
            })?;
        }
        if let Some(first) = line_of_rank.insert(rank, lineno) {
            return Err(bad(lineno, format!("rank {rank} already used on line {first}")));
        }
        pairs.push((rank, buffer.clone()));
    }
    if pairs.is_empty() {
        return Err(Error::Format { path: path.to_path_buf(), format: "tiktoken", reason: "no tokens".into() });
    }
    Ok(pairs)
}

/// A tiktoken-style tokenizer: byte-level BPE whose ranks are its ids, each piece that is a
/// token taken whole (tiktoken's rule), `specials` matched as text when allowed.
pub fn ranked_tokenizer(ranks: &[(u32, Vec<u8>)], specials: &[(String, u32)], pattern: &str) -> Result<Tokenizer> {
    let pretokenizer = PreTokenizer::from_spec(pattern)?;
    let mut vocab = Vocab::default();
    vocab.reserve(ranks.len());
    for (rank, token) in ranks {
        if token.is_empty() {
            // An empty token (Whisper's) holds its id and decodes to nothing; no text spells it.
            vocab.push_kind("", *rank, TokenKind::Unused)?;
        } else {
            vocab.insert(*rank, token)?;
        }
    }
    for (text, id) in specials {
        vocab.push_special(text, Some(*id))?;
    }
    let options = BpeOptions { byte_level: true, whole_piece_first: true, ..BpeOptions::default() };
    let model = Bpe::from_ranks(vocab, options)?;
    Ok(Tokenizer::new(Normalizer::from_spec("none")?, pretokenizer, model))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_give_ranks_and_errors_name_the_line() {
        let path = Path::new("t.tiktoken");
        let pairs = parse_ranks(b"YQ== 0\n\nYg== 1\n", path).unwrap();
        assert_eq!(pairs, vec![(0, b"a".to_vec()), (1, b"b".to_vec())]);
        let cases: [(&[u8], &str); 5] = [
            (b"YQ== 0\nYg== 0\n", "t.tiktoken:2: not a valid tiktoken file: rank 0 already used on line 1"),
            (b"YQ== 0\n!!!! 1\n", "t.tiktoken:2: not a valid tiktoken file: bad base64"),
            (b"YQ==\n", "t.tiktoken:1: not a valid tiktoken file: expected"),
            (b"YQ== -1\n", "t.tiktoken:1: not a valid tiktoken file: expected"),
            (b"\n\n", "t.tiktoken: not a valid tiktoken file: no tokens"),
        ];
        for (text, expected) in cases {
            let err = parse_ranks(text, path).expect_err("refused").to_string();
            assert!(err.starts_with(expected), "{err}");
        }
    }

    #[test]
    fn a_token_given_twice_is_refused() {
        let err = ranked_tokenizer(&[(0, b"a".to_vec()), (1, b"a".to_vec())], &[], "gpt2").err().unwrap();
        assert!(err.to_string().contains("two ids"), "{err}");
    }
}
