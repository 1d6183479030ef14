//! Long pieces of byte-level BPE (tiktoken ranks or a merge list) in time linear in their
//! length: instead of replaying merges, find the one segmentation into tokens that merging would
//! end with.
//!
//! Why that segmentation can be recognised locally. Call a token *whole* when merging its own
//! bytes ends with that token alone, and two tokens `a`, `b` *compatible* when merging the bytes
//! of `a` then `b` ends with `[a, b]`. Merging a piece ends with tokens t1..tk exactly when
//! every ti is whole and every adjacent pair is compatible:
//! - inside the span of one final token, merges only ever join symbols of that span, and each
//!   step takes the span's lowest-ranked pair — the same steps, in the same order, as merging
//!   the token's bytes alone (so every final token is whole);
//! - two neighbouring spans evolve through the same states as they do when merging their two
//!   tokens' bytes alone (merges elsewhere never change them, and between the two spans the
//!   lower rank always goes first), so the pair across their boundary would win at some point
//!   in one exactly when it would in the other.
//!
//! Merging is deterministic, so for every prefix of a piece there is exactly one such chain
//! (a prefix ending at a final token's boundary is encoded as the tokens before it). Hence a
//! depth-first search — longest whole token first, each checked for compatibility with the one
//! before — can keep one fact per position: if no chain continues from position `p`, none ever
//! will (the chain that reaches `p` is always the same one), so `p` is marked dead and never
//! tried again. Each position dies at most once and each try walks one token's length, so the
//! work is linear in the piece times the longest token, whatever the merges.
//!
//! Compatibility is decided by merging the two tokens' bytes (short: the scan merger) and kept
//! in a fixed table shared by all threads, so a pair met again costs one load.
//!
//! Nothing above needs tiktoken's ranks: it holds for any rule that merges the lowest-ranked
//! adjacent pair, leftmost first, with a rank that depends on the two symbols alone — so byte-
//! level models with a merge list (a `tokenizer.json`: Llama 3, Qwen as Hugging Face ships
//! them) use it too.

use super::edges::{Histories, HistoryPart};
use super::ranked::BACKTRACK_MULTIBYTE_FROM;
use super::Bpe;
use crate::util::trie::Trie;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::sync::atomic::{AtomicU64, Ordering};

/// The compatibility table has at most 2^this sets of `WAYS` entries (8 bytes each). Japanese
/// text meets ~30k distinct pairs per MB under Qwen 3; a direct-mapped table needed 256k
/// entries (2 MiB, more than the L2 cache) to keep collisions down, and its load was then the
/// backtracker's costliest instruction. Sets of eight, one cache line each, hold more pairs in
/// the same memory. Vocabularies get about one entry per token: 1 MiB for cl100k and Llama 3,
/// 2 MiB for o200k and Qwen 3. A cap of 2^13 sets was as fast on 1 MB texts, but on whole
/// corpora the pairs outgrew it and every miss replays merges: lifting it to 2^15 made the
/// 12 MB of Chinese man pages 1.41x faster under Qwen 3, 1.25x under Llama 3 and ~1.4x under
/// o200k (lock-step, repeated passes); cl100k, at 2^14, unchanged.
const MEMO_SET_BITS: u32 = 15;
const MIN_MEMO_SET_BITS: u32 = 9;
const WAYS: usize = 8;
/// Ids at or above this do not fit a table entry and are always merged out.
const MEMO_ID_LIMIT: u32 = 1 << 31;

pub(super) struct Backtracker {
    /// Every whole token (see the module), by its bytes.
    whole: Trie,
    /// The tokens of `BACKTRACK_MULTIBYTE_FROM` bytes or more that are not whole (Llama 3 has
    /// 122 over 12 bytes, the OpenAI vocabularies and Qwen none): a piece spelling one is that
    /// token under tiktoken's rule, which the search would not find.
    unreachable: FxHashMap<Box<[u8]>, u32>,
    /// The longest of them, so most pieces are never looked up.
    unreachable_max: usize,
    /// Which byte strings tokens hold, to tell without asking the table that no merge can
    /// cross a boundary.
    crossings: Crossings,
    /// Rank-based models: each whole token's merge history, which decides a pair missing from
    /// the table without replaying its bytes (`edges.rs`).
    histories: Option<Histories>,
    /// Sets of entries `left << 33 | right << 2 | filled << 1 | compatible`, the most recently
    /// added first.
    memo: Box<[MemoSet]>,
    /// log2 of the number of sets.
    memo_bits: u32,
}

