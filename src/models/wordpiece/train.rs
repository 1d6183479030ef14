//! WordPiece training: merges chosen by likelihood, count(ab) / (count(a)·count(b)) — the pair
//! that occurs together most above chance — rather than by frequency as in BPE.
//!
//! A word starts as its first character followed by continuation pieces (`##c`) for the rest.
//! Merging (x, y) makes the token x + y-without-prefix (a continuation iff x is one).
//!
//! Unlike BPE's pair counts, a score also depends on the counts of the two symbols, and those
//! fall when a merge uses them up — so a waiting pair's score can *rise*. The heap therefore gets
//! a fresh entry for every pair whose count changed and for every live pair next to a symbol
//! whose count changed; an entry whose score is no longer the pair's current score is dropped
//! when popped (a fresher one exists). Ties break on bytes: the smaller left token, then the
//! smaller right, so the result never depends on threads, hashing or corpus order.

use crate::count::WordCounts;
use crate::error::{Error, Result};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::rc::Rc;

/// Everything that decides what WordPiece training learns.
#[derive(Debug, Clone)]
pub struct WordPieceTrainConfig {
    /// Tokens in all, special tokens included.
    pub vocab_size: usize,
    pub prefix: String,
    /// At ids 0, 1, … in this order.
    pub special_tokens: Vec<String>,
    /// A pair seen fewer times than this is never merged.
    pub min_frequency: u64,
    /// Keep at most this many initial pieces (characters and their continuation forms), the
    /// most frequent (ties: smaller bytes); a dropped one splits its word there.
    pub limit_alphabet: Option<usize>,
}

/// Where training stands, for progress reports.
pub struct WordPieceProgress {
    pub tokens: u64,
    pub target: u64,
}

type Pair = (u32, u32);

/// A symbol that is not in the alphabet (dropped by `limit_alphabet`): it pairs with nothing.
const GAP: u32 = u32::MAX;

struct Entry {
    score: f64,
    left: Rc<[u8]>,
    right: Rc<[u8]>,
    pair: Pair,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Greater is merged first: the higher score, then the smaller left bytes, then right.
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.left.cmp(&self.left))
            .then_with(|| other.right.cmp(&self.right))
    }
}

struct State {
    tokens: Vec<Rc<[u8]>>,
    ids: FxHashMap<Rc<[u8]>, u32>,
    symbol_counts: Vec<u64>,
    words: Vec<(Vec<u32>, u64)>,
    pair_counts: FxHashMap<Pair, u64>,
    /// Words that held the pair when it was counted (checked again when used).
    where_pair: FxHashMap<Pair, Vec<u32>>,
    /// Live pairs by the symbols they contain.
    pairs_of: FxHashMap<u32, FxHashSet<Pair>>,
    heap: BinaryHeap<Entry>,
}

impl State {
    fn score(&self, pair: Pair) -> f64 {
        let n = self.pair_counts.get(&pair).copied().unwrap_or(0) as f64;
        n / (self.symbol_counts[pair.0 as usize] as f64 * self.symbol_counts[pair.1 as usize] as f64)
    }

    /// Queues the pair at its current score. A pair below `min_frequency` is never queued:
    /// the count of a pair that exists only ever falls.
    fn push(&mut self, pair: Pair, min_frequency: u64) {
        if self.pair_counts.get(&pair).copied().unwrap_or(0) < min_frequency {
            return;
        }
        let entry = Entry {
            score: self.score(pair),
            left: Rc::clone(&self.tokens[pair.0 as usize]),
            right: Rc::clone(&self.tokens[pair.1 as usize]),
            pair,
        };
        self.heap.push(entry);
    }

    fn add_pair(&mut self, pair: Pair, count: i128, word: u32) {
        let slot = self.pair_counts.entry(pair).or_insert(0);
        let before = *slot;
        *slot = (*slot as i128 + count) as u64;
        if before == 0 && *slot > 0 {
            self.pairs_of.entry(pair.0).or_default().insert(pair);
            self.pairs_of.entry(pair.1).or_default().insert(pair);
        }
        if count > 0 {
            self.where_pair.entry(pair).or_default().push(word);
        }
    }

    fn token_id(&mut self, bytes: Vec<u8>) -> u32 {
        if let Some(&id) = self.ids.get(&bytes[..]) {
            return id;
        }
        let id = self.tokens.len() as u32;
        let bytes: Rc<[u8]> = bytes.into();
        self.ids.insert(Rc::clone(&bytes), id);
        self.tokens.push(bytes);
        self.symbol_counts.push(0);
        id
    }
}

