//! Encoding one piece: replay merges by rank.
//!
//! Short pieces (most words) use a plain scan for the lowest-ranked adjacent pair, which beats
//! any bookkeeping at that size. Long pieces use a doubly linked list of symbols and a min-heap
//! of candidate pairs keyed by (rank, position), with stale entries skipped when popped — so a
//! megabyte without spaces costs O(n log n), not O(n²).

use super::backtrack::Backtracker;
use super::ranked::backtracked;
use super::{Bpe, MergeOrder};
use crate::error::{Error, Result};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Below this many symbols the quadratic scan is faster than the heap.
const SCAN_LIMIT: usize = 32;

impl Bpe {
    /// Appends the ids of `piece` to `out`.
    pub fn encode_piece(&self, piece: &str, out: &mut Vec<u32>) -> Result<()> {
        if self.marks_symbols() {
            return self.encode_marked(piece.as_bytes(), out);
        }
        if self.drops_bytes && piece.bytes().any(|b| self.byte_ids[b as usize] == u32::MAX) {
            self.encode_kept(&self.kept_bytes(piece.as_bytes()), out);
            return Ok(());
        }
        if self.backtracks() && backtracked(piece.as_bytes()) {
            // No look-up of the whole piece (a miss in the big table, for nearly every long
            // piece): the backtracker gives a whole token as itself, and knows the few others.
            let backtracker = self.backtracker();
            match backtracker.unreachable_token(piece.as_bytes()).filter(|_| self.options.whole_piece_first) {
                Some(id) => out.push(id),
                None => backtracker.encode(self, piece.as_bytes(), out),
            }
            return Ok(());
        }
        if self.options.whole_piece_first {
            if let Some(id) = self.vocab.id(piece.as_bytes()) {
                out.push(id);
                return Ok(());
            }
        }
        if self.is_rank_based() && self.options.byte_level {
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

    /// A piece of a model with Hugging Face's marked symbols: whole when it is a token and the
    /// file says so (`ignore_merges`, which looks the bare piece up), else its marked symbols
    /// merged.
    fn encode_marked(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<()> {
        if self.options.whole_piece_first {
            if let Some(id) = self.vocab.id(piece) {
                out.push(id);
                return Ok(());
            }
        }
        let start = out.len();
        self.push_marked(piece, out, None)?;
        self.merge_tail(out, start);
        Ok(())
    }

    /// Appends the first symbols of `piece` as Hugging Face's BPE makes them when it marks
    /// words: each character (each byte, byte-level) after the first with the continuing
    /// prefix before it, the last with the end-of-word suffix joined. A marked symbol the
    /// vocabulary lacks is treated as a character outside it is: its bytes (byte fallback, the
    /// marks' bytes included, as tokenizers does), the unknown token, or left out. `units`, when
    /// given, receives where each symbol's text lies in the piece, as (start, length).
    pub(super) fn push_marked(
        &self,
        piece: &[u8],
        out: &mut Vec<u32>,
        mut units: Option<&mut Vec<(usize, usize)>>,
    ) -> Result<()> {
        let prefix = self.options.continuing_subword_prefix.as_deref().unwrap_or("").as_bytes();
        let suffix = match &self.options.end_of_word_suffix {
            Some(s) if self.options.joined_suffix => s.as_bytes(),
            _ => b"",
        };
        let mut marked = Vec::with_capacity(prefix.len() + 4 + suffix.len());
        let mut last_unknown = false;
        let mut i = 0;
        while i < piece.len() {
            let len = if self.options.byte_level { 1 } else { utf8_len(piece[i]).min(piece.len() - i) };
            marked.clear();
            if i > 0 {
                marked.extend_from_slice(prefix);
            }
            marked.extend_from_slice(&piece[i..i + len]);
            if i + len == piece.len() {
                marked.extend_from_slice(suffix);
            }
            let at = i;
            i += len;
            let mut push = |id: u32, start: usize, n: usize| {
                out.push(id);
                if let Some(units) = units.as_deref_mut() {
                    units.push((start, n));
                }
            };
            if let Some(id) = self.vocab.id(&marked) {
                push(id, at, len);
                last_unknown = false;
                continue;
            }
            if self.options.byte_fallback {
                if let Some(ids) = marked.iter().map(|&b| self.vocab.byte_id(b)).collect::<Option<Vec<u32>>>() {
                    // The text's bytes go to the first byte tokens: offsets stay inside the piece.
                    // Each byte token covers one byte of the text while there are any (as
                    // tokenizers counts them), the marks' nothing.
                    for (k, id) in ids.into_iter().enumerate() {
                        push(id, at + k.min(len), usize::from(k < len));
                    }
                    last_unknown = false;
                    continue;
                }
            }
            match self.unk_id {
                Some(_) if last_unknown && self.options.fuse_unk => {
                    if let Some(last) = units.as_deref_mut().and_then(|u| u.last_mut()) {
                        last.1 += len;
                    }
                }
                Some(unk) => push(unk, at, len),
                None if self.options.drop_unknown => continue,
                None => {
                    return Err(Error::config(format!(
                        "the symbol {:?} is not in the vocabulary, which has no unknown token",
                        String::from_utf8_lossy(&marked)
                    )))
                }
            }
            last_unknown = true;
        }
        Ok(())
    }

    /// Appends the ids of raw bytes (byte-level models only): words of non-UTF-8 input. A byte
    /// the vocabulary lacks (one UTF-8 never produces, in a vocabulary such as GPT-NeoX's) is an
    /// error — unless the model leaves out the bytes it lacks.
    pub fn encode_bytes(&self, bytes: &[u8], out: &mut Vec<u32>) -> Result<()> {
        if self.marks_symbols() {
            return self.encode_marked(bytes, out);
        }
        if let Some(&b) = bytes.iter().find(|&&b| self.byte_ids[b as usize] == u32::MAX) {
            if !self.drops_bytes {
                return Err(Error::config(format!("byte 0x{b:02x} has no token in this byte-level vocabulary")));
            }
            self.encode_kept(&self.kept_bytes(bytes), out);
            return Ok(());
        }
        self.encode_kept(bytes, out);
        Ok(())
    }

    /// `bytes` without those the vocabulary lacks: what the merges start from where the model
    /// leaves them out (the bytes either side become neighbours, and may merge).
    fn kept_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        bytes.iter().copied().filter(|&b| self.byte_ids[b as usize] != u32::MAX).collect()
    }

    /// Appends the ids of bytes that all have a token (byte-level models).
    fn encode_kept(&self, bytes: &[u8], out: &mut Vec<u32>) {
        if self.is_rank_based() {
            self.merge_ranked(bytes, out);
            return;
        }
        if self.backtracks() && backtracked(bytes) {
            self.backtracker().encode(self, bytes, out);
            return;
        }
        let start = out.len();
        out.extend(bytes.iter().map(|&b| self.byte_ids[b as usize]));
        self.merge_tail(out, start);
    }

    /// Appends the ids of `piece` with BPE-dropout: each merge, when its turn comes, is skipped
    /// with probability `p` (`uniform()` draws from [0, 1)), as SentencePiece's dropout does.
    /// Works on its own symbols: the piece cache, which holds best cuts only, is never touched.
    pub fn encode_piece_dropout(
        &self,
        piece: &str,
        p: f64,
        uniform: &mut impl FnMut() -> f64,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        // tiktoken's rule (a piece that is a token stays whole) holds without dropout only: with
        // it, a word that is one token could never be cut, and tiktoken vocabularies hold most
        // common words. (Hugging Face's `ignore_merges` keeps such words whole under dropout.)
        if self.options.whole_piece_first && p == 0.0 {
            if let Some(id) = self.vocab.id(piece.as_bytes()) {
                out.push(id);
                return Ok(());
            }
        }
        let symbols = self.first_symbols(piece)?;
        let skip = || p > 0.0 && (p >= 1.0 || uniform() < p);
        self.merge_heap_into(&symbols, |l, r| self.rank(l, r), skip, out);
        Ok(())
    }

    /// Appends the ids of `piece` with tokenizers' BPE-dropout, whose draws differ from
    /// SentencePiece's (`encode_piece_dropout`): a skipped merge comes back once a later one is
    /// not skipped (`merge_requeuing_skips`), and `ignore_merges` keeps a word that is a token
    /// whole even so.
    pub fn encode_piece_requeued_dropout(
        &self,
        piece: &str,
        p: f64,
        uniform: &mut dyn FnMut() -> f64,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        if self.options.whole_piece_first {
            if let Some(id) = self.vocab.id(piece.as_bytes()) {
                out.push(id);
                return Ok(());
            }
        }
        let symbols = self.first_symbols(piece)?;
        out.extend(merge_requeuing_skips(&symbols, |l, r| self.rank(l, r), || p > 0.0 && uniform() < p));
        Ok(())
    }

    /// The symbols merging starts from: the piece's bytes or characters (word marks on).
    fn first_symbols(&self, piece: &str) -> Result<Vec<u32>> {
        let mut symbols = Vec::with_capacity(piece.len());
        if self.marks_symbols() {
            self.push_marked(piece.as_bytes(), &mut symbols, None)?;
        } else if self.options.byte_level {
            let lacks = |b: u8| self.drops_bytes && self.byte_ids[b as usize] == u32::MAX;
            symbols.extend(piece.bytes().filter(|&b| !lacks(b)).map(|b| self.byte_ids[b as usize]));
        } else {
            self.push_chars(piece, &mut symbols)?;
        }
        Ok(symbols)
    }

    /// Merges `symbols` with the heap and appends the result to `out`; unused pieces (in
    /// SentencePiece models that have them) are split back by the pair that last formed them,
    /// which only the heap's order of discovery — SentencePiece's own — tells.
    fn merge_heap_into(
        &self,
        symbols: &[u32],
        rank: impl Fn(u32, u32) -> Option<(u32, u32)>,
        skip: impl FnMut() -> bool,
        out: &mut Vec<u32>,
    ) {
        if self.sentencepiece().is_some_and(|sp| sp.has_unused()) {
            let mut formed_from = FxHashMap::default();
            let merged = merge_by_heap(symbols, rank, skip, Some(&mut formed_from));
            self.resegment(&merged, &formed_from, out);
        } else {
            out.extend(merge_by_heap(symbols, rank, skip, None));
        }
    }

    /// A rank-based model's pair: the token spelled by the two tokens' bytes, whose id is its rank.
    fn ranked_pair(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        let mut joined = smallvec::SmallVec::<[u8; 64]>::new();
        joined.extend_from_slice(self.vocab.token_bytes(left).ok()?);
        joined.extend_from_slice(self.vocab.token_bytes(right).ok()?);
        self.vocab.id(&joined).map(|id| (id, id))
    }

    /// Whether long pieces go to the backtracking encoder (`backtrack.rs`): byte-level models
    /// whose merges depend on the two symbols alone (not SentencePiece's, whose unused pieces
    /// are split back by the text's whole merge order).
    pub(super) fn backtracks(&self) -> bool {
        self.options.byte_level && self.sentencepiece().is_none() && self.suffix_id.is_none() && !self.marks_symbols()
    }

    pub(super) fn backtracker(&self) -> &Backtracker {
        self.backtracker.get_or_init(|| std::sync::Arc::new(Backtracker::new(self)))
    }

    /// A byte-level piece merged by replaying the merges one by one (what the backtracker's
    /// checks ask).
    pub(super) fn merge_bytes_replay(&self, bytes: &[u8], out: &mut Vec<u32>) {
        if self.is_rank_based() {
            return self.merge_ranked_replay(bytes, out);
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
        let bytes = piece.as_bytes();
        let frozen = self.sentencepiece().map(|sp| &sp.frozen).filter(|t| !t.is_empty());
        let mut last_unknown = false;
        let mut i = 0;
        while i < bytes.len() {
            if let Some((len, id)) = frozen.and_then(|t| t.longest_prefix(&bytes[i..])) {
                out.push(id);
                i += len;
                last_unknown = false;
                continue;
            }
            let c = piece[i..].chars().next().expect("i is on a character boundary");
            let symbol = &bytes[i..i + c.len_utf8()];
            i += symbol.len();
            if let Some(id) = self.symbol_id(symbol) {
                out.push(id);
                last_unknown = false;
                continue;
            }
            // A character outside the vocabulary: its bytes as byte tokens (byte fallback),
            // else the unknown token — one for a run of them with `fuse_unk`.
            if self.options.byte_fallback {
                if let Some(ids) = symbol.iter().map(|&b| self.vocab.byte_id(b)).collect::<Option<Vec<u32>>>() {
                    out.extend(ids);
                    last_unknown = false;
                    continue;
                }
            }
            match self.unk_id {
                Some(_) if last_unknown && self.options.fuse_unk => {}
                Some(unk) => out.push(unk),
                None if self.options.drop_unknown => continue,
                None => return Err(Error::OutOfVocabulary { ch: c, code: c as u32 }),
            }
            last_unknown = true;
        }
        if let Some(suffix) = self.suffix_id {
            out.push(suffix);
        }
        Ok(())
    }

    #[inline]
    fn rank(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        match &self.order {
            MergeOrder::Listed(pair_rank) => pair_rank.get(&(left, right)).copied(),
            MergeOrder::Scores(sp) => sp.joined_rank(&self.vocab, left, right),
            MergeOrder::Ranks => self.ranked_pair(left, right),
        }
    }

    /// Merges the symbols in `out[start..]` in place.
    fn merge_tail(&self, out: &mut Vec<u32>, start: usize) {
        let n = out.len() - start;
        if n < 2 {
            return;
        }
        let has_unused = self.sentencepiece().is_some_and(|sp| sp.has_unused());
        if n <= SCAN_LIMIT && !has_unused {
            self.merge_by_scan(out, start);
        } else {
            let symbols = out.split_off(start);
            self.merge_heap_into(&symbols, |l, r| self.rank(l, r), || false, out);
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
}

/// Symbols being merged, linked left to right: a merge joins a symbol with the next one alive.
struct Chain {
    ids: Vec<u32>,
    prev: Vec<usize>,
    next: Vec<usize>,
    alive: Vec<bool>,
}

impl Chain {
    const NONE: usize = usize::MAX;

    fn new(symbols: &[u32]) -> Chain {
        let n = symbols.len();
        Chain {
            ids: symbols.to_vec(),
            prev: (0..n).map(|i| i.wrapping_sub(1)).collect(),
            next: (1..=n).map(|i| if i == n { Self::NONE } else { i }).collect(),
            alive: vec![true; n],
        }
    }

    /// The symbol after `i`, if `i` is alive and not last.
    fn right_of(&self, i: usize) -> Option<usize> {
        let j = self.next[i];
        (self.alive[i] && j != Self::NONE).then_some(j)
    }

    /// Joins `i` and the symbol after it into `merged`; returns the new pairs' left positions
    /// and ids: (before `i`, `i`) and (`i`, after it), where there are such neighbours.
    fn join(&mut self, i: usize, merged: u32) -> [Option<(usize, u32, u32)>; 2] {
        let j = self.next[i];
        self.ids[i] = merged;
        self.alive[j] = false;
        self.next[i] = self.next[j];
        if self.next[j] != Self::NONE {
            self.prev[self.next[j]] = i;
        }
        let (p, q) = (self.prev[i], self.next[i]);
        [(p != Self::NONE).then(|| (p, self.ids[p], merged)), (q != Self::NONE).then(|| (i, merged, self.ids[q]))]
    }

    fn into_ids(self) -> Vec<u32> {
        self.ids.into_iter().zip(self.alive).filter(|(_, alive)| *alive).map(|(id, _)| id).collect()
    }
}

/// Merges `symbols` by the pair ranks `rank(left, right) -> (rank, merged)`, lowest rank first,
/// leftmost among equals. `skip()` is asked before each merge (BPE-dropout: a skipped pair is
/// dropped until a merge beside it makes it again). `formed_from`, when given, records for each
/// unused merged id the pair that last formed it, as pairs are found.
pub(super) fn merge_by_heap(
    symbols: &[u32],
    rank: impl Fn(u32, u32) -> Option<(u32, u32)>,
    mut skip: impl FnMut() -> bool,
    mut formed_from: Option<&mut FxHashMap<u32, (u32, u32)>>,
) -> Vec<u32> {
    if symbols.len() < 2 {
        return symbols.to_vec();
    }
    let mut chain = Chain::new(symbols);
    // (rank, left position, left id, right id): the ids let a stale entry be recognised.
    let mut heap = BinaryHeap::with_capacity(symbols.len());
    let mut found = |heap: &mut BinaryHeap<_>, (i, left, right): (usize, u32, u32)| {
        if let Some((r, merged)) = rank(left, right) {
            heap.push(Reverse((r, i, left, right)));
            if let Some(map) = formed_from.as_deref_mut() {
                map.insert(merged, (left, right));
            }
        }
    };
    for (i, pair) in symbols.windows(2).enumerate() {
        found(&mut heap, (i, pair[0], pair[1]));
    }
    while let Some(Reverse((_, i, left, right))) = heap.pop() {
        let Some(j) = chain.right_of(i) else { continue };
        if chain.ids[i] != left || chain.ids[j] != right || skip() {
            continue;
        }
        let Some((_, merged)) = rank(left, right) else {
            continue;
        };
        for pair in chain.join(i, merged).into_iter().flatten() {
            found(&mut heap, pair);
        }
    }
    chain.into_ids()
}

/// Merges `symbols` as tokenizers' BPE does under dropout. Entries (rank, position, merged
/// token) leave the heap lowest rank first, leftmost among equals; `skip()` is asked of each
/// before it is checked, stale or not, and a skipped entry is set aside until an entry is not
/// skipped, when all set aside go back on the heap. An entry is stale when its left symbol is
/// gone or last, or the pair there now does not merge into its token.
pub(super) fn merge_requeuing_skips(
    symbols: &[u32],
    rank: impl Fn(u32, u32) -> Option<(u32, u32)>,
    mut skip: impl FnMut() -> bool,
) -> Vec<u32> {
    if symbols.len() < 2 {
        return symbols.to_vec();
    }
    let mut chain = Chain::new(symbols);
    let mut heap = BinaryHeap::with_capacity(symbols.len());
    let push = |heap: &mut BinaryHeap<_>, (i, left, right): (usize, u32, u32)| {
        if let Some((r, merged)) = rank(left, right) {
            heap.push(Reverse((r, i, merged)));
        }
    };
    for (i, pair) in symbols.windows(2).enumerate() {
        push(&mut heap, (i, pair[0], pair[1]));
    }
    let mut set_aside = Vec::new();
    while let Some(entry) = heap.pop() {
        if skip() {
            set_aside.push(entry);
            continue;
        }
        heap.extend(set_aside.drain(..));
        let Reverse((_, i, merged)) = entry;
        let Some(j) = chain.right_of(i) else { continue };
        if rank(chain.ids[i], chain.ids[j]).is_none_or(|(_, m)| m != merged) {
            continue;
        }
        for pair in chain.join(i, merged).into_iter().flatten() {
            push(&mut heap, pair);
        }
    }
    chain.into_ids()
}

/// The length of the UTF-8 sequence a leading byte starts (1 for a stray continuation byte).
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks of a toy vocabulary: a·b → ab (0), b·c → bc (1), ab·c → abc (2), c·a → ca (3).
    fn rank(left: u32, right: u32) -> Option<(u32, u32)> {
        match (left, right) {
            (0, 1) => Some((0, 3)),
            (1, 2) => Some((1, 4)),
            (3, 2) => Some((2, 5)),
            (2, 0) => Some((3, 6)),
            _ => None,
        }
    }

    #[test]
    fn requeued_dropout_without_skips_merges_as_the_best_cut() {
        let symbols = [0, 1, 2, 0, 1, 2, 0];
        let best = merge_by_heap(&symbols, rank, || false, None);
        assert_eq!(merge_requeuing_skips(&symbols, rank, || false), best);
        assert_eq!(best, vec![5, 5, 0]);
        assert_eq!(merge_requeuing_skips(&symbols, rank, || true), symbols.to_vec());
    }

    #[test]
    fn a_skipped_merge_comes_back_after_the_next_merge() {
        // a·b skipped once: b·c merges first, then a·b's entry is back but stale (b is gone),
        // and the result is a, bc.
        let mut draws = [true, false].into_iter();
        assert_eq!(merge_requeuing_skips(&[0, 1, 2], rank, || draws.next().unwrap_or(false)), vec![0, 4]);
        // A skip of the last entry on the heap leaves its pair unmerged.
        let mut draws = [true, false].into_iter();
        assert_eq!(merge_requeuing_skips(&[0, 1], rank, || draws.next().unwrap_or(false)), vec![0, 1]);
    }
}
