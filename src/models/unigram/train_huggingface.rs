//! Hugging Face tokenizers' Unigram trainer (`trainers.UnigramTrainer`), which
//! `tokenmill.tokenizers` runs so that a vocabulary trained through it is the one tokenizers
//! trains. It descends from SentencePiece's (`train.rs`) but differs at nearly every step, all
//! in f64:
//!
//! - words are the tokenizer's own pieces, with no character coverage and no piece rules;
//!   seeds (`seeds::huggingface_seed_pieces`) count occurrences among distinct words;
//! - a placeholder piece with a NaN score sits at id 0 through training; unknown characters are
//!   lattice nodes with its id, scoring 10 below the lowest score;
//! - pruning keeps pieces no other cut replaces, scores each other piece's loss with the
//!   whole vocabulary's size in the alternative's normalizer (as tokenizers computes it), and
//!   keeps the survivors in their old order;
//! - the final vocabulary takes every character seen (missing ones at the lowest score, 1e-4
//!   apart), then pieces in model order, sorted by score, behind the special tokens.
//!
//! tokenizers walks words and its set of characters in hash order, which changes from run to
//! run (so do the last bits of its sums, and the order of pieces whose scores nearly tie);
//! here words come sorted and characters by code point, so a run repeats.

use super::seeds::huggingface_seed_pieces;
use crate::error::{Error, Result};
use crate::util::trie::Trie;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// `trainers.UnigramTrainer`'s settings.
#[derive(Debug, Clone)]
pub struct HfUnigramConfig {
    pub vocab_size: usize,
    pub special_tokens: Vec<String>,
    pub unk_token: Option<String>,
    pub shrinking_factor: f64,
    pub max_piece_length: usize,
    pub n_sub_iterations: usize,
    /// Characters kept in the vocabulary whether seen or not.
    pub initial_alphabet: Vec<char>,
    pub seed_size: usize,
}

/// A trained vocabulary as tokenizers lists it: the special tokens first (the unknown token in
/// front when it is not one of them), then the pieces with their scores; and the unknown
/// token's id.
#[derive(Debug, Clone, PartialEq)]
pub struct HfUnigramVocab {
    pub pieces: Vec<(String, f64)>,
    pub unk_id: Option<u32>,
}

/// The placeholder piece at id 0 during training (never matched in practice; its id is the
/// unknown nodes').
const PLACEHOLDER: &str = "<UNK>";
const UNKNOWN_PENALTY: f64 = 10.0;
/// Words per unit of work in the E-step; the units' sums are added in order, so the result
/// does not depend on the number of threads.
const WORDS_PER_UNIT: usize = 512;

/// Trains on `words` (each distinct, with its count) and reports (pieces now, target) after
/// each round of pruning.
pub fn train(
    words: &[(String, u64)],
    config: &HfUnigramConfig,
    progress: &mut dyn FnMut(usize, usize) -> Result<()>,
) -> Result<HfUnigramVocab> {
    let mut words: Vec<(&str, u64)> =
        words.iter().filter(|(w, _)| !w.is_empty()).map(|(w, n)| (w.as_str(), *n)).collect();
    words.sort_unstable();
    let mut required: FxHashSet<char> = words.iter().flat_map(|(w, _)| w.chars()).collect();
    required.extend(config.initial_alphabet.iter().copied());
    if required.len() > config.vocab_size {
        return Err(Error::config(format!(
            "the vocabulary is not large enough to contain all {} characters (vocab_size {})",
            required.len(),
            config.vocab_size
        )));
    }
    let desired = config.vocab_size * 11 / 10;
    let mut pieces = vec![(PLACEHOLDER.to_string(), f64::NAN)];
    pieces.extend(huggingface_seed_pieces(&words, config.max_piece_length, config.seed_size));
    let mut model = Model::new(pieces);
    loop {
        for _ in 0..config.n_sub_iterations {
            let expected = e_step(&model, &words)?;
            model = Model::new(m_step(&model.pieces, &expected));
        }
        progress(model.pieces.len(), desired)?;
        if model.pieces.len() <= desired {
            break;
        }
        model = Model::new(prune(&model, &words, config.vocab_size, config.shrinking_factor)?);
    }
    let mut order: Vec<char> = required.into_iter().collect();
    order.sort_unstable();
    Ok(finalize(&model, &order, config))
}

