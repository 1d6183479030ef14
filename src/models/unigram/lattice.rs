//! The lattice of a piece of text: a node for every vocabulary piece that occurs in it (and an
//! unknown node for each character no one-character piece covers), joined where one ends and
//! the next starts. Viterbi walks it once, left to right, in f32 exactly as SentencePiece
//! adds scores, so ties fall the same way; n-best, sampling and the training statistics walk
//! the same edges.

use super::utf8_len;
use crate::util::trie::{CharTrie, Trie, Unit};

/// What the lattice needs of a model: its pieces, their scores, and the unknown piece. The
/// encoder's `Unigram` and the trainer's working model both are one.
pub trait Pieces {
    fn trie(&self) -> &CharTrie;
    fn lattice_score(&self, id: u32) -> f64;
    fn unk_id(&self) -> u32;
    fn unk_score(&self) -> f64;
}

/// One edge of the lattice: the piece `id` covers `start..end` (byte offsets) with `score`.
#[derive(Debug, Clone, Copy)]
pub struct Edge {
    pub start: u32,
    pub end: u32,
    pub id: u32,
    pub score: f64,
}

/// Calls `edge` for every edge starting at each character of `text`, in order of start, and
/// within a start shortest first; the unknown edge (if any) comes after a start's pieces.
#[inline]
pub(crate) fn for_each_edge(model: &impl Pieces, text: &str, edge: impl FnMut(Edge)) {
    // The trie's width is chosen here, once per text: the loop below is built for each.
    match model.trie() {
        CharTrie::Narrow(trie) => edges_in(model, trie, text, edge),
        CharTrie::Wide(trie) => edges_in(model, trie, text, edge),
    }
}

#[inline(always)]
fn edges_in<U: Unit>(model: &impl Pieces, trie: &Trie<U>, text: &str, mut edge: impl FnMut(Edge)) {
    let bytes = text.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let char_len = utf8_len(bytes[start]);
        let mut single = false;
        if trie.has_scores() {
            // The encoder's scores ride in the trie (f32, as SentencePiece's are).
            trie.for_each_scored_prefix(&bytes[start..], |len, id, score| {
                single |= len == char_len;
                edge(Edge { start: start as u32, end: (start + len) as u32, id, score: score as f64 });
            });
        } else {
            trie.for_each_prefix(&bytes[start..], |len, id| {
                single |= len == char_len;
                edge(Edge { start: start as u32, end: (start + len) as u32, id, score: model.lattice_score(id) });
            });
        }
        if !single {
            let end = (start + char_len) as u32;
            edge(Edge { start: start as u32, end, id: model.unk_id(), score: model.unk_score() });
        }
        start += char_len;
    }
}

