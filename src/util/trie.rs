//! A byte trie for "every key that is a prefix of this text": the byte-level BPE backtracker
//! asks it at each token boundary of a long piece, and SentencePiece BPE for its frozen pieces.
//!
//! Laid out as a double array: node `s` keeps a base `b`, and its child on byte `c` is unit
//! `b ^ c`, valid when that unit is in use and labelled `c`. A step is then one load whose
//! address depends on the previous one — where a trie with edge lists needs two (the node, then
//! its edges), which made the walk a third of the backtracker's time on Japanese. Every base is
//! used by one node only, so a unit's label alone tells whose child it is.

#[derive(Debug, Clone)]
pub struct Trie {
    /// Per unit: base (low 32 bits), label (bits 32-39), `USED`, `HAS_VALUE`.
    units: Vec<u64>,
    /// Per unit: the value of the key ending there (read only when `HAS_VALUE` is set).
    values: Vec<u32>,
    /// The longest key, in bytes.
    max_len: usize,
}

const USED: u64 = 1 << 40;
const HAS_VALUE: u64 = 1 << 41;
/// A node's children all lie in one block of 256 units (`base ^ c` changes only the low byte).
const BLOCK: usize = 256;
/// Placing a node tries this many of the most recent blocks; more would only slow the build.
const OPEN_BLOCKS_TRIED: usize = 16;

impl Default for Trie {
    fn default() -> Self {
        Trie::new(std::iter::empty())
    }
}

impl Trie {
    /// A trie of `keys` with their values (a key given twice keeps its first value; the empty key
    /// is ignored).
    pub fn new<'k>(keys: impl IntoIterator<Item = (&'k [u8], u32)>) -> Self {
        let mut sorted: Vec<(&[u8], u32)> = keys.into_iter().filter(|(k, _)| !k.is_empty()).collect();
        // Stable, so the first of two equal keys comes first.
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        sorted.dedup_by(|later, first| later.0 == first.0);
        let max_len = sorted.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        let mut layout = Layout::default();
        // Unit 0 is the root, alone in block 0: no base is ever placed there, so no walk steps
        // into that block but a leaf's (base 0), and nothing there is marked in use.
        layout.grow_to(1);
        // Build depth by depth: each group of keys sharing a prefix of length `depth` is one
        // node, whose children are the distinct next bytes. Groups are contiguous in sorted order.
        let mut level: Vec<(usize, usize, usize)> = vec![(0, sorted.len(), 0)]; // (from, to, unit)
        let mut depth = 0;
        let mut labels: Vec<u8> = Vec::new();
        let mut groups: Vec<(usize, usize)> = Vec::new();
        while !level.is_empty() {
            let mut next = Vec::new();
            for &(from, to, unit) in &level {
                let mut i = from;
                // Keys that end at this depth give the node its value; they sort first.
                if i < to && sorted[i].0.len() == depth {
                    layout.units[unit] |= HAS_VALUE;
                    layout.values[unit] = sorted[i].1;
                    i += 1;
                }
                labels.clear();
                groups.clear();
                while i < to {
                    let byte = sorted[i].0[depth];
                    let mut j = i;
                    while j < to && sorted[j].0[depth] == byte {
                        j += 1;
                    }
                    labels.push(byte);
                    groups.push((i, j));
                    i = j;
                }
                if labels.is_empty() {
                    continue;
                }
                let base = layout.place(&labels);
                layout.units[unit] |= base as u64;
                for (&c, &(i, j)) in labels.iter().zip(&groups) {
                    let child = base ^ c as usize;
                    layout.units[child] |= USED | (c as u64) << 32;
                    next.push((i, j, child));
                }
            }
            level = next;
            depth += 1;
        }
        Trie { units: layout.units, values: layout.values, max_len }
    }

    /// The longest key, in bytes.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    pub fn is_empty(&self) -> bool {
        self.max_len == 0
    }

    /// The child of `unit` on byte `c`, if any.
    #[inline(always)]
    fn child(&self, unit: usize, c: u8) -> Option<usize> {
        let child = (self.units[unit] as u32 ^ c as u32) as usize;
        let u = *self.units.get(child)?;
        (u >> 32 & 0x1FF == (USED >> 32) | c as u64).then_some(child)
    }

    /// Calls `found(len, value)` for every key that is a prefix of `text`, shortest first.
    #[inline]
    pub fn for_each_prefix(&self, text: &[u8], mut found: impl FnMut(usize, u32)) {
        let mut unit = 0;
        for (i, &c) in text.iter().enumerate() {
            let Some(child) = self.child(unit, c) else { return };
            if self.units[child] & HAS_VALUE != 0 {
                found(i + 1, self.values[child]);
            }
            unit = child;
        }
    }

    /// The longest key that is a prefix of `text`: (length, value).
    pub fn longest_prefix(&self, text: &[u8]) -> Option<(usize, u32)> {
        let mut best = None;
        self.for_each_prefix(text, |len, value| best = Some((len, value)));
        best
    }

    /// The value of exactly `key`.
    pub fn get(&self, key: &[u8]) -> Option<u32> {
        let mut unit = 0;
        for &c in key {
            unit = self.child(unit, c)?;
        }
        (unit != 0 && self.units[unit] & HAS_VALUE != 0).then(|| self.values[unit])
    }
}

