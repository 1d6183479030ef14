//! What the BPE merge loop works on: every unique word as symbols, the count of every adjacent
//! pair, and for each pair the words that hold it; plus the max-heap that picks the next merge.
//!
//! Why one arena: a merge visits the words that hold its pair in no useful memory order, so each
//! visit is a cache miss, and that miss was most of the training time. Each word lives in one
//! `Vec<u32>` as `[len, count_lo, count_hi, symbols…]` and the where-lists hold arena offsets,
//! so a visit costs one miss instead of three (word header, symbol buffer, count), the words a
//! few places ahead are prefetched while this one is rewritten, and a word shrinks in place
//! without allocating. Symbols are u16 when every id the run can create fits (vocabularies of up
//! to 65,536 tokens, most of those trained): a visit then pulls in half the bytes, and on long
//! CJK words, where a word is several cache lines of u32, that is most of a visit's cost.
//!
//! Tried and dropped: mimalloc as the extension's allocator. It cut training time by a quarter
//! while every word was its own vector; once words went into the arena and a merge's new pairs
//! into one flat list, it gained nothing measurable and raised peak memory by a fifth.

use super::long_word::LongWord;
use crate::error::{Error, Result};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::collections::hash_map::Entry;

pub(super) type Pair = (u32, u32);

/// The arena offsets of the words that hold a pair. Most pairs are in a handful of words, so up
/// to four offsets live inline (in the 24 bytes a `Vec` header takes anyway): no allocation to
/// make, and none to free, for the millions of pairs a training run creates.
type WordList4 = SmallVec<[u32; 4]>;

/// The unique words of the corpus as symbol sequences with counts, already laid out the way the
/// merge state keeps them (no vector per word to allocate and free): in u16 slots while every id
/// fits, which is what the merge state of most runs takes as it is (building a u32 list and then
/// narrowing it wrote three times the bytes: 60 of the 80 ms this took on 25 MB of CJK text).
#[derive(Default)]
pub(super) struct WordList {
    arena: ListArena,
    offsets: Vec<u32>,
    /// Σ count × (symbols − 1): a bound on every pair count, kept so that no count can wrap.
    pair_mass: u64,
    /// The smallest and largest symbol ids pushed (`u32::MAX` and 0 when empty).
    min_id: u32,
    max_id: u32,
}

enum ListArena {
    Narrow(Vec<u16>),
    /// Once an id past u16 has been pushed.
    Wide(Vec<u32>),
}

impl Default for ListArena {
    fn default() -> Self {
        ListArena::Narrow(Vec::new())
    }
}

impl WordList {
    pub fn with_capacity(words: usize, symbols: usize) -> Self {
        WordList {
            arena: ListArena::Narrow(Vec::with_capacity(words * <u16 as Symbol>::HEADER + symbols)),
            offsets: Vec::with_capacity(words),
            pair_mass: 0,
            min_id: u32::MAX,
            max_id: 0,
        }
    }

    /// Adds a word (fewer than two symbols: nothing to merge, so it is left out).
    pub fn push(&mut self, symbols: &[u32], count: u64) -> Result<()> {
        if symbols.len() < 2 {
            return Ok(());
        }
        // A pair's count is at most the sum of count × (symbols − 1) over the words, so if that
        // fits in a u64 no pair count, and no count derived from one, can wrap.
        self.pair_mass =
            (symbols.len() as u64 - 1).checked_mul(count).and_then(|m| m.checked_add(self.pair_mass)).ok_or_else(
                || Error::config("word counts too large: pair counts would exceed 2^64 - 1; scale the counts down"),
            )?;
        let (min_id, max_id) =
            symbols.iter().fold((self.min_id, self.max_id), |(lo, hi), &id| (lo.min(id), hi.max(id)));
        if let ListArena::Narrow(narrow) = &self.arena {
            if max_id > u16::MAX as u32 {
                let (wide, offsets) = relayout::<u16, u32>(narrow, &self.offsets);
                (self.arena, self.offsets) = (ListArena::Wide(wide), offsets);
            }
        }
        match &mut self.arena {
            ListArena::Narrow(arena) => push_word(arena, &mut self.offsets, symbols, count)?,
            ListArena::Wide(arena) => push_word(arena, &mut self.offsets, symbols, count)?,
        }
        (self.min_id, self.max_id) = (min_id, max_id);
        Ok(())
    }
}

/// Appends a word to `arena` (every id fits in `S`) and its offset to `offsets`.
fn push_word<S: Symbol>(arena: &mut Vec<S>, offsets: &mut Vec<u32>, symbols: &[u32], count: u64) -> Result<()> {
    // Offsets are u32 to halve the where-lists; 2^32 slots is an 8 GB table at least.
    let offset = u32::try_from(arena.len())
        .ok()
        .filter(|&o| (o as u64) + (S::HEADER + symbols.len()) as u64 <= u32::MAX as u64)
        .ok_or_else(|| {
            Error::config("the word table is too large to train on at once (over 2^32 symbols); count with max_memory to keep it smaller")
        })?;
    offsets.push(offset);
    arena.resize(offset as usize + S::HEADER, S::from_bits(0));
    write_bits(&mut arena[offset as usize..offset as usize + S::LEN], symbols.len() as u64);
    write_bits(&mut arena[offset as usize + S::LEN..], count);
    arena.extend(symbols.iter().map(|&id| S::from_bits(id as u64)));
    Ok(())
}

/// What the arena stores a symbol (a token id) as. A word's header — its u32 length and u64
/// count, 96 bits — takes `HEADER` slots, low bits first.
pub(super) trait Symbol: Copy + Eq + Send + Sync + 'static {
    const BITS: u32;
    /// Slots of the length (the first of the header).
    const LEN: usize = 32 / Self::BITS as usize;
    /// Slots before a word's symbols.
    const HEADER: usize = 96 / Self::BITS as usize;
    /// The low `BITS` bits of `v`.
    fn from_bits(v: u64) -> Self;
    fn bits(self) -> u64;
    #[inline(always)]
    fn id(self) -> u32 {
        self.bits() as u32
    }
}

macro_rules! symbol {
    ($t:ty) => {
        impl Symbol for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn from_bits(v: u64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn bits(self) -> u64 {
                self as u64
            }
        }
    };
}
symbol!(u16);
symbol!(u32);