impl std::fmt::Debug for Backtracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backtracker").field("longest_token", &self.whole.max_len()).finish()
    }
}

impl Backtracker {
    pub fn new(model: &Bpe) -> Self {
        let tokens: Vec<(&[u8], u32)> = model.vocab.ordinary().map(|(id, bytes)| (bytes, id)).collect();
        // Replaying every token's merges is half the building time: split over threads. Plain
        // scoped threads, not the pool's: this may run inside a pool task, and a pool thread
        // waiting here could pick up another task that waits for this very initialization.
        let chunk = tokens.len().div_ceil(crate::util::threads::count().max(1)).max(1);
        let (whole, unreachable, histories): (Vec<Token>, Vec<Token>, Vec<HistoryPart>) = std::thread::scope(|scope| {
            let parts: Vec<_> = tokens
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        let mut out = Vec::new();
                        let mut history = HistoryPart::default();
                        let (mut keep, mut long_unreachable) = (Vec::with_capacity(part.len()), Vec::new());
                        for &(bytes, id) in part {
                            // Rank-based models record each token's merges on the way (`edges.rs`).
                            let whole = if model.is_rank_based() {
                                history.add(model, bytes, id)
                            } else {
                                out.clear();
                                model.merge_bytes_replay(bytes, &mut out);
                                out.len() == 1 && out[0] == id
                            };
                            if whole {
                                keep.push((bytes, id));
                            } else if bytes.len() >= BACKTRACK_MULTIBYTE_FROM {
                                long_unreachable.push((bytes, id));
                            }
                        }
                        (keep, long_unreachable, history)
                    })
                })
                .collect();
            let parts: Vec<_> = parts.into_iter().map(|p| p.join().expect("replaying merges does not panic")).collect();
            parts.into_iter().fold((Vec::new(), Vec::new(), Vec::new()), |(mut w, mut u, mut h), (pw, pu, ph)| {
                w.extend(pw);
                u.extend(pu);
                h.push(ph);
                (w, u, h)
            })
        });
        let crossings = Crossings::new(tokens.iter().map(|&(bytes, _)| bytes));
        let memo_bits =
            (tokens.len() / WAYS).next_power_of_two().trailing_zeros().clamp(MIN_MEMO_SET_BITS, MEMO_SET_BITS);
        let memo = (0..1usize << memo_bits).map(|_| MemoSet(Default::default())).collect();
        let unreachable_max = unreachable.iter().map(|(b, _)| b.len()).max().unwrap_or(0);
        let histories = if model.is_rank_based() { Histories::from_parts(model, histories, whole.len()) } else { None };
        let unreachable = unreachable.into_iter().map(|(b, id)| (Box::from(b), id)).collect();
        Backtracker { whole: Trie::new(whole), unreachable, unreachable_max, crossings, histories, memo, memo_bits }
    }

    /// Whether merging the bytes of `left` then `right` ends with `[left, right]`.
    fn compatible(&self, model: &Bpe, left: u32, right: u32) -> bool {
        let memoized = left < MEMO_ID_LIMIT && right < MEMO_ID_LIMIT;
        let key = (left as u64) << 33 | (right as u64) << 2 | 2;
        let MemoSet(set) = &self.memo[slot_of(left, right, self.memo_bits)];
        if memoized {
            for slot in set {
                let entry = slot.load(Ordering::Relaxed);
                if entry & !1 == key {
                    return entry & 1 == 1;
                }
            }
        }
        let answer = self.decide(model, left, right);
        if memoized {
            // The oldest entry makes way. Racing writers may lose or repeat an entry, never
            // store a wrong one: each entry carries its whole key.
            for k in (1..WAYS).rev() {
                set[k].store(set[k - 1].load(Ordering::Relaxed), Ordering::Relaxed);
            }
            set[0].store(key | answer as u64, Ordering::Relaxed);
        }
        answer
    }

    /// `compatible` for a pair the table does not hold: from the two tokens' histories, or by
    /// replaying their bytes. Kept out of line, so the table look-up stays small where it is
    /// inlined.
    #[cold]
    #[inline(never)]
    fn decide(&self, model: &Bpe, left: u32, right: u32) -> bool {
        REPLAY.with_borrow_mut(|(bytes, ids)| {
            if let Some(histories) = &self.histories {
                return histories.compatible(model, left, right, bytes);
            }
            bytes.clear();
            bytes.extend_from_slice(model.vocab.token_bytes(left).expect("whole tokens exist"));
            bytes.extend_from_slice(model.vocab.token_bytes(right).expect("whole tokens exist"));
            ids.clear();
            model.merge_bytes_replay(bytes, ids);
            ids.len() == 2 && ids[0] == left && ids[1] == right
        })
    }

    /// A long piece's id when it spells a token merging cannot reach (see `unreachable`).
    #[inline]
    pub fn unreachable_token(&self, piece: &[u8]) -> Option<u32> {
        if piece.len() > self.unreachable_max {
            return None;
        }
        self.unreachable.get(piece).copied()
    }

    /// Appends the ids of `piece`, as merging it would give them. A piece that is a whole token
    /// comes out as that token (the search's first step takes it), so callers need not look it
    /// up first.
    pub fn encode(&self, model: &Bpe, piece: &[u8], out: &mut Vec<u32>) {
        let n = piece.len();
        let base = out.len();
        // The tokens on the stack are `out[base..]`; `dead` marks positions no chain continues
        // from. Stack buffers for pieces of common length, so a piece costs no allocation.
        let mut dead: SmallVec<[u64; 4]> = smallvec::smallvec![0; n / 64 + 1];
        let mut matches: SmallVec<[(u32, u32); 24]> = SmallVec::new();
        let mut pos = 0;
        // Candidates at `pos` must be shorter than this (set when a token is taken back).
        let mut shorter_than = usize::MAX;
        while pos < n {
            matches.clear();
            self.whole.for_each_prefix(&piece[pos..], |len, id| matches.push((len as u32, id)));
            let prev = if pos > 0 && self.crossings.may_cross(piece, pos) { out.last().copied() } else { None };
            let mut taken = None;
            for &(len, id) in matches.iter().rev() {
                let (len, end) = (len as usize, pos + len as usize);
                if len >= shorter_than || (end < n && dead[end / 64] >> (end % 64) & 1 == 1) {
                    continue;
                }
                if prev.is_some_and(|p| !self.compatible(model, p, id)) {
                    continue;
                }
                taken = Some((len, id));
                break;
            }
            match taken {
                Some((len, id)) => {
                    out.push(id);
                    pos += len;
                    shorter_than = usize::MAX;
                }
                None => {
                    // Every byte is a whole token and position 0 has no neighbour to clash
                    // with, so the stack is never empty here (see the module).
                    dead[pos / 64] |= 1 << (pos % 64);
                    debug_assert!(out.len() > base, "a chain always exists");
                    let top = out.pop().expect("a chain always exists");
                    let len = model.vocab.token_bytes(top).expect("whole tokens exist").len();
                    shorter_than = len;
                    pos -= len;
                }
            }
        }
    }
}

