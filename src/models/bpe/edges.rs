//! Compatibility of two whole tokens from their merge histories, without replaying their bytes
//! (rank-based vocabularies, where a token's id is its rank).
//!
//! Merging the bytes of `left` then `right` ends with `[left, right]` exactly when no merge ever
//! joins a symbol of `left`'s span with one of `right`'s (see `backtrack.rs`). Until such a
//! merge, each span evolves as it does alone: its next merge is the next step of its own
//! history, and the two histories interleave by rank (on equal ranks the left one first, being
//! leftmost). The only pair across the boundary is (the symbol ending `left`'s span, the one
//! starting `right`'s); it merges at the first step where its rank is below the left span's
//! next merge and not above the right span's (it is left of every right pair). So a check walks
//! the two histories in that interleaved order, looking the boundary pair up again only when
//! one of its two symbols changes — a few look-ups where replaying the two tokens' bytes makes
//! one or two per merge.
//!
//! Replaying was most of a first pass over fresh CJK text with large vocabularies, where the
//! compatibility table misses for every pair met for the first time.

use super::Bpe;
use crate::models::vocab::short_token_key;

/// The id (rank) of the token a step makes, in the low bits of a step.
const ID_BITS: u32 = 30;
const ID_MASK: u32 = (1 << ID_BITS) - 1;
/// The step makes the symbol that starts the token's span.
const FIRST: u32 = 1 << 30;
/// The step makes the symbol that ends it.
const LAST: u32 = 1 << 31;
const NONE: u32 = u32::MAX;
/// A step whose id does not fit `ID_BITS`.
const OVERFLOW: u32 = u32::MAX;

/// Every whole token's history: the merges its bytes go through alone, in order, each marked
/// with whether it makes the span's first or last symbol.
pub(super) struct Histories {
    /// The steps of all histories, one after another.
    steps: Vec<u32>,
    /// Token id → where its steps are in `steps`.
    span: Vec<(u32, u32)>,
    /// Token id → its `short_token_key` (0 for longer tokens): the boundary pair is looked up
    /// from these two words, without reaching for the two tokens' bytes.
    keys: Vec<u64>,
}

/// One thread's share of the histories: their steps, and each token's id and range there.
#[derive(Default)]
pub(super) struct HistoryPart {
    steps: Vec<u32>,
    ranges: Vec<(u32, u32, u32)>,
    symbols: Vec<(usize, u32)>,
    starts: Vec<usize>,
}

impl HistoryPart {
    /// Merges `bytes` alone, recording the steps; keeps them under `id` and returns true when
    /// they end in the single token `id` (the token is whole), else forgets them.
    pub fn add(&mut self, model: &Bpe, bytes: &[u8], id: u32) -> bool {
        let from = self.steps.len();
        let one = history(model, bytes, &mut self.symbols, &mut self.starts, &mut self.steps);
        // Every step's id must leave the flag bits free (a token the histories cannot hold
        // leaves `from_parts` short of one, and the caller replays bytes instead).
        let (whole, fits) = (one == Some(id), self.steps[from..].iter().all(|&s| s != OVERFLOW));
        if whole && fits {
            self.ranges.push((id, from as u32, self.steps.len() as u32));
        } else {
            self.steps.truncate(from);
        }
        whole
    }
}

impl Histories {
    /// The histories the parts recorded; `None` if a whole token's id does not fit a step (the
    /// caller then replays bytes instead) or the steps do not fit u32 offsets.
    pub fn from_parts(model: &Bpe, parts: Vec<HistoryPart>, whole: usize) -> Option<Self> {
        if parts.iter().map(|p| p.ranges.len()).sum::<usize>() != whole {
            return None;
        }
        let max_id = parts.iter().flat_map(|p| p.ranges.iter().map(|r| r.0)).max().unwrap_or(0) as usize;
        let total: usize = parts.iter().map(|p| p.steps.len()).sum();
        u32::try_from(total).ok()?;
        let mut steps = Vec::with_capacity(total);
        let mut span = vec![(0u32, 0u32); max_id + 1];
        for part in &parts {
            let base = steps.len() as u32;
            steps.extend_from_slice(&part.steps);
            for &(id, from, to) in &part.ranges {
                span[id as usize] = (base + from, base + to);
            }
        }
        let keys = (0..model.vocab.dense_len() as u32)
            .map(|id| model.vocab.token_bytes(id).ok().and_then(short_token_key).unwrap_or(0))
            .collect();
        Some(Histories { steps, span, keys })
    }

