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

use crate::error::{Error, Result};
use crate::io::count::WordCounts;
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;
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

/// A queued pair with the score it had when queued (16 bytes: the heap holds many, most stale).
#[derive(Clone, Copy)]
struct Entry {
    score: f64,
    pair: Pair,
}

/// A max-heap of entries ordered by `State::before` — which needs the tokens' bytes for ties,
/// so it is a heap of our own with the order passed in rather than `BinaryHeap`'s `Ord`.
#[derive(Default)]
struct ScoreHeap {
    entries: Vec<Entry>,
}

impl ScoreHeap {
    fn push(&mut self, entry: Entry, before: impl Fn(&Entry, &Entry) -> bool) {
        self.entries.push(entry);
        let mut i = self.entries.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if !before(&self.entries[i], &self.entries[parent]) {
                break;
            }
            self.entries.swap(i, parent);
            i = parent;
        }
    }

    fn pop(&mut self, before: impl Fn(&Entry, &Entry) -> bool) -> Option<Entry> {
        let last = self.entries.len().checked_sub(1)?;
        self.entries.swap(0, last);
        let top = self.entries.pop();
        self.sift_down(0, &before);
        top
    }

    fn sift_down(&mut self, mut i: usize, before: &impl Fn(&Entry, &Entry) -> bool) {
        let n = self.entries.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut best = i;
            if l < n && before(&self.entries[l], &self.entries[best]) {
                best = l;
            }
            if r < n && before(&self.entries[r], &self.entries[best]) {
                best = r;
            }
            if best == i {
                return;
            }
            self.entries.swap(i, best);
            i = best;
        }
    }

    /// Rebuilds the heap from `entries` (Floyd's bottom-up heapify).
    fn rebuild(&mut self, entries: Vec<Entry>, before: impl Fn(&Entry, &Entry) -> bool) {
        self.entries = entries;
        for i in (0..self.entries.len() / 2).rev() {
            self.sift_down(i, &before);
        }
    }
}

/// The corpus's unique words in one arena: word `w` is `arena[start[w]..start[w] + len[w]]`.
/// A merge only shortens a word, so it is rewritten in place.
#[derive(Default)]
struct Words {
    arena: Vec<u32>,
    start: Vec<u32>,
    len: Vec<u32>,
    count: Vec<u64>,
}

impl Words {
    fn get(&self, w: usize) -> &[u32] {
        let start = self.start[w] as usize;
        &self.arena[start..start + self.len[w] as usize]
    }
}

struct State {
    tokens: Vec<Rc<[u8]>>,
    ids: FxHashMap<Rc<[u8]>, u32>,
    symbol_counts: Vec<u64>,
    words: Words,
    pair_counts: FxHashMap<Pair, u64>,
    /// Words that held the pair when it was counted (checked again when used); most pairs are
    /// in a few words, which then live inline.
    where_pair: FxHashMap<Pair, SmallVec<[u32; 4]>>,
    /// Live pairs by the symbols they contain.
    pairs_of: FxHashMap<u32, FxHashSet<Pair>>,
    heap: ScoreHeap,
}

impl State {
    fn score(&self, pair: Pair) -> f64 {
        let n = self.pair_counts.get(&pair).copied().unwrap_or(0) as f64;
        n / (self.symbol_counts[pair.0 as usize] as f64 * self.symbol_counts[pair.1 as usize] as f64)
    }

    /// Whether `a` is merged before `b`: the higher score, then the smaller left bytes, then
    /// the smaller right bytes.
    fn before(tokens: &[Rc<[u8]>], a: &Entry, b: &Entry) -> bool {
        let bytes = |id: u32| &tokens[id as usize][..];
        a.score
            .total_cmp(&b.score)
            .then_with(|| bytes(b.pair.0).cmp(bytes(a.pair.0)))
            .then_with(|| bytes(b.pair.1).cmp(bytes(a.pair.1)))
            .is_gt()
    }

