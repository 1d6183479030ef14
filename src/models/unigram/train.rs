//! Unigram training (SentencePiece's recipe) on a table of words with counts.
//!
//! 1. The alphabet: characters by frequency until `character_coverage` of the text is covered;
//!    the rest are unknown.
//! 2. Seeds (`seeds.rs`): every character and the best substrings by frequency × length.
//! 3. EM: the expected count of each piece over every word's lattice (forward–backward,
//!    weighted by the word's count; the words are shared out among threads), then each piece's
//!    score becomes digamma(count) − digamma(total) — a Bayesian update that discounts rare
//!    pieces more than log(count/total) would; pieces expected less than half a time go.
//! 4. Pruning: each piece's loss is how much the corpus likelihood drops if every use of it is
//!    replaced by its next-best cut; the pieces that cost least go, down to `shrinking_factor`
//!    of the vocabulary per round, until it is within 10% of the target. Then EM again.
//! 5. The result: the alphabet, then the highest-scoring pieces up to the size asked for.

use super::lattice::{self, Pieces};
use super::seeds::{seed_pieces, PieceRules};
use crate::error::{Error, Result};
use crate::io::count::WordCounts;
use crate::util::trie::CharTrie;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

#[derive(Debug, Clone)]
pub struct UnigramTrainConfig {
    /// Ordinary pieces wanted (the caller's vocabulary size less its special and byte tokens).
    pub pieces: usize,
    pub character_coverage: f64,
    pub max_piece_length: usize,
    pub seed_size: usize,
    pub shrinking_factor: f64,
    pub em_iterations: usize,
    pub whitespace_as_suffix: bool,
    pub split_digits: bool,
}

impl Default for UnigramTrainConfig {
    fn default() -> Self {
        UnigramTrainConfig {
            pieces: 8000,
            character_coverage: 0.9995,
            max_piece_length: 16,
            seed_size: 1_000_000,
            shrinking_factor: 0.75,
            em_iterations: 2,
            whitespace_as_suffix: false,
            split_digits: false,
        }
    }
}

/// Where training is: the vocabulary's size now and the size it is heading for.
#[derive(Debug, Clone, Copy)]
pub struct UnigramProgress {
    pub pieces: u64,
    pub target: u64,
}

/// SentencePiece's constants: a vocabulary within this factor of the target stops pruning;
/// pieces expected less often than the threshold are dropped; required characters pruned away
/// come back just below the lowest score, this far apart.
const DESIRED_VOCAB_FACTOR: f64 = 1.1;
const EXPECTED_FREQUENCY_THRESHOLD: f64 = 0.5;
const MIN_SCORE_PENALTY_DELTA: f64 = 0.0001;

/// The pieces being trained: their spellings, scores, and the trie the lattices use. Unknown
/// characters get id `u32::MAX`, so no piece is credited for them.
struct Working {
    pieces: Vec<(String, f64)>,
    trie: CharTrie,
    unk_score: f32,
}

impl Working {
    fn new(pieces: Vec<(String, f64)>) -> Self {
        let trie = CharTrie::new(pieces.iter().enumerate().map(|(i, (p, _))| (p.as_str(), i as u32)));
        let min = pieces.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let unk_score = if min.is_finite() { (min - super::UNKNOWN_PENALTY as f64) as f32 } else { -10.0 };
        Working { pieces, trie, unk_score }
    }
}

impl Pieces for Working {
    fn trie(&self) -> &CharTrie {
        &self.trie
    }
    #[inline]
    fn lattice_score(&self, id: u32) -> f64 {
        self.pieces[id as usize].1
    }
    fn unk_id(&self) -> u32 {
        u32::MAX
    }
    fn unk_score(&self) -> f64 {
        self.unk_score as f64
    }
}