/// The double array while it is built: which units and bases are taken, and the blocks that
/// still have room.
#[derive(Default)]
struct Layout {
    units: Vec<u64>,
    values: Vec<u32>,
    /// Per block: a bit per free unit.
    free: Vec<[u64; BLOCK / 64]>,
    /// Bases given to a node (each base serves one node; see the module).
    base_taken: Vec<u64>,
    /// The most recent blocks, oldest first: where nodes are placed, newest first (where a node
    /// with many children fits soonest). Older ones are left with
    /// whatever units they have free (a little space for a build that never rescans).
    open: Vec<usize>,
}

impl Layout {
    fn grow_to(&mut self, blocks: usize) {
        while self.free.len() < blocks {
            let block = self.free.len();
            self.free.push([u64::MAX; BLOCK / 64]);
            self.units.resize((block + 1) * BLOCK, 0);
            self.values.resize((block + 1) * BLOCK, u32::MAX);
            self.base_taken.resize((block + 1) * BLOCK / 64, 0);
            if block > 0 {
                if self.open.len() == OPEN_BLOCKS_TRIED {
                    self.open.remove(0);
                }
                self.open.push(block);
            }
        }
    }

    fn is_free(&self, unit: usize) -> bool {
        self.free[unit / BLOCK][unit % BLOCK / 64] >> (unit % 64) & 1 == 1
    }

