//! Parity-aware BPE (Hugging Face tokenizers' `ParityBpeTrainer`): one corpus per language, and
//! each merge chosen for the language that compresses worst so far — the most frequent pair of
//! that language, applied to every language. Worst is the longest in symbols (on each
//! language's own text, or on a shared development set), or with `ratio` the lowest
//! compression relative to a target; the `window` variant passes over a language chosen more
//! than `alpha` / languages of the last `window_size` times. The first `global_merges` merges
//! take the most frequent pair over all languages.
//!
//! Ties follow tokenizers: among pairs of equal count the larger (left, right) text first;
//! among languages the first. Where tokenizers loops forever (every language it may pick has
//! run out of pairs), training stops here.

use crate::error::{Error, Result};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

/// How the language to serve is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParityVariant {
    Base,
    Window,
}

#[derive(Debug, Clone)]
pub struct ParityConfig {
    pub num_merges: usize,
    pub variant: ParityVariant,
    pub min_frequency: u64,
    /// Target compression per language (None: lengths decide).
    pub ratio: Option<Vec<f64>>,
    pub global_merges: usize,
    pub window_size: usize,
    pub alpha: f64,
    /// `num_merges` counts the base vocabulary too.
    pub total_symbols: bool,
    pub special_tokens: Vec<String>,
    pub limit_alphabet: Option<usize>,
    pub initial_alphabet: Vec<char>,
    pub continuing_subword_prefix: Option<String>,
    pub end_of_word_suffix: Option<String>,
    pub max_token_length: Option<usize>,
}

/// The vocabulary (by id) and the merges, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ParityVocab {
    pub tokens: Vec<String>,
    pub merges: Vec<(String, String)>,
}

type Pair = (u32, u32);
/// Words of one language: (symbols, their lengths in characters, count).
type Words = Vec<(Vec<u32>, Vec<usize>, u64)>;

/// A heap entry: higher count first, then the larger (left, right) text.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    count: u64,
    left: Arc<str>,
    right: Arc<str>,
    pair: Pair,
}

/// Pair counts with where each pair occurs, and a lazy heap over them.
#[derive(Default)]
struct Counts {
    counts: FxHashMap<Pair, i64>,
    heap: BinaryHeap<Entry>,
}

impl Counts {
    /// The best pair with a count above 0; entries whose count changed go back with the new one.
    fn pop_best(&mut self) -> Option<(Pair, u64)> {
        while let Some(top) = self.heap.pop() {
            let now = self.counts.get(&top.pair).copied().unwrap_or(0);
            if now <= 0 {
                continue;
            }
            if top.count != now as u64 {
                self.heap.push(Entry { count: now as u64, ..top });
                continue;
            }
            return Some((top.pair, top.count));
        }
        None
    }

    fn push(&mut self, pair: Pair, tokens: &[Arc<str>]) {
        let count = self.counts.get(&pair).copied().unwrap_or(0);
        if count > 0 {
            let (left, right) = (tokens[pair.0 as usize].clone(), tokens[pair.1 as usize].clone());
            self.heap.push(Entry { count: count as u64, left, right, pair });
        }
    }
}