/// Trains on `counts` (words already normalized and cut at `▁`). Returns the ordinary pieces
/// with their scores, best first (ties by spelling), as a SentencePiece model lists them.
pub fn train(
    counts: &WordCounts,
    config: &UnigramTrainConfig,
    report: &mut dyn FnMut(UnigramProgress) -> Result<()>,
) -> Result<Vec<(String, f32)>> {
    counts.check()?;
    if config.pieces == 0 {
        return Err(Error::config("a Unigram vocabulary needs room for at least one piece"));
    }
    if !(config.character_coverage > 0.0 && config.character_coverage <= 1.0) {
        return Err(Error::config(format!("character_coverage must be in (0, 1], got {}", config.character_coverage)));
    }
    if !(config.shrinking_factor > 0.0 && config.shrinking_factor < 1.0) {
        return Err(Error::config(format!("shrinking_factor must be in (0, 1), got {}", config.shrinking_factor)));
    }
    if config.max_piece_length == 0 || config.em_iterations == 0 {
        return Err(Error::config("max_piece_length and em_iterations must be at least 1"));
    }
    // Words by count (then spelling): deterministic whatever order the table holds them in.
    let mut words: Vec<(&str, u64)> = counts
        .iter()
        .filter_map(|(w, c)| std::str::from_utf8(w).ok().filter(|w| !w.is_empty()).map(|w| (w, c)))
        .collect();
    words.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if words.is_empty() {
        return Err(Error::EmptyCorpus("no words to train on".into()));
    }

    let alphabet = required_chars(&words, config.character_coverage);
    if alphabet.len() > config.pieces {
        return Err(Error::config(format!(
            "the vocabulary has room for {} pieces, but covering {} of the text takes {} characters; \
             raise vocab_size or lower character_coverage",
            config.pieces,
            config.character_coverage,
            alphabet.len()
        )));
    }
    let known: FxHashSet<char> = alphabet.iter().map(|&(c, _)| c).collect();
    let rules = PieceRules {
        max_chars: config.max_piece_length,
        whitespace_as_suffix: config.whitespace_as_suffix,
        split_digits: config.split_digits,
    };
    let seeds = seed_pieces(&words, &|c| known.contains(&c), &rules, config.seed_size);
    let total: f64 = seeds.iter().map(|s| s.1).sum();
    let mut model = Working::new(seeds.into_iter().map(|(p, f)| (p, (f / total).ln())).collect());

    let target = config.pieces;
    let desired = ((target as f64) * DESIRED_VOCAB_FACTOR) as usize;
    loop {
        report(UnigramProgress { pieces: model.pieces.len() as u64, target: target as u64 })?;
        for _ in 0..config.em_iterations {
            let expected = e_step(&model, &words);
            model = Working::new(m_step(&model, &expected));
        }
        if model.pieces.len() <= desired {
            break;
        }
        model = Working::new(prune(&model, &words, desired, config.shrinking_factor));
    }
    report(UnigramProgress { pieces: target as u64, target: target as u64 })?;
    Ok(finalize(&model, &alphabet, target))
}

/// The characters that cover `coverage` of the text, most frequent first (ties: code point).
fn required_chars(words: &[(&str, u64)], coverage: f64) -> Vec<(char, u64)> {
    let mut freq: FxHashMap<char, u64> = FxHashMap::default();
    for (w, c) in words {
        for ch in w.chars() {
            *freq.entry(ch).or_default() += c;
        }
    }
    let total: u64 = freq.values().sum();
    let mut chars: Vec<(char, u64)> = freq.into_iter().collect();
    chars.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut kept = Vec::new();
    let mut covered = 0u64;
    for (c, f) in chars {
        if covered as f64 / total as f64 >= coverage {
            break;
        }
        covered += f;
        kept.push((c, f));
    }
    kept
}

/// Calls `f` with each thread's share of `words` and collects the results.
fn share_out<T: Send>(words: &[(&str, u64)], f: impl Fn(&[(&str, u64)]) -> T + Sync) -> Vec<T> {
    let threads = crate::util::threads::pool().current_num_threads().max(1);
    // More chunks than threads: words are sorted by count, so long rare words bunch at the end.
    let chunk = words.len().div_ceil(threads * 8).max(256);
    crate::util::threads::install(|| words.par_chunks(chunk).map(&f).collect())
}