/// The pieces as the lattice sees them.
struct Model {
    pieces: Vec<(String, f64)>,
    trie: Trie,
    /// The lowest score (the placeholder's NaN left out).
    min_score: f64,
}

impl Model {
    fn new(pieces: Vec<(String, f64)>) -> Model {
        // A text spelled twice is its last id, as in tokenizers' map from token to id.
        // The placeholder is left out: a word holding its text is cut as any other (tokenizers
        // matches it, and its NaN score stops training).
        let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
        for (i, (p, _)) in pieces.iter().enumerate().skip(1) {
            ids.insert(p, i as u32);
        }
        let trie = Trie::new(ids.iter().map(|(p, &id)| (p.as_bytes(), id)));
        let min_score = pieces.iter().map(|p| p.1).fold(f64::INFINITY, |m, s| if s < m { s } else { m });
        Model { pieces, trie, min_score }
    }

    fn unk_score(&self) -> f64 {
        self.min_score - UNKNOWN_PENALTY
    }
}

/// A word's lattice: node 0 begins it, node 1 ends it; the others are pieces (or unknown
/// characters, id 0) by start, shortest first.
struct Lattice {
    ids: Vec<u32>,
    scores: Vec<f64>,
    /// Nodes by the character position they start at, and by the one they end at.
    begin: Vec<Vec<u32>>,
    end: Vec<Vec<u32>>,
    /// Where each node starts and ends (characters).
    spans: Vec<(u32, u32)>,
}

const BOS: u32 = 0;
const EOS: u32 = 1;

impl Lattice {
    fn new(word: &str, model: &Model) -> Lattice {
        let offsets: Vec<usize> = word.char_indices().map(|(i, _)| i).chain([word.len()]).collect();
        let n = offsets.len() - 1;
        let mut char_at = vec![0u32; word.len() + 1];
        for (k, &at) in offsets.iter().enumerate() {
            char_at[at] = k as u32;
        }
        let mut lattice = Lattice {
            ids: vec![u32::MAX, u32::MAX],
            scores: vec![0.0, 0.0],
            begin: vec![Vec::new(); n + 1],
            end: vec![Vec::new(); n + 1],
            spans: vec![(0, 0), (n as u32, n as u32)],
        };
        lattice.begin[n].push(EOS);
        lattice.end[0].push(BOS);
        let unk_score = model.unk_score();
        for (i, &from) in offsets[..n].iter().enumerate() {
            let mut single = false;
            model.trie.for_each_prefix(&word.as_bytes()[from..], |len, id| {
                let to = char_at[from + len];
                single |= to as usize == i + 1;
                lattice.push(i as u32, to, id, model.pieces[id as usize].1);
            });
            if !single {
                lattice.push(i as u32, i as u32 + 1, 0, unk_score);
            }
        }
        lattice
    }

    fn push(&mut self, from: u32, to: u32, id: u32, score: f64) {
        let node = self.ids.len() as u32;
        self.ids.push(id);
        self.scores.push(score);
        self.spans.push((from, to));
        self.begin[from as usize].push(node);
        self.end[to as usize].push(node);
    }

    /// The best cut's nodes (the first of equal scores among the ways into a node), leaving
    /// out `skip`; empty when there is none.
    fn viterbi(&self, skip: Option<u32>) -> Vec<u32> {
        let n_nodes = self.ids.len();
        let mut best = vec![0.0f64; n_nodes];
        let mut back = vec![u32::MAX; n_nodes];
        let usable = |node: &&u32| Some(**node) != skip;
        for p in 0..self.begin.len() {
            for &r in self.begin[p].iter().filter(usable) {
                let mut chosen: Option<(u32, f64)> = None;
                for &l in self.end[p].iter().filter(usable) {
                    if l != BOS && back[l as usize] == u32::MAX {
                        continue; // not reached
                    }
                    let s = best[l as usize] + self.scores[r as usize];
                    if chosen.is_none_or(|(_, b)| s > b) {
                        chosen = Some((l, s));
                    }
                }
                if let Some((l, s)) = chosen {
                    back[r as usize] = l;
                    best[r as usize] = s;
                }
            }
        }
        let mut out = Vec::new();
        let mut node = back[EOS as usize];
        if node == u32::MAX {
            return out;
        }
        while node != BOS {
            out.push(node);
            node = back[node as usize];
        }
        out.reverse();
        out
    }