/// The value held in `slots`, low bits first.
#[inline(always)]
fn read_bits<S: Symbol>(slots: &[S]) -> u64 {
    slots.iter().rev().fold(0, |acc, s| acc << S::BITS | s.bits())
}

#[inline(always)]
fn write_bits<S: Symbol>(slots: &mut [S], mut v: u64) {
    for slot in slots {
        *slot = S::from_bits(v);
        v >>= S::BITS;
    }
}

/// The length of the word at `offset`.
#[inline(always)]
fn word_len<S: Symbol>(arena: &[S], offset: usize) -> usize {
    read_bits(&arena[offset..offset + S::LEN]) as usize
}

/// The count of the word at `offset`.
#[inline(always)]
fn word_count<S: Symbol>(arena: &[S], offset: usize) -> u64 {
    read_bits(&arena[offset + S::LEN..offset + S::HEADER])
}

/// How many words ahead of the one being rewritten to prefetch.
const PREFETCH_AHEAD: usize = 8;
/// Words of at least this many symbols are merged through a position index (`long_word.rs`)
/// instead of being rescanned by every merge that touches them.
const LONG_WORD: usize = 1024;
/// Merges that visit at least this many words rewrite them on several threads.
const PARALLEL_FROM: usize = 16_384;

/// The merge state at the symbol width a run needs: u16 when every id it can make fits.
pub(super) enum AnyMergeState {
    Narrow(MergeState<u16>),
    Wide(MergeState<u32>),
}

impl AnyMergeState {
    /// Counts the pairs of `words` for a run whose token ids all stay below `id_bound`.
    pub fn new(words: WordList, id_bound: usize) -> Self {
        if id_bound <= 1 << 16 {
            AnyMergeState::Narrow(MergeState::new(words))
        } else {
            AnyMergeState::Wide(MergeState::new(words))
        }
    }

    pub fn symbol_count(&self) -> usize {
        match self {
            AnyMergeState::Narrow(s) => s.symbol_count(),
            AnyMergeState::Wide(s) => s.symbol_count(),
        }
    }

    #[inline]
    pub fn count(&self, pair: Pair) -> u64 {
        match self {
            AnyMergeState::Narrow(s) => s.count(pair),
            AnyMergeState::Wide(s) => s.count(pair),
        }
    }

    pub fn candidates(&self, from: u64, below: u64) -> Vec<Candidate> {
        match self {
            AnyMergeState::Narrow(s) => s.candidates(from, below),
            AnyMergeState::Wide(s) => s.candidates(from, below),
        }
    }

    pub fn floor_for(&self, want: usize, below: u64, min_count: u64) -> u64 {
        match self {
            AnyMergeState::Narrow(s) => s.floor_for(want, below, min_count),
            AnyMergeState::Wide(s) => s.floor_for(want, below, min_count),
        }
    }

    /// `merged` must be below the `id_bound` the state was made with.
    pub fn apply_merge(&mut self, pair: Pair, merged: u32) -> Vec<Pair> {
        match self {
            AnyMergeState::Narrow(s) => {
                assert!(merged < 1 << 16, "token id {merged} past the bound the merge state was made for");
                s.apply_merge(pair, merged)
            }
            AnyMergeState::Wide(s) => s.apply_merge(pair, merged),
        }
    }
}

pub(super) struct MergeState<S: Symbol> {
    arena: Vec<S>,
    /// Every pair that occurs, with its count and where-list; a pair is removed when its count
    /// falls to zero.
    pairs: FxHashMap<Pair, PairEntry>,
    /// Reused from merge to merge, so its tables keep their capacity.
    changes: Changes,
    /// Words of at least `LONG_WORD` symbols, by arena offset (their arena copy goes stale).
    long: FxHashMap<u32, LongWord>,
}

/// How pair counts change while one merge (x, y) → z is applied. Every site moves count from
/// (ℓ, x) to (ℓ, z) for its left neighbour ℓ and from (y, r) to (z, r) for its right neighbour r,
/// or, where two sites touch (`x y x y`), from (y, x) to (z, z). So the change is one number per
/// neighbour id, kept in arrays indexed by id: an add per site instead of the four hash-map
/// updates a map keyed by pair needs (those were most of the merge loop's time).
///
/// The words that gain each new pair are gathered the same way, in one list per neighbour, so
/// each new pair's where-list is filled by one hash-map update with no sorting. (A single flat
/// list of (pair, word) sorted by pair took a third of the merge loop.)
#[derive(Default)]
pub(super) struct Changes {
    /// Neighbours on the left: count moved from (ℓ, x) to (ℓ, z), and words that gained (ℓ, z).
    lefts: Side,
    /// Neighbours on the right: count moved from (y, r) to (z, r), and words that gained (z, r).
    rights: Side,
    /// Count moved from (y, x) to (z, z), and the words that gained (z, z).
    touching: u64,
    touching_words: Vec<u32>,
    /// Count of the merged pair itself.
    pub sites: u64,
}

/// Per-neighbour changes on one side of the merged pair, indexed by neighbour id.
#[derive(Default)]
struct Side {
    /// Count moved, by neighbour id (valid where `slot` is set).
    moved: Vec<u64>,
    /// The neighbour's place in `ids` and `words`, or `UNTOUCHED`.
    slot: Vec<u32>,
    /// The neighbours touched by this merge, in first-seen order.
    ids: Vec<u32>,
    /// For each touched neighbour, the arena offsets of the words that gained its new pair, each
    /// once. Reused from merge to merge, so the vectors keep their capacity.
    words: Vec<Vec<u32>>,
}

const UNTOUCHED: u32 = u32::MAX;

impl Side {
    /// The slot of `id`, touching it first if this merge has not.
    #[inline]
    fn slot_of(&mut self, id: u32) -> usize {
        let i = id as usize;
        if i >= self.slot.len() {
            let len = (i + 1).next_power_of_two();
            self.slot.resize(len, UNTOUCHED);
            self.moved.resize(len, 0);
        }
        if self.slot[i] == UNTOUCHED {
            self.slot[i] = self.ids.len() as u32;
            self.moved[i] = 0;
            self.ids.push(id);
            if self.words.len() < self.ids.len() {
                self.words.push(Vec::new());
            }
        }
        self.slot[i] as usize
    }

    #[inline]
    fn add(&mut self, id: u32, count: u64, word: u32) {
        let slot = self.slot_of(id);
        self.moved[id as usize] += count;
        push_once(&mut self.words[slot], word);
    }