/// The expected count of every piece over all words (E-step).
fn e_step(model: &Working, words: &[(&str, u64)]) -> Vec<f64> {
    let n = model.pieces.len();
    let parts = share_out(words, |chunk| {
        let mut expected = vec![0.0f64; n];
        let mut scratch = lattice::Scratch::default();
        for &(word, count) in chunk {
            lattice::expected_counts(model, word, count as f64, &mut scratch, &mut expected);
        }
        expected
    });
    let mut total = vec![0.0f64; n];
    for part in parts {
        for (t, p) in total.iter_mut().zip(part) {
            *t += p;
        }
    }
    total
}

/// The digamma function: shifted up past 7 with ψ(x) = ψ(x + 1) − 1/x, then its asymptotic
/// series (as SentencePiece computes it).
fn digamma(mut x: f64) -> f64 {
    let mut result = 0.0;
    while x < 7.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    x -= 0.5;
    let xx = 1.0 / x;
    let xx2 = xx * xx;
    let xx4 = xx2 * xx2;
    result + x.ln() + xx2 / 24.0 - 7.0 / 960.0 * xx4 + 31.0 / 8064.0 * xx4 * xx2 - 127.0 / 30720.0 * xx4 * xx4
}

/// New scores from expected counts (M-step); pieces expected less than half a time go.
fn m_step(model: &Working, expected: &[f64]) -> Vec<(String, f64)> {
    let kept: Vec<(&str, f64)> = model
        .pieces
        .iter()
        .zip(expected)
        .filter(|(_, &c)| c >= EXPECTED_FREQUENCY_THRESHOLD)
        .map(|((p, _), &c)| (p.as_str(), c))
        .collect();
    let total: f64 = kept.iter().map(|k| k.1).sum();
    let log_total = digamma(total);
    kept.into_iter().map(|(p, c)| (p.to_string(), digamma(c) - log_total)).collect()
}

/// Drops the pieces whose loss is smallest, down to max(`desired`, `shrinking_factor` × size).
fn prune(model: &Working, words: &[(&str, u64)], desired: usize, shrinking_factor: f64) -> Vec<(String, f64)> {
    let n = model.pieces.len();
    // Each piece alone: if its best cut is itself, the second best is what replaces it; if its
    // best cut is something else, the piece is never used and goes.
    let ids: Vec<u32> = (0..n as u32).collect();
    let alternatives: Vec<Option<Vec<u32>>> = crate::util::threads::install(|| {
        ids.par_iter()
            .map(|&i| {
                let best = lattice::nbest(model, &model.pieces[i as usize].0, 2);
                match best.as_slice() {
                    [(only, _)] if only.len() == 1 => Some(Vec::new()),
                    [(first, _), (second, _)] if first.len() == 1 => Some(second.iter().map(|c| c.2).collect()),
                    _ => None,
                }
            })
            .collect()
    });
    // Viterbi over the corpus: how often each piece is used, and in how much of the corpus.
    let parts = share_out(words, |chunk| {
        let mut freq = vec![0.0f64; n];
        let mut reach = vec![0.0f64; n];
        let mut path = Vec::new();
        let mut seen = FxHashSet::default();
        for &(word, count) in chunk {
            lattice::viterbi(model, word, 0.0, &mut path);
            seen.clear();
            for &(_, _, id) in &path {
                if let Some(f) = freq.get_mut(id as usize) {
                    *f += count as f64;
                    if seen.insert(id) {
                        reach[id as usize] += count as f64;
                    }
                }
            }
        }
        (freq, reach)
    });
    let mut freq = vec![0.0f64; n];
    let mut reach = vec![0.0f64; n];
    for (f, r) in parts {
        for i in 0..n {
            freq[i] += f[i];
            reach[i] += r[i];
        }
    }
    let words_total: f64 = words.iter().map(|w| w.1 as f64).sum();
    let total: f64 = freq.iter().sum();
    let log_total = total.ln();
    let mut kept: Vec<usize> = Vec::new();
    let mut candidates: Vec<(usize, f64)> = Vec::new();
    for i in 0..n {
        let Some(alternative) = &alternatives[i] else { continue };
        if freq[i] == 0.0 {
            continue;
        }
        if alternative.is_empty() {
            kept.push(i);
            continue;
        }
        // Every use of piece i replaced by its alternative: the alternative's pieces gain
        // freq[i] uses each, the total gains freq[i] × (pieces in the alternative − 1).
        let logprob_piece = freq[i].ln() - log_total;
        let log_total_alt = (total + freq[i] * (alternative.len() as f64 - 1.0)).ln();
        let logprob_alt: f64 = alternative
            .iter()
            .map(|&a| (freq.get(a as usize).copied().unwrap_or(0.0) + freq[i]).ln() - log_total_alt)
            .sum();
        let share = reach[i] / words_total;
        candidates.push((i, share * (logprob_piece - logprob_alt)));
    }
    let size = desired.max((shrinking_factor * n as f64) as usize);
    candidates.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for (i, _) in candidates {
        if kept.len() >= size {
            break;
        }
        kept.push(i);
    }
    kept.sort_unstable();
    kept.into_iter().map(|i| model.pieces[i].clone()).collect()
}