    /// A base under which every label in `labels` lands on a free unit; takes those units.
    fn place(&mut self, labels: &[u8]) -> usize {
        let fits = |base: usize| {
            self.base_taken[base / 64] >> (base % 64) & 1 == 0
                && labels.iter().all(|&c| self.is_free(base ^ c as usize))
        };
        let mut found = None;
        'blocks: for &block in self.open.iter().rev() {
            let free = &self.free[block];
            if free.iter().map(|w| w.count_ones() as usize).sum::<usize>() < labels.len() {
                continue;
            }
            // Bases whose first child lands on each free unit of the block.
            for (w, &word) in free.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let unit = block * BLOCK + w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let base = unit ^ labels[0] as usize;
                    if fits(base) {
                        found = Some(base);
                        break 'blocks;
                    }
                }
            }
        }
        let base = found.unwrap_or_else(|| {
            let block = self.free.len();
            self.grow_to(block + 1);
            block * BLOCK
        });
        self.base_taken[base / 64] |= 1 << (base % 64);
        for &c in labels {
            let unit = base ^ c as usize;
            self.free[unit / BLOCK][unit % BLOCK / 64] &= !(1 << (unit % 64));
        }
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_prefix_key_shortest_first() {
        let keys: Vec<(&[u8], u32)> = vec![(b"a", 1), (b"ab", 2), (b"abc", 3), (b"b", 4), (b"abd", 5), (b"ab", 9)];
        let trie = Trie::new(keys);
        let mut seen = Vec::new();
        trie.for_each_prefix(b"abcx", |len, v| seen.push((len, v)));
        assert_eq!(seen, vec![(1, 1), (2, 2), (3, 3)]);
        assert_eq!(trie.longest_prefix(b"abdd"), Some((3, 5)));
        assert_eq!(trie.longest_prefix(b"xyz"), None);
        assert_eq!(trie.get(b"ab"), Some(2), "the first of two equal keys wins");
        assert_eq!(trie.get(b"abx"), None);
        assert_eq!(trie.get(b""), None);
        assert_eq!(trie.max_len(), 3);
    }

    /// Random keys over bytes that include 0 and 255 (a leaf's walk on byte 0 must not step
    /// into the root), many sharing prefixes, against a scan of all keys.
    #[test]
    fn random_keys_agree_with_a_scan() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = [0u8, 1, 2, 97, 98, 0x80, 0xE3, 255];
        for round in 0..20 {
            let n_keys = 1 + (next() % 3000) as usize;
            let keys: Vec<Vec<u8>> =
                (0..n_keys).map(|_| (0..1 + next() % 9).map(|_| alphabet[(next() % 8) as usize]).collect()).collect();
            let trie = Trie::new(keys.iter().enumerate().map(|(i, k)| (k.as_slice(), i as u32)));
            for _ in 0..300 {
                let text: Vec<u8> = (0..next() % 12).map(|_| alphabet[(next() % 8) as usize]).collect();
                let mut got = Vec::new();
                trie.for_each_prefix(&text, |len, v| got.push((len, v)));
                let mut want: Vec<(usize, u32)> = (1..=text.len())
                    .filter_map(|len| keys.iter().position(|k| k[..] == text[..len]).map(|i| (len, i as u32)))
                    .collect();
                want.sort();
                assert_eq!(got, want, "round {round}, text {text:?}");
                let exact = keys.iter().position(|k| k[..] == text[..]).map(|i| i as u32);
                assert_eq!(trie.get(&text), exact, "round {round}, text {text:?}");
            }
        }
    }

    #[test]
    fn agrees_with_a_scan_of_all_keys() {
        let words = ["▁the", "▁th", "▁", "t", "he", "h", "e", "東京", "東", "京都", "\u{0}", "\u{ff}x"];
        let trie = Trie::new(words.iter().enumerate().map(|(i, w)| (w.as_bytes(), i as u32)));
        for text in ["▁the▁東京都", "hello", "東京", "\u{0}\u{ff}x", ""] {
            for start in 0..=text.len() {
                let rest = &text.as_bytes()[start..];
                let mut got = Vec::new();
                trie.for_each_prefix(rest, |len, v| got.push((len, v)));
                let mut want: Vec<(usize, u32)> = words
                    .iter()
                    .enumerate()
                    .filter(|(_, w)| rest.starts_with(w.as_bytes()))
                    .map(|(i, w)| (w.len(), i as u32))
                    .collect();
                want.sort();
                assert_eq!(got, want, "{text:?} from {start}");
            }
        }
    }
}

/// A trie over characters: one step per character, where a byte trie makes three dependent
/// look-ups for each CJK character. The Unigram lattice walks it from every character of the
/// text. The root's edges — the first step of every walk — are a hash table keyed by
/// character; every other node's edges are a short run sorted by character, all runs in one
/// array, so a walk reads a few nearby bytes per step and the whole trie stays small enough
/// for the cache.
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub struct CharTrie {
    root: EdgeTable,
    /// Per node (indexed by node number): where its run of edges starts and how long it is.
    runs: Vec<(u32, u32)>,
    /// (character, child, value) runs, by parent then character.
    edges: Vec<(u32, u32, u32)>,
    /// The longest key, in bytes.
    max_len: usize,
}

/// Open addressing over (key, child, value) slots, at most half full; key 0 marks an empty
/// slot (real keys are never 0: nodes start at 1, the root).
#[derive(Debug, Clone)]
struct EdgeTable {
    slots: Vec<(u64, u32, u32)>,
    len: usize,
}

impl EdgeTable {
    fn new() -> Self {
        EdgeTable { slots: vec![(0, 0, NONE); 16], len: 0 }
    }

    #[inline(always)]
    fn slot_for(&self, key: u64) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.slots.len().trailing_zeros())) as usize;
        while self.slots[i].0 != 0 && self.slots[i].0 != key {
            i = (i + 1) & mask;
        }
        i
    }

    #[inline(always)]
    fn get(&self, key: u64) -> (u64, u32, u32) {
        self.slots[self.slot_for(key)]
    }

    /// The slot for `key`, made with child `make_child()` if new.
    fn entry(&mut self, key: u64, make_child: impl FnOnce() -> u32) -> usize {
        if (self.len + 1) * 2 > self.slots.len() {
            let doubled = vec![(0, 0, NONE); self.slots.len() * 2];
            let old = std::mem::replace(&mut self.slots, doubled);
            for entry in old.into_iter().filter(|e| e.0 != 0) {
                let i = self.slot_for(entry.0);
                self.slots[i] = entry;
            }
        }
        let i = self.slot_for(key);
        if self.slots[i].0 == 0 {
            self.slots[i] = (key, make_child(), NONE);
            self.len += 1;
        }
        i
    }
}