    /// Adds another part's changes (parallel rewrite), leaving `other` empty.
    fn absorb(&mut self, other: &mut Side) {
        for (k, &id) in other.ids.iter().enumerate() {
            let slot = self.slot_of(id);
            self.moved[id as usize] += other.moved[id as usize];
            // Parts hold different words, in rising order: the lists simply concatenate.
            self.words[slot].append(&mut other.words[k]);
        }
        other.reset();
    }

    /// Each touched neighbour with the count moved and the words that gained its new pair.
    fn drain(&mut self) -> impl Iterator<Item = (u32, u64, &mut Vec<u32>)> {
        let Side { moved, slot, ids, words } = self;
        ids.iter().zip(words.iter_mut()).map(move |(&id, list)| {
            slot[id as usize] = UNTOUCHED;
            (id, moved[id as usize], list)
        })
    }

    fn reset(&mut self) {
        for (k, &id) in self.ids.iter().enumerate() {
            self.slot[id as usize] = UNTOUCHED;
            self.words[k].clear();
        }
        self.ids.clear();
    }
}

/// Appends `word` unless it is already the last entry (a word's sites are visited together, so
/// this is enough to list each word once).
#[inline]
fn push_once(list: &mut Vec<u32>, word: u32) {
    if list.last() != Some(&word) {
        list.push(word);
    }
}

impl Changes {
    /// A site whose left neighbour is `left`, in the word at `word`.
    #[inline]
    pub fn left(&mut self, left: u32, count: u64, word: u32) {
        self.lefts.add(left, count, word);
    }

    /// A site whose right neighbour is `right`.
    #[inline]
    pub fn right(&mut self, right: u32, count: u64, word: u32) {
        self.rights.add(right, count, word);
    }

    /// A site right after another (`x y x y`): the pair between them becomes (z, z).
    #[inline]
    pub fn touching(&mut self, count: u64, word: u32) {
        self.touching += count;
        push_once(&mut self.touching_words, word);
    }

    /// Adds another part's changes (parallel rewrite), leaving `other` empty.
    fn absorb(&mut self, other: &mut Changes) {
        self.lefts.absorb(&mut other.lefts);
        self.rights.absorb(&mut other.rights);
        self.touching += std::mem::take(&mut other.touching);
        self.touching_words.append(&mut other.touching_words);
        self.sites += std::mem::take(&mut other.sites);
    }
}

/// A pair's count and the words that held it when it was counted (a word that has lost the pair
/// since is skipped when visited). One map for both: a merge's new pairs take one update each.
#[derive(Default)]
struct PairEntry {
    count: u64,
    words: WordList4,
}

#[inline(always)]
fn prefetch<S>(slot: &S) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((slot as *const S).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = slot;
}

impl<S: Symbol> MergeState<S> {
    /// Symbols (plus word headers) in the arena: a bound on how many merges can still happen.
    pub fn symbol_count(&self) -> usize {
        self.arena.len()
    }

    /// Counts the pairs of `words` and lists where each occurs.
    pub fn new(words: WordList) -> Self {
        Self::with_long_words_from(words, LONG_WORD)
    }

    fn with_long_words_from(words: WordList, long_from: usize) -> Self {
        // The ids words hold: in byte-level runs the 256 bytes, after any special tokens.
        let first_id = words.min_id.min(words.max_id);
        let span = (words.max_id - first_id) as usize + 1;
        let (arena, offsets) = narrow::<S>(words);
        let pairs = if span <= DENSE_ALPHABET {
            count_pairs_dense(&arena, &offsets, first_id, span, crate::util::threads::count().max(1))
        } else {
            count_pairs_hashed(&arena, &offsets)
        };
        let long = offsets
            .iter()
            .filter(|&&off| word_len(&arena, off as usize) >= long_from)
            .map(|&off| {
                let (symbols, count) = word_at(&arena, off as usize);
                let ids: Vec<u32> = symbols.iter().map(|s| s.id()).collect();
                (off, LongWord::new(&ids, count))
            })
            .collect();
        MergeState { arena, pairs, changes: Changes::default(), long }
    }

    /// The current count of `pair` (0 if it no longer occurs).
    #[inline]
    pub fn count(&self, pair: Pair) -> u64 {
        self.pairs.get(&pair).map_or(0, |e| e.count)
    }

    /// Every pair whose count is at least `from` and below `below`, with its count.
    pub fn candidates(&self, from: u64, below: u64) -> Vec<Candidate> {
        self.pairs
            .iter()
            .filter(|(_, e)| (from..below).contains(&e.count))
            .map(|(&pair, e)| Candidate { count: e.count, pair })
            .collect()
    }

    /// The highest count `floor` (at least `min_count`) such that at least `want` pairs counted
    /// below `below` have a count of `floor` or more: the heap's next floor, taking in about
    /// `want` more pairs. `min_count` when fewer than `want` such pairs exist.
    pub fn floor_for(&self, want: usize, below: u64, min_count: u64) -> u64 {
        let mut counts: Vec<u64> =
            self.pairs.values().map(|e| e.count).filter(|c| (min_count..below).contains(c)).collect();
        if counts.len() <= want || want == 0 {
            return min_count;
        }
        let (_, &mut nth, _) = counts.select_nth_unstable_by(want - 1, |a, b| b.cmp(a));
        nth
    }

