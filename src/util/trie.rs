//! A byte trie for "every key that is a prefix of this text": the byte-level BPE backtracker
//! asks it at each token boundary of a long piece, and SentencePiece BPE for its frozen pieces.
//!
//! Laid out as a double array: node `s` keeps a base `b`, and its child on byte `c` is unit
//! `b ^ c`, valid when that unit is in use and labelled `c`. A step is then one load whose
//! address depends on the previous one — where a trie with edge lists needs two (the node, then
//! its edges), which made the walk a third of the backtracker's time on Japanese. Every base is
//! used by one node only, so a unit's label alone tells whose child it is.

#[derive(Debug, Clone)]
pub struct Trie<U: Unit = u64> {
    /// Per unit: base, label, used, has-value (see `Unit`).
    units: Vec<U>,
    /// Per unit: the value of the key ending there (read only when the unit has a value).
    values: Vec<u32>,
    /// Per unit, if attached (`attach_scores`): the value and a number that goes with it, side
    /// by side so that one load (one cache miss) brings both.
    scored: Vec<(u32, f32)>,
    /// The longest key, in bytes.
    max_len: usize,
}

/// While built, a unit is a `u64`: base (low 32 bits), label (bits 32-39), `USED`, `HAS_VALUE`.
const USED: u64 = 1 << 40;
const HAS_VALUE: u64 = 1 << 41;
/// A node's children all lie in one block of 256 units (`base ^ c` changes only the low byte).
const BLOCK: usize = 256;
/// Placing a node tries this many of the most recent blocks; more would only slow the build.
const OPEN_BLOCKS_TRIED: usize = 16;

/// How a built trie stores a unit. `u64` holds any trie; `u32` (label bits 0-7, used bit 8,
/// has-value bit 9, base bits 10-31) holds one of up to 2^22 units — a 262,144-piece Unigram
/// vocabulary needs about 2.3 million — and halves the array, so that more of a large
/// vocabulary's walk stays in cache (a sixth faster on AI21's 262k model).
pub trait Unit: Copy + std::fmt::Debug + Send + Sync + 'static {
    /// How many units this width can address.
    const CAPACITY: usize;
    /// The unit as the builder wrote it (a `u64`, see above).
    fn from_built(unit: u64) -> Self;
    fn base(self) -> usize;
    /// Whether this unit is in use and labelled `c`.
    fn is_child_on(self, c: u8) -> bool;
    fn has_value(self) -> bool;
}

impl Unit for u64 {
    const CAPACITY: usize = 1 << 32;
    #[inline(always)]
    fn from_built(unit: u64) -> Self {
        unit
    }
    #[inline(always)]
    fn base(self) -> usize {
        self as u32 as usize
    }
    #[inline(always)]
    fn is_child_on(self, c: u8) -> bool {
        self >> 32 & 0x1FF == (USED >> 32) | c as u64
    }
    #[inline(always)]
    fn has_value(self) -> bool {
        self & HAS_VALUE != 0
    }
}

impl Unit for u32 {
    const CAPACITY: usize = 1 << 22;
    #[inline(always)]
    fn from_built(unit: u64) -> Self {
        (unit as u32) << 10 | (unit >> 32 & 0x3FF) as u32
    }
    #[inline(always)]
    fn base(self) -> usize {
        (self >> 10) as usize
    }
    #[inline(always)]
    fn is_child_on(self, c: u8) -> bool {
        self & 0x1FF == 0x100 | c as u32
    }
    #[inline(always)]
    fn has_value(self) -> bool {
        self & 0x200 != 0
    }
}

impl Default for Trie {
    fn default() -> Self {
        Trie::new(std::iter::empty())
    }
}

impl Trie {
    /// A trie of `keys` with their values (a key given twice keeps its first value; the empty key
    /// is ignored).
    pub fn new<'k>(keys: impl IntoIterator<Item = (&'k [u8], u32)>) -> Self {
        let (layout, max_len) = Layout::build(keys);
        Trie::from_layout(layout, max_len)
    }
}

impl<U: Unit> Trie<U> {
    /// The built layout in units of this width (the caller checked it fits).
    fn from_layout(layout: Layout, max_len: usize) -> Self {
        debug_assert!(layout.units.len() <= U::CAPACITY);
        let units = layout.units.iter().map(|&u| U::from_built(u)).collect();
        Trie { units, values: layout.values, scored: Vec::new(), max_len }
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
        let child = self.units[unit].base() ^ c as usize;
        self.units.get(child)?.is_child_on(c).then_some(child)
    }