thread_local! {
    /// Viterbi's table, reused from call to call: encoding calls it once per word.
    static BEST: std::cell::RefCell<Vec<(f32, u32, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The best cut of `text` as (start, end, id) from the end backwards, the path's score starting
/// from `base`; returns the score at the end. Sums are f32, each the running best plus a
/// piece's score, and a later start replaces the best way into a position only if strictly
/// higher — as SentencePiece computes over the whole text. Rounding depends on the running
/// score, so a caller that cuts the text into words carries `base` from one word to the next
/// to choose between near-equal cuts exactly as one lattice over the whole text does.
pub fn viterbi(model: &impl Pieces, text: &str, base: f32, path: &mut Vec<(u32, u32, u32)>) -> f32 {
    path.clear();
    if text.is_empty() {
        return base;
    }
    const UNSET: u32 = u32::MAX;
    BEST.with_borrow_mut(|best| {
        // Per byte position: (best score into it, where that piece starts, its id).
        best.clear();
        best.resize(text.len() + 1, (0.0, UNSET, 0));
        best[0] = (base, 0, 0);
        let mut reset = Reset::new(model);
        for_each_edge(model, text, |e| {
            reset.at(best, e);
            let score = e.score as f32;
            let candidate = best[e.start as usize].0 + score;
            let to = &mut best[e.end as usize];
            if to.1 == UNSET || candidate > to.0 {
                *to = (candidate, e.start, e.id);
            }
        });
        backtrack(best, path);
        best[text.len()].0
    })
}

/// The best cut of `text` as Hugging Face's Unigram makes it: sums in f64 from 0 (each
/// pre-tokenized piece alone), a later start replacing the best way into a position only if
/// strictly higher. Fills `path` as `viterbi` does.
///
/// Returns whether an unknown edge ever became the best way into a position, even one the
/// final path avoids: where tokenizers, lacking an unknown piece, gives up.
pub fn viterbi_f64(model: &impl Pieces, text: &str, path: &mut Vec<(u32, u32, u32)>) -> bool {
    thread_local! {
        static BEST64: std::cell::RefCell<Vec<(f64, u32, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    path.clear();
    if text.is_empty() {
        return false;
    }
    const UNSET: u32 = u32::MAX;
    let unk = model.unk_id();
    let mut unknown_taken = false;
    BEST64.with_borrow_mut(|best| {
        best.clear();
        best.resize(text.len() + 1, (0.0, UNSET, 0));
        for_each_edge(model, text, |e| {
            let candidate = best[e.start as usize].0 + e.score;
            let to = &mut best[e.end as usize];
            if to.1 == UNSET || candidate > to.0 {
                *to = (candidate, e.start, e.id);
                unknown_taken |= e.id == unk;
            }
        });
        let mut pos = text.len();
        while pos > 0 {
            let (_, start, id) = best[pos];
            path.push((start, pos as u32, id));
            pos = start as usize;
        }
    });
    unknown_taken
}

/// How far the running score may go before SentencePiece (0.2.3 on) moves it back to 0.
pub const SCORE_RESET: f32 = 100_000.0;

/// SentencePiece's reset of the running score: when the best score into the position the next
/// pieces start from lies beyond ±`SCORE_RESET`, it is subtracted from that position and from
/// every position ahead that some piece already reaches, so that sums stay small (and round as
/// small sums do). Viterbi calls `at` with each edge; edges come in order of start.
struct Reset {
    /// How far past a position an edge from before it can reach: the longest piece, or one
    /// character (an unknown one).
    reach: usize,
    happened: bool,
}

impl Reset {
    fn new(model: &impl Pieces) -> Self {
        Reset { reach: model.trie().max_len().max(4), happened: false }
    }

    /// Before `e` is weighed: the reset, if the best score into its start lies beyond the
    /// bound (after a reset it is 0, so the other edges from that start pass straight by).
    #[inline(always)]
    fn at(&mut self, best: &mut [(f32, u32, u32)], e: Edge) {
        let here = best[e.start as usize].0;
        if !(-SCORE_RESET..=SCORE_RESET).contains(&here) {
            self.apply(best, e.start as usize, here);
        }
    }

    /// Subtracts `here` from the start and from every position ahead that an edge from before
    /// it reached (those lie within `reach` of it; no edge from the start is weighed yet).
    #[cold]
    #[inline(never)]
    fn apply(&mut self, best: &mut [(f32, u32, u32)], start: usize, here: f32) {
        self.happened = true;
        let end = best.len().min(start + self.reach + 1);
        for (i, way) in best.iter_mut().enumerate().take(end).skip(start) {
            if i == start || way.1 != u32::MAX {
                way.0 -= here;
            }
        }
    }
}

/// The best cut from Viterbi's table, (start, end, id) from the end backwards.
fn backtrack(best: &[(f32, u32, u32)], path: &mut Vec<(u32, u32, u32)>) {
    let mut pos = best.len() - 1;
    while pos > 0 {
        let (_, start, id) = best[pos];
        path.push((start, pos as u32, id));
        pos = start as usize;
    }
}

/// `viterbi` from `base`, and whether its cut is the same from every base of `base`'s binade
/// (the powers-of-two interval its magnitude lies in): returns the end score, the lowest and
/// highest sums that must stay inside the binade, and whether the cut is sound to reuse.
///
/// Within one binade every f32 is a multiple of the same unit, so each sum `v + s` that lands
/// in it rounds to `v` plus `s` rounded to that unit — the same amount whatever `v` is, except
/// at an exact halfway point, where rounding to even looks at `v` (then the sum may move by one
/// unit from another base). So when every such sum stays inside the binade and no score is
/// halfway, those comparisons are the same from any base of the binade. A sum that falls below the binade (a poor path through unknown or one-character
/// pieces, long enough to cross the binade's edge) rounds to a coarser grid: from another base
/// it may come out up to two of its units away, and a position reached that way carries that
/// uncertainty on. Such a sum does not spoil the cut as long as every comparison it takes part
/// in is won or lost by more than the two sides' uncertainty together, and the end of the best
/// cut is exact. (Requiring every sum to stay inside, as a first version did, refused a third
/// of the words of an English text: their all-single-character paths crossed the edge.)
pub fn viterbi_in_binade(
    model: &impl Pieces,
    text: &str,
    base: f32,
    path: &mut Vec<(u32, u32, u32)>,
) -> (f32, f32, f32, bool) {
    thread_local! {
        /// Per byte position, how far its best score may move from another base of the binade.
        static SLACK: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    path.clear();
    if text.is_empty() {
        return (base, base, base, true);
    }
    // The exponent of half the binade's spacing: a score whose lowest set bit is worth that
    // much lies exactly halfway between two floats of the binade.
    let halfway = lowest_bit_exponent_of_unit(base) - 1;
    let unit = unit_of(base);
    let (mut low, mut high) = (base, base);
    let mut sound = true;
    const UNSET: u32 = u32::MAX;
    let end = BEST.with_borrow_mut(|best| {
        SLACK.with_borrow_mut(|slack| {
            best.clear();
            best.resize(text.len() + 1, (0.0, UNSET, 0));
            slack.clear();
            slack.resize(text.len() + 1, 0.0);
            best[0] = (base, 0, 0);
            let mut reset = Reset::new(model);
            for_each_edge(model, text, |e| {
                reset.at(best, e);
                let score = e.score as f32;
                let (start, end) = (e.start as usize, e.end as usize);
                let candidate = best[start].0 + score;
                let uncertain = if same_binade(candidate, base) {
                    low = low.min(candidate);
                    high = high.max(candidate);
                    if score == 0.0 || lowest_bit_exponent(score) != halfway {
                        slack[start]
                    } else {
                        // A tie, rounded to even: one unit either way from another base.
                        slack[start] + unit
                    }
                } else {
                    slack[start] + 2.0 * unit_of(candidate)
                };
                let to = best[end];
                if to.1 == UNSET {
                    best[end] = (candidate, e.start, e.id);
                    slack[end] = uncertain;
                    return;
                }
                let doubt = uncertain + slack[end];
                if doubt > 0.0 && (candidate as f64 - to.0 as f64).abs() <= doubt {
                    sound = false;
                }
                if candidate > to.0 {
                    best[end] = (candidate, e.start, e.id);
                    slack[end] = uncertain;
                }
            });
            // A cut made across a reset depends on where the running score stood, not only on
            // its binade.
            sound &= slack[text.len()] == 0.0 && !reset.happened;
            backtrack(best, path);
            best[text.len()].0
        })
    });
    (end, low, high, sound)
}

/// The spacing of floats in `x`'s binade (x normal, magnitude at least 2⁻¹⁰⁴): the power of two
/// with `x`'s exponent less 23, built from its bits.
#[inline]
fn unit_of(x: f32) -> f64 {
    f32::from_bits(((x.to_bits() >> 23) & 0xFF).saturating_sub(23) << 23) as f64
}

/// The power of two that the lowest set bit of `x`'s significand is worth (x normal, not 0).
#[inline]
fn lowest_bit_exponent(x: f32) -> i32 {
    let bits = x.to_bits();
    let significand = (bits & 0x7F_FFFF) | 0x80_0000;
    ((bits >> 23) & 0xFF) as i32 - 150 + significand.trailing_zeros() as i32
}

/// The power of two the spacing of floats in `x`'s binade is.
fn lowest_bit_exponent_of_unit(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xFF) as i32 - 150
}

/// Whether `x` lies in the same binade as `base` (same sign and exponent).
pub fn same_binade(x: f32, base: f32) -> bool {
    x.to_bits() >> 23 == base.to_bits() >> 23
}

/// Every edge of `text`'s lattice, grouped by end position: `ends[e]` lists the edges ending
/// at byte `e`.
fn edges_by_end(model: &impl Pieces, text: &str) -> Vec<Vec<Edge>> {
    let mut ends: Vec<Vec<Edge>> = vec![Vec::new(); text.len() + 1];
    for_each_edge(model, text, |e| ends[e.end as usize].push(e));
    ends
}

/// log(exp(a) + exp(b)) without overflow.
pub(crate) fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

/// A cut: (start, end, id) of each piece, in order.
pub type Cut = Vec<(u32, u32, u32)>;

/// The `n` best cuts of `text` with their total scores, best first (ties: the cut Viterbi
/// would pick first). Each position keeps its `n` best ways in, so the cost is n × edges.
pub fn nbest(model: &impl Pieces, text: &str, n: usize) -> Vec<(Cut, f32)> {
    if n == 0 {
        return Vec::new();
    }
    if text.is_empty() {
        return vec![(Vec::new(), 0.0)];
    }
    let ends = edges_by_end(model, text);
    // Per position, its best ways in: (score, edge index in ends[pos], rank of the way into the
    // edge's start).
    let mut ways: Vec<Vec<(f64, u32, u32)>> = vec![Vec::new(); text.len() + 1];
    ways[0].push((0.0, 0, 0));
    for pos in 1..=text.len() {
        let mut here: Vec<(f64, u32, u32)> = Vec::new();
        for (k, e) in ends[pos].iter().enumerate() {
            for (r, &(score, _, _)) in ways[e.start as usize].iter().enumerate() {
                here.push((score + e.score, k as u32, r as u32));
            }
        }
        // Stable: equal scores keep the order of starts, as Viterbi's strict comparison does.
        here.sort_by(|a, b| b.0.total_cmp(&a.0));
        here.truncate(n);
        ways[pos] = here;
    }
    let mut out = Vec::with_capacity(n);
    for top in 0..ways[text.len()].len() {
        let total = ways[text.len()][top].0;
        let mut cut = Vec::new();
        let (mut pos, mut rank) = (text.len(), top);
        while pos > 0 {
            let (_, k, r) = ways[pos][rank];
            let e = ends[pos][k as usize];
            cut.push((e.start, e.end, e.id));
            pos = e.start as usize;
            rank = r as usize;
        }
        cut.reverse();
        out.push((cut, total as f32));
    }
    out
}

/// A cut of `text` drawn with probability proportional to exp(`alpha` × its score) (subword
/// regularization): forward sums, then edges drawn backwards from the end. `uniform` gives
/// numbers in [0, 1). Returns the log-probability of the cut drawn.
pub fn sample(model: &impl Pieces, text: &str, alpha: f32, uniform: &mut impl FnMut() -> f64, out: &mut Cut) -> f64 {
    if text.is_empty() {
        return 0.0;
    }
    let ends = edges_by_end(model, text);
    let alpha = alpha as f64;
    let mut forward = vec![f64::NEG_INFINITY; text.len() + 1];
    forward[0] = 0.0;
    for pos in 1..=text.len() {
        for e in &ends[pos] {
            forward[pos] = log_add(forward[pos], forward[e.start as usize] + alpha * e.score);
        }
    }
    let first = out.len();
    let mut drawn = 0.0;
    let mut pos = text.len();
    while pos > 0 {
        let total = forward[pos];
        let mut target = uniform();
        let mut chosen = ends[pos].last().expect("every reached position has an edge in");
        for e in &ends[pos] {
            let p = (forward[e.start as usize] + alpha * e.score - total).exp();
            if target < p {
                chosen = e;
                break;
            }
            target -= p;
        }
        out.push((chosen.start, chosen.end, chosen.id));
        drawn += alpha * chosen.score;
        pos = chosen.start as usize;
    }
    out[first..].reverse();
    drawn - forward[text.len()]
}

/// A cut of `text` drawn as tokenizers' Unigram draws one with `theta`. Its forward sums scale
/// the sum so far by `theta` along with the piece's score — F(end) = log Σ exp(θ × (score +
/// F(start))) — and each edge into a position is drawn with weight exp(F(start) + θ × score):
/// for θ other than 1 not the distribution `sample` draws from (SentencePiece's).
pub fn sample_huggingface(
    model: &impl Pieces,
    text: &str,
    theta: f64,
    uniform: &mut impl FnMut() -> f64,
    out: &mut Cut,
) {
    if text.is_empty() {
        return;
    }
    let ends = edges_by_end(model, text);
    let mut forward = vec![f64::NEG_INFINITY; text.len() + 1];
    forward[0] = 0.0;
    for pos in 1..=text.len() {
        for e in &ends[pos] {
            forward[pos] = log_add(forward[pos], theta * (e.score + forward[e.start as usize]));
        }
    }
    let first = out.len();
    let mut weights = Vec::new();
    let mut pos = text.len();
    while pos > 0 {
        weights.clear();
        weights.extend(ends[pos].iter().map(|e| (forward[e.start as usize] + theta * e.score - forward[pos]).exp()));
        let mut target = uniform() * weights.iter().sum::<f64>();
        let mut chosen = ends[pos].last().expect("every reached position has an edge in");
        for (e, w) in ends[pos].iter().zip(&weights) {
            if target < *w {
                chosen = e;
                break;
            }
            target -= w;
        }
        out.push((chosen.start, chosen.end, chosen.id));
        pos = chosen.start as usize;
    }
    out[first..].reverse();
}

/// The entropy (in nats) of the cuts `sample` draws from `text` with `alpha`. Forward sums
/// carry, for each position, log Z of the ways in and their mean `alpha` × score; the entropy
/// is log Z − E[`alpha` × score] at the end.
pub fn entropy(model: &impl Pieces, text: &str, alpha: f64) -> f64 {
    if text.is_empty() {
        return 0.0;
    }
    let ends = edges_by_end(model, text);
    let mut log_z = vec![f64::NEG_INFINITY; text.len() + 1];
    let mut mean = vec![0.0; text.len() + 1];
    log_z[0] = 0.0;
    for pos in 1..=text.len() {
        for e in &ends[pos] {
            log_z[pos] = log_add(log_z[pos], log_z[e.start as usize] + alpha * e.score);
        }
        let mut m = 0.0;
        for e in &ends[pos] {
            let weight = (log_z[e.start as usize] + alpha * e.score - log_z[pos]).exp();
            m += weight * (mean[e.start as usize] + alpha * e.score);
        }
        mean[pos] = m;
    }
    log_z[text.len()] - mean[text.len()]
}

/// Reused buffers for `expected_counts`: a text's edges in order of start, and the forward and
/// backward sums.
#[derive(Default)]
pub struct Scratch {
    edges: Vec<Edge>,
    forward: Vec<f64>,
    backward: Vec<f64>,
}

/// Adds to `expected[id]` `weight` × the expected number of times piece `id` occurs in a cut
/// of `text` drawn by probability (forward–backward), and returns `weight` × log Z(text), the
/// log-likelihood. The training E-step. Edges come in order of start, so one pass forward
/// finishes each position before edges leave it, and one pass backward finishes each position
/// before edges reach it.
pub fn expected_counts(model: &impl Pieces, text: &str, weight: f64, s: &mut Scratch, expected: &mut [f64]) -> f64 {
    if text.is_empty() {
        return 0.0;
    }
    s.edges.clear();
    for_each_edge(model, text, |e| s.edges.push(e));
    let len = text.len();
    s.forward.clear();
    s.forward.resize(len + 1, f64::NEG_INFINITY);
    s.backward.clear();
    s.backward.resize(len + 1, f64::NEG_INFINITY);
    s.forward[0] = 0.0;
    for e in &s.edges {
        let v = s.forward[e.start as usize] + e.score;
        s.forward[e.end as usize] = log_add(s.forward[e.end as usize], v);
    }
    s.backward[len] = 0.0;
    for e in s.edges.iter().rev() {
        let v = s.backward[e.end as usize] + e.score;
        s.backward[e.start as usize] = log_add(s.backward[e.start as usize], v);
    }
    let z = s.forward[len];
    for e in &s.edges {
        if let Some(slot) = expected.get_mut(e.id as usize) {
            *slot += weight * (s.forward[e.start as usize] + e.score + s.backward[e.end as usize] - z).exp();
        }
    }
    weight * z
}

#[cfg(test)]
mod tests {
    use super::super::tests::model;
    use super::super::Unigram;
    use super::*;

    fn spell(m: &Unigram, ids: &[u32]) -> String {
        ids.iter().map(|&id| String::from_utf8_lossy(m.vocab().token_bytes(id).unwrap()).into_owned() + "|").collect()
    }

    #[test]
    fn nbest_lists_cuts_by_score_and_starts_with_viterbi() {
        let m = model(&[("a", -1.0), ("b", -1.5), ("ab", -2.0), ("abc", -4.0), ("c", -1.2), ("bc", -2.1)], false);
        let best = nbest(&m, "abc", 10);
        let mut first = Vec::new();
        m.encode_piece("abc", &mut first);
        assert_eq!(best[0].0.iter().map(|c| c.2).collect::<Vec<_>>(), first);
        // Every cut of "abc" from these pieces: abc, a|bc, ab|c, a|b|c.
        assert_eq!(best.len(), 4);
        let scores: Vec<f32> = best.iter().map(|b| b.1).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
        let ids: Vec<u32> = best[0].0.iter().map(|c| c.2).collect();
        assert_eq!(spell(&m, &ids), "a|bc|"); // -3.1 against ab|c -3.2, a|b|c -3.7, abc -4
        assert_eq!(nbest(&m, "abc", 2).len(), 2);
    }

    #[test]
    fn sampling_follows_the_cut_probabilities() {
        let m = model(&[("a", -1.0), ("b", -1.0), ("ab", -1.5)], false);
        // P(ab) ∝ e^-1.5, P(a|b) ∝ e^-2.
        let want = (-1.5f64).exp() / ((-1.5f64).exp() + (-2.0f64).exp());
        let mut state = 7u64;
        let mut uniform = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let draws = 20_000;
        let mut whole = 0;
        for _ in 0..draws {
            let mut ids = Vec::new();
            sample(&m, "ab", 1.0, &mut uniform, &mut ids);
            whole += (ids.len() == 1) as usize;
        }
        let got = whole as f64 / draws as f64;
        assert!((got - want).abs() < 0.02, "{got} vs {want}");
    }

    #[test]
    fn expected_counts_sum_to_the_expected_number_of_pieces() {
        let m = model(&[("a", -1.0), ("b", -1.0), ("ab", -1.5)], false);
        let mut expected = vec![0.0; m.vocab().n_vocab()];
        let log_z = expected_counts(&m, "ab", 2.0, &mut Scratch::default(), &mut expected);
        let z = (-1.5f64).exp() + (-2.0f64).exp();
        assert!((log_z - 2.0 * z.ln()).abs() < 1e-9);
        let p_whole = (-1.5f64).exp() / z;
        let id_ab = m.vocab().id(b"ab").unwrap() as usize;
        let id_a = m.vocab().id(b"a").unwrap() as usize;
        assert!((expected[id_ab] - 2.0 * p_whole).abs() < 1e-9);
        assert!((expected[id_a] - 2.0 * (1.0 - p_whole)).abs() < 1e-9);
    }
}