    /// Adds `freq` × each node's posterior to `expected` (by id); returns `freq` × log Z.
    fn add_marginals(&self, freq: f64, expected: &mut [f64]) -> f64 {
        let n_nodes = self.ids.len();
        let mut alpha = vec![0.0f64; n_nodes];
        let mut beta = vec![0.0f64; n_nodes];
        for p in 0..self.begin.len() {
            let into = log_sum(self.end[p].iter().map(|&l| self.scores[l as usize] + alpha[l as usize]));
            if let Some(a) = into {
                for &r in &self.begin[p] {
                    alpha[r as usize] = a;
                }
            }
        }
        for p in (0..self.begin.len()).rev() {
            let out = log_sum(self.begin[p].iter().map(|&r| self.scores[r as usize] + beta[r as usize]));
            if let Some(b) = out {
                for &l in &self.end[p] {
                    beta[l as usize] = b;
                }
            }
        }
        let z = alpha[EOS as usize];
        for p in 0..self.begin.len() - 1 {
            for &node in &self.begin[p] {
                let k = node as usize;
                expected[self.ids[k] as usize] += freq * (alpha[k] + self.scores[k] + beta[k] - z).exp();
            }
        }
        freq * z
    }
}

/// log Σ exp, folded left to right as tokenizers folds it (a difference past 50 adds nothing);
/// None for no terms.
fn log_sum(terms: impl Iterator<Item = f64>) -> Option<f64> {
    terms.reduce(|x, y| {
        let (low, high) = if x > y { (y, x) } else { (x, y) };
        if high > low + 50.0 {
            high
        } else {
            high + ((low - high).exp() + 1.0).ln()
        }
    })
}

/// Each piece's expected count over the words.
fn e_step(model: &Model, words: &[(&str, u64)]) -> Result<Vec<f64>> {
    let n = model.pieces.len();
    let units: Vec<Result<Vec<f64>>> = words
        .par_chunks(WORDS_PER_UNIT)
        .map(|unit| {
            let mut expected = vec![0.0; n];
            for &(word, count) in unit {
                let z = Lattice::new(word, model).add_marginals(count as f64, &mut expected);
                if z.is_nan() {
                    return Err(Error::config(format!(
                        "the likelihood of {:?} is not a number (tokenizers stops here too)",
                        word.chars().take(40).collect::<String>()
                    )));
                }
            }
            Ok(expected)
        })
        .collect();
    let mut total = vec![0.0; n];
    for unit in units {
        for (t, e) in total.iter_mut().zip(unit?) {
            *t += e;
        }
    }
    Ok(total)
}

/// New scores from expected counts: pieces expected under half a time go; the others score
/// digamma(count) − digamma(total). The placeholder stays.
fn m_step(pieces: &[(String, f64)], expected: &[f64]) -> Vec<(String, f64)> {
    let mut kept = vec![(pieces[0].0.clone(), f64::NAN)];
    let mut sum = 0.0;
    for ((piece, _), &freq) in pieces.iter().zip(expected).skip(1) {
        if freq < 0.5 {
            continue;
        }
        kept.push((piece.clone(), freq));
        sum += freq;
    }
    let log_sum = digamma(sum);
    let placeholder = kept.remove(0);
    std::iter::once(placeholder).chain(kept.into_iter().map(|(p, c)| (p, digamma(c) - log_sum))).collect()
}