    /// Calls `found(len, value)` for every key that is a prefix of `text`, shortest first.
    #[inline]
    pub fn for_each_prefix(&self, text: &[u8], mut found: impl FnMut(usize, u32)) {
        self.walk(text, |len, unit| found(len, self.values[unit]));
    }

    /// Calls `found(len, unit)` for the unit of every key that is a prefix of `text`.
    #[inline(always)]
    fn walk(&self, text: &[u8], mut found: impl FnMut(usize, usize)) {
        // The current unit is carried from step to step, not loaded again: each step is then a
        // single load that waits on the one before.
        let mut unit = self.units[0];
        for (i, &c) in text.iter().enumerate() {
            let child = unit.base() ^ c as usize;
            let Some(&next) = self.units.get(child) else { return };
            if !next.is_child_on(c) {
                return;
            }
            if next.has_value() {
                found(i + 1, child);
            }
            unit = next;
        }
    }

    /// Gives each key the number `score(value)`, for `for_each_scored_prefix`.
    pub fn attach_scores(&mut self, score: impl Fn(u32) -> f32) {
        self.scored = self
            .units
            .iter()
            .zip(&self.values)
            .map(|(&unit, &value)| (value, if unit.has_value() { score(value) } else { 0.0 }))
            .collect();
    }

    pub fn has_scores(&self) -> bool {
        !self.scored.is_empty()
    }

