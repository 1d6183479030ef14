//! Times the core without Python: pre-tokenizing alone, and encoding, over a text file cut into
//! documents. For profiling (`perf record`) and quick A/B runs of the encoder.
//!
//! ```text
//! cargo run --release --example encode_docs -- RANKS.tiktoken PRESET FILE [DOC_BYTES] [ROUNDS] [LIMIT]
//! ```
use std::time::Instant;
use tokenmill::io::tiktoken::{ranked_tokenizer, read_ranks};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: encode_docs RANKS.tiktoken PRESET FILE [DOC_BYTES] [ROUNDS] [LIMIT]");
        std::process::exit(2);
    }
    let ranks = read_ranks(args[1].as_ref()).expect("ranks");
    let tokenizer = ranked_tokenizer(&ranks, &[], &args[2]).expect("tokenizer");
    let doc_bytes: usize = args.get(4).map_or(4096, |s| s.parse().expect("doc bytes"));
    let rounds: usize = args.get(5).map_or(5, |s| s.parse().expect("rounds"));
    let limit: usize = args.get(6).map_or(usize::MAX, |s| s.parse().expect("limit"));
    let raw = std::fs::read(&args[3]).expect("corpus");
    let text = String::from_utf8_lossy(&raw[..raw.len().min(limit)]).into_owned();
    let mut docs = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + doc_bytes).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        docs.push(&text[start..end]);
        start = end;
    }
    let mb = text.len() as f64 / 1e6;
    let pretokenizer = tokenizer.pretokenizer();
    let mut best_split = f64::MAX;
    let mut best_encode = f64::MAX;
    let mut pieces = 0usize;
    let mut tokens = 0usize;
    for _ in 0..rounds {
        let t = Instant::now();
        pieces = 0;
        for doc in &docs {
            pretokenizer
                .for_each_piece(doc, |p| {
                    pieces += p.len() & 1;
                    Ok(())
                })
                .expect("split");
        }
        best_split = best_split.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        tokens = 0;
        for doc in &docs {
            tokens += tokenizer.encode_ordinary(doc).expect("encode").len();
        }
        best_encode = best_encode.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{} docs, {mb:.1} MB, {tokens} tokens ({pieces} odd pieces): split {:.1} MB/s, encode {:.1} MB/s ({:.1} ns/token)",
        docs.len(),
        mb / best_split,
        mb / best_encode,
        best_encode * 1e9 / tokens as f64
    );
}