fn pairs(symbols: &[u32]) -> impl Iterator<Item = Pair> + '_ {
    symbols.windows(2).map(|w| (w[0], w[1])).filter(|&(a, b)| a != GAP && b != GAP)
}

/// Trains WordPiece on counted words; returns the tokens by id (special tokens first).
pub fn train(
    words: &WordCounts,
    config: &WordPieceTrainConfig,
    progress: &mut dyn FnMut(WordPieceProgress) -> Result<()>,
) -> Result<Vec<Vec<u8>>> {
    words.check()?;
    if config.prefix.is_empty() {
        return Err(Error::config("continuing_subword_prefix must not be empty"));
    }
    let prefix = config.prefix.as_bytes();
    let mut state = State {
        tokens: Vec::new(),
        ids: FxHashMap::default(),
        symbol_counts: Vec::new(),
        words: Vec::new(),
        pair_counts: FxHashMap::default(),
        where_pair: FxHashMap::default(),
        pairs_of: FxHashMap::default(),
        heap: BinaryHeap::new(),
    };
    for special in &config.special_tokens {
        if state.ids.contains_key(special.as_bytes()) {
            return Err(Error::config(format!("special token {special:?} is given twice")));
        }
        state.token_id(special.as_bytes().to_vec());
    }
    let specials = state.tokens.len();
    // The alphabet: every character as a word start and as a continuation, counted.
    let mut sorted: Vec<(&[u8], u64)> = words.iter().collect();
    sorted.sort_unstable();
    let mut piece_counts: FxHashMap<Vec<u8>, u64> = FxHashMap::default();
    let mut texts: Vec<(&str, u64)> = Vec::with_capacity(sorted.len());
    for (word, count) in sorted {
        let text = std::str::from_utf8(word)
            .map_err(|_| Error::config("WordPiece trains on text; a counted word is not UTF-8"))?;
        for (i, c) in text.char_indices() {
            let mut piece = if i > 0 { prefix.to_vec() } else { Vec::new() };
            piece.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            let slot = piece_counts.entry(piece).or_insert(0);
            *slot = slot.saturating_add(count);
        }
        texts.push((text, count));
    }
    let mut alphabet: Vec<(Vec<u8>, u64)> = piece_counts.into_iter().collect();
    alphabet.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    if let Some(limit) = config.limit_alphabet {
        alphabet.truncate(limit);
    }
    alphabet.sort_unstable();
    if specials + alphabet.len() > config.vocab_size {
        return Err(Error::config(format!(
            "vocab_size {} is smaller than the {} special tokens and the {} pieces of the alphabet",
            config.vocab_size,
            specials,
            alphabet.len()
        )));
    }
    for (piece, _) in alphabet {
        state.token_id(piece);
    }
    // Words as symbol ids, with symbol and pair counts.
    let mut buf = Vec::new();
    for (w, (text, count)) in texts.into_iter().enumerate() {
        let mut symbols = Vec::with_capacity(text.len());
        for (i, c) in text.char_indices() {
            buf.clear();
            if i > 0 {
                buf.extend_from_slice(prefix);
            }
            buf.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            symbols.push(state.ids.get(&buf[..]).copied().unwrap_or(GAP));
        }
        for &s in &symbols {
            if s != GAP {
                state.symbol_counts[s as usize] = state.symbol_counts[s as usize].saturating_add(count);
            }
        }
        for pair in pairs(&symbols).collect::<Vec<_>>() {
            state.add_pair(pair, count as i128, w as u32);
        }
        state.words.push((symbols, count));
    }
    let min_frequency = config.min_frequency.max(1);
    let all: Vec<Pair> = state.pair_counts.keys().copied().collect();
    for pair in all {
        state.push(pair, min_frequency);
    }
    let target = config.vocab_size as u64;
    let mut last_report = 0;
    let mut seen = vec![u32::MAX; state.words.len()];
    let mut round = 0u32;
    while state.tokens.len() < config.vocab_size {
        let Some(top) = state.heap.pop() else { break };
        let count = state.pair_counts.get(&top.pair).copied().unwrap_or(0);
        if count < min_frequency || state.score(top.pair).to_bits() != top.score.to_bits() {
            continue;
        }
        let (x, y) = top.pair;
        let mut joined = state.tokens[x as usize].to_vec();
        let right = &state.tokens[y as usize];
        joined.extend_from_slice(right.strip_prefix(prefix).unwrap_or(right));
        let z = state.token_id(joined);
        round += 1;
        let places = state.where_pair.remove(&top.pair).unwrap_or_default();
        let mut changed_pairs: FxHashSet<Pair> = FxHashSet::default();
        for w in places {
            if seen[w as usize] == round {
                continue;
            }
            seen[w as usize] = round;
            let (old, count) = std::mem::take(&mut state.words[w as usize]);
            let mut new = Vec::with_capacity(old.len());
            let mut i = 0;
            while i < old.len() {
                if i + 1 < old.len() && old[i] == x && old[i + 1] == y {
                    new.push(z);
                    i += 2;
                } else {
                    new.push(old[i]);
                    i += 1;
                }
            }
            if new.len() == old.len() {
                state.words[w as usize] = (old, count);
                continue;
            }
            for pair in pairs(&old).collect::<Vec<_>>() {
                state.add_pair(pair, -(count as i128), w);
                changed_pairs.insert(pair);
            }
            for pair in pairs(&new).collect::<Vec<_>>() {
                state.add_pair(pair, count as i128, w);
                changed_pairs.insert(pair);
            }
            // Only x, y (fewer) and z (more) change count; the word's other symbols stay.
            let sites = (old.len() - new.len()) as u64 * count;
            state.symbol_counts[x as usize] -= sites;
            state.symbol_counts[y as usize] -= sites;
            state.symbol_counts[z as usize] += sites;
            state.words[w as usize] = (new, count);
        }
        state.pair_counts.retain(|_, n| *n > 0);
        // Scores rise when a symbol's count falls: re-queue every live pair next to x or y, and
        // every pair whose own count changed (z's pairs are among those).
        for s in [x, y] {
            if let Some(set) = state.pairs_of.get_mut(&s) {
                set.retain(|p| state.pair_counts.contains_key(p));
                changed_pairs.extend(set.iter().copied());
            }
        }
        let mut changed: Vec<Pair> = changed_pairs.into_iter().collect();
        changed.sort_unstable();
        for pair in changed {
            state.push(pair, min_frequency);
        }
        let done = state.tokens.len() as u64;
        if done - last_report >= (target / 100).max(1) {
            last_report = done;
            progress(WordPieceProgress { tokens: done, target })?;
        }
    }
    progress(WordPieceProgress { tokens: state.tokens.len() as u64, target })?;
    Ok(state.tokens.iter().map(|t| t.to_vec()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairs: &[(&str, u64)]) -> WordCounts {
        let mut c = WordCounts::default();
        for (w, n) in pairs {
            c.add(w.as_bytes(), *n);
        }
        c
    }

    fn config(vocab_size: usize) -> WordPieceTrainConfig {
        WordPieceTrainConfig {
            vocab_size,
            prefix: "##".into(),
            special_tokens: vec!["[UNK]".into()],
            min_frequency: 0,
            limit_alphabet: None,
        }
    }

    #[test]
    fn likelihood_not_frequency_picks_the_merge() {
        // (h, ##u) is as frequent as the others but h and ##u are common; (q, ##x) occurs twice,
        // alone: it goes first. Then (b, ##u) and (h, ##a) tie (b < h); merging bu lowers
        // ##u's count, so (h, ##u)'s score rises to tie with (h, ##a) (##a < ##u).
        let words = counts(&[("hu", 10), ("ha", 30), ("bu", 30), ("qx", 2)]);
        let tokens = train(&words, &config(11), &mut |_| Ok(())).unwrap();
        let text: Vec<String> = tokens.iter().map(|t| String::from_utf8_lossy(t).into_owned()).collect();
        assert_eq!(text[..7], ["[UNK]", "##a", "##u", "##x", "b", "h", "q"]);
        assert_eq!(text[7..], ["qx", "bu", "ha", "hu"]);
    }

    #[test]
    fn repeated_characters_count_their_merge_sites() {
        let words = counts(&[("aaaa", 3), ("aaa", 1)]);
        let tokens = train(&words, &config(8), &mut |_| Ok(())).unwrap();
        let text: Vec<String> = tokens.iter().map(|t| String::from_utf8_lossy(t).into_owned()).collect();
        // (a, ##a) scores 4/(4·11), (##a, ##a) 7/(11·11): aa first, then aaa, aaaa; then no pair.
        assert_eq!(text, ["[UNK]", "##a", "a", "aa", "aaa", "aaaa"]);
    }

    #[test]
    fn too_small_a_vocabulary_is_an_error() {
        let words = counts(&[("abc", 1)]);
        assert!(train(&words, &config(3), &mut |_| Ok(())).is_err());
    }
}
