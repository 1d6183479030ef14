//! A per-thread cache of short pieces and their ids, shared by every call on that thread.
//!
//! Why: real text is Zipfian — a few thousand pieces (" the", "\n", " of", "();") make up most of
//! it. Even a piece that is itself a token costs a hash-table probe that usually misses the CPU
//! cache (100k-token tables do not fit), and a piece that is not a token costs a dozen probes
//! while it is merged. Two tables of sets, a 64-byte cache line each and 512 KiB in all (small
//! enough for the L2 cache), answer the frequent pieces with one probe, whatever their kind:
//! pieces of up to 8 bytes in 16-byte slots (the ids packed into one word beside the key), longer
//! ones in 32-byte slots.
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

use crate::models::vocab::pack_le;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Pieces of up to this many bytes are cached.
pub const MAX_PIECE: usize = 16;
/// At most this many ids per cached piece: nine pieces in ten are one token, and most others
/// two or three; more would make the slots, and so the table, larger than the L2 cache likes.
const MAX_IDS: usize = 3;
/// Pieces of up to 8 bytes (nine in ten of English, C or Chinese pieces) go to 16-byte slots,
/// four to a cache line; longer ones to 32-byte slots, two to a line.
const SHORT_PIECE: usize = 8;
/// Sets of four short slots and of two long ones (the most recently used first in each), one
/// cache line a set: 2 MiB each, 4 MiB in all. Splitting the old single table of two-slot sets
/// this way halves the misses (simulated on 2 MB of English man pages, second pass: 5.4% → 3.2%
/// of pieces; C 2.7% → 1.7%) in the same memory. Why this large, when it outgrows the L2
/// cache: a miss costs a byte-pair merge, far more than a probe that waits on the L3 cache —
/// over 20 MB of 4 KB documents (cl100k, one thread), 2^15 sets encoded English 1.15–1.25× and
/// C 1.13× faster than 2^12 (512 KiB). Memory is taken from the system zeroed (an empty table),
/// so a thread that encodes a few short texts maps only the pages it touches. Rejected: starting
/// at 2^12 sets and growing after many misses (5–9% slower at the same final size).
const SHORT_SETS: usize = 1 << 15;
const LONG_SETS: usize = 1 << 15;
/// An id in a short slot takes this many bits: three ids, a length and a count fit in one word.
const ID_BITS: u32 = 19;
const ID_MASK: u64 = (1 << ID_BITS) - 1;
/// Tables kept per thread (one per tokenizer recently used on it).
const TABLES_PER_THREAD: usize = 4;