thread_local! {
    /// The bytes of two tokens and the ids merging them gives, for `compatible`'s replays: kept
    /// per thread so that a piece with a table miss allocates nothing (a first pass over fresh
    /// text misses often: Qwen 3 on the 12 MB of Chinese man pages, first pass, 1.03x).
    static REPLAY: std::cell::RefCell<(Vec<u8>, Vec<u32>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// A token's bytes and id.
type Token<'v> = (&'v [u8], u32);

/// The first merge to join two symbols across a boundary makes a token that holds the boundary's
/// two bytes, and either is those two bytes alone or holds one of the two 3-byte strings around
/// the boundary. So when the vocabulary holds none of these, two whole tokens meeting there are
/// compatible without asking the table. Two bytes alone let most boundaries inside CJK text
/// through (half of those between cl100k's final tokens in Chinese man pages); the 3-byte
/// strings stop all but a quarter of those.
struct Crossings {
    /// Bit `b1 << 8 | b2`: some token holds `b1` followed by `b2`.
    pairs: Box<[u64]>,
    /// Bit `b1 << 8 | b2`: `b1 b2` is a token.
    two_byte: Box<[u64]>,
    /// Bit `b1 << 16 | b2 << 8 | b3`: some token holds `b1 b2 b3` (2 MiB; a CJK text touches a
    /// few hundred kilobytes of it).
    triples: Box<[u64]>,
}

impl Crossings {
    fn new<'t>(tokens: impl Iterator<Item = &'t [u8]>) -> Self {
        let bitmap = |bits: usize| vec![0u64; bits / 64].into_boxed_slice();
        let set = |map: &mut [u64], k: usize| map[k / 64] |= 1 << (k % 64);
        let (mut pairs, mut two_byte, mut triples) = (bitmap(1 << 16), bitmap(1 << 16), bitmap(1 << 24));
        for bytes in tokens {
            for w in bytes.windows(2) {
                set(&mut pairs, (w[0] as usize) << 8 | w[1] as usize);
            }
            for w in bytes.windows(3) {
                set(&mut triples, (w[0] as usize) << 16 | (w[1] as usize) << 8 | w[2] as usize);
            }
            if let &[a, b] = bytes {
                set(&mut two_byte, (a as usize) << 8 | b as usize);
            }
        }
        Crossings { pairs, two_byte, triples }
    }

    /// Whether some merge could join a symbol ending at `pos` (> 0) with one starting there.
    /// The bytes two before and one after `pos` stand in for the tokens' own: when the token
    /// on either side is a single byte, the 3-byte string on that side cannot occur in the
    /// crossing token, and asking about it anyway only makes the answer more cautious.
    #[inline]
    fn may_cross(&self, piece: &[u8], pos: usize) -> bool {
        let bit = |map: &[u64], k: usize| map[k / 64] >> (k % 64) & 1 == 1;
        let (a, b) = (piece[pos - 1] as usize, piece[pos] as usize);
        let pair = a << 8 | b;
        if !bit(&self.pairs, pair) {
            return false;
        }
        bit(&self.two_byte, pair)
            || (pos >= 2 && bit(&self.triples, (piece[pos - 2] as usize) << 16 | pair))
            || (pos + 1 < piece.len() && bit(&self.triples, pair << 8 | piece[pos + 1] as usize))
    }
}