/// Trains on `train` (one list of (word, count) per language) and, when given, measures
/// lengths on `dev` (as many lists); reports merges done.
pub fn train(
    train: &[Vec<(String, u64)>],
    dev: Option<&[Vec<(String, u64)>]>,
    config: &ParityConfig,
    progress: &mut dyn FnMut(usize, usize) -> Result<()>,
) -> Result<ParityVocab> {
    let n_langs = train.len();
    check(config, n_langs, dev)?;
    let dev = dev.filter(|d| !d.is_empty());
    let max_len = config.max_token_length.unwrap_or(usize::MAX);
    let prefix = config.continuing_subword_prefix.as_deref();
    let suffix = config.end_of_word_suffix.as_deref();

    let mut vocab = TokenTable::default();
    for s in &config.special_tokens {
        vocab.add(s);
    }
    let all: Vec<&Vec<(String, u64)>> = train.iter().chain(dev.into_iter().flatten()).collect();
    for c in alphabet(&all, &config.initial_alphabet, config.limit_alphabet) {
        vocab.add(&c.to_string());
    }
    let mark = |c: char, first: bool, last: bool| {
        let mut s = String::new();
        if let (false, Some(p)) = (first, prefix) {
            s.push_str(p);
        }
        s.push(c);
        if let (true, Some(x)) = (last, suffix) {
            s.push_str(x);
        }
        s
    };
    // Each language's words as symbols (characters outside the alphabet left out; the marks go
    // by the word's own first and last characters).
    let mut words: Vec<Words> = Vec::with_capacity(n_langs);
    for language in train {
        let mut out = Vec::with_capacity(language.len());
        for (word, count) in language {
            let n = word.chars().count();
            let mut ids = Vec::new();
            for (j, c) in word.chars().enumerate() {
                if vocab.has(&c.to_string()) {
                    ids.push(vocab.add(&mark(c, j == 0, j + 1 == n)));
                }
            }
            let lens = vec![1; ids.len()];
            out.push((ids, lens, *count));
        }
        words.push(out);
    }
    let mut counts: Vec<Counts> = Vec::with_capacity(n_langs);
    let mut wheres: Vec<FxHashMap<Pair, FxHashSet<u32>>> = Vec::with_capacity(n_langs);
    for language in &words {
        let mut c = Counts::default();
        let mut w: FxHashMap<Pair, FxHashSet<u32>> = FxHashMap::default();
        for (i, (ids, _, n)) in language.iter().enumerate() {
            for p in ids.windows(2) {
                *c.counts.entry((p[0], p[1])).or_default() += *n as i64;
                w.entry((p[0], p[1])).or_default().insert(i as u32);
            }
        }
        let pairs: Vec<Pair> = c.counts.keys().copied().collect();
        for p in pairs {
            c.push(p, &vocab.tokens);
        }
        counts.push(c);
        wheres.push(w);
    }
    let mut global = Counts::default();
    if config.global_merges > 0 {
        for c in &counts {
            for (&p, &n) in &c.counts {
                *global.counts.entry(p).or_default() += n;
            }
        }
        let pairs: Vec<Pair> = global.counts.keys().copied().collect();
        for p in pairs {
            global.push(p, &vocab.tokens);
        }
    }

    // What "longest" is measured on.
    let symbols = |language: &Words| language.iter().map(|(ids, _, n)| ids.len() as u64 * n).sum::<u64>();
    let mut lengths = vec![0u64; n_langs];
    let (mut initial, mut current) = (Vec::new(), Vec::new());
    let mut dev_words: FxHashMap<Vec<u32>, Vec<u64>> = FxHashMap::default();
    let mut dev_where: FxHashMap<Pair, FxHashSet<Vec<u32>>> = FxHashMap::default();
    if config.ratio.is_some() {
        initial = words.iter().map(|l| symbols(l) as f64).collect();
        current = initial.clone();
    } else if let Some(dev) = dev {
        for (lang, language) in dev.iter().enumerate() {
            'words: for (word, count) in language {
                let n = word.chars().count();
                let mut ids = Vec::with_capacity(n);
                for (j, c) in word.chars().enumerate() {
                    if !vocab.has(&c.to_string()) {
                        continue 'words;
                    }
                    match vocab.get(&mark(c, j == 0, j + 1 == n)) {
                        Some(id) => ids.push(id),
                        None => continue 'words,
                    }
                }
                if !ids.is_empty() {
                    dev_words.entry(ids).or_insert_with(|| vec![0; n_langs])[lang] += count;
                }
            }
        }
        for (key, freq) in &dev_words {
            for (l, f) in freq.iter().enumerate() {
                lengths[l] += key.len() as u64 * f;
            }
            for p in key.windows(2) {
                dev_where.entry((p[0], p[1])).or_default().insert(key.clone());
            }
        }
    } else {
        lengths = words.iter().map(symbols).collect();
    }

    let n_merges =
        if config.total_symbols { config.num_merges.saturating_sub(vocab.tokens.len()) } else { config.num_merges };
    let mut chooser = Chooser { config, window: VecDeque::new(), exhausted: FxHashSet::default() };
    let mut merges: Vec<Pair> = Vec::new();
    let mut idle = 0usize;
    let idle_limit = n_langs * (config.window_size + 1) * 4 + 16;
    while merges.len() < n_merges {
        if chooser.exhausted.len() >= n_langs {
            break;
        }
        let Some(lang) = chooser.choose(merges.len(), &lengths, &initial, &current) else {
            break; // tokenizers would pick an exhausted language forever
        };
        let best = match lang {
            None => global.pop_best(),
            Some(l) => counts[l].pop_best(),
        };
        let Some((pair, _)) = best.filter(|&(_, n)| n >= config.min_frequency) else {
            let Some(l) = lang else { break };
            chooser.exhausted.insert(l);
            idle += 1;
            if idle > idle_limit {
                break; // the window keeps choosing exhausted languages: tokenizers never ends
            }
            continue;
        };
        idle = 0;
        let left = vocab.tokens[pair.0 as usize].clone();
        let right = vocab.tokens[pair.1 as usize].clone();
        let right = match prefix {
            Some(p) if right.starts_with(p) => &right[p.len()..],
            _ => &right[..],
        };
        let merged = vocab.add(&format!("{left}{right}"));
        merges.push(pair);

        let mut changed_anywhere: FxHashSet<Pair> = FxHashSet::default();
        for l in 0..n_langs {
            let Some(positions) = wheres[l].remove(&pair) else { continue };
            let mut changed = Vec::new();
            let mut reduced = 0u64;
            for i in positions {
                let (ids, lens, n) = &mut words[l][i as usize];
                let before = ids.len();
                for (p, delta) in merge_word(ids, lens, pair, merged, max_len) {
                    *counts[l].counts.entry(p).or_default() += delta * *n as i64;
                    if delta > 0 {
                        wheres[l].entry(p).or_default().insert(i);
                    }
                    changed.push(p);
                }
                reduced += (before - ids.len()) as u64 * *n;
            }
            counts[l].counts.insert(pair, 0);
            // Once per pair: more entries of the same count would only be popped and dropped.
            changed.sort_unstable();
            changed.dedup();
            for &p in &changed {
                counts[l].push(p, &vocab.tokens);
            }
            if config.global_merges > 0 {
                changed_anywhere.extend(changed);
            }
            if config.ratio.is_some() {
                current[l] -= reduced as f64;
            } else if dev.is_none() {
                lengths[l] -= reduced;
            }
        }
        if config.global_merges > 0 {
            changed_anywhere.insert(pair);
            for p in changed_anywhere {
                let total: i64 = counts.iter().map(|c| c.counts.get(&p).copied().unwrap_or(0)).sum();
                global.counts.insert(p, total.max(0));
                global.push(p, &vocab.tokens);
            }
        }
        if dev.is_some() && config.ratio.is_none() {
            let keys: Vec<Vec<u32>> = dev_where
                .remove(&pair)
                .unwrap_or_default()
                .into_iter()
                .filter(|k| dev_words.contains_key(k) && k.windows(2).any(|w| (w[0], w[1]) == pair))
                .collect();
            for old in keys {
                let Some(freq) = dev_words.remove(&old) else { continue };
                let mut new = Vec::with_capacity(old.len());
                let mut i = 0;
                while i < old.len() {
                    if i + 1 < old.len() && (old[i], old[i + 1]) == pair {
                        new.push(merged);
                        i += 2;
                    } else {
                        new.push(old[i]);
                        i += 1;
                    }
                }
                let shorter = (old.len() - new.len()) as u64;
                for (l, f) in freq.iter().enumerate() {
                    lengths[l] -= shorter * f;
                }
                for p in new.windows(2) {
                    dev_where.entry((p[0], p[1])).or_default().insert(new.clone());
                }
                dev_words.insert(new, freq);
            }
        }
        progress(merges.len(), n_merges)?;
    }
    let tokens: Vec<String> = vocab.tokens.iter().map(|t| t.to_string()).collect();
    let merges = merges.iter().map(|&(a, b)| (tokens[a as usize].clone(), tokens[b as usize].clone())).collect();
    Ok(ParityVocab { tokens, merges })
}

