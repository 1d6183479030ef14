//! The table behind `WordCounts`: word bytes → count.
//!
//! Counting a corpus is one table update per pre-tokenized piece, so this table is the inner
//! loop of counting. Most pieces are short (a word with its leading space), and a map keyed by
//! boxed byte strings paid for them three times over: an allocation per new word, a pointer to
//! follow on every probe, and a `memcmp` call per hit (together over a third of counting time).
//! So words of up to 15 bytes are keys in their own right — the bytes, zero-padded, with the
//! length in the sixteenth byte — hashed and compared as two machine words; longer words keep
//! boxed keys in a second map.

use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;
use std::hash::{Hash, Hasher};

/// Longest word kept inline.
const SHORT: usize = 15;

/// A word of at most `SHORT` bytes, zero-padded, its length in the last byte.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Short([u8; 16]);

impl Hash for Short {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        let v = u128::from_le_bytes(self.0);
        state.write_u64(v as u64);
        state.write_u64((v >> 64) as u64);
    }
}

impl Short {
    /// Packs `word` (at most `SHORT` bytes) with two overlapping loads rather than a
    /// variable-length copy: the bytes both loads cover land in the same place either way.
    #[inline]
    fn new(word: &[u8]) -> Short {
        let len = word.len();
        debug_assert!(len <= SHORT);
        let packed: u128 = if len >= 8 {
            let lo = u64::from_le_bytes(word[..8].try_into().expect("8 bytes"));
            let hi = u64::from_le_bytes(word[len - 8..].try_into().expect("8 bytes"));
            lo as u128 | (hi as u128) << (8 * (len - 8))
        } else if len >= 4 {
            let lo = u32::from_le_bytes(word[..4].try_into().expect("4 bytes"));
            let hi = u32::from_le_bytes(word[len - 4..].try_into().expect("4 bytes"));
            (lo as u64 | (hi as u64) << (8 * (len - 4))) as u128
        } else if len > 0 {
            word[0] as u128 | (word[len / 2] as u128) << (8 * (len / 2)) | (word[len - 1] as u128) << (8 * (len - 1))
        } else {
            0
        };
        let mut bytes = packed.to_le_bytes();
        bytes[15] = len as u8;
        Short(bytes)
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        &self.0[..self.0[15] as usize]
    }
}

/// Word bytes → count, short words inline.
#[derive(Debug, Clone, Default)]
pub(crate) struct WordTable {
    short: FxHashMap<Short, u64>,
    long: FxHashMap<Box<[u8]>, u64>,
}

impl std::fmt::Debug for Short {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.bytes()))
    }
}

impl WordTable {
    /// Adds `n` to the count of `word` (a new word starts at 0) with one probe of the table for a
    /// short word, where looking up and then inserting took two for every new word. A count that
    /// would pass 2^64 - 1 is held at the maximum and `false` returned.
    #[inline]
    pub fn add(&mut self, word: &[u8], n: u64) -> bool {
        if word.len() > SHORT {
            if let Some(count) = self.long.get_mut(word) {
                return add_held(count, n);
            }
            self.long.insert(word.into(), n);
            return true;
        }
        add_held(self.short.entry(Short::new(word)).or_insert(0), n)
    }

    /// Adds every count of `other`, moving its long words' boxes rather than copying them;
    /// returns a word whose count had to be held at 2^64 - 1, if any.
    pub fn absorb(&mut self, other: WordTable) -> Option<Box<[u8]>> {
        let mut held = None;
        for (key, n) in other.short {
            if !add_held(self.short.entry(key).or_insert(0), n) {
                held.get_or_insert_with(|| key.bytes().into());
            }
        }
        for (word, n) in other.long {
            match self.long.entry(word) {
                Entry::Occupied(mut e) => {
                    if !add_held(e.get_mut(), n) {
                        held.get_or_insert_with(|| e.key().clone());
                    }
                }
                Entry::Vacant(e) => {
                    e.insert(n);
                }
            }
        }
        held
    }

    pub fn get(&self, word: &[u8]) -> Option<u64> {
        if word.len() <= SHORT {
            self.short.get(&Short::new(word)).copied()
        } else {
            self.long.get(word).copied()
        }
    }

    pub fn remove(&mut self, word: &[u8]) -> Option<u64> {
        if word.len() <= SHORT {
            self.short.remove(&Short::new(word))
        } else {
            self.long.remove(word)
        }
    }

    pub fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> {
        let short = self.short.iter().map(|(w, &n)| (w.bytes(), n));
        short.chain(self.long.iter().map(|(w, &n)| (&w[..], n)))
    }
}

/// Adds `n` to `count`, holding it at 2^64 - 1 (and returning `false`) rather than wrapping.
#[inline]
fn add_held(count: &mut u64, n: u64) -> bool {
    match count.checked_add(n) {
        Some(sum) => {
            *count = sum;
            true
        }
        None => {
            *count = u64::MAX;
            false
        }
    }
}

/// A small direct-mapped table of counts in front of a `WordTable`, for counting one text.
///
/// A corpus's unique words outgrow the cache, so each update of the big table is a cache miss
/// (and that miss was half of counting time); but most pieces are a few thousand frequent
/// words. Their counts add up here, in a table that stays in L2, and reach the big table only
/// when a colliding word evicts them or at the end.
pub(crate) struct CountCache {
    slots: Vec<(Short, u64)>,
}