    /// `for_each_prefix` with each key's attached score: `found(len, value, score)`, both read
    /// in the step that finds the key (a score looked up by value would wait on the value, a
    /// second miss in a large vocabulary).
    #[inline]
    pub fn for_each_scored_prefix(&self, text: &[u8], mut found: impl FnMut(usize, u32, f32)) {
        self.walk(text, |len, unit| {
            let (value, score) = self.scored[unit];
            found(len, value, score)
        });
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
        (unit != 0 && self.units[unit].has_value()).then(|| self.values[unit])
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
    /// Lays out `keys` (see `Trie::new`); also gives the longest key's length.
    fn build<'k>(keys: impl IntoIterator<Item = (&'k [u8], u32)>) -> (Layout, usize) {
        let mut sorted: Vec<(&[u8], u32)> = keys.into_iter().filter(|(k, _)| !k.is_empty()).collect();
        // Stable, so the first of two equal keys comes first.
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        sorted.dedup_by(|later, first| later.0 == first.0);
        let max_len = sorted.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        let mut layout = Layout::default();
        // Unit 0 is the root, alone in block 0: no base is ever placed there, so no walk steps
        // into that block but a leaf's (base 0), and nothing there is marked in use.
        layout.grow_to(1);
        // Each group of keys sharing a prefix of length `depth` is one node, whose children are
        // the distinct next bytes; groups are contiguous in sorted order. Nodes are placed
        // depth first, so a walk down a chain of nodes (most of a long key) stays among units
        // placed together — often one cache line — where breadth first put each step a level away.
        let mut stack: Vec<(usize, usize, usize, usize)> = vec![(0, sorted.len(), 0, 0)]; // (from, to, unit, depth)
        let mut labels: Vec<u8> = Vec::new();
        let mut groups: Vec<(usize, usize)> = Vec::new();
        while let Some((from, to, unit, depth)) = stack.pop() {
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
            // Pushed last first, so the first child is placed next.
            for (&c, &(i, j)) in labels.iter().zip(&groups).rev() {
                let child = base ^ c as usize;
                layout.units[child] |= USED | (c as u64) << 32;
                stack.push((i, j, child, depth + 1));
            }
        }
        (layout, max_len)
    }

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

    /// A small deterministic random number generator for the tests.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// Random keys over bytes that include 0 and 255 (a leaf's walk on byte 0 must not step
    /// into the root), many sharing prefixes, against a scan of all keys.
    #[test]
    fn random_keys_agree_with_a_scan() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let alphabet = [0u8, 1, 2, 97, 98, 0x80, 0xE3, 255];
        for round in 0..20 {
            let n_keys = 1 + (next() % 3000) as usize;
            let keys: Vec<Vec<u8>> =
                (0..n_keys).map(|_| (0..1 + next() % 9).map(|_| alphabet[(next() % 8) as usize]).collect()).collect();
            let (layout, max_len) = Layout::build(keys.iter().enumerate().map(|(i, k)| (k.as_slice(), i as u32)));
            let narrow: Trie<u32> = Trie::from_layout(layout, max_len);
            let trie = Trie::new(keys.iter().enumerate().map(|(i, k)| (k.as_slice(), i as u32)));
            for _ in 0..300 {
                let text: Vec<u8> = (0..next() % 12).map(|_| alphabet[(next() % 8) as usize]).collect();
                let mut got = Vec::new();
                trie.for_each_prefix(&text, |len, v| got.push((len, v)));
                let mut narrow_got = Vec::new();
                narrow.for_each_prefix(&text, |len, v| narrow_got.push((len, v)));
                assert_eq!(narrow_got, got, "the two widths, round {round}, text {text:?}");
                assert_eq!(narrow.get(&text), trie.get(&text));
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

    /// Past what narrow units address, the text trie is built wide, and finds the same keys.
    #[test]
    fn a_trie_too_large_for_narrow_units_is_wide() {
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        // Random 16-letter keys share little past their first three, so each adds about 13 units:
        // past 2^22 in all.
        let keys: Vec<String> =
            (0..420_000).map(|_| (0..16).map(|_| char::from(b'A' + (next() % 58) as u8)).collect()).collect();
        let trie = CharTrie::new(keys.iter().enumerate().map(|(i, k)| (k.as_str(), i as u32)));
        assert!(matches!(trie, CharTrie::Wide(_)));
        let small = CharTrie::new(keys[..1000].iter().enumerate().map(|(i, k)| (k.as_str(), i as u32)));
        assert!(matches!(small, CharTrie::Narrow(_)));
        for (i, key) in keys.iter().enumerate().step_by(997) {
            let text = format!("{key}zz");
            assert_eq!(trie.longest_prefix(&text), Some((16, i as u32)), "{key}");
            assert_eq!(small.longest_prefix(&text), (i < 1000).then_some((16, i as u32)));
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

/// The same trie read with text: keys and walks are `str`, so every length it reports falls
/// on a character boundary. (An earlier trie stepped a character at a time through sorted
/// edge runs; the double array's byte steps proved faster on every script, CJK included —
/// each step is one load, where a run is a scan.) Narrow units where they fit; a hot loop
/// matches on the width once, outside the loop (`for_each_edge`): a match per walk lost what
/// the narrow units gain.
#[derive(Debug, Clone)]
pub enum CharTrie {
    Narrow(Trie<u32>),
    Wide(Trie<u64>),
}

impl Default for CharTrie {
    fn default() -> Self {
        CharTrie::new(std::iter::empty())
    }
}

/// Runs `$body` with `$trie` bound to the trie of either width.
macro_rules! either {
    ($self:expr, $trie:ident => $body:expr) => {
        match $self {
            CharTrie::Narrow($trie) => $body,
            CharTrie::Wide($trie) => $body,
        }
    };
}

impl CharTrie {
    /// A trie of `keys` (text) with their values; a key given twice keeps its first value.
    pub fn new<'k>(keys: impl IntoIterator<Item = (&'k str, u32)>) -> Self {
        let (layout, max_len) = Layout::build(keys.into_iter().map(|(key, value)| (key.as_bytes(), value)));
        if layout.units.len() <= u32::CAPACITY {
            CharTrie::Narrow(Trie::from_layout(layout, max_len))
        } else {
            CharTrie::Wide(Trie::from_layout(layout, max_len))
        }
    }

    /// The longest key's length in bytes.
    pub fn max_len(&self) -> usize {
        either!(self, t => t.max_len())
    }

    /// Calls `found(byte length, value)` for every key that is a prefix of `text`, shortest first.
    #[inline]
    pub fn for_each_prefix(&self, text: &str, found: impl FnMut(usize, u32)) {
        either!(self, t => t.for_each_prefix(text.as_bytes(), found))
    }

    /// The longest key that is a prefix of `text`: (byte length, value).
    #[inline]
    pub fn longest_prefix(&self, text: &str) -> Option<(usize, u32)> {
        either!(self, t => t.longest_prefix(text.as_bytes()))
    }

    pub fn is_empty(&self) -> bool {
        either!(self, t => t.is_empty())
    }

    /// See `Trie::attach_scores`.
    pub fn attach_scores(&mut self, score: impl Fn(u32) -> f32) {
        either!(self, t => t.attach_scores(score))
    }

    pub fn has_scores(&self) -> bool {
        either!(self, t => t.has_scores())
    }
}
