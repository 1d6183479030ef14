//! A per-thread cache of short pieces and their ids, shared by every call on that thread.
//!
//! Why: real text is Zipfian — a few thousand pieces (" the", "\n", " of", "();") make up most of
//! it. Even a piece that is itself a token costs a hash-table probe that usually misses the CPU
//! cache (100k-token tables do not fit), and a piece that is not a token costs a dozen probes
//! while it is merged. One table of two-way sets, a 64-byte cache line each, small enough for the
//! L2 cache, answers the frequent pieces with one probe, whatever their kind.
//!
//! Why not a shared table behind a lock, or a cache per call: the lock costs more than the probe,
//! and a per-call cache never warms up on short texts. Each thread keeps one table per tokenizer
//! it has used recently (tokenizers are told apart by a unique id, never by address).
//!
//! Rejected: a full LRU (bookkeeping on every hit costs more than an occasional recompute); caching
//! long pieces (rare, and they would need slots of their own size); splitting 16 pieces ahead and
//! prefetching their slots together (measured slower: the pre-tokenizer's work is lost to the
//! extra pass). 64-byte slots holding up to 10 ids made the table 1 MiB and were slower than
//! these 32-byte ones.

use crate::vocab::pack_le;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Pieces of up to this many bytes are cached.
pub const MAX_PIECE: usize = 16;
/// At most this many ids per cached piece: nine pieces in ten are one token, and most others
/// two or three; more would make the slots, and so the table, larger than the L2 cache likes.
const MAX_IDS: usize = 3;
/// Sets of two slots (the most recently used first): one cache line per probe, and ~20% fewer
/// misses than a direct-mapped table of the same size (92.3% → 93.9% of prose pieces hit).
const SETS: usize = 1 << 13;
/// Tables kept per thread (one per tokenizer recently used on it).
const TABLES_PER_THREAD: usize = 4;

/// 32 bytes: a set of two is one cache line, 512 KiB in all.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Slot {
    /// The piece's bytes, zero-padded, as two little-endian words.
    key: [u64; 2],
    /// Piece length + 1; 0 marks an empty slot.
    len: u16,
    n_ids: u16,
    ids: [u32; MAX_IDS],
}

const EMPTY: Slot = Slot { key: [0; 2], len: 0, n_ids: 0, ids: [0; MAX_IDS] };

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Set([Slot; 2]);

const EMPTY_SET: Set = Set([EMPTY; 2]);

/// A unique id for each tokenizer, so a thread's tables never serve a tokenizer they were not
/// filled by (an address could be reused after a tokenizer is dropped).
pub fn next_owner_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

pub struct PieceCache {
    sets: Box<[Set]>,
}

impl PieceCache {
    fn new() -> Self {
        PieceCache { sets: vec![EMPTY_SET; SETS].into_boxed_slice() }
    }

    /// The piece (at most 16 bytes) zero-padded into two words, read with overlapping loads.
    /// Not `vocab::pack_le` on each half: that branches on both halves' lengths, and callgrind
    /// counted 18% more instructions in the cache probe for it; here pieces of 4 to 16 bytes
    /// take no length branch beyond the first.
    #[inline(always)]
    fn key_of(piece: &[u8]) -> [u64; 2] {
        let n = piece.len();
        let word = |at: usize| u64::from_le_bytes(piece[at..at + 8].try_into().expect("8 bytes"));
        if n >= 8 {
            // The second load ends at the piece's end; shifting drops the bytes it shares with
            // the first, leaving bytes 8..n at the bottom.
            [word(0), if n == 8 { 0 } else { word(n - 8) >> (8 * (16 - n)) }]
        } else if n >= 4 {
            let half = |at: usize| u32::from_le_bytes(piece[at..at + 4].try_into().expect("4 bytes")) as u64;
            [half(0) | (half(n - 4) << (8 * (n - 4))), 0]
        } else {
            [pack_le(piece), 0]
        }
    }

    #[inline(always)]
    fn index(key: &[u64; 2], len: usize) -> usize {
        let h = (key[0] ^ key[1].rotate_left(29) ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - SETS.trailing_zeros())) as usize
    }

    /// Appends the ids of `piece` (at most `MAX_PIECE` bytes) to `out`, computing them with
    /// `encode` (which appends to `out`) on a miss.
    #[inline]
    pub fn ids<E>(
        &mut self,
        piece: &[u8],
        out: &mut Vec<u32>,
        encode: impl FnOnce(&mut Vec<u32>) -> Result<(), E>,
    ) -> Result<(), E> {
        debug_assert!(piece.len() <= MAX_PIECE);
        let key = Self::key_of(piece);
        let len = piece.len() as u16 + 1;
        let Set(set) = &mut self.sets[Self::index(&key, piece.len())];
        let hit = |slot: &Slot| slot.len == len && slot.key == key;
        if hit(&set[0]) {
            out.extend_from_slice(&set[0].ids[..set[0].n_ids as usize]);
            return Ok(());
        }
        if hit(&set[1]) {
            set.swap(0, 1);
            out.extend_from_slice(&set[0].ids[..set[0].n_ids as usize]);
            return Ok(());
        }
        let start = out.len();
        encode(out)?;
        let ids = &out[start..];
        if ids.len() <= MAX_IDS {
            set[1] = set[0];
            let slot = &mut set[0];
            slot.key = key;
            slot.len = len;
            slot.n_ids = ids.len() as u16;
            slot.ids[..ids.len()].copy_from_slice(ids);
        }
        Ok(())
    }
}