/// Slots in a `CountCache`: 96 KiB.
const CACHE_SLOTS: usize = 1 << 12;

impl CountCache {
    pub fn new() -> Self {
        CountCache { slots: vec![(Short([0; 16]), 0); CACHE_SLOTS] }
    }

    /// Counts `word` once; a count pushed out of the cache (or a long word's) goes to `spill`.
    /// `tail` is the text from the word on (or the word itself): with 16 bytes of it to read, the
    /// word is packed with no branch on its length, which varies too much to predict.
    #[inline]
    pub fn add(&mut self, word: &[u8], tail: &[u8], spill: &mut impl FnMut(&[u8], u64)) {
        let len = word.len();
        if len > SHORT {
            return spill(word, 1);
        }
        let key = match tail.get(..16) {
            Some(bytes) => {
                let v = u128::from_le_bytes(bytes.try_into().expect("16 bytes"));
                let mut packed = (v & ((1u128 << (8 * len)) - 1)).to_le_bytes();
                packed[15] = len as u8;
                Short(packed)
            }
            None => Short::new(word),
        };
        let v = u128::from_le_bytes(key.0);
        let hash = ((v as u64) ^ ((v >> 64) as u64).rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = &mut self.slots[(hash >> 52) as usize];
        if slot.0 == key {
            slot.1 += 1;
        } else {
            if slot.1 > 0 {
                spill(slot.0.bytes(), slot.1);
            }
            *slot = (key, 1);
        }
    }

    /// Hands every count still held to `spill`.
    pub fn flush(self, spill: &mut impl FnMut(&[u8], u64)) {
        for (key, n) in &self.slots {
            if *n > 0 {
                spill(key.bytes(), *n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn every_length_packs_to_its_own_bytes() {
        // Words of every length from 0 to 40 at three offsets, each counted; the table must
        // agree with a plain map of byte strings.
        let source: Vec<u8> = (1..=42u8).map(|b| b.wrapping_mul(37)).collect();
        let mut table = WordTable::default();
        let mut expected: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        for len in 0..=40 {
            for start in 0..3 {
                let word = &source[start..start + len];
                if word.len() <= SHORT {
                    assert_eq!(Short::new(word).bytes(), word);
                }
                assert!(table.add(word, 1));
                *expected.entry(word.to_vec()).or_default() += 1;
            }
        }
        // Zero bytes are bytes: the length tells "ab" from "ab\0".
        assert!(table.add(b"ab\0", 7));
        expected.insert(b"ab\0".to_vec(), 7);
        assert_eq!(table.get(b"ab"), None);
        let seen: BTreeMap<Vec<u8>, u64> = table.iter().map(|(w, n)| (w.to_vec(), n)).collect();
        assert_eq!(seen, expected);
        assert_eq!(table.remove(b"ab\0"), Some(7));
        assert_eq!(table.len(), expected.len() - 1);
    }

    #[test]
    fn absorbing_a_table_adds_its_counts() {
        // Short and long words, some in both tables; a count that would pass 2^64 - 1 is held
        // at the maximum and named, whether its word is short or long.
        let word = |k: u32| format!("w{k}{}", if k % 3 == 0 { "-longer-than-fifteen" } else { "" }).into_bytes();
        let (mut a, mut b) = (WordTable::default(), WordTable::default());
        let mut expected: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        for k in 0..3_000u32 {
            assert!(a.add(&word(k), k as u64 + 1));
            *expected.entry(word(k)).or_default() += k as u64 + 1;
        }
        for k in 2_000..6_000u32 {
            assert!(b.add(&word(k), 5));
            *expected.entry(word(k)).or_default() += 5;
        }
        assert_eq!(a.absorb(b), None);
        let seen: BTreeMap<Vec<u8>, u64> = a.iter().map(|(w, n)| (w.to_vec(), n)).collect();
        assert_eq!(seen, expected);
        for big in [word(1), word(3)] {
            let mut c = WordTable::default();
            assert!(c.add(&big, u64::MAX - 1));
            assert_eq!(a.clone().absorb(c).as_deref(), Some(&big[..]));
            assert!(!a.add(&big, u64::MAX));
            assert_eq!(a.get(&big), Some(u64::MAX));
        }
    }

    #[test]
    fn the_cache_passes_on_every_count() {
        // More distinct words than slots, repeated in a skewed pattern, so that counts are both
        // gathered in the cache and evicted from it; long words go straight through.
        let mut cache = CountCache::new();
        let mut table: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        let mut expected: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        let mut spill = |w: &[u8], n: u64| *table.entry(w.to_vec()).or_default() += n;
        for i in 0..50_000u32 {
            let k = (i * i) % 9_973 % (1 + i % 97);
            let word = format!("w{k}{}", if i % 5 == 0 { "-long-enough-to-spill" } else { "" }).into_bytes();
            // Half the words with text after them, as in a corpus; half at the very end.
            let text = [&word[..], b"and the text that follows it"].concat();
            cache.add(&word, if i % 2 == 0 { &text } else { &word }, &mut spill);
            *expected.entry(word).or_default() += 1;
        }
        cache.add(b"", b"", &mut spill);
        *expected.entry(Vec::new()).or_default() += 1;
        cache.flush(&mut spill);
        assert_eq!(table, expected);
    }
}