    /// Rewrites every word holding `pair` with `merged` in its place and updates pair counts by
    /// the change around each site; returns the pairs whose counts rose (all contain `merged`).
    pub fn apply_merge(&mut self, pair: Pair, merged: u32) -> Vec<Pair> {
        // Every occurrence is merged, so the pair is gone afterwards.
        let mut places = self.pairs.remove(&pair).map(|e| e.words).unwrap_or_default();
        // Chunks from parallel counting arrive in order, but later merges append out of order.
        places.sort_unstable();
        places.dedup();
        let mut changes = std::mem::take(&mut self.changes);
        if !self.long.is_empty() {
            places.retain(|off| match self.long.get_mut(off) {
                Some(word) => {
                    word.merge(*off, pair, merged, &mut changes);
                    false
                }
                None => true,
            });
        }
        if places.len() < PARALLEL_FROM {
            rewrite_words(&mut self.arena, 0, &places, pair, merged, &mut changes);
        } else {
            // The first merges visit a large share of all words: split the sorted places (and so
            // the arena) into disjoint parts, rewrite them on threads, then add up the changes.
            let parts = crate::util::threads::count().max(1);
            let per_part = places.len().div_ceil(parts);
            let mut jobs = Vec::with_capacity(parts);
            let mut rest: &mut [S] = &mut self.arena;
            let mut base = 0;
            for group in places.chunks(per_part) {
                // Each part's arena slice ends where the next part's first word begins.
                let end = group.last().map_or(base, |&last| {
                    let last = last as usize;
                    last + S::HEADER + word_len(rest, last - base)
                });
                let (mine, tail) = std::mem::take(&mut rest).split_at_mut(end - base);
                jobs.push((mine, base, group, Changes::default()));
                rest = tail;
                base = end;
            }
            crate::util::threads::install(|| {
                jobs.par_iter_mut().for_each(|(arena, base, group, changes)| {
                    rewrite_words(arena, *base, group, pair, merged, changes);
                })
            });
            for (_, _, _, mut part) in jobs {
                changes.absorb(&mut part);
            }
        }
        let (x, y) = pair;
        // Rises first: if `merged` already existed, a pair may both rise and fall, and adding
        // before subtracting keeps every count from dipping below zero on the way.
        let mut rose = Vec::with_capacity(changes.lefts.ids.len() + changes.rights.ids.len() + 1);
        let mut falls = Vec::with_capacity(rose.capacity());
        for (left, n, words) in changes.lefts.drain() {
            rose.push((left, merged));
            falls.push(((left, x), n));
            self.gain((left, merged), n, words);
        }
        for (right, n, words) in changes.rights.drain() {
            rose.push((merged, right));
            falls.push(((y, right), n));
            self.gain((merged, right), n, words);
        }
        if changes.touching > 0 {
            rose.push((merged, merged));
            falls.push(((y, x), changes.touching));
            self.gain((merged, merged), changes.touching, &mut changes.touching_words);
        }
        changes.lefts.reset();
        changes.rights.reset();
        changes.touching = 0;
        changes.touching_words.clear();
        changes.sites = 0;
        // (x, y) was removed above; its falls find nothing.
        for (from, n) in falls {
            if let Entry::Occupied(mut e) = self.pairs.entry(from) {
                let count = &mut e.get_mut().count;
                debug_assert!(*count >= n, "pair count fell below zero");
                *count = count.saturating_sub(n);
                if *count == 0 {
                    e.remove();
                }
            }
        }
        self.changes = changes;
        // Only a `merged` that already existed can raise one pair twice.
        rose.sort_unstable();
        rose.dedup();
        rose
    }

    /// Adds `n` to the count of `pair` and `words` (emptied) to its where-list.
    fn gain(&mut self, pair: Pair, n: u64, words: &mut Vec<u32>) {
        match self.pairs.entry(pair) {
            Entry::Occupied(mut e) => {
                let e = e.get_mut();
                e.count += n;
                e.words.extend(words.drain(..));
            }
            Entry::Vacant(e) => {
                // Copied at its exact size, not moved: a moved buffer would leave the neighbour's
                // list to regrow from nothing next merge (measured 3-5% slower on CJK text).
                let list = WordList4::from_slice(words);
                words.clear();
                e.insert(PairEntry { count: n, words: list });
            }
        }
    }
}

/// Rewrites the words at `places` (sorted arena offsets) in `arena`, a slice of the whole arena
/// that starts at offset `base`, prefetching the words a few places ahead.
fn rewrite_words<S: Symbol>(
    arena: &mut [S],
    base: usize,
    places: &[u32],
    pair: Pair,
    merged: u32,
    changes: &mut Changes,
) {
    // The line after the word's first too: the mean visited word spans 1.6 lines (CJK), and
    // without that second line the visit waited for it (lock-step, GPT-4 pattern: 25 MB of
    // Japanese+Chinese 0.90x the time, the 103 MB mix 0.93x; prefetching exactly the word's lines,
    // which costs a read of its length, gained as much on CJK and nothing on the mix).
    let next_line = 64 / std::mem::size_of::<S>();
    for k in 0..places.len() {
        if let Some(&ahead) = places.get(k + PREFETCH_AHEAD) {
            let at = ahead as usize - base;
            prefetch(&arena[at]);
            if let Some(next) = arena.get(at + next_line) {
                prefetch(next);
            }
        }
        merge_in_word(arena, base, places[k], pair, merged, changes);
    }
}

/// Merges every `pair` in the word at `offset`, left to right, in place.
#[inline]
fn merge_in_word<S: Symbol>(
    arena: &mut [S],
    base: usize,
    offset: u32,
    (x, y): Pair,
    merged: u32,
    changes: &mut Changes,
) {
    let off = offset as usize - base;
    let len = word_len(arena, off);
    let count = word_count(arena, off);
    let symbols = &mut arena[off + S::HEADER..off + S::HEADER + len];
    // Every id in the run fits in `S` (`AnyMergeState::new`), so nothing is cut here.
    let (x, y, merged) = (S::from_bits(x as u64), S::from_bits(y as u64), S::from_bits(merged as u64));
    // Symbols before the first site stay where they are: find it without writing (a word that
    // has lost the pair since it was listed has none).
    let Some(first) = first_site(symbols, x, y) else {
        return;
    };
    let (mut read, mut write) = (first, first);
    // Whether the symbol just written is this merge's result (sites touch: `x y x y`).
    let mut after_site = false;
    while read < len {
        if read + 1 < len && symbols[read] == x && symbols[read + 1] == y {
            changes.sites += count;
            if write > 0 {
                if after_site {
                    changes.touching(count, offset);
                } else {
                    changes.left(symbols[write - 1].id(), count, offset);
                }
            }
            // A touching site to the right accounts for the pair between the two itself.
            let next_is_site = read + 3 < len && symbols[read + 2] == x && symbols[read + 3] == y;
            if read + 2 < len && !next_is_site {
                changes.right(symbols[read + 2].id(), count, offset);
            }
            symbols[write] = merged;
            read += 2;
            after_site = true;
        } else {
            symbols[write] = symbols[read];
            read += 1;
            after_site = false;
        }
        write += 1;
    }
    write_bits(&mut arena[off..off + S::LEN], write as u64);
}