fn check(config: &ParityConfig, n_langs: usize, dev: Option<&[Vec<(String, u64)>]>) -> Result<()> {
    if n_langs == 0 {
        return Err(Error::config("parity-aware BPE needs at least one language's texts"));
    }
    if let Some(ratio) = &config.ratio {
        if ratio.len() != n_langs {
            return Err(Error::config(format!("ratio has {} values for {n_langs} languages", ratio.len())));
        }
        if let Some((i, r)) = ratio.iter().enumerate().find(|(_, r)| !(r.is_finite() && **r > 0.0)) {
            return Err(Error::config(format!("ratio[{i}] must be a positive finite number (got {r})")));
        }
    }
    if let Some(dev) = dev.filter(|d| !d.is_empty()) {
        if dev.len() != n_langs {
            return Err(Error::config(format!("{} development sets for {n_langs} languages", dev.len())));
        }
    }
    if config.variant == ParityVariant::Window {
        if config.window_size == 0 {
            return Err(Error::config("window_size must be > 0 for the window variant"));
        }
        if !(config.alpha.is_finite() && config.alpha > 0.0) {
            return Err(Error::config(format!(
                "alpha must be a positive finite number for the window variant (got {})",
                config.alpha
            )));
        }
    }
    Ok(())
}

/// The tokens by id, and their ids.
#[derive(Default)]
struct TokenTable {
    tokens: Vec<Arc<str>>,
    ids: FxHashMap<Arc<str>, u32>,
}