/// One cache line of the compatibility table.
#[repr(align(64))]
struct MemoSet([AtomicU64; WAYS]);

#[inline]
fn slot_of(left: u32, right: u32, bits: u32) -> usize {
    let h = (left as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (right as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    (h >> (64 - bits)) as usize
}

#[cfg(test)]
mod tests {
    use super::super::{Bpe, BpeOptions};
    use crate::models::vocab::Vocab;
    use crate::tokenizer::SplitMix64;

    /// A ranked vocabulary of the 256 bytes and `extra` random strings over `alphabet`, with
    /// ranks in random order: tokens that merging cannot reach, tokens ranked before their
    /// parts — every irregularity the argument in the module must survive.
    fn random_model(rng: &mut SplitMix64, alphabet: &[u8], extra: usize) -> Bpe {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut seen: std::collections::HashSet<Vec<u8>> = tokens.iter().cloned().collect();
        while tokens.len() < 256 + extra {
            let len = 2 + (rng.next_u64() % 6) as usize;
            let t: Vec<u8> = (0..len).map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize]).collect();
            if seen.insert(t.clone()) {
                tokens.push(t);
            }
        }
        // Shuffle the multi-byte tokens' ranks among themselves, sometimes below the bytes.
        for i in (1..tokens.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            tokens.swap(i, j);
        }
        let mut vocab = Vocab::default();
        for (id, t) in tokens.iter().enumerate() {
            vocab.insert(id as u32, t).unwrap();
        }
        Bpe::from_ranks(vocab, BpeOptions { byte_level: true, ..BpeOptions::default() }).unwrap()
    }

    /// Backtracking equals replaying the merges one by one on 200 random pieces over `alphabet`.
    fn assert_backtracking_replays(model: &Bpe, rng: &mut SplitMix64, alphabet: &[u8], round: usize) {
        let backtracker = super::Backtracker::new(model);
        for _ in 0..200 {
            let len = 1 + (rng.next_u64() % 90) as usize;
            let piece: Vec<u8> =
                (0..len).map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize]).collect();
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            backtracker.encode(model, &piece, &mut fast);
            if model.is_rank_based() {
                model.merge_ranked_heap(&piece, &mut slow);
            } else {
                slow.extend(piece.iter().map(|&b| b as u32));
                model.merge_symbols(&mut slow);
            }
            assert_eq!(fast, slow, "round {round}, piece {:?}", String::from_utf8_lossy(&piece));
        }
    }

    /// A byte-level model with a merge list (as a `tokenizer.json` has): random merges of
    /// existing tokens, listed in a random order — some can only apply after later ones.
    fn random_merges_model(rng: &mut SplitMix64, alphabet: &[u8], extra: usize) -> Bpe {
        let mut vocab = Vocab::default();
        let mut tokens: Vec<Vec<u8>> = Vec::new();
        for b in 0..=255u8 {
            vocab.insert(b as u32, &[b]).unwrap();
            tokens.push(vec![b]);
        }
        let mut merges = Vec::new();
        let pick = |rng: &mut SplitMix64, tokens: &[Vec<u8>]| -> u32 {
            // Mostly tokens over the alphabet, so merges meet in the drawn pieces.
            loop {
                let id = (rng.next_u64() % tokens.len() as u64) as u32;
                if tokens[id as usize].iter().all(|b| alphabet.contains(b)) {
                    return id;
                }
            }
        };
        while merges.len() < extra {
            let (a, b) = (pick(rng, &tokens), pick(rng, &tokens));
            let joined = [tokens[a as usize].clone(), tokens[b as usize].clone()].concat();
            if joined.len() > 7 || merges.contains(&(a, b)) {
                continue;
            }
            if vocab.id(&joined).is_none() {
                vocab.insert(tokens.len() as u32, &joined).unwrap();
                tokens.push(joined);
            }
            merges.push((a, b));
        }
        for i in (1..merges.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            merges.swap(i, j);
        }
        Bpe::from_merges(vocab, merges, BpeOptions { byte_level: true, ..BpeOptions::default() }).unwrap()
    }

    #[test]
    fn backtracking_equals_replaying_a_merge_list() {
        let mut rng = SplitMix64(11);
        for round in 0..60 {
            let alphabet: &[u8] = if round % 2 == 0 { b"ab" } else { b"abcd" };
            let model = random_merges_model(&mut rng, alphabet, 20 + (round * 7) % 120);
            assert!(model.backtracks());
            assert_backtracking_replays(&model, &mut rng, alphabet, round);
        }
    }

    /// The whole per-piece path, `Bpe::encode_piece`, on text of ASCII and multibyte characters:
    /// whichever route a piece takes (replay, or backtracking because it is long or ends in a
    /// non-ASCII byte), it gets tiktoken's answer — its own token when it is one, even one that
    /// merging cannot reach, else the replayed merges.
    #[test]
    fn every_route_gives_tiktokens_answer() {
        let chars = ["a", "b", "一", "丁", "é"];
        let mut rng = SplitMix64(5);
        let text = |rng: &mut SplitMix64, n: u64| -> String {
            (0..1 + rng.next_u64() % n).map(|_| chars[(rng.next_u64() % chars.len() as u64) as usize]).collect()
        };
        for round in 0..40 {
            // Tokens: the 256 bytes and byte slices of short random text (whole characters or
            // not), ranked in a random order, so some tokens cannot be reached by merging.
            let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            while tokens.len() < 256 + 30 + round * 4 {
                let t = text(&mut rng, 4).into_bytes();
                let from = (rng.next_u64() % t.len() as u64) as usize;
                let to = from + 2 + (rng.next_u64() % 8) as usize;
                if to <= t.len() && !tokens.iter().any(|k| k[..] == t[from..to]) {
                    tokens.push(t[from..to].to_vec());
                }
            }
            for i in (1..tokens.len()).rev() {
                tokens.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
            let mut vocab = Vocab::default();
            for (id, t) in tokens.iter().enumerate() {
                vocab.insert(id as u32, t).unwrap();
            }
            let options = BpeOptions { byte_level: true, whole_piece_first: true, ..BpeOptions::default() };
            let model = Bpe::from_ranks(vocab, options).unwrap();
            let mut pieces: Vec<String> = (0..300).map(|_| text(&mut rng, 8)).collect();
            // Every token that spells text is a piece too: the unreachable ones must come back whole.
            pieces.extend(tokens.iter().filter_map(|t| String::from_utf8(t.clone()).ok()));
            for piece in pieces {
                let mut got = Vec::new();
                model.encode_piece(&piece, &mut got).unwrap();
                let mut want = Vec::new();
                match model.vocab.id(piece.as_bytes()) {
                    Some(id) => want.push(id),
                    None => model.merge_ranked_heap(piece.as_bytes(), &mut want),
                }
                assert_eq!(got, want, "round {round}, piece {piece:?}");
            }
        }
    }

    #[test]
    fn backtracking_equals_replaying_merges_on_random_vocabularies() {
        let mut rng = SplitMix64(7);
        for round in 0..60 {
            let alphabet: &[u8] = if round % 2 == 0 { b"ab" } else { b"abcd" };
            let model = random_model(&mut rng, alphabet, 20 + (round * 7) % 120);
            assert_backtracking_replays(&model, &mut rng, alphabet, round);
        }
    }
}