thread_local! {
    static TABLES: RefCell<Vec<(u64, PieceCache)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's cache for tokenizer `owner` (made on first use; the table used
/// least recently is recycled when a thread has served more than a few tokenizers).
pub fn with_cache<R>(owner: u64, f: impl FnOnce(&mut PieceCache) -> R) -> R {
    TABLES.with(|tables| {
        let mut tables = tables.borrow_mut();
        let position = tables.iter().position(|(o, _)| *o == owner);
        let index = match position {
            Some(i) => i,
            None => {
                if tables.len() >= TABLES_PER_THREAD {
                    // Recycle the last (least recently moved to the front) table.
                    let (_, mut cache) = tables.pop().expect("full");
                    cache.sets.fill(EMPTY_SET);
                    tables.push((owner, cache));
                } else {
                    tables.push((owner, PieceCache::new()));
                }
                tables.len() - 1
            }
        };
        if index != 0 {
            tables.swap(0, index);
        }
        f(&mut tables[0].1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_return_what_misses_computed() {
        let owner = next_owner_id();
        let mut calls = 0;
        for _ in 0..3 {
            let mut out = vec![7];
            with_cache(owner, |c| {
                c.ids(b"hello", &mut out, |o| {
                    calls += 1;
                    o.extend([1, 2, 3]);
                    Ok::<(), ()>(())
                })
            })
            .unwrap();
            assert_eq!(out, [7, 1, 2, 3]);
        }
        assert_eq!(calls, 1);
        // Another tokenizer on the same thread never sees these ids.
        let mut out = Vec::new();
        with_cache(next_owner_id(), |c| {
            c.ids(b"hello", &mut out, |o| {
                o.push(9);
                Ok::<(), ()>(())
            })
        })
        .unwrap();
        assert_eq!(out, [9]);
    }

    #[test]
    fn two_pieces_of_one_set_are_both_kept() {
        // Find two pieces that land in the same set.
        let index = |p: &[u8]| PieceCache::index(&PieceCache::key_of(p), p.len());
        let first = b"piece0".to_vec();
        let second = (1..)
            .map(|k: u32| format!("piece{k}").into_bytes())
            .find(|p| index(p) == index(&first))
            .expect("a collision exists");
        let owner = next_owner_id();
        let mut misses = 0;
        let mut out = Vec::new();
        for piece in [&first, &second, &first, &second, &first] {
            with_cache(owner, |c| {
                c.ids(piece, &mut out, |o| {
                    misses += 1;
                    o.push(piece.len() as u32);
                    Ok::<(), ()>(())
                })
            })
            .unwrap();
        }
        assert_eq!(misses, 2);
        assert_eq!(out, [6, second.len() as u32, 6, second.len() as u32, 6]);
    }

    #[test]
    fn keys_are_the_zero_padded_bytes() {
        let text: Vec<u8> = (1..=40u8).map(|b| b.wrapping_mul(37)).collect();
        for start in 0..8 {
            for len in 0..=MAX_PIECE {
                let piece = &text[start..start + len];
                let mut padded = [0u8; 16];
                padded[..len].copy_from_slice(piece);
                let expected = [
                    u64::from_le_bytes(padded[..8].try_into().unwrap()),
                    u64::from_le_bytes(padded[8..].try_into().unwrap()),
                ];
                assert_eq!(PieceCache::key_of(piece), expected, "start {start} len {len}");
            }
        }
    }

    #[test]
    fn pieces_differing_only_in_length_or_padding_are_distinct() {
        let owner = next_owner_id();
        let mut out = Vec::new();
        with_cache(owner, |c| {
            c.ids(b"ab", &mut out, |o| {
                o.push(1);
                Ok::<(), ()>(())
            })
            .unwrap();
            c.ids(b"ab\0", &mut out, |o| {
                o.push(2);
                Ok::<(), ()>(())
            })
            .unwrap();
            c.ids(b"ab", &mut out, |o| {
                o.push(3);
                Ok::<(), ()>(())
            })
            .unwrap();
            c.ids(b"", &mut out, |_| Ok::<(), ()>(())).unwrap();
        });
        assert_eq!(out, [1, 2, 1]);
    }
}