/// Where the pair `x y` first occurs in `symbols`. Eight windows are compared at a time with no
/// early exit inside, which the compiler turns into vector compares.
#[inline]
fn first_site<S: Symbol>(symbols: &[S], x: S, y: S) -> Option<usize> {
    const LANES: usize = 8;
    let pairs = symbols.len().saturating_sub(1);
    let mut start = 0;
    while start + LANES <= pairs {
        let left: &[S; LANES] = symbols[start..start + LANES].try_into().unwrap();
        let right: &[S; LANES] = symbols[start + 1..start + 1 + LANES].try_into().unwrap();
        let mut hit = false;
        for k in 0..LANES {
            hit |= (left[k] == x) & (right[k] == y);
        }
        if hit {
            break;
        }
        start += LANES;
    }
    (start..pairs).find(|&k| symbols[k] == x && symbols[k + 1] == y)
}

/// The symbols and count of the word at `offset`.
#[inline]
fn word_at<S: Symbol>(arena: &[S], offset: usize) -> (&[S], u64) {
    let len = word_len(arena, offset);
    let count = word_count(arena, offset);
    (&arena[offset + S::HEADER..offset + S::HEADER + len], count)
}

/// The words of `list` in an arena of `S` and their offsets there: the list's own arena when it
/// has the same slots (every run whose ids fit in u16 and were pushed as such), else a copy.
fn narrow<S: Symbol>(list: WordList) -> (Vec<S>, Vec<u32>) {
    match list.arena {
        ListArena::Narrow(arena) => into_slots(arena, list.offsets),
        ListArena::Wide(arena) => into_slots(arena, list.offsets),
    }
}

/// `arena` itself when its slots are already `T`, else `relayout`.
fn into_slots<F: Symbol, T: Symbol>(arena: Vec<F>, offsets: Vec<u32>) -> (Vec<T>, Vec<u32>) {
    match (Box::new(arena) as Box<dyn std::any::Any>).downcast::<Vec<T>>() {
        Ok(same) => (*same, offsets),
        Err(other) => relayout::<F, T>(&other.downcast::<Vec<F>>().expect("the arena is a Vec<F>"), &offsets),
    }
}

/// The words at `offsets` in `from` laid out again in `T` slots (every id fits in `T`), with
/// their new offsets. A word list is at most 2^32 slots of u16 (`push_word`), which is no fewer
/// slots than the same words take in u32, so a u16 list's offsets fit when widened.
fn relayout<F: Symbol, T: Symbol>(from: &[F], offsets: &[u32]) -> (Vec<T>, Vec<u32>) {
    let symbols = from.len() - F::HEADER * offsets.len();
    let mut arena: Vec<T> = Vec::with_capacity(T::HEADER * offsets.len() + symbols);
    let mut moved = Vec::with_capacity(offsets.len());
    for &off in offsets {
        let (symbols, count) = word_at(from, off as usize);
        let header = arena.len();
        moved.push(header as u32);
        arena.resize(header + T::HEADER, T::from_bits(0));
        write_bits(&mut arena[header..header + T::LEN], symbols.len() as u64);
        write_bits(&mut arena[header + T::LEN..], count);
        arena.extend(symbols.iter().map(|s| T::from_bits(s.bits())));
    }
    (arena, moved)
}

