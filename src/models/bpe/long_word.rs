//! Words too long to rescan on every merge.
//!
//! The merge loop rewrites a word by scanning all of it, which is cheapest for the short words
//! that make up almost every corpus. A single huge word (an unwrapped genome, a base64 blob, a
//! minified file) would be rescanned by nearly every merge, making training O(length × merges).
//! A long word instead keeps its symbols in a linked list and, for each pair, the positions
//! where it occurs, so a merge visits only its own sites. The sites are taken in position order
//! and checked against the current symbols, which gives exactly the left-to-right result of the
//! scan (`x x x` merges at the first two).

use super::merge_state::{Changes, Pair};
use rustc_hash::FxHashMap;

const NONE: u32 = u32::MAX;
/// Marks a position whose symbol was merged into its left neighbour.
const DEAD: u32 = u32::MAX;

pub(super) struct LongWord {
    symbols: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    count: u64,
    /// Position of the left symbol of every occurrence of each pair (entries may be stale).
    at: FxHashMap<Pair, Vec<u32>>,
}

impl LongWord {
    pub fn new(symbols: &[u32], count: u64) -> Self {
        let n = symbols.len() as u32;
        let mut at: FxHashMap<Pair, Vec<u32>> = FxHashMap::default();
        for (k, w) in symbols.windows(2).enumerate() {
            at.entry((w[0], w[1])).or_default().push(k as u32);
        }
        LongWord {
            symbols: symbols.to_vec(),
            prev: (0..n).map(|k| k.checked_sub(1).unwrap_or(NONE)).collect(),
            next: (1..=n).map(|k| if k == n { NONE } else { k }).collect(),
            count,
            at,
        }
    }

    /// Merges every `(x, y)` in this word into `merged`, recording the count changes (and,
    /// for where-lists, `word`) exactly as the scan in `merge_state` does.
    pub fn merge(&mut self, word: u32, (x, y): Pair, merged: u32, changes: &mut Changes) {
        let Some(mut sites) = self.at.remove(&(x, y)) else { return };
        sites.sort_unstable();
        sites.dedup();
        let count = self.count;
        // The position of the previous site's result, while it is this site's left neighbour.
        let mut last_site = NONE;
        for p in sites {
            let pi = p as usize;
            let q = self.next[pi];
            if self.symbols[pi] != x || q == NONE || self.symbols[q as usize] != y {
                continue;
            }
            changes.sites += count;
            let left = self.prev[pi];
            if left != NONE {
                if left == last_site {
                    changes.touching(count, word);
                    self.at.entry((merged, merged)).or_default().push(left);
                } else {
                    let l = self.symbols[left as usize];
                    changes.left(l, count, word);
                    self.at.entry((l, merged)).or_default().push(left);
                }
            }
            let right = self.next[q as usize];
            if right != NONE {
                let r = self.symbols[right as usize];
                let after = self.next[right as usize];
                // A touching site to the right accounts for the pair between the two itself.
                let next_is_site = r == x && after != NONE && self.symbols[after as usize] == y;
                if !next_is_site {
                    changes.right(r, count, word);
                    self.at.entry((merged, r)).or_default().push(p);
                }
                self.prev[right as usize] = p;
            }
            self.symbols[pi] = merged;
            self.symbols[q as usize] = DEAD;
            self.next[pi] = right;
            last_site = p;
        }
    }

    /// The current symbols, in order.
    #[cfg(test)]
    pub fn symbols(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut k = if self.symbols.is_empty() { NONE } else { 0 };
        while k != NONE {
            out.push(self.symbols[k as usize]);
            k = self.next[k as usize];
        }
        out
    }
}