impl TokenTable {
    fn add(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.tokens.len() as u32;
        let s: Arc<str> = Arc::from(s);
        self.tokens.push(s.clone());
        self.ids.insert(s, id);
        id
    }

    fn get(&self, s: &str) -> Option<u32> {
        self.ids.get(s).copied()
    }

    fn has(&self, s: &str) -> bool {
        self.ids.contains_key(s)
    }
}

/// The characters every language's words use (weighted by count), with `initial` always in;
/// beyond `limit`, the rarest go (ties: the lower code point first); by code point.
fn alphabet(languages: &[&Vec<(String, u64)>], initial: &[char], limit: Option<usize>) -> Vec<char> {
    let mut freq: FxHashMap<char, u64> = FxHashMap::default();
    for language in languages {
        for (word, n) in language.iter() {
            for c in word.chars() {
                *freq.entry(c).or_default() += n;
            }
        }
    }
    for &c in initial {
        freq.insert(c, u64::MAX);
    }
    let mut kept: Vec<(char, u64)> = freq.into_iter().collect();
    if let Some(limit) = limit {
        let drop = kept.len().saturating_sub(limit);
        kept.sort_unstable_by_key(|&(c, n)| (n, c));
        kept.drain(..drop);
    }
    let mut chars: Vec<char> = kept.into_iter().map(|(c, _)| c).collect();
    chars.sort_unstable();
    chars
}

/// Merges `pair` into `merged` left to right in one word; returns the pair count changes. A
/// new pair counts only when its two symbols together are shorter than `max_len` characters.
fn merge_word(ids: &mut Vec<u32>, lens: &mut Vec<usize>, pair: Pair, merged: u32, max_len: usize) -> Vec<(Pair, i64)> {
    let mut changes = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        if ids[i] == pair.0 && i + 1 < ids.len() && ids[i + 1] == pair.1 {
            let new_len = lens[i] + lens[i + 1];
            let second = ids[i + 1];
            if i > 0 {
                changes.push(((ids[i - 1], pair.0), -1));
                if lens[i - 1] + new_len < max_len {
                    changes.push(((ids[i - 1], merged), 1));
                }
            }
            ids.splice(i..i + 2, [merged]);
            lens.splice(i..i + 2, [new_len]);
            if i + 1 < ids.len() {
                changes.push(((second, ids[i + 1]), -1));
                if lens[i + 1] + new_len < max_len {
                    changes.push(((merged, ids[i + 1]), 1));
                }
            }
        }
        i += 1;
    }
    changes
}

/// Which language the next merge serves (None: all, on summed counts).
struct Chooser<'c> {
    config: &'c ParityConfig,
    window: VecDeque<usize>,
    exhausted: FxHashSet<usize>,
}