/// ψ(x), by recurrence up to 7 and the asymptotic series, summed as tokenizers sums it: the
/// series first, then added to the recurrence's part (`train.rs` adds term by term, as
/// SentencePiece does; the last bits differ, and each trainer follows its peer).
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
    result +=
        x.ln() + (1.0 / 24.0) * xx2 - 7.0 / 960.0 * xx4 + (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4;
    result
}

/// The pieces after one round of pruning: those no other cut can replace stay, then the others
/// by how much the words' likelihood would lose without them, down to `shrinking_factor` of
/// the vocabulary (never under 1.1 × `vocab_size`).
fn prune(model: &Model, words: &[(&str, u64)], vocab_size: usize, shrinking_factor: f64) -> Result<Vec<(String, f64)>> {
    let pieces = &model.pieces;
    let n = pieces.len();
    // For each piece: whether it is kept whatever its loss, and the ids of its second-best cut
    // when the piece itself is its best.
    let cuts: Vec<(bool, Vec<u32>)> = pieces
        .par_iter()
        .enumerate()
        .map(|(i, (piece, _))| {
            if i == 0 {
                return (false, Vec::new());
            }
            let lattice = Lattice::new(piece, model);
            let best = lattice.viterbi(None);
            if best.len() != 1 {
                return (false, Vec::new());
            }
            // The piece alone: its one node across the lattice; the runner-up is the best cut
            // without it (none for a piece of one character, whose only cut it is).
            if lattice.spans[best[0] as usize].1 - lattice.spans[best[0] as usize].0 <= 1 {
                return (true, Vec::new());
            }
            let second = lattice.viterbi(Some(best[0]));
            (true, second.iter().map(|&node| lattice.ids[node as usize]).collect())
        })
        .collect();
    // How often the words' best cuts use each piece (unknown characters count for id 0).
    let used: Vec<Vec<u32>> = words
        .par_iter()
        .map(|(word, _)| {
            let lattice = Lattice::new(word, model);
            lattice.viterbi(None).iter().map(|&node| lattice.ids[node as usize]).collect()
        })
        .collect();
    let mut freq = vec![0.0f64; n];
    let mut words_total = 0.0f64;
    for ((_, count), ids) in words.iter().zip(&used) {
        words_total += *count as f64;
        for &id in ids {
            freq[id as usize] += *count as f64;
        }
    }
    let total: f64 = freq.iter().sum();
    let log_total = total.ln();
    let mut kept = vec![pieces[0].clone()];
    let mut candidates: Vec<(usize, f64)> = Vec::new();
    for (i, (piece, score)) in pieces.iter().enumerate().skip(1) {
        let (always_keep, alternatives) = &cuts[i];
        if freq[i] == 0.0 && !always_keep {
            continue;
        }
        if alternatives.is_empty() {
            kept.push((piece.clone(), *score));
            continue;
        }
        let share = freq[i] / words_total;
        if share == 0.0 || share.is_nan() {
            continue; // kept for its alternative, yet never used: it goes
        }
        let log_prob = freq[i].ln() - log_total;
        // tokenizers' normalizer here grows by freq × (the number of pieces − 1), not by
        // freq × (the alternative's length − 1): kept, as the vocabulary it trains follows it.
        let log_total_alt = (total + freq[i] * (n as f64 - 1.0)).ln();
        let log_prob_alt: f64 = alternatives.iter().map(|&a| (freq[a as usize] + freq[i]).ln() - log_total_alt).sum();
        let loss = share * (log_prob - log_prob_alt);
        if loss.is_nan() {
            return Err(Error::config(format!("the loss of piece {piece:?} is not a number")));
        }
        candidates.push((i, loss));
    }
    let desired = vocab_size * 11 / 10;
    let pruned = desired.max((n as f64 * shrinking_factor) as usize);
    candidates.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    for (i, _) in candidates {
        if kept.len() == pruned {
            break;
        }
        kept.push(pieces[i].clone());
    }
    Ok(kept)
}