    fn of(&self, id: u32) -> &[u32] {
        let (from, to) = self.span[id as usize];
        &self.steps[from as usize..to as usize]
    }

    /// Whether merging the bytes of `left` then `right` (whole tokens) ends with `[left, right]`.
    /// `joined` is scratch space for the boundary pair's bytes.
    pub fn compatible(&self, model: &Bpe, left: u32, right: u32, joined: &mut Vec<u8>) -> bool {
        let vocab = &model.vocab;
        let bytes = |id: u32| vocab.token_bytes(id).expect("whole tokens exist");
        let (left_steps, right_steps) = (self.of(left), self.of(right));
        let left_bytes = bytes(left);
        // The boundary's two symbols start as the bytes either side of it.
        let mut a = model.byte_ids[left_bytes[left_bytes.len() - 1] as usize];
        let mut b = model.byte_ids[bytes(right)[0] as usize];
        let key = |id: u32| self.keys.get(id as usize).copied().unwrap_or(0);
        let mut boundary = |a: u32, b: u32| {
            let (left_key, right_key) = (key(a), key(b));
            if left_key != 0 && right_key != 0 {
                return vocab.joined_id(left_key, right_key).unwrap_or(NONE);
            }
            joined.clear();
            joined.extend_from_slice(bytes(a));
            joined.extend_from_slice(bytes(b));
            vocab.id(joined).unwrap_or(NONE)
        };
        let mut rank = boundary(a, b);
        let (mut i, mut j) = (0, 0);
        loop {
            let next_left = left_steps.get(i).map_or(NONE, |s| s & ID_MASK);
            let next_right = right_steps.get(j).map_or(NONE, |s| s & ID_MASK);
            if rank != NONE && rank < next_left && rank <= next_right {
                return false;
            }
            if next_left == NONE && next_right == NONE {
                return true;
            }
            if next_left <= next_right {
                if left_steps[i] & LAST != 0 {
                    a = next_left;
                    rank = boundary(a, b);
                }
                i += 1;
            } else {
                if right_steps[j] & FIRST != 0 {
                    b = next_right;
                    rank = boundary(a, b);
                }
                j += 1;
            }
        }
    }
}

/// Appends to `steps` the merges of `bytes` alone under the rank rule (lowest rank first,
/// leftmost on ties: as `Bpe::merge_ranked_replay`); returns the token they end in, if they end
/// in one. `symbols` and `starts` are scratch: each symbol's end and the rank of the pair it
/// starts, and its start. Only the pairs around a merge are looked up again.
fn history(
    model: &Bpe,
    bytes: &[u8],
    symbols: &mut Vec<(usize, u32)>,
    starts: &mut Vec<usize>,
    steps: &mut Vec<u32>,
) -> Option<u32> {
    let rank_of = |from: usize, to: usize| model.vocab.id(&bytes[from..to]).unwrap_or(NONE);
    symbols.clear();
    symbols.extend((0..bytes.len()).map(|k| (k + 1, if k + 2 <= bytes.len() { rank_of(k, k + 2) } else { NONE })));
    starts.clear();
    starts.extend(0..bytes.len());
    let mut last = None;
    loop {
        let lowest = symbols.iter().enumerate().filter(|(_, s)| s.1 != NONE).min_by_key(|&(k, s)| (s.1, k));
        let Some((k, &(_, rank))) = lowest else {
            return match (symbols.len(), last) {
                (1, Some(id)) => Some(id),
                (1, None) => Some(model.byte_ids[bytes[0] as usize]),
                _ => None,
            };
        };
        let mut step = if rank > ID_MASK { OVERFLOW } else { rank };
        if k == 0 {
            step |= FIRST;
        }
        if k + 2 == symbols.len() {
            step |= LAST;
        }
        steps.push(step);
        last = Some(rank);
        symbols[k].0 = symbols[k + 1].0;
        symbols.remove(k + 1);
        starts.remove(k + 1);
        symbols[k].1 = if k + 1 < symbols.len() { rank_of(starts[k], symbols[k + 1].0) } else { NONE };
        if k > 0 {
            symbols[k - 1].1 = rank_of(starts[k - 1], symbols[k].0);
        }
    }
}