impl Chooser<'_> {
    /// Some(None) for a global merge, Some(Some(language)), or None where tokenizers would spin.
    fn choose(&mut self, done: usize, lengths: &[u64], initial: &[f64], current: &[f64]) -> Option<Option<usize>> {
        if done < self.config.global_merges {
            return Some(None);
        }
        let n = lengths.len();
        let out = &self.exhausted;
        let values: Vec<f64> = match &self.config.ratio {
            Some(ratio) => {
                let adjusted: Vec<f64> = (0..n).map(|i| initial[i] / current[i] / ratio[i]).collect();
                if self.config.variant == ParityVariant::Base {
                    let mut best = (0, f64::INFINITY);
                    for (i, &v) in adjusted.iter().enumerate() {
                        if !out.contains(&i) && v < best.1 {
                            best = (i, v);
                        }
                    }
                    return Some(Some(best.0));
                }
                adjusted
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| if out.contains(&i) { f64::NEG_INFINITY } else { -v })
                    .collect()
            }
            None => {
                if self.config.variant == ParityVariant::Base {
                    let mut best = (0, f64::NEG_INFINITY);
                    for (i, &v) in lengths.iter().enumerate() {
                        if !out.contains(&i) && v as f64 > best.1 {
                            best = (i, v as f64);
                        }
                    }
                    return Some(Some(best.0));
                }
                lengths
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| if out.contains(&i) { f64::NEG_INFINITY } else { v as f64 })
                    .collect()
            }
        };
        let picked = self.window_pick(&values)?;
        self.window.push_back(picked);
        if self.window.len() > self.config.window_size {
            self.window.pop_front();
        }
        Some(Some(picked))
    }

    /// The best language not chosen too often in the window (tokenizers' masking loop, with
    /// its fallback to the first language); None where that loop would never end.
    fn window_pick(&self, values: &[f64]) -> Option<usize> {
        let threshold = self.config.alpha / values.len() as f64;
        let mut mask = vec![true; values.len()];
        loop {
            let mut best = (0, f64::NEG_INFINITY);
            for (i, &v) in values.iter().enumerate() {
                if mask[i] && v > best.1 {
                    best = (i, v);
                }
            }
            let share = self.window.iter().filter(|&&x| x == best.0).count() as f64 / self.config.window_size as f64;
            if share <= threshold {
                return Some(best.0);
            }
            if !mask[best.0] && mask.iter().any(|&m| m) {
                return None;
            }
            mask[best.0] = false;
            if !mask.iter().any(|&m| m) {
                return Some(best.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ParityConfig {
        ParityConfig {
            num_merges: 6,
            variant: ParityVariant::Base,
            min_frequency: 1,
            ratio: None,
            global_merges: 0,
            window_size: 100,
            alpha: 2.0,
            total_symbols: false,
            special_tokens: Vec::new(),
            limit_alphabet: None,
            initial_alphabet: Vec::new(),
            continuing_subword_prefix: None,
            end_of_word_suffix: None,
            max_token_length: None,
        }
    }

    #[test]
    fn merges_alternate_between_languages_longest_first() {
        let en = vec![("aabb".to_string(), 10)];
        let es = vec![("ccdd".to_string(), 10)];
        let vocab = train(&[en, es], None, &config(), &mut |_, _| Ok(())).unwrap();
        let merges: Vec<String> = vocab.merges.iter().map(|(a, b)| format!("{a} {b}")).collect();
        // Equal counts: the larger text first ("b b" over "a a"); then the other language.
        assert_eq!(merges, ["b b", "d d", "a bb", "c dd", "a abb", "c cdd"]);
        assert_eq!(&vocab.tokens[..4], ["a", "b", "c", "d"]);
    }

    #[test]
    fn a_window_variant_without_pairs_left_stops_rather_than_spinning() {
        let en = vec![("ab".to_string(), 5)];
        let es = vec![("cd".to_string(), 5)];
        let cfg =
            ParityConfig { variant: ParityVariant::Window, window_size: 2, alpha: 0.5, num_merges: 10, ..config() };
        let vocab = train(&[en, es], None, &cfg, &mut |_, _| Ok(())).unwrap();
        assert!(vocab.merges.len() <= 2);
    }
}