/// Counts the pairs of the words at `offsets` and lists where each occurs, parallel over pairs:
/// each thread scans every word but counts, and lists the words of, only its own share of the
/// pairs (by hash), so no map is ever merged with another. (A first pass used to tally each
/// list's size so it could be allocated exactly; dropping it cost nothing measurable.)
fn count_pairs_hashed<S: Symbol>(arena: &[S], offsets: &[u32]) -> FxHashMap<Pair, PairEntry> {
    let parts = crate::util::threads::count().max(1) as u64;
    let part_of = |pair: Pair| {
        let hash = ((pair.0 as u64) << 32 | pair.1 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((hash as u128 * parts as u128) >> 64) as u64
    };
    let parts_maps: Vec<FxHashMap<Pair, PairEntry>> = crate::util::threads::install(|| {
        (0..parts)
            .into_par_iter()
            .map(|part| {
                let mut entries: FxHashMap<Pair, PairEntry> = FxHashMap::default();
                for &off in offsets {
                    let (symbols, count) = word_at(arena, off as usize);
                    for w in symbols.windows(2) {
                        let pair = (w[0].id(), w[1].id());
                        if part_of(pair) == part {
                            let entry = entries.entry(pair).or_default();
                            entry.count += count;
                            if entry.words.last() != Some(&off) {
                                entry.words.push(off);
                            }
                        }
                    }
                }
                entries
            })
            .collect()
    });
    let mut parts_maps = parts_maps.into_iter();
    let mut pairs = parts_maps.next().unwrap_or_default();
    for entries in parts_maps {
        pairs.reserve(entries.len());
        pairs.extend(entries);
    }
    pairs
}

/// `count_pairs_hashed` for words whose ids lie in the short range from `first_id` on, `alphabet`
/// ids wide (fresh byte-level training: the 256 bytes): a pair's entry is found by indexing a
/// table of `alphabet`² slots instead of hashing, and the words are split into `parts`, one per
/// thread. Two passes: the first
/// counts each pair and the words holding it in each part, so every where-list is allocated
/// once at its final size and the second pass has each part fill its own stretch of it. (Lists
/// grown per part and then joined were resident twice: +0.02 GB peak on 25 MB of CJK text; one
/// thread per share of the pairs, each scanning every word, was slower than hashing.)
fn count_pairs_dense<S: Symbol>(
    arena: &[S],
    offsets: &[u32],
    first_id: u32,
    alphabet: usize,
    parts: usize,
) -> FxHashMap<Pair, PairEntry> {
    let per_part = offsets.len().div_ceil(parts).max(1);
    let groups: Vec<&[u32]> = offsets.chunks(per_part).collect();
    // Calls `f` with each window's pair index in the table, word offset and word count.
    fn each_pair<S: Symbol>(
        arena: &[S],
        group: &[u32],
        first_id: u32,
        alphabet: usize,
        mut f: impl FnMut(usize, u32, u64),
    ) {
        for &off in group {
            let (symbols, count) = word_at(arena, off as usize);
            for w in symbols.windows(2) {
                f((w[0].id() - first_id) as usize * alphabet + (w[1].id() - first_id) as usize, off, count);
            }
        }
    }
    // Pass 1: per part, each pair's count and how many words hold it (each word once: a word's
    // windows are visited together, so comparing with the last word seen is enough).
    let tallies: Vec<Vec<Tally>> = crate::util::threads::install(|| {
        groups
            .par_iter()
            .map(|group| {
                let mut tally = vec![Tally { count: 0, words: 0, last: NO_ENTRY }; alphabet * alphabet];
                each_pair(arena, group, first_id, alphabet, |i, off, count| {
                    let t = &mut tally[i];
                    t.count += count;
                    if t.last != off {
                        t.last = off;
                        t.words += 1;
                    }
                });
                tally
            })
            .collect()
    });
    // Every pair's list at its final size, cut into one stretch per part in part order (the
    // parts hold rising offsets, so the list comes out sorted).
    let index: Vec<usize> = (0..alphabet * alphabet).filter(|&i| tallies.iter().any(|t| t[i].words > 0)).collect();
    let mut lists: Vec<Vec<u32>> =
        index.iter().map(|&i| vec![0; tallies.iter().map(|t| t[i].words as usize).sum()]).collect();
    let mut slot = vec![NO_ENTRY; alphabet * alphabet];
    for (k, &i) in index.iter().enumerate() {
        slot[i] = k as u32;
    }
    let mut stretches: Vec<Vec<&mut [u32]>> = (0..groups.len()).map(|_| Vec::with_capacity(index.len())).collect();
    for (list, &i) in lists.iter_mut().zip(&index) {
        let mut rest = &mut list[..];
        for (part, tally) in tallies.iter().enumerate() {
            let (mine, after) = std::mem::take(&mut rest).split_at_mut(tally[i].words as usize);
            stretches[part].push(mine);
            rest = after;
        }
    }
    // Pass 2: each part writes its words into its stretches.
    crate::util::threads::install(|| {
        groups.par_iter().zip(stretches.par_iter_mut()).for_each(|(group, stretch)| {
            let mut filled = vec![0u32; index.len()];
            let mut last = vec![NO_ENTRY; index.len()];
            each_pair(arena, group, first_id, alphabet, |i, off, _| {
                let k = slot[i] as usize;
                if last[k] != off {
                    last[k] = off;
                    stretch[k][filled[k] as usize] = off;
                    filled[k] += 1;
                }
            });
        })
    });
    let mut pairs = FxHashMap::with_capacity_and_hasher(index.len(), Default::default());
    for (i, words) in index.into_iter().zip(lists) {
        let count = tallies.iter().map(|t| t[i].count).sum();
        let pair = ((i / alphabet) as u32 + first_id, (i % alphabet) as u32 + first_id);
        pairs.insert(pair, PairEntry { count, words: WordList4::from_vec(words) });
    }
    pairs
}

/// A pair's tally in one part of `count_pairs_dense`'s first pass.
#[derive(Clone, Copy)]
struct Tally {
    count: u64,
    /// Words holding the pair.
    words: u32,
    /// The last word seen holding it.
    last: u32,
}

/// An unused slot of `count_pairs_dense`'s table.
const NO_ENTRY: u32 = u32::MAX;
/// The widest range of ids whose pairs `count_pairs_dense` indexes (its tables then take 16 MiB
/// per thread; a byte-level run's 256 ids take 1 MiB).
const DENSE_ALPHABET: usize = 1024;

/// A heap entry: a pair and the count it had when pushed.
#[derive(Clone, Copy)]
pub(super) struct Candidate {
    pub count: u64,
    pub pair: Pair,
}

/// Every token's bytes, for the heap's tie-break, with the first eight of them as a big-endian
/// number beside: late in training many candidates share a count, and comparing those numbers
/// settles almost every tie without following a pointer to the bytes (that chase and its
/// `memcmp` were a tenth of the merge loop on CJK text).
#[derive(Default)]
pub(super) struct TokenOrder {
    bytes: Vec<Vec<u8>>,
    prefix: Vec<u64>,
    /// Order tokens by id instead of bytes (`BpeTrainConfig::ties_by_id`).
    pub by_id: bool,
}

impl TokenOrder {
    pub fn bytes(&self, id: u32) -> &[u8] {
        &self.bytes[id as usize]
    }

    /// One past the largest id recorded.
    pub fn bytes_len(&self) -> usize {
        self.bytes.len()
    }

    /// Records the bytes of token `id`.
    pub fn set(&mut self, id: u32, bytes: Vec<u8>) {
        let i = id as usize;
        if i >= self.bytes.len() {
            self.bytes.resize(i + 1, Vec::new());
            self.prefix.resize(i + 1, 0);
        }
        let mut head = [0u8; 8];
        let n = bytes.len().min(8);
        head[..n].copy_from_slice(&bytes[..n]);
        self.prefix[i] = u64::from_be_bytes(head);
        self.bytes[i] = bytes;
    }

    /// The byte order of tokens `a` and `b`. Padded with zeros, the first eight bytes order two
    /// tokens as their bytes do whenever they differ (a zero pad can only tie with a real zero
    /// byte or another pad); a tie falls back to all the bytes.
    #[inline]
    fn cmp(&self, a: u32, b: u32) -> std::cmp::Ordering {
        if a == b || self.by_id {
            return a.cmp(&b);
        }
        let (a, b) = (a as usize, b as usize);
        self.prefix[a].cmp(&self.prefix[b]).then_with(|| self.bytes[a].cmp(&self.bytes[b]))
    }
}

impl FromIterator<Vec<u8>> for TokenOrder {
    fn from_iter<I: IntoIterator<Item = Vec<u8>>>(iter: I) -> Self {
        let mut order = TokenOrder::default();
        for (id, bytes) in iter.into_iter().enumerate() {
            order.set(id as u32, bytes);
        }
        order
    }
}

#[cfg(test)]
thread_local! {
    /// Entries pushed on this thread's heaps, and entries their cuts have scanned: the cuts must
    /// stay a small multiple of the pushes.
    pub(super) static HEAP_PUSHES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    pub(super) static PRUNE_SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A binary max-heap of candidates ordered by count, then by the pair's token bytes (smaller
/// left bytes first, then smaller right bytes), so ties never depend on ids or hash order.
/// Hand-rolled because the order needs the token table, and entries of 16 bytes (rather than
/// entries that carry their bytes) keep the heap's own cache misses down.
pub(super) struct PairHeap {
    entries: Vec<Candidate>,
}

impl PairHeap {
    pub fn new(entries: Vec<Candidate>, tokens: &TokenOrder) -> Self {
        let mut heap = PairHeap { entries };
        for i in (0..heap.entries.len() / 2).rev() {
            heap.sift_down(i, tokens);
        }
        heap
    }

    /// Whether `a` should be merged before `b`.
    #[inline]
    fn before(a: &Candidate, b: &Candidate, tokens: &TokenOrder) -> bool {
        if a.count != b.count {
            return a.count > b.count;
        }
        tokens.cmp(a.pair.0, b.pair.0).then_with(|| tokens.cmp(a.pair.1, b.pair.1)).is_lt()
    }

    pub fn push(&mut self, candidate: Candidate, tokens: &TokenOrder) {
        #[cfg(test)]
        HEAP_PUSHES.set(HEAP_PUSHES.get() + 1);
        self.entries.push(candidate);
        let mut i = self.entries.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if !Self::before(&self.entries[i], &self.entries[parent], tokens) {
                break;
            }
            self.entries.swap(i, parent);
            i = parent;
        }
    }

    /// Entries held (stale ones included).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Keeps the `keep` entries with the highest counts (and any tied with the last of them)
    /// and returns the lowest count kept: every entry dropped counted less.
    pub fn prune(&mut self, keep: usize, tokens: &TokenOrder) -> u64 {
        if keep == 0 || keep >= self.entries.len() {
            return 0;
        }
        #[cfg(test)]
        PRUNE_SCANNED.set(PRUNE_SCANNED.get() + self.entries.len());
        let mut counts: Vec<u64> = self.entries.iter().map(|c| c.count).collect();
        let (_, &mut cut, _) = counts.select_nth_unstable_by(keep - 1, |a, b| b.cmp(a));
        self.entries.retain(|c| c.count >= cut);
        for i in (0..self.entries.len() / 2).rev() {
            self.sift_down(i, tokens);
        }
        cut
    }

    pub fn pop(&mut self, tokens: &TokenOrder) -> Option<Candidate> {
        let last = self.entries.pop()?;
        if self.entries.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.entries[0], last);
        self.sift_down(0, tokens);
        Some(top)
    }

    fn sift_down(&mut self, mut i: usize, tokens: &TokenOrder) {
        let n = self.entries.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut best = i;
            if l < n && Self::before(&self.entries[l], &self.entries[best], tokens) {
                best = l;
            }
            if r < n && Self::before(&self.entries[r], &self.entries[best], tokens) {
                best = r;
            }
            if best == i {
                return;
            }
            self.entries.swap(i, best);
            i = best;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(words: &[(&[u32], u64)]) -> MergeState<u32> {
        let mut list = WordList::default();
        for &(symbols, count) in words {
            list.push(symbols, count).unwrap();
        }
        MergeState::new(list)
    }

    impl<S: Symbol> MergeState<S> {
        fn sorted_counts(&self) -> Vec<(Pair, u64)> {
            let mut counts: Vec<(Pair, u64)> = self.pairs.iter().map(|(&p, e)| (p, e.count)).collect();
            counts.sort_unstable();
            counts
        }

        fn most_frequent(&self) -> Option<Pair> {
            self.pairs.iter().max_by_key(|&(&p, e)| (e.count, std::cmp::Reverse(p))).map(|(&p, _)| p)
        }
    }

    /// A xorshift generator: the same numbers on every run.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    fn first_word(s: &MergeState<u32>) -> Vec<u32> {
        word_at(&s.arena, 0).0.to_vec()
    }

    #[test]
    fn touching_and_overlapping_sites_count_right() {
        // "aaaa" (a=1): pairs (1,1)×3; merging (1,1)→2 gives "22" with (2,2)×1.
        let mut s = state(&[(&[1, 1, 1, 1], 5)]);
        assert_eq!(s.count((1, 1)), 15);
        let rose = s.apply_merge((1, 1), 2);
        assert_eq!(rose, [(2, 2)]);
        assert_eq!(s.count((1, 1)), 0);
        assert_eq!(s.count((2, 2)), 5);
        assert_eq!(first_word(&s), [2, 2]);
    }

    #[test]
    fn odd_run_and_neighbours() {
        // "x a a a y": merging (a,a) → A gives "x A a y".
        let (x, a, y, big) = (7, 1, 9, 3);
        let mut s = state(&[(&[x, a, a, a, y], 2)]);
        s.apply_merge((a, a), big);
        let counts = s.sorted_counts();
        assert_eq!(counts, [((a, y), 2), ((big, a), 2), ((x, big), 2)]);
        assert_eq!(first_word(&s), [x, big, a, y]);
    }

    #[test]
    fn long_words_merge_exactly_like_scanned_ones() {
        // One long word (random, with runs that make sites touch) and a few short ones, merged
        // 300 times by the most frequent pair through both paths; counts and symbols must agree.
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut long = Vec::new();
        while long.len() < 3000 {
            let seed = next();
            let symbol = (seed % 4) as u32 + 1;
            let run = if seed % 7 == 0 { 5 } else { 1 };
            long.extend(std::iter::repeat_n(symbol, run));
        }
        let words: Vec<(&[u32], u64)> = vec![(&long, 3), (&[1, 2, 1, 2], 5), (&[4, 4, 4], 2), (&long[..40], 1)];
        let list = || {
            let mut list = WordList::default();
            for &(symbols, count) in &words {
                list.push(symbols, count).unwrap();
            }
            list
        };
        let mut scanned = MergeState::<u32>::with_long_words_from(list(), usize::MAX);
        let mut indexed = MergeState::<u32>::with_long_words_from(list(), 1000);
        assert_eq!(indexed.long.len(), 1);
        for (step, next_id) in (0..300).zip(100..) {
            let Some(pair) = scanned.most_frequent() else {
                break;
            };
            let mut a = scanned.apply_merge(pair, next_id);
            let mut b = indexed.apply_merge(pair, next_id);
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "pairs raised at step {step}");
            assert_eq!(scanned.sorted_counts(), indexed.sorted_counts(), "counts at step {step}");
        }
        let (offset, word) = indexed.long.iter().next().unwrap();
        assert_eq!(word.symbols(), word_at(&scanned.arena, *offset as usize).0);
    }

    #[test]
    fn counts_and_where_lists_match_a_recount_after_every_merge() {
        recount_after_every_merge::<u16>();
        recount_after_every_merge::<u32>();
    }

    /// Random words over a small alphabet (so sites touch and neighbours repeat), several
    /// thousand of them so that the first merges take the parallel path; after each merge every
    /// pair's count must equal a recount of the current words, every word holding a pair must be
    /// on its where-list, and no pair may linger at count zero.
    fn recount_after_every_merge<S: Symbol>() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let words: Vec<(Vec<u32>, u64)> = (0..60_000)
            .map(|_| {
                let len = 2 + (next() % 9) as usize;
                ((0..len).map(|_| (next() % 4) as u32).collect(), 1 + next() % 3)
            })
            .collect();
        let list = || {
            let mut list = WordList::default();
            for (word, count) in &words {
                list.push(word, *count).unwrap();
            }
            list
        };
        let offsets = narrow::<S>(list()).1;
        let mut s = MergeState::<S>::new(list());
        let first = s.most_frequent().unwrap();
        assert!(s.pairs[&first].words.len() >= PARALLEL_FROM, "the first merge should rewrite in parallel");
        for merged in 4..80 {
            let Some(pair) = s.most_frequent() else { break };
            s.apply_merge(pair, merged);
            let mut recount: FxHashMap<Pair, u64> = FxHashMap::default();
            for &off in &offsets {
                let (symbols, count) = word_at(&s.arena, off as usize);
                for w in symbols.windows(2) {
                    let pair = (w[0].id(), w[1].id());
                    *recount.entry(pair).or_default() += count;
                    assert!(s.pairs[&pair].words.contains(&off), "word {off} missing from a where-list");
                }
            }
            let mut expected: Vec<(Pair, u64)> = recount.into_iter().collect();
            expected.sort_unstable();
            assert_eq!(s.sorted_counts(), expected, "after merging into {merged}");
        }
    }

    #[test]
    fn a_word_list_keeps_every_word_at_either_width() {
        // u16 slots until an id passes u16, then u32; read back at both widths either way.
        let words: Vec<(Vec<u32>, u64)> = vec![
            (vec![1, 2, 3], 7),
            (vec![65_535, 0], u64::MAX / 5),
            (vec![9], 4),
            (vec![70_000, 5, 70_000], 2),
            (vec![4, 4], 1),
        ];
        // Each word and count, read back from an arena of any width.
        fn read<S: Symbol>((arena, offsets): (Vec<S>, Vec<u32>)) -> Vec<(Vec<u32>, u64)> {
            let word = |&off: &u32| word_at(&arena, off as usize);
            offsets.iter().map(word).map(|(symbols, count)| (symbols.iter().map(|s| s.id()).collect(), count)).collect()
        }
        for upto in [3, words.len()] {
            let list = || {
                let mut list = WordList::default();
                for (word, count) in &words[..upto] {
                    list.push(word, *count).unwrap();
                }
                list
            };
            assert_eq!(matches!(list().arena, ListArena::Wide(_)), upto > 3);
            // Words of one symbol are left out.
            let expected: Vec<(Vec<u32>, u64)> = words[..upto].iter().filter(|(w, _)| w.len() > 1).cloned().collect();
            assert_eq!(read(narrow::<u32>(list())), expected);
            if upto == 3 {
                assert_eq!(read(narrow::<u16>(list())), expected);
            }
        }
    }

    #[test]
    fn dense_pair_counts_equal_hashed_ones() {
        // Ids 40 to 339 (byte-level after 40 special tokens, which words never hold), skewed so
        // that some pairs are in many words,
        // with repeats inside a word (a word is listed once) and words of 0 to 40 symbols.
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut list = WordList::default();
        for _ in 0..5_000 {
            let len = (next() % 41) as usize;
            let word: Vec<u32> = (0..len)
                .map(|_| 40 + if next() % 3 == 0 { (next() % 300) as u32 } else { (next() % 5) as u32 })
                .collect();
            list.push(&word, 1 + next() % 1000).unwrap();
        }
        let (first_id, alphabet) = (list.min_id, (list.max_id - list.min_id) as usize + 1);
        let (arena, offsets) = narrow::<u16>(list);
        let sorted = |map: FxHashMap<Pair, PairEntry>| {
            let mut all: Vec<(Pair, u64, Vec<u32>)> =
                map.into_iter().map(|(p, e)| (p, e.count, e.words.to_vec())).collect();
            all.sort_unstable();
            all
        };
        let hashed = sorted(count_pairs_hashed(&arena, &offsets));
        assert!(hashed.iter().any(|(_, _, words)| words.len() > 1000));
        for parts in [1, 2, 3, 7] {
            assert_eq!(sorted(count_pairs_dense(&arena, &offsets, first_id, alphabet, parts)), hashed, "{parts} parts");
        }
    }

    #[test]
    fn token_order_is_byte_order() {
        // Short tokens over {0, 1, 255}, so zero bytes meet zero pads and prefixes abound.
        let mut rng = crate::tokenizer::SplitMix64(5);
        let tokens: Vec<Vec<u8>> = (0..400)
            .map(|_| {
                let len = (rng.next_u64() % 12) as usize;
                (0..len).map(|_| [0u8, 1, 255][(rng.next_u64() % 3) as usize]).collect()
            })
            .collect();
        let order: TokenOrder = tokens.iter().cloned().collect();
        for a in 0..tokens.len() {
            for b in 0..tokens.len() {
                assert_eq!(
                    order.cmp(a as u32, b as u32),
                    tokens[a].cmp(&tokens[b]),
                    "{:?} vs {:?}",
                    tokens[a],
                    tokens[b]
                );
            }
        }
    }

    #[test]
    fn heap_orders_by_count_then_bytes() {
        let tokens: TokenOrder = [&b"b"[..], b"a", b"c"].iter().map(|b| b.to_vec()).collect();
        let entries = vec![
            Candidate { count: 3, pair: (0, 2) },
            Candidate { count: 3, pair: (1, 2) },
            Candidate { count: 5, pair: (2, 2) },
            Candidate { count: 3, pair: (1, 0) },
        ];
        let mut heap = PairHeap::new(entries, &tokens);
        heap.push(Candidate { count: 1, pair: (0, 0) }, &tokens);
        let order: Vec<Pair> = std::iter::from_fn(|| heap.pop(&tokens)).map(|c| c.pair).collect();
        assert_eq!(order, [(2, 2), (1, 0), (1, 2), (0, 2), (0, 0)]);
    }
}