/// The final vocabulary: every required character (those the model lacks at its lowest score,
/// each next one 1e-4 higher), then the model's pieces in order up to the size left after the
/// special tokens, sorted by score; the special tokens (and the unknown token) in front.
fn finalize(model: &Model, required: &[char], config: &HfUnigramConfig) -> HfUnigramVocab {
    let existing: FxHashMap<&str, f64> = model.pieces.iter().map(|(p, s)| (p.as_str(), *s)).collect();
    let mut inserted: FxHashSet<String> = FxHashSet::from_iter([PLACEHOLDER.to_string()]);
    let mut pieces: Vec<(String, f64)> = Vec::new();
    let mut penalty = 0.0;
    for c in required {
        let c = c.to_string();
        match existing.get(c.as_str()) {
            Some(&score) => pieces.push((c.clone(), score)),
            None => {
                pieces.push((c.clone(), model.min_score + penalty));
                penalty += 0.0001;
            }
        }
        inserted.insert(c);
    }
    let specials = &config.special_tokens;
    let (unk_id, add_unk) = match &config.unk_token {
        Some(unk) => match specials.iter().position(|s| s == unk) {
            Some(at) => (Some(at as u32), false),
            None => (Some(0), true),
        },
        None => (None, false),
    };
    let limit = config.vocab_size as i64 - specials.len() as i64 - add_unk as i64;
    for (piece, score) in &model.pieces {
        if !inserted.insert(piece.clone()) {
            continue;
        }
        pieces.push((piece.clone(), if score.is_nan() { 0.0 } else { *score }));
        if pieces.len() as i64 == limit {
            break;
        }
    }
    pieces.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    let mut head: Vec<(String, f64)> = Vec::new();
    if add_unk {
        head.push((config.unk_token.clone().expect("add_unk only with one"), 0.0));
    }
    head.extend(specials.iter().map(|s| (s.clone(), 0.0)));
    head.extend(pieces);
    HfUnigramVocab { pieces: head, unk_id }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vocab_size: usize) -> HfUnigramConfig {
        HfUnigramConfig {
            vocab_size,
            special_tokens: vec!["<pad>".into()],
            unk_token: Some("<unk>".into()),
            shrinking_factor: 0.75,
            max_piece_length: 16,
            n_sub_iterations: 2,
            initial_alphabet: Vec::new(),
            seed_size: 1_000_000,
        }
    }

    #[test]
    fn digamma_matches_known_values() {
        // ψ(1) = −γ, ψ(10) = H(9) − γ (the series is good to about 1e-10 at 7).
        let gamma = 0.577_215_664_901_532_9;
        assert!((digamma(1.0) + gamma).abs() < 1e-9);
        let h9: f64 = (1..10).map(|k| 1.0 / k as f64).sum();
        assert!((digamma(10.0) - (h9 - gamma)).abs() < 1e-11);
    }

    #[test]
    fn a_trained_vocabulary_has_every_character_and_the_layout() {
        let words: Vec<(String, u64)> = [("hello", 10), ("world", 8), ("help", 5), ("held", 3), ("word", 4)]
            .iter()
            .map(|(w, n)| (w.to_string(), *n))
            .collect();
        let vocab = train(&words, &config(20), &mut |_, _| Ok(())).unwrap();
        assert_eq!(vocab.unk_id, Some(0));
        assert_eq!(vocab.pieces[0].0, "<unk>");
        assert_eq!(vocab.pieces[1].0, "<pad>");
        for c in "helowrdp".chars() {
            assert!(vocab.pieces.iter().any(|(p, _)| *p == c.to_string()), "{c}");
        }
        let scores: Vec<f64> = vocab.pieces[2..].iter().map(|p| p.1).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "sorted by score");
        assert!(vocab.pieces.len() <= 20);
        // A run repeats.
        assert_eq!(train(&words, &config(20), &mut |_, _| Ok(())).unwrap(), vocab);
    }

    #[test]
    fn too_many_characters_for_the_vocabulary_is_an_error() {
        let words = vec![("abcdefghij".to_string(), 1)];
        assert!(train(&words, &config(5), &mut |_, _| Ok(())).is_err());
    }
}