/// The alphabet (every required character, scored just below the rest if it was pruned away),
/// then the best other pieces up to `target`; sorted by score, then spelling.
fn finalize(model: &Working, alphabet: &[(char, u64)], target: usize) -> Vec<(String, f32)> {
    let scores: FxHashMap<&str, f64> = model.pieces.iter().map(|(p, s)| (p.as_str(), *s)).collect();
    let min = model.pieces.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let mut chosen: FxHashMap<String, f64> = FxHashMap::default();
    let mut penalty = 0.0;
    for &(c, _) in alphabet {
        let piece = c.to_string();
        let score = match scores.get(piece.as_str()) {
            Some(&s) => s,
            None => {
                penalty += MIN_SCORE_PENALTY_DELTA;
                min - penalty
            }
        };
        chosen.insert(piece, score);
    }
    let mut rest: Vec<&(String, f64)> = model.pieces.iter().filter(|(p, _)| !chosen.contains_key(p)).collect();
    rest.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for (p, s) in rest {
        if chosen.len() >= target {
            break;
        }
        chosen.insert(p.clone(), *s);
    }
    let mut out: Vec<(String, f32)> = chosen.into_iter().map(|(p, s)| (p, s as f32)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(words: &[(&str, u64)]) -> WordCounts {
        let mut c = WordCounts::default();
        for (w, n) in words {
            c.add(w.as_bytes(), *n);
        }
        c
    }

    #[test]
    fn learns_the_frequent_words_and_keeps_the_alphabet() {
        let table = counts(&[
            ("▁the", 500),
            ("▁of", 300),
            ("▁and", 280),
            ("▁there", 60),
            ("▁then", 50),
            ("▁other", 40),
            ("▁theory", 5),
            ("▁thorn", 3),
            ("▁nothing", 9),
        ]);
        let config = UnigramTrainConfig { pieces: 30, ..UnigramTrainConfig::default() };
        let pieces = train(&table, &config, &mut |_| Ok(())).unwrap();
        let spelled: Vec<&str> = pieces.iter().map(|p| p.0.as_str()).collect();
        assert!(pieces.len() <= 30);
        assert!(spelled.contains(&"▁the"), "{spelled:?}");
        for c in "▁theofandrnyig".chars() {
            assert!(spelled.contains(&c.to_string().as_str()), "{c} missing from {spelled:?}");
        }
        assert!(pieces.windows(2).all(|w| w[0].1 >= w[1].1), "best first");
        assert_eq!(pieces, train(&table, &config, &mut |_| Ok(())).unwrap(), "deterministic");
    }

    #[test]
    fn digamma_matches_known_values() {
        assert!((digamma(1.0) + 0.5772156649).abs() < 1e-7);
        assert!((digamma(10.0) - 2.2517525891).abs() < 1e-7);
    }

    #[test]
    fn bad_settings_are_errors() {
        let table = counts(&[("▁ab", 3)]);
        let small = UnigramTrainConfig { pieces: 2, ..UnigramTrainConfig::default() };
        assert!(train(&table, &small, &mut |_| Ok(())).is_err(), "three characters need three pieces");
        let bad = UnigramTrainConfig { shrinking_factor: 1.5, ..UnigramTrainConfig::default() };
        assert!(train(&table, &bad, &mut |_| Ok(())).is_err());
        assert!(train(&WordCounts::default(), &UnigramTrainConfig::default(), &mut |_| Ok(())).is_err());
    }
}
