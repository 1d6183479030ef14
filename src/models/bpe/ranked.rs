//! Encoding with ranked vocabularies (tiktoken), where a token's id is its rank: the merge of
//! two adjacent symbols is the token spelled by their bytes, looked up by byte slice.
//!
//! Why not the pair table of `encode.rs`: for a 100k-token vocabulary that table holds every
//! split of every token (hundreds of thousands of entries), and each look-up misses the cache.
//! Looking up slices of the piece in the token table itself — the same table whole pieces are
//! looked up in — keeps the encoder's working set to one table.

use super::Bpe;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Pieces up to this many bytes merge with a scan over a stack array of ranks.
const SCAN_LIMIT: usize = 32;
const NONE: u32 = u32::MAX;
/// Pieces longer than this go to the backtracking encoder: from about four CJK characters on it
/// beats replaying merges (measured on Japanese and Chinese man pages, cl100k).
const BACKTRACK_ABOVE: usize = 12;
/// Pieces ending in a non-ASCII byte go to it from this length on (a CJK character and a byte
/// more): such pieces are rarely tokens (cl100k, distinct pieces of Chinese man pages: 13–15% of
/// the 4–6-byte ones, 0–2% of the 7–12-byte ones, against ~40% of ASCII ones), so looking the
/// whole piece up mostly misses, and replaying merges pays a look-up per pair. Measured in
/// lock-step (`benches/ab_encode.py`, cl100k): Chinese +10%, Japanese +4%, Russian +3.5%,
/// English unchanged; Qwen 3 Chinese +4%. (From 7 bytes only: Chinese +7%.)
pub(super) const BACKTRACK_MULTIBYTE_FROM: usize = 4;

/// Whether a byte-level piece is encoded by backtracking (`backtrack.rs`) rather than replayed.
#[inline]
pub(super) fn backtracked(piece: &[u8]) -> bool {
    piece.len() > BACKTRACK_ABOVE || (piece.len() >= BACKTRACK_MULTIBYTE_FROM && piece[piece.len() - 1] >= 0x80)
}

impl Bpe {
    #[inline]
    fn slice_rank(&self, bytes: &[u8]) -> u32 {
        self.vocab.id(bytes).unwrap_or(NONE)
    }

    #[inline(always)]
    fn pair_rank_at(&self, piece: &[u8], k: usize) -> u32 {
        self.pair_ids[(piece[k] as usize) << 8 | piece[k + 1] as usize]
    }

    /// Appends the ids of `piece` (not itself a token) under tiktoken's rule: repeatedly merge
    /// the adjacent pair whose concatenation has the lowest rank, leftmost first. Long pieces
    /// find the result without replaying the merges (`backtrack.rs`).
    pub(super) fn merge_ranked(&self, piece: &[u8], out: &mut Vec<u32>) {
        if backtracked(piece) {
            return self.backtracker().encode(self, piece, out);
        }
        self.merge_ranked_replay(piece, out)
    }

    /// `merge_ranked` by replaying the merges one by one.
    pub(super) fn merge_ranked_replay(&self, piece: &[u8], out: &mut Vec<u32>) {
        let n = piece.len();
        if n <= 1 {
            out.extend(piece.iter().map(|&b| self.byte_ids[b as usize]));
            return;
        }
        if n > SCAN_LIMIT {
            return self.merge_ranked_heap(piece, out);
        }
        // Symbols are named by their first byte; `next` links them. A merged-away symbol keeps
        // rank NONE, so the arrays never shift and the minimum is one vectorized pass.
        let mut next = [0u8; SCAN_LIMIT + 1];
        let mut prev = [0u8; SCAN_LIMIT];
        let mut ids = [0u32; SCAN_LIMIT];
        let mut ranks = [NONE; SCAN_LIMIT];
        for k in 0..n {
            next[k] = (k + 1) as u8;
            prev[k] = k.wrapping_sub(1) as u8;
            ids[k] = self.byte_ids[piece[k] as usize];
        }
        for (k, rank) in ranks[..n - 1].iter_mut().enumerate() {
            *rank = self.pair_rank_at(piece, k);
        }
        let live = &mut ranks[..n - 1];
        loop {
            let lowest = live.iter().copied().fold(NONE, u32::min);
            if lowest == NONE {
                break;
            }
            let left = live.iter().position(|&r| r == lowest).expect("minimum is present");
            let right = next[left] as usize;
            let after = next[right] as usize;
            ids[left] = lowest;
            next[left] = after as u8;
            if after < n {
                prev[after] = left as u8;
            }
            if right < n - 1 {
                live[right] = NONE;
            }
            // The new symbol spans left..after; re-rank it with each neighbour.
            live[left] = if after < n { self.slice_rank(&piece[left..next[after] as usize]) } else { NONE };
            if left > 0 {
                let p = prev[left] as usize;
                live[p] = self.slice_rank(&piece[p..after]);
            }
        }
        let mut k = 0;
        while k < n {
            out.push(ids[k]);
            k = next[k] as usize;
        }
    }

    /// The same rule for long pieces: a linked list of symbols (named by their first byte) and a
    /// min-heap of (rank, position), stale entries skipped.
    pub(super) fn merge_ranked_heap(&self, piece: &[u8], out: &mut Vec<u32>) {
        let n = piece.len();
        const END: usize = usize::MAX;
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut ids: Vec<u32> = piece.iter().map(|&b| self.byte_ids[b as usize]).collect();
        let mut alive = vec![true; n];
        let end_of = |next: &[usize], s: usize| if next[s] >= n { n } else { next[s] };
        let mut heap = BinaryHeap::with_capacity(n);
        for k in 0..n - 1 {
            let rank = self.pair_rank_at(piece, k);
            if rank != NONE {
                heap.push(Reverse((rank, k, k + 2)));
            }
        }
        while let Some(Reverse((rank, left, right_end))) = heap.pop() {
            if !alive[left] || next[left] >= n {
                continue;
            }
            let right = next[left];
            if end_of(&next, right) != right_end {
                continue;
            }
            ids[left] = rank;
            alive[right] = false;
            next[left] = next[right];
            if next[right] < n {
                prev[next[right]] = left;
            }
            let p = prev[left];
            if p != END {
                let rank = self.slice_rank(&piece[p..right_end]);
                if rank != NONE {
                    heap.push(Reverse((rank, p, right_end)));
                }
            }
            if next[left] < n {
                let far_end = end_of(&next, next[left]);
                let rank = self.slice_rank(&piece[left..far_end]);
                if rank != NONE {
                    heap.push(Reverse((rank, left, far_end)));
                }
            }
        }
        out.extend((0..n).filter(|&k| alive[k]).map(|k| ids[k]));
    }
}
