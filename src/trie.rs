//! A byte trie for "every key that is a prefix of this text": the Unigram lattice asks it at
//! each character, and the SentencePiece normalizer's rule table asks it for the longest rule.
//!
//! Nodes live in one vector; a node's children are a run of (byte, node) edges sorted by byte,
//! and the root's children are a 256-entry table, since every walk starts there.

#[derive(Debug, Clone, Default)]
pub struct Trie {
    /// Per node: the first edge of its run, how many edges, and the value (`NONE`: no key ends
    /// here).
    nodes: Vec<Node>,
    labels: Vec<u8>,
    targets: Vec<u32>,
    root: Vec<u32>,
    /// The longest key, in bytes.
    max_len: usize,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    first: u32,
    count: u32,
    value: u32,
}

const NONE: u32 = u32::MAX;

impl Trie {
    /// A trie of `keys` with their values (a key given twice keeps its first value; the empty key
    /// is ignored).
    pub fn new<'k>(keys: impl IntoIterator<Item = (&'k [u8], u32)>) -> Self {
        let mut sorted: Vec<(&[u8], u32)> = keys.into_iter().filter(|(k, _)| !k.is_empty()).collect();
        // Stable, so the first of two equal keys comes first.
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        sorted.dedup_by(|later, first| later.0 == first.0);
        let mut trie = Trie { root: vec![NONE; 256], ..Trie::default() };
        trie.max_len = sorted.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        // Build depth by depth: each group of keys sharing a prefix of length `depth` is one
        // node, whose children are the distinct next bytes. Groups are contiguous in sorted order.
        trie.nodes.push(Node { first: 0, count: 0, value: NONE }); // node 0: the root (uses `root`)
        let mut level: Vec<(usize, usize, u32)> = vec![(0, sorted.len(), 0)]; // (from, to, node)
        let mut depth = 0;
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
                let first = trie.labels.len() as u32;
                while i < to {
                    let byte = sorted[i].0[depth];
                    let mut j = i;
                    while j < to && sorted[j].0[depth] == byte {
                        j += 1;
                    }
                    let child = trie.nodes.len() as u32;
                    trie.nodes.push(Node { first: 0, count: 0, value: NONE });
                    if node == 0 {
                        trie.root[byte as usize] = child;
                    } else {
                        trie.labels.push(byte);
                        trie.targets.push(child);
                    }
                    next.push((i, j, child));
                    i = j;
                }
                if node != 0 {
                    let n = &mut trie.nodes[node as usize];
                    n.first = first;
                    n.count = trie.labels.len() as u32 - first;
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
        if node == 0 {
            return self.root[byte as usize];
        }
        let n = self.nodes[node as usize];
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
