//! Encoding one piece: replay merges by rank.
//!
//! Short pieces (most words) use a plain scan for the lowest-ranked adjacent pair, which beats
//! any bookkeeping at that size. Long pieces use a doubly linked list of symbols and a min-heap
//! of candidate pairs keyed by (rank, position), with stale entries skipped when popped — so a
//! megabyte without spaces costs O(n log n), not O(n²).

use super::Bpe;
use crate::error::{Error, Result};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Below this many symbols the quadratic scan is faster than the heap.
const SCAN_LIMIT: usize = 32;

impl Bpe {
    /// Appends the ids of `piece` to `out`.
    pub fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) -> Result<()> {
        if self.options.whole_piece_first {
            if let Some(id) = self.vocab.id(piece.as_bytes()) {
                out.push(id);
                return Ok(());
            }
        }
        if self.rank_based && self.options.byte_level {
            self.merge_ranked(piece.as_bytes(), out);
            return Ok(());
        }
        let start = out.len();
        if self.options.byte_level {
            out.extend(piece.bytes().map(|b| self.byte_ids[b as usize]));
        } else {
            self.push_chars(piece, out)?;
        }
        self.merge_tail(out, start);
        Ok(())
    }

    /// Appends the ids of raw bytes (byte-level models only): words of non-UTF-8 input.
    pub fn encode_bytes(&self, bytes: &[u8], out: &mut Vec<u32>) {
        if self.rank_based {
            self.merge_ranked(bytes, out);
            return;
        }
        let start = out.len();
        out.extend(bytes.iter().map(|&b| self.byte_ids[b as usize]));
        self.merge_tail(out, start);
    }

    /// Applies this model's merges to a sequence of symbol ids in place.
    pub fn merge_symbols(&self, symbols: &mut Vec<u32>) {
        self.merge_tail(symbols, 0);
    }

    fn push_chars(&self, piece: &str, out: &mut Vec<u32>) -> Result<()> {
        let mut buf = [0u8; 4];
        for c in piece.chars() {
            match self.vocab.id(c.encode_utf8(&mut buf).as_bytes()) {
                Some(id) => out.push(id),
                None => match self.unk_id {
                    Some(unk) => out.push(unk),
                    None => return Err(Error::OutOfVocabulary { ch: c, code: c as u32 }),
                },
            }
        }
        if let Some(suffix) = self.suffix_id {
            out.push(suffix);
        }
        Ok(())
    }

    #[inline]
    fn rank(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        self.pair_rank.get(&(left, right)).copied()
    }

    /// Merges the symbols in `out[start..]` in place.
    fn merge_tail(&self, out: &mut Vec<u32>, start: usize) {
        let n = out.len() - start;
        if n < 2 {
            return;
        }
        if n <= SCAN_LIMIT {
            self.merge_by_scan(out, start);
        } else {
            let merged = self.merge_by_heap(&out[start..]);
            out.truncate(start);
            out.extend(merged);
        }
    }

    /// Keeps the rank of every adjacent pair in a small array, so each merge costs two look-ups
    /// (the new neighbours) and a scan of at most `SCAN_LIMIT` integers.
    fn merge_by_scan(&self, out: &mut Vec<u32>, start: usize) {
        const NONE: (u32, u32) = (u32::MAX, u32::MAX);
        let mut n = out.len() - start;
        let mut symbols = [0u32; SCAN_LIMIT];
        symbols[..n].copy_from_slice(&out[start..]);
        let mut ranks = [NONE; SCAN_LIMIT];
        for i in 0..n - 1 {
            ranks[i] = self.rank(symbols[i], symbols[i + 1]).unwrap_or(NONE);
        }
        while n > 1 {
            let mut best = 0;
            for i in 1..n - 1 {
                if ranks[i].0 < ranks[best].0 {
                    best = i;
                }
            }
            if ranks[best].0 == u32::MAX {
                break;
            }
            symbols[best] = ranks[best].1;
            symbols.copy_within(best + 2..n, best + 1);
            ranks.copy_within(best + 2..n, best + 1);
            n -= 1;
            if best > 0 {
                ranks[best - 1] = self.rank(symbols[best - 1], symbols[best]).unwrap_or(NONE);
            }
            ranks[best] = if best + 1 < n { self.rank(symbols[best], symbols[best + 1]).unwrap_or(NONE) } else { NONE };
        }
        out.truncate(start);
        out.extend_from_slice(&symbols[..n]);
    }

    fn merge_by_heap(&self, symbols: &[u32]) -> Vec<u32> {
        const NONE: usize = usize::MAX;
        let n = symbols.len();
        let mut ids = symbols.to_vec();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut next: Vec<usize> = (1..=n).map(|i| if i == n { NONE } else { i }).collect();
        let mut alive = vec![true; n];
        // (rank, left position, left id, right id): the ids let a stale entry be recognised.
        let mut heap = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            if let Some((rank, _)) = self.rank(ids[i], ids[i + 1]) {
                heap.push(Reverse((rank, i, ids[i], ids[i + 1])));
            }
        }
        while let Some(Reverse((rank, i, left, right))) = heap.pop() {
            let j = next[i];
            if !alive[i] || j == NONE || ids[i] != left || ids[j] != right {
                continue;
            }
            let Some((r, merged)) = self.rank(left, right) else {
                continue;
            };
            debug_assert_eq!(r, rank);
            ids[i] = merged;
            alive[j] = false;
            next[i] = next[j];
            if next[j] != NONE {
                prev[next[j]] = i;
            }
            let p = prev[i];
            if p != NONE {
                if let Some((rank, _)) = self.rank(ids[p], merged) {
                    heap.push(Reverse((rank, p, ids[p], merged)));
                }
            }
            let q = next[i];
            if q != NONE {
                if let Some((rank, _)) = self.rank(merged, ids[q]) {
                    heap.push(Reverse((rank, i, merged, ids[q])));
                }
            }
        }
        (0..n).filter(|&i| alive[i]).map(|i| ids[i]).collect()
    }
}
