//! A byte trie for "every key that is a prefix of this text": the Unigram lattice asks it at
//! each character, and the SentencePiece normalizer's rule table asks it for the longest rule.
//!
//! Nodes live in one vector; a node's children are a run of (byte, node) edges sorted by byte,
//! searched in order; a node with many children (the root; the nodes after the lead byte of a
//! CJK character, with up to 64) has a 256-entry table instead, so walks through Japanese or
//! Chinese text never scan long runs.

#[derive(Debug, Clone, Default)]
pub struct Trie {
    /// Per node: the first edge of its run, how many edges, and the value (`NONE`: no key ends
    /// here).
    nodes: Vec<Node>,
    labels: Vec<u8>,
    targets: Vec<u32>,
    /// 256 children per table; the root's is table 0.
    tables: Vec<u32>,
    /// The longest key, in bytes.
    max_len: usize,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    first: u32,
    count: u32,
    value: u32,
    /// Which 256-entry table holds the children (`NONE`: the run of edges does).
    table: u32,
}

const NONE: u32 = u32::MAX;
/// A node with more children than this gets a table.
const TABLE_FROM: usize = 8;

impl Trie {
    /// A trie of `keys` with their values (a key given twice keeps its first value; the empty key
    /// is ignored).
    pub fn new<'k>(keys: impl IntoIterator<Item = (&'k [u8], u32)>) -> Self {
        let mut sorted: Vec<(&[u8], u32)> = keys.into_iter().filter(|(k, _)| !k.is_empty()).collect();
        // Stable, so the first of two equal keys comes first.
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        sorted.dedup_by(|later, first| later.0 == first.0);
        let mut trie = Trie { tables: vec![NONE; 256], ..Trie::default() };
        trie.max_len = sorted.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        // Build depth by depth: each group of keys sharing a prefix of length `depth` is one
        // node, whose children are the distinct next bytes. Groups are contiguous in sorted order.
        trie.nodes.push(Node { first: 0, count: 0, value: NONE, table: 0 }); // node 0: the root
        let mut level: Vec<(usize, usize, u32)> = vec![(0, sorted.len(), 0)]; // (from, to, node)
        let mut depth = 0;
        let mut children: Vec<(u8, u32)> = Vec::new();
        while !level.is_empty() {
            let mut next = Vec::new();
            for &(from, to, node) in &level {
                let mut i = from;
                // Keys that end at this depth give the node its value; they sort first.
                while i < to && sorted[i].0.len() == depth {
                    if trie.nodes[node as usize].value == NONE {
                        trie.nodes[node as usize].value = sorted[i].1;
                    }
                    i += 1;
                }
                children.clear();
                while i < to {
                    let byte = sorted[i].0[depth];
                    let mut j = i;
                    while j < to && sorted[j].0[depth] == byte {
                        j += 1;
                    }
                    let child = trie.nodes.len() as u32;
                    trie.nodes.push(Node { first: 0, count: 0, value: NONE, table: NONE });
                    children.push((byte, child));
                    next.push((i, j, child));
                    i = j;
                }
                let n = &mut trie.nodes[node as usize];
                if node == 0 || children.len() > TABLE_FROM {
                    if node != 0 {
                        n.table = (trie.tables.len() / 256) as u32;
                        trie.tables.resize(trie.tables.len() + 256, NONE);
                    }
                    let base = n.table as usize * 256;
                    for &(byte, child) in &children {
                        trie.tables[base + byte as usize] = child;
                    }
                } else {
                    n.first = trie.labels.len() as u32;
                    n.count = children.len() as u32;
                    for &(byte, child) in &children {
                        trie.labels.push(byte);
                        trie.targets.push(child);
                    }
                }
            }
            level = next;
            depth += 1;
        }
        trie
    }

    /// The longest key, in bytes.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.len() <= 1
    }

    #[inline]
    fn child(&self, node: u32, byte: u8) -> u32 {
        let n = self.nodes[node as usize];
        if n.table != NONE {
            return self.tables[n.table as usize * 256 + byte as usize];
        }
        let labels = &self.labels[n.first as usize..(n.first + n.count) as usize];
        match labels.iter().position(|&l| l == byte) {
            Some(k) => self.targets[(n.first as usize) + k],
            None => NONE,
        }
    }

    /// Calls `found(len, value)` for every key that is a prefix of `text`, shortest first.
    #[inline]
    pub fn for_each_prefix(&self, text: &[u8], mut found: impl FnMut(usize, u32)) {
        let mut node = 0;
        for (i, &b) in text.iter().enumerate() {
            node = self.child(node, b);
            if node == NONE {
                return;
            }
            let value = self.nodes[node as usize].value;
            if value != NONE {
                found(i + 1, value);
            }
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
        let mut node = 0;
        for &b in key {
            node = self.child(node, b);
            if node == NONE {
                return None;
            }
        }
        let value = self.nodes.get(node as usize).map_or(NONE, |n| n.value);
        (node != 0 && value != NONE).then_some(value)
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
#[derive(Debug, Clone)]
pub struct CharTrie {
    root: EdgeTable,
    /// Per node (indexed by node number): where its run of edges starts and how long it is.
    runs: Vec<(u32, u32)>,
    /// (character, child, value) runs, by parent then character.
    edges: Vec<(u32, u32, u32)>,
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
        for (key, value) in keys {
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
        CharTrie { root, runs, edges }
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
            let Some(&(_, child, value)) = run.iter().find(|e| e.0 == c as u32) else {
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