impl CharTrie {
    /// A trie of `keys` (text) with their values; a key given twice keeps its first value.
    pub fn new<'k>(keys: impl IntoIterator<Item = (&'k str, u32)>) -> Self {
        // Built with hash tables for every node, then the deeper edges laid out as runs.
        let mut root = EdgeTable::new();
        let mut deeper = EdgeTable::new();
        let mut nodes = 1u32;
        let mut max_len = 0;
        for (key, value) in keys {
            max_len = max_len.max(key.len());
            let mut node = 1u32;
            let mut chars = key.chars().peekable();
            while let Some(c) = chars.next() {
                let table = if node == 1 { &mut root } else { &mut deeper };
                let slot = table.entry(Self::key(node, c), || {
                    nodes += 1;
                    nodes
                });
                if chars.peek().is_none() && table.slots[slot].2 == NONE {
                    table.slots[slot].2 = value;
                }
                node = table.slots[slot].1;
            }
        }
        let mut edges: Vec<(u32, u32, u32, u32)> = deeper
            .slots
            .iter()
            .filter(|e| e.0 != 0)
            .map(|&(key, child, value)| ((key >> 21) as u32, (key & 0x1F_FFFF) as u32, child, value))
            .collect();
        edges.sort_unstable();
        let mut runs = vec![(0u32, 0u32); nodes as usize + 1];
        for (i, e) in edges.iter().enumerate() {
            let run = &mut runs[e.0 as usize];
            if run.1 == 0 {
                run.0 = i as u32;
            }
            run.1 += 1;
        }
        let edges = edges.into_iter().map(|(_, c, child, value)| (c, child, value)).collect();
        CharTrie { root, runs, edges, max_len }
    }

    /// The longest key's length in bytes.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    #[inline(always)]
    fn key(node: u32, c: char) -> u64 {
        (node as u64) << 21 | c as u64
    }

    /// Calls `found(byte length, value)` for every key that is a prefix of `text`, shortest first.
    #[inline]
    pub fn for_each_prefix(&self, text: &str, mut found: impl FnMut(usize, u32)) {
        let mut chars = text.char_indices();
        let Some((_, first)) = chars.next() else { return };
        let (key, mut node, value) = self.root.get(Self::key(1, first));
        if key == 0 {
            return;
        }
        if value != NONE {
            found(first.len_utf8(), value);
        }
        for (i, c) in chars {
            let (first, count) = self.runs[node as usize];
            let run = &self.edges[first as usize..(first + count) as usize];
            // A run is sorted by character. Most are a handful long, scanned; a few are
            // thousands (the children of "▁" in a SentencePiece vocabulary, met at every word),
            // where a scan was most of Unigram's encoding time.
            let hit = if run.len() <= 16 {
                run.iter().find(|e| e.0 == c as u32)
            } else {
                run.binary_search_by_key(&(c as u32), |e| e.0).ok().map(|k| &run[k])
            };
            let Some(&(_, child, value)) = hit else {
                return;
            };
            if value != NONE {
                found(i + c.len_utf8(), value);
            }
            node = child;
        }
    }

    /// The longest key that is a prefix of `text`: (byte length, value).
    #[inline]
    pub fn longest_prefix(&self, text: &str) -> Option<(usize, u32)> {
        let mut best = None;
        self.for_each_prefix(text, |len, value| best = Some((len, value)));
        best
    }

    pub fn is_empty(&self) -> bool {
        self.root.len == 0
    }
}

#[cfg(test)]
mod char_trie_tests {
    use super::*;

    #[test]
    fn agrees_with_the_byte_trie() {
        let words = ["▁the", "▁th", "▁", "t", "he", "h", "e", "東京", "東", "京都", "\u{0}", "ÿx", "▁the"];
        let bytes = Trie::new(words.iter().enumerate().map(|(i, w)| (w.as_bytes(), i as u32)));
        let chars = CharTrie::new(words.iter().enumerate().map(|(i, w)| (*w, i as u32)));
        for text in ["▁the▁東京都", "hello", "東京", "\u{0}ÿx", "", "▁th"] {
            for (start, _) in text.char_indices() {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                bytes.for_each_prefix(&text.as_bytes()[start..], |l, v| a.push((l, v)));
                chars.for_each_prefix(&text[start..], |l, v| b.push((l, v)));
                assert_eq!(a, b, "{text:?} from {start}");
            }
        }
    }
}