/// 16 bytes: a piece of at most 8 bytes and up to three ids below 2^19.
#[derive(Clone, Copy)]
#[repr(C)]
struct ShortSlot {
    /// The piece's bytes, zero-padded, little-endian.
    key: u64,
    /// Bits 0–3: piece length + 1 (0 marks an empty slot); 4–5: how many ids; then the ids,
    /// `ID_BITS` each.
    meta: u64,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct ShortSet([ShortSlot; 4]);

/// 32 bytes: a set of two is one cache line.
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

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Set([Slot; 2]);

/// A slot of a two-way set (`Slot`, `RunSlot`): whether it holds a piece, its ids, and filling
/// it with a new piece.
trait TwoWaySlot: Copy {
    type Key: ?Sized;
    fn holds(&self, key: &Self::Key) -> bool;
    fn ids(&self) -> &[u32];
    /// Stores `key` and `ids`, or returns false when they do not fit.
    fn fill(&mut self, key: &Self::Key, ids: &[u32]) -> bool;
}

/// Appends the ids of the piece `key` from `set`, or computes them with `encode` on a miss and
/// keeps them in the first way (the other way keeps the piece used more recently).
#[inline(always)]
fn two_way_ids<S: TwoWaySlot, E>(
    set: &mut [S; 2],
    key: &S::Key,
    out: &mut Vec<u32>,
    encode: impl FnOnce(&mut Vec<u32>) -> Result<(), E>,
) -> Result<(), E> {
    if set[0].holds(key) {
        out.extend_from_slice(set[0].ids());
        return Ok(());
    }
    if set[1].holds(key) {
        set.swap(0, 1);
        out.extend_from_slice(set[0].ids());
        return Ok(());
    }
    let start = out.len();
    encode(out)?;
    let mut slot = set[0];
    if slot.fill(key, &out[start..]) {
        set[1] = set[0];
        set[0] = slot;
    }
    Ok(())
}

impl TwoWaySlot for Slot {
    /// The piece's two words and its length + 1.
    type Key = ([u64; 2], u16);
    #[inline(always)]
    fn holds(&self, &(key, len): &Self::Key) -> bool {
        self.len == len && self.key == key
    }
    #[inline(always)]
    fn ids(&self) -> &[u32] {
        &self.ids[..self.n_ids as usize]
    }
    #[inline(always)]
    fn fill(&mut self, &(key, len): &Self::Key, ids: &[u32]) -> bool {
        if ids.len() > MAX_IDS {
            return false;
        }
        *self = Slot { key, len, n_ids: ids.len() as u16, ids: [0; MAX_IDS] };
        self.ids[..ids.len()].copy_from_slice(ids);
        true
    }
}

/// A unique id for each tokenizer, so a thread's tables never serve a tokenizer they were not
/// filled by (an address could be reused after a tokenizer is dropped).
pub fn next_owner_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// ASCII pieces longer than `MAX_PIECE`, up to this many bytes, have a small table of their own:
/// in prose and code they are few and repeat — reStructuredText underlines (`"-----…\n\n"`),
/// runs of spaces, comment rules (2 MB of kernel documentation: 2,422 such pieces, 566
/// distinct) — and the backtracker spent ~400 ns on each, 3.4% of English's time. Non-ASCII
/// ones (runs of CJK characters) are many and mostly distinct: they are not cached.
pub const MAX_RUN_PIECE: usize = 80;
const RUN_IDS: usize = 8;
/// Sets of two 128-byte slots: 64 KiB.
const RUN_SETS: usize = 1 << 8;

#[derive(Clone, Copy)]
#[repr(C, align(128))]
struct RunSlot {
    /// Piece length (0 marks an empty slot).
    len: u8,
    n_ids: u8,
    ids: [u32; RUN_IDS],
    key: [u8; MAX_RUN_PIECE],
}

impl TwoWaySlot for RunSlot {
    type Key = [u8];
    #[inline(always)]
    fn holds(&self, piece: &[u8]) -> bool {
        self.len as usize == piece.len() && self.key[..piece.len()] == *piece
    }
    #[inline(always)]
    fn ids(&self) -> &[u32] {
        &self.ids[..self.n_ids as usize]
    }
    #[inline(always)]
    fn fill(&mut self, piece: &[u8], ids: &[u32]) -> bool {
        if ids.len() > RUN_IDS {
            return false;
        }
        self.len = piece.len() as u8;
        self.n_ids = ids.len() as u8;
        self.ids[..ids.len()].copy_from_slice(ids);
        self.key[..piece.len()].copy_from_slice(piece);
        true
    }
}

/// A table of `n` sets taken zeroed from the allocator, which hands large blocks over as pages
/// mapped on first touch: memory is used as the table fills, not when it is made. All-zero is
/// the empty set for each kind of set (a zero length marks an empty slot).
fn empty_table<T: EmptyWhenZero>(n: usize) -> Box<[T]> {
    let layout = std::alloc::Layout::array::<T>(n).expect("table size fits the address space");
    // SAFETY: `layout` is not zero-sized (n > 0 and the sets are not empty types); all-zero
    // bytes are a valid `T` (`EmptyWhenZero`); the pointer, from the global allocator with this
    // layout, is owned by the box, which frees it with the same layout.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<T>();
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n))
    }
}

/// Sets made only of integers, for which all-zero bytes are a valid, empty set.
///
/// # Safety
/// An implementor must be valid when all its bytes are zero.
unsafe trait EmptyWhenZero {}
unsafe impl EmptyWhenZero for ShortSet {}
unsafe impl EmptyWhenZero for Set {}
unsafe impl EmptyWhenZero for [RunSlot; 2] {}

pub struct PieceCache {
    short: Box<[ShortSet]>,
    long: Box<[Set]>,
    runs: Box<[[RunSlot; 2]]>,
}

impl PieceCache {
    fn new() -> Self {
        PieceCache { short: empty_table(SHORT_SETS), long: empty_table(LONG_SETS), runs: empty_table(RUN_SETS) }
    }

    fn clear(&mut self) {
        *self = PieceCache::new();
    }