    /// Queues the pair at its current score. A pair below `min_frequency` is never queued:
    /// the count of a pair that exists only ever falls.
    fn push(&mut self, pair: Pair, min_frequency: u64) {
        if self.pair_counts.get(&pair).copied().unwrap_or(0) < min_frequency {
            return;
        }
        let entry = Entry { score: self.score(pair), pair };
        let tokens = &self.tokens;
        self.heap.push(entry, |a, b| Self::before(tokens, a, b));
    }

    fn pop(&mut self) -> Option<Entry> {
        let tokens = &self.tokens;
        self.heap.pop(|a, b| Self::before(tokens, a, b))
    }

    /// Drops the stale entries once they outnumber the live pairs: every change queues a fresh
    /// entry, and without this the heap would hold many times the pairs that exist.
    fn compact(&mut self, min_frequency: u64) {
        if self.heap.entries.len() <= 2 * self.pair_counts.len() + 4096 {
            return;
        }
        let mut live: Vec<Pair> =
            self.pair_counts.iter().filter(|&(_, &n)| n >= min_frequency).map(|(&p, _)| p).collect();
        live.sort_unstable();
        let entries = live.into_iter().map(|pair| Entry { score: self.score(pair), pair }).collect();
        let tokens = &self.tokens;
        self.heap.rebuild(entries, |a, b| Self::before(tokens, a, b));
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
    if words.iter().all(|(w, _)| w.is_empty()) {
        return Err(Error::EmptyCorpus("no words to train on".into()));
    }
    let prefix = config.prefix.as_bytes();
    let mut state = State {
        tokens: Vec::new(),
        ids: FxHashMap::default(),
        symbol_counts: Vec::new(),
        words: Words::default(),
        pair_counts: FxHashMap::default(),
        where_pair: FxHashMap::default(),
        pairs_of: FxHashMap::default(),
        heap: ScoreHeap::default(),
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
    let mut symbols = Vec::new();
    for (w, (text, count)) in texts.into_iter().enumerate() {
        symbols.clear();
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
        for pair in pairs(&symbols) {
            state.add_pair(pair, count as i128, w as u32);
        }
        let start = u32::try_from(state.words.arena.len())
            .map_err(|_| Error::config("too many characters in the counted words to train on (over 2^32)"))?;
        state.words.start.push(start);
        state.words.len.push(symbols.len() as u32);
        state.words.count.push(count);
        state.words.arena.extend_from_slice(&symbols);
    }
    let min_frequency = config.min_frequency.max(1);
    let all: Vec<Pair> = state.pair_counts.keys().copied().collect();
    for pair in all {
        state.push(pair, min_frequency);
    }
    let target = config.vocab_size as u64;
    let mut last_report = 0;
    let mut seen = vec![u32::MAX; state.words.count.len()];
    let mut round = 0u32;
    while state.tokens.len() < config.vocab_size {
        let Some(top) = state.pop() else { break };
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
            let old: SmallVec<[u32; 32]> = SmallVec::from_slice(state.words.get(w as usize));
            let count = state.words.count[w as usize];
            let mut new: SmallVec<[u32; 32]> = SmallVec::with_capacity(old.len());
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
                continue;
            }
            for pair in pairs(&old) {
                state.add_pair(pair, -(count as i128), w);
                changed_pairs.insert(pair);
            }
            for pair in pairs(&new) {
                state.add_pair(pair, count as i128, w);
                changed_pairs.insert(pair);
            }
            // Only x, y (fewer) and z (more) change count; the word's other symbols stay.
            let sites = (old.len() - new.len()) as u64 * count;
            state.symbol_counts[x as usize] -= sites;
            state.symbol_counts[y as usize] -= sites;
            state.symbol_counts[z as usize] += sites;
            let start = state.words.start[w as usize] as usize;
            state.words.arena[start..start + new.len()].copy_from_slice(&new);
            state.words.len[w as usize] = new.len() as u32;
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
        state.compact(min_frequency);
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