    /// The set of a piece of more than `MAX_PIECE` bytes: its length and three of its words
    /// (pieces of one kind, such as runs of spaces, differ mostly in length).
    #[inline]
    fn run_index(piece: &[u8]) -> usize {
        let n = piece.len();
        let word = |at: usize| u64::from_le_bytes(piece[at..at + 8].try_into().expect("8 bytes"));
        let h = (word(0) ^ word(n / 2 - 4).rotate_left(17) ^ word(n - 8).rotate_left(41) ^ n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - RUN_SETS.trailing_zeros())) as usize
    }

    /// Appends the ids of `piece` (ASCII, `MAX_PIECE` to `MAX_RUN_PIECE` bytes) to `out`,
    /// computing them with `encode` on a miss.
    pub fn run_ids<E>(
        &mut self,
        piece: &[u8],
        out: &mut Vec<u32>,
        encode: impl FnOnce(&mut Vec<u32>) -> Result<(), E>,
    ) -> Result<(), E> {
        let n = piece.len();
        debug_assert!(n > MAX_PIECE && n <= MAX_RUN_PIECE);
        two_way_ids(&mut self.runs[Self::run_index(piece)], piece, out, encode)
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
    fn index(key: &[u64; 2], len: usize, sets: usize) -> usize {
        let h = (key[0] ^ key[1].rotate_left(29) ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - sets.trailing_zeros())) as usize
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
        if piece.len() <= SHORT_PIECE {
            self.short_ids(key[0], piece.len(), out, encode)
        } else {
            self.long_ids(key, piece.len(), out, encode)
        }
    }

    #[inline(always)]
    fn short_ids<E>(
        &mut self,
        key: u64,
        len: usize,
        out: &mut Vec<u32>,
        encode: impl FnOnce(&mut Vec<u32>) -> Result<(), E>,
    ) -> Result<(), E> {
        let ShortSet(set) = &mut self.short[Self::index(&[key, 0], len, SHORT_SETS)];
        let tag = len as u64 + 1;
        let hit = |slot: &ShortSlot| slot.key == key && slot.meta & 0xF == tag;
        let way = (0..4).find(|&w| hit(&set[w]));
        if let Some(way) = way {
            // Most recently used first: the ways before it move down one.
            set[..=way].rotate_right(1);
            let meta = set[0].meta;
            let n = (meta >> 4) & 3;
            out.push(((meta >> 6) & ID_MASK) as u32);
            if n > 1 {
                out.push(((meta >> (6 + ID_BITS)) & ID_MASK) as u32);
                if n > 2 {
                    out.push(((meta >> (6 + 2 * ID_BITS)) & ID_MASK) as u32);
                }
            }
            return Ok(());
        }
        let start = out.len();
        encode(out)?;
        let ids = &out[start..];
        if (1..=MAX_IDS).contains(&ids.len()) && ids.iter().all(|&id| u64::from(id) <= ID_MASK) {
            let mut meta = tag | (ids.len() as u64) << 4;
            for (j, &id) in ids.iter().enumerate() {
                meta |= u64::from(id) << (6 + ID_BITS * j as u32);
            }
            set.rotate_right(1);
            set[0] = ShortSlot { key, meta };
        }
        Ok(())
    }

    #[inline(always)]
    fn long_ids<E>(
        &mut self,
        key: [u64; 2],
        len: usize,
        out: &mut Vec<u32>,
        encode: impl FnOnce(&mut Vec<u32>) -> Result<(), E>,
    ) -> Result<(), E> {
        let Set(set) = &mut self.long[Self::index(&key, len, LONG_SETS)];
        two_way_ids(set, &(key, len as u16 + 1), out, encode)
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
                    cache.clear();
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

    /// Looks each piece up in `owner`'s table, computing `ids_of(piece)` on a miss; returns the
    /// pieces that missed and everything appended.
    fn look_up(owner: u64, pieces: &[&[u8]], ids_of: impl Fn(&[u8]) -> Vec<u32>) -> (Vec<Vec<u8>>, Vec<u32>) {
        let mut missed = Vec::new();
        let mut out = Vec::new();
        for &piece in pieces {
            with_cache(owner, |c| {
                c.ids(piece, &mut out, |o| {
                    missed.push(piece.to_vec());
                    o.extend(ids_of(piece));
                    Ok::<(), ()>(())
                })
            })
            .unwrap();
        }
        (missed, out)
    }

    /// `n` pieces `{stem}{k}` that land in one set of their table.
    fn colliding(stem: &str, n: usize) -> Vec<Vec<u8>> {
        let sets = if stem.len() < SHORT_PIECE { SHORT_SETS } else { LONG_SETS };
        let index = |p: &[u8]| PieceCache::index(&PieceCache::key_of(p), p.len(), sets);
        let first = format!("{stem}0").into_bytes();
        let mut found = vec![first.clone()];
        found.extend(
            (1..).map(|k: u32| format!("{stem}{k}").into_bytes()).filter(|p| index(p) == index(&first)).take(n - 1),
        );
        found
    }

    /// Pieces of 17 to 80 bytes: a hit returns what the miss computed, a set keeps the two used
    /// most recently, a piece of the same length in the same set is not taken for another, and
    /// a piece of more ids than a slot holds is computed each time.
    #[test]
    fn long_ascii_pieces_have_their_own_table() {
        let owner = next_owner_id();
        let run = |piece: &[u8], out: &mut Vec<u32>, missed: &mut Vec<Vec<u8>>, ids: &dyn Fn(&[u8]) -> Vec<u32>| {
            with_cache(owner, |c| {
                c.run_ids(piece, out, |o| {
                    missed.push(piece.to_vec());
                    o.extend(ids(piece));
                    Ok::<(), ()>(())
                })
            })
            .unwrap()
        };
        // Three pieces of one length in one set: a b a c a b → c evicts b.
        let first = format!("{}0\n", "-".repeat(30)).into_bytes();
        let same_set: Vec<Vec<u8>> = std::iter::once(first.clone())
            .chain(
                (1..)
                    .map(|k: u32| format!("{}{k:0>3}", "-".repeat(28)).into_bytes())
                    .filter(|p| p.len() == first.len() && PieceCache::run_index(p) == PieceCache::run_index(&first))
                    .take(2),
            )
            .collect();
        let (a, b, c) = (&same_set[0][..], &same_set[1][..], &same_set[2][..]);
        let ids = |p: &[u8]| vec![p.len() as u32, p[p.len() - 1] as u32, p[p.len() - 2] as u32];
        let (mut out, mut missed) = (Vec::new(), Vec::new());
        for piece in [a, b, a, c, a, b] {
            run(piece, &mut out, &mut missed, &ids);
        }
        assert_eq!(missed, [a, b, c, b]);
        assert_eq!(out, [a, b, a, c, a, b].iter().flat_map(|p| ids(p)).collect::<Vec<_>>());
        // Nine ids do not fit a slot: computed again each time, and appended whole.
        let spaces = vec![b' '; MAX_RUN_PIECE];
        let nine = |_: &[u8]| (1..=9).collect::<Vec<u32>>();
        let (mut out, mut missed) = (vec![0], Vec::new());
        run(&spaces, &mut out, &mut missed, &nine);
        run(&spaces, &mut out, &mut missed, &nine);
        assert_eq!(missed.len(), 2);
        assert_eq!(out, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }

    #[test]
    fn a_set_keeps_its_most_recently_used_pieces() {
        // Short pieces: four ways. a b c d a e → e evicts b (used least recently), not a.
        let p = colliding("p", 5);
        let (a, b, c, d, e) = (&p[0][..], &p[1][..], &p[2][..], &p[3][..], &p[4][..]);
        let len_ids = |piece: &[u8]| vec![piece.len() as u32, 7];
        let (missed, out) = look_up(next_owner_id(), &[a, b, c, d, a, e, a, c, d, e, b], len_ids);
        assert_eq!(missed, [a, b, c, d, e, b]);
        let expected: Vec<u32> = [a, b, c, d, a, e, a, c, d, e, b].iter().flat_map(|p| len_ids(p)).collect();
        assert_eq!(out, expected);
        // Long pieces (9 to 16 bytes): two ways. a b a c → c evicts b.
        let p = colliding("long-piece", 3);
        let (a, b, c) = (&p[0][..], &p[1][..], &p[2][..]);
        assert!(a.len() > SHORT_PIECE && c.len() <= MAX_PIECE);
        let (missed, out) = look_up(next_owner_id(), &[a, b, a, c, a, b], len_ids);
        assert_eq!(missed, [a, b, c, b]);
        assert_eq!(out, [a, b, a, c, a, b].iter().flat_map(|p| len_ids(p)).collect::<Vec<_>>());
    }

    #[test]
    fn short_slots_keep_up_to_three_ids_of_any_width_they_hold() {
        let big = ID_MASK as u32;
        let ids_of = |piece: &[u8]| match piece {
            b"one" => vec![big],
            b"two" => vec![big, 0],
            b"three" => vec![1, big, 2],
            b"four" => vec![1, 2, 3, big],
            // Past what a short slot's id field holds: never cached, still right.
            _ => vec![big + 1],
        };
        let pieces: [&[u8]; 5] = [b"one", b"two", b"three", b"four", b"wide"];
        let owner = next_owner_id();
        let (missed, first) = look_up(owner, &pieces, ids_of);
        assert_eq!(missed.len(), 5);
        let (missed, again) = look_up(owner, &pieces, ids_of);
        assert_eq!(missed, [b"four".to_vec(), b"wide".to_vec()]);
        assert_eq!(first, again);
        assert_eq!(again, pieces.iter().flat_map(|p| ids_of(p)).collect::<Vec<_>>());
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
