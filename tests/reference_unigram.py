"""A small, slow, pure-Python Unigram model: the oracle for tokenmill's Unigram encoder and trainer.

It follows sentencepiece (src/unigram_model.cc, src/unigram_model_trainer.cc, src/trainer_interface.cc)
step by step, including the places where sentencepiece computes in 32-bit floats: `_f32` rounds a Python
float (a C double) to the nearest float32 exactly where the C++ code stores or computes a `float`, so ties and
near-ties come out the way sentencepiece's do. Everything works on already-normalized text: spaces already
turned into '▁' (U+2581) and the dummy prefix already added, i.e. what `SentencePieceProcessor.normalize`
returns.

Source followed: google/sentencepiece at commit 2734490 (February 2025, after v0.2.0). The encoder side
(viterbi, nbest, sample) matches the sentencepiece 0.2.3 wheel exactly in tests/test_reference_unigram.py. The
0.2.3 wheel's *trainer* is a rewrite whose source was not available here (its binary mentions libsais, dynamic
seed sizes, sparse pruning); `train` follows the published trainer and matches 0.2.3's vocabulary, not its
scores.

Vocabulary conventions used by every function here:
- `pieces` maps each NORMAL piece to its (float32) score. Unknown, control, byte and unused pieces are not in it.
- `user_defined` lists USER_DEFINED pieces; they are matched in the lattice with a score of their own (see
  `_user_score_*`), not with the score stored in the model (which is 0).
- the unknown score defaults to `min(NORMAL scores) - K_UNK_PENALTY`, computed in float32.
"""

from __future__ import annotations

import math
import random
import struct
import unicodedata
from collections.abc import Iterable, Sequence

# --- constants, each as sentencepiece defines it -------------------------------------------------------------------
K_UNK_PENALTY = 10.0  # unigram_model.cc kUnkPenalty: unknown score = min NORMAL score - 10 (float32 arithmetic)
K_MINUS_LOG_EPSILON = 50.0  # LogSumExp: if max > min + 50, log(e^max + e^min) is taken to be max
FLT_MIN = 2.0**-126  # Model::max_score_ starts at FLT_MIN (the smallest *positive* normal float), not at -FLT_MAX
FLT_MAX = float.fromhex("0x1.fffffep+127")
K_MAX_NBEST = 1024  # Model::NBestEncode clamps nbest_size to [1, 1024]
K_MAX_AGENDA_SIZE = 10_000  # Lattice::NBest shrinks the A* agenda when it reaches this size ...
K_MIN_AGENDA_SIZE = 512  # ... down to min(512, 10 * nbest_size) best hypotheses
K_EXPECTED_FREQUENCY_THRESHOLD = 0.5  # RunMStep drops pieces whose expected count is below this
K_DESIRED_VOCAB_FACTOR = 1.1  # the EM/prune loop stops once the vocabulary is <= int(vocab_size * 1.1)
K_MIN_SCORE_PENALTY_DELTA = 0.0001  # FinalizeSentencePieces: re-added required chars get min score + k * 0.0001

WS = "\u2581"  # '▁', kWSChar
UNK_CHAR = "\u2585"  # '▅', kUNKChar: rare characters (outside character_coverage) are replaced by it in training
UPP_BOUNDARY = "\t"  # kUPPBoundaryChar: meta pieces (<unk>, <s>, user-defined ...) found in training text become it
SENTENCE_BOUNDARY = "\0"  # kSentenceBoundary: separates sentences in the seed suffix array
UNK = "<unk>"  # key under which `marginals` reports the expected count of unknown-character nodes

_F32 = struct.Struct("<f")
_pack, _unpack = _F32.pack, _F32.unpack


def _f32(x: float) -> float:
    """Round a double to the nearest float32 (what a C++ `float` assignment does)."""
    return _unpack(_pack(x))[0]


# --- the lattice (Lattice + Model::PopulateNodes in unigram_model.cc) ------------------------------------------------

NORMAL, USER, UNKNOWN, BOUNDARY = "normal", "user", "unknown", "boundary"


class _Node:
    __slots__ = ("pos", "length", "piece", "kind", "score", "backtrace", "prev", "nid")

    def __init__(self, pos: int, length: int, piece: str, kind: str, score: float, nid: int) -> None:
        self.pos, self.length, self.piece, self.kind, self.score = pos, length, piece, kind, score
        self.backtrace = 0.0  # Viterbi: best score of a path from BOS through this node (inclusive)
        self.prev: _Node | None = None
        self.nid = nid  # index in the lattice, for alpha/beta arrays


class _Lattice:
    """Nodes over character positions. `begin[i]` / `end[i]` hold the nodes starting / ending at i, in the order
    sentencepiece inserts them: by start position, then by increasing length (the trie's common-prefix search
    order), then the unknown node. BOS is end[0][0], EOS is begin[n][0]. Both have score 0."""

    def __init__(
        self, text: str, table: dict[str, tuple[str, float]], unk_score: float, max_len: int | None = None
    ) -> None:
        n = len(text)
        self.text = text
        self.nodes: list[_Node] = []
        self.begin: list[list[_Node]] = [[] for _ in range(n + 1)]
        self.end: list[list[_Node]] = [[] for _ in range(n + 1)]
        self.bos = self._new(0, 0, "", BOUNDARY, 0.0)
        self.end[0].append(self.bos)
        self.eos = self._new(n, 0, "", BOUNDARY, 0.0)
        self.begin[n].append(self.eos)
        if max_len is None:
            max_len = max((len(p) for p in table), default=1)
        for i in range(n):
            has_single = False
            for j in range(i + 1, min(n, i + max_len) + 1):
                hit = table.get(text[i:j])
                if hit is not None:
                    self._insert(i, j - i, hit[0], hit[1])
                    has_single = has_single or j == i + 1
            if not has_single:  # a character with no piece of its own becomes a one-character unknown node
                self._insert(i, 1, UNKNOWN, unk_score)

    def _new(self, pos: int, length: int, piece: str, kind: str, score: float) -> _Node:
        node = _Node(pos, length, piece, kind, score, len(self.nodes))
        self.nodes.append(node)
        return node

    def _insert(self, pos: int, length: int, kind: str, score: float) -> None:
        node = self._new(pos, length, self.text[pos : pos + length], kind, score)
        self.begin[pos].append(node)
        self.end[pos + length].append(node)

    def viterbi(self) -> list[_Node]:
        """Lattice::Viterbi (used by NBest and by training; `viterbi()` below is the encoder's version). For each
        node, the best left neighbour is the *first* one in end[pos] with a strictly greater float32 sum."""
        for pos in range(len(self.text) + 1):
            for r in self.begin[pos]:
                best, best_score = None, 0.0
                for left in self.end[pos]:
                    s = _f32(left.backtrace + r.score)
                    if best is None or s > best_score:
                        best, best_score = left, s
                r.prev, r.backtrace = best, best_score
        path = []
        node = self.eos.prev
        while node is not None and node.prev is not None:
            path.append(node)
            node = node.prev
        return path[::-1]

    def forward(self, inv_theta: float = 1.0) -> list[float]:
        """Lattice::ForwardAlgorithm: alpha[node] = log-sum over paths from BOS up to (not including) node of
        exp(inv_theta * path score). All nodes starting at one position share their alpha."""
        alpha = [0.0] * len(self.nodes)
        for pos in range(len(self.text) + 1):
            acc = 0.0
            for k, left in enumerate(self.end[pos]):
                acc = _log_sum_exp(acc, _f32(_f32(inv_theta * left.score) + alpha[left.nid]), k == 0)
            for r in self.begin[pos]:
                alpha[r.nid] = acc
        return alpha

    def backward(self) -> list[float]:
        """Lattice::BackwardAlgorithm (scale 1): beta[node] = log-sum over paths from just after node to EOS."""
        beta = [0.0] * len(self.nodes)
        for pos in range(len(self.text), -1, -1):
            acc = 0.0
            for k, r in enumerate(self.begin[pos]):
                acc = _log_sum_exp(acc, _f32(r.score + beta[r.nid]), k == 0)
            for left in self.end[pos]:
                beta[left.nid] = acc
        return beta


def _log_sum_exp(x: float, y: float, init: bool) -> float:
    """log(e^x + e^y) the way unigram_model.cc's LogSumExp computes it (float in, float out)."""
    if init:
        return y
    vmin, vmax = min(x, y), max(x, y)
    if vmax > _f32(vmin + K_MINUS_LOG_EPSILON):
        return vmax
    return _f32(vmax + math.log(math.exp(_f32(vmin - vmax)) + 1.0))


def _populate_marginal(lattice: _Lattice, freq: float, expected: dict[str, float], unk_key: str) -> float:
    """Lattice::PopulateMarginal: adds freq * P(node) to expected[piece] for every node (unknown nodes under
    `unk_key`), in the order begin[0], begin[1], ... Returns log Z (sentencepiece returns freq * log Z, used
    only for logging the objective)."""
    alpha, beta = lattice.forward(1.0), lattice.backward()
    z = alpha[lattice.eos.nid]
    for pos in range(len(lattice.text)):
        for node in lattice.begin[pos]:
            key = unk_key if node.kind == UNKNOWN else node.piece
            p = math.exp(_f32(_f32(_f32(alpha[node.nid] + node.score) + beta[node.nid]) - z))
            expected[key] = _f32(expected.get(key, 0.0) + freq * p)
    return z


# --- the model's scores -------------------------------------------------------------------------------------------


def _min_max(pieces: dict[str, float]) -> tuple[float, float]:
    """Model::min_score_ / max_score_ over NORMAL pieces. max_score_ starts at FLT_MIN (> 0) and scores are log
    probabilities (< 0), so in practice max_score_ == FLT_MIN."""
    lo, hi = FLT_MAX, FLT_MIN
    for s in pieces.values():
        lo, hi = min(lo, s), max(hi, s)
    return lo, hi


def default_unk_score(pieces: dict[str, float]) -> float:
    """min NORMAL score - kUnkPenalty (10), in float32."""
    return _f32(_min_max(pieces)[0] - K_UNK_PENALTY)


def _user_score_lattice(piece: str, max_score: float) -> float:
    """PopulateNodes: a user-defined piece scores `length_in_chars * max_score_ - 0.1`, stored as float.
    Since max_score_ is FLT_MIN in practice, this is -0.1 whatever the length."""
    return _f32(_f32(len(piece) * max_score) - 0.1)


def _user_score_optimized(piece: str, max_score: float) -> float:
    """EncodeOptimized: `length_in_utf8_bytes * max_score_ - 0.1`, kept as a double (the ternary mixes double
    and float). Again -0.1 in practice."""
    return _f32(len(piece.encode()) * max_score) - 0.1


def _table(pieces: dict[str, float], user_defined: Iterable[str], user_score) -> dict[str, tuple[str, float]]:
    _, hi = _min_max(pieces)
    table = {p: (NORMAL, _f32(s)) for p, s in pieces.items()}
    for p in user_defined:
        table[p] = (USER, user_score(p, hi))
    return table


def _output(segments: Iterable[tuple[str, str]], byte_fallback: bool) -> list[str]:
    """SentencePieceProcessor::PopulateSentencePieceText: with byte_fallback, an unknown piece becomes one
    `<0xXX>` piece per UTF-8 byte; without it, a run of consecutive unknown pieces is merged into one piece whose
    spelling is the unknown text itself (its id is unk_id)."""
    out: list[str] = []
    prev_unk = False
    for piece, kind in segments:
        is_unk = kind == UNKNOWN
        if is_unk and byte_fallback:
            out.extend(f"<0x{b:02X}>" for b in piece.encode())
        elif is_unk and prev_unk:
            out[-1] += piece
        else:
            out.append(piece)
        prev_unk = is_unk
    return out


# --- 1. best segmentation -------------------------------------------------------------------------------------------


def viterbi(
    text: str,
    pieces: dict[str, float],
    *,
    unk_score: float | None = None,
    byte_fallback: bool = False,
    user_defined: Sequence[str] = (),
) -> list[str]:
    """The best segmentation, as Model::EncodeOptimized (sentencepiece's default encoder) finds it.

    Left to right over start positions; from each start every piece that matches (shortest first) proposes
    best[start] + score for best[end]; if no one-character piece matches, an unknown node does. A proposal
    replaces the current best only if strictly greater, so among equal-scoring paths the one whose last piece
    starts earliest (is longest) wins at every position. Piece proposals are compared as doubles against the
    float32 stored best; the unknown proposal is a float32 sum."""
    if not text:
        return []
    unk = default_unk_score(pieces) if unk_score is None else unk_score
    table = _table(pieces, user_defined, _user_score_optimized)
    max_len = max((len(p) for p in table), default=1)
    n = len(text)
    best_score = [0.0] * (n + 1)
    best_start = [-1] * (n + 1)
    best_kind = [""] * (n + 1)

    def propose(end: int, start: int, candidate: float, kind: str) -> None:
        if best_start[end] == -1 or candidate > best_score[end]:
            best_score[end], best_start[end], best_kind[end] = _f32(candidate), start, kind

    for start in range(n):
        has_single = False
        for end in range(start + 1, min(n, start + max_len) + 1):
            hit = table.get(text[start:end])
            if hit is not None:
                propose(end, start, hit[1] + best_score[start], hit[0])
                has_single = has_single or end == start + 1
        if not has_single:
            propose(start + 1, start, _f32(unk + best_score[start]), UNKNOWN)

    segments = []
    end = n
    while end > 0:
        start = best_start[end]
        segments.append((text[start:end], best_kind[end]))
        end = start
    return _output(reversed(segments), byte_fallback)


# --- 2. n best segmentations ----------------------------------------------------------------------------------------


class _Hyp:
    __slots__ = ("node", "next", "fx", "gx")

    def __init__(self, node: _Node, nxt: _Hyp | None, fx: float, gx: float) -> None:
        self.node, self.next, self.fx, self.gx = node, nxt, fx, gx


class _Agenda:
    """std::priority_queue<Hypothesis*> with comparator `h1->fx < h2->fx`, reproducing libstdc++'s push_heap /
    pop_heap exactly, so hypotheses with equal fx come out in the same order as in sentencepiece."""

    def __init__(self) -> None:
        self.heap: list[_Hyp] = []

    def __len__(self) -> int:
        return len(self.heap)

    def _sift_up(self, hole: int, top: int, value: _Hyp) -> None:  # std::__push_heap
        h = self.heap
        parent = (hole - 1) // 2
        while hole > top and h[parent].fx < value.fx:
            h[hole] = h[parent]
            hole = parent
            parent = (hole - 1) // 2
        h[hole] = value

    def push(self, value: _Hyp) -> None:
        self.heap.append(value)
        self._sift_up(len(self.heap) - 1, 0, value)

    def pop(self) -> _Hyp:  # std::pop_heap (via __adjust_heap) + pop_back
        h = self.heap
        top = h[0]
        length = len(h) - 1
        if length > 0:
            value = h[length]
            h[length] = h[0]
            hole = 0
            child = 0
            while child < (length - 1) // 2:
                child = 2 * (child + 1)
                if h[child].fx < h[child - 1].fx:
                    child -= 1
                h[hole] = h[child]
                hole = child
            if length % 2 == 0 and child == (length - 2) // 2:
                child = 2 * (child + 1)
                h[hole] = h[child - 1]
                hole = child - 1
            self._sift_up(hole, 0, value)
        h.pop()
        return top


def _nbest_paths(lattice: _Lattice, n: int) -> list[tuple[list[_Node], float]]:
    """Lattice::NBest without sampling: A* from EOS towards BOS. A hypothesis is a partial path from some node to
    EOS; g = its float32 score (summed right to left), f = g + Viterbi score from BOS through its leftmost node,
    which is the exact best completion, so hypotheses reach BOS in order of total score."""
    lattice.viterbi()
    agenda = _Agenda()
    agenda.push(_Hyp(lattice.eos, None, lattice.eos.backtrace, 0.0))
    results: list[tuple[list[_Node], float]] = []
    while len(agenda):
        top = agenda.pop()
        if top.node is lattice.bos:
            path, h = [], top.next
            while h.next is not None:
                path.append(h.node)
                h = h.next
            results.append((path, top.fx))
            if len(results) == n:
                break
            continue
        for left in lattice.end[top.node.pos]:
            agenda.push(_Hyp(left, top, _f32(left.backtrace + top.gx), _f32(left.score + top.gx)))
        if len(agenda) >= K_MAX_AGENDA_SIZE:  # keep only the best few, as sentencepiece does for huge agendas
            kept = _Agenda()
            for _ in range(min(K_MIN_AGENDA_SIZE, n * 10)):
                kept.push(agenda.pop())
            agenda = kept
    return results


def nbest(
    text: str,
    pieces: dict[str, float],
    n: int,
    *,
    unk_score: float | None = None,
    byte_fallback: bool = False,
    user_defined: Sequence[str] = (),
) -> list[tuple[list[str], float]]:
    """The n best segmentations with their scores, best first (Model::NBestEncode). n is clamped to [1, 1024];
    n == 1 is the plain encoder with score 0.0, as in sentencepiece."""
    n = max(1, min(n, K_MAX_NBEST))
    if not text:
        return [([], 0.0)]
    if n == 1:
        return [
            (viterbi(text, pieces, unk_score=unk_score, byte_fallback=byte_fallback, user_defined=user_defined), 0.0)
        ]
    unk = default_unk_score(pieces) if unk_score is None else unk_score
    lattice = _Lattice(text, _table(pieces, user_defined, _user_score_lattice), unk)
    return [
        (_output(((node.piece, node.kind) for node in path), byte_fallback), score)
        for path, score in _nbest_paths(lattice, n)
    ]


# --- 3. forward-backward ------------------------------------------------------------------------------------------


def marginals(
    text: str,
    pieces: dict[str, float],
    *,
    unk_score: float | None = None,
    user_defined: Sequence[str] = (),
    freq: float = 1.0,
) -> tuple[float, dict[str, float]]:
    """(log Z, expected count of each piece) over all segmentations of `text`, weighted by exp(score), times
    `freq` (Lattice::PopulateMarginal, as the E-step calls it). Unknown nodes are counted under `UNK`."""
    unk = default_unk_score(pieces) if unk_score is None else unk_score
    lattice = _Lattice(text, _table(pieces, user_defined, _user_score_lattice), unk)
    expected: dict[str, float] = {}
    z = _populate_marginal(lattice, _f32(freq), expected, UNK)
    return z, expected


# --- 4. sampling ------------------------------------------------------------------------------------------------


def sample(
    text: str,
    pieces: dict[str, float],
    alpha: float,
    rng: random.Random,
    *,
    unk_score: float | None = None,
    byte_fallback: bool = False,
    user_defined: Sequence[str] = (),
) -> list[str]:
    """One segmentation drawn with probability proportional to exp(alpha * score) (Lattice::Sample, what
    `encode(enable_sampling=True, nbest_size=-1, alpha=alpha)` does): forward filtering with scores scaled by
    alpha, then backward sampling from EOS, picking the left neighbour of the current node with probability
    exp(alpha_fwd[left] + alpha * score(left) - alpha_fwd[current])."""
    if not text:
        return []
    unk = default_unk_score(pieces) if unk_score is None else unk_score
    lattice = _Lattice(text, _table(pieces, user_defined, _user_score_lattice), unk)
    fwd = lattice.forward(_f32(alpha))
    inv_theta = _f32(alpha)
    node = lattice.eos
    segments = []
    while True:
        z = fwd[node.nid]
        lefts = lattice.end[node.pos]
        weights = [math.exp(fwd[left.nid] + inv_theta * left.score - z) for left in lefts]
        node = rng.choices(lefts, weights=weights)[0]
        if node is lattice.bos:
            break
        segments.append((node.piece, node.kind))
    return _output(reversed(segments), byte_fallback)


# --- 5. training ------------------------------------------------------------------------------------------------


def _script(c: str) -> str:
    """The Unicode script of `c`, approximated from unicodedata (the stdlib has no Script property).
    sentencepiece uses a table generated from Scripts.txt (unicode_script_map.h; characters missing from it are
    Common). This approximation is exact for ASCII, Latin-1 letters, combining diacritics, CJK ideographs, kana,
    Hangul, Greek, Cyrillic, Arabic, Hebrew, Thai and Devanagari letters, which is all the tests need:
    letters and marks take the first word of their name, combining marks and joiners are Inherited,
    everything else (digits, punctuation, symbols, spaces) is Common."""
    if c in "\u200c\u200d" or "\ufe00" <= c <= "\ufe0f":
        return "Inherited"
    category = unicodedata.category(c)
    name = unicodedata.name(c, "")
    if category[0] == "M" and (name.startswith("COMBINING") or "0300" <= f"{ord(c):04X}" <= "036F"):
        return "Inherited"
    if category[0] in "LM" or category == "Nl":
        word = name.split(" ")[0] if name else "Common"
        if word in ("FULLWIDTH", "HALFWIDTH"):
            word = name.split(" ")[1]
        if word == "CJK":
            return "Han"
        if word in ("HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA"):
            return "Han"  # IsValidSentencePiece merges Hiragana and Katakana into Han
        if word in ("ROMAN", "FEMININE", "MASCULINE"):
            return "LATIN"
        return word
    return "Common"


def _is_decimal(c: str) -> bool:
    return "0" <= c <= "9" or "\uff10" <= c <= "\uff19"


def is_valid_piece(
    piece: str,
    *,
    max_piece_length: int = 16,
    split_by_whitespace: bool = True,
    treat_whitespace_as_suffix: bool = False,
    allow_whitespace_only_pieces: bool = False,
    split_by_unicode_script: bool = True,
    split_by_number: bool = True,
    split_digits: bool = False,
) -> bool:
    """TrainerInterface::IsValidSentencePiece: may `piece` be a seed / vocabulary piece?
    - 1 <= length <= max_piece_length (in characters);
    - no '▅' (UNK_CHAR), NUL, tab (UPP boundary), ASCII space or invalid code point;
    - '▁' only as the first character (split_by_whitespace), or anywhere but the last position when not
      splitting by whitespace; mirrored for treat_whitespace_as_suffix; all-'▁' pieces are always fine when
      allow_whitespace_only_pieces;
    - one script per piece (split_by_unicode_script): Hiragana, Katakana and U+30FC count as Han, Inherited
      takes the previous character's script, and with split_by_number=False ASCII/fullwidth digits match any
      script; with split_digits a digit must be a piece on its own."""
    if not piece or len(piece) > max_piece_length:
        return False
    all_ws = all(c == WS for c in piece)
    any_script = object()
    prev = any_script
    last = len(piece) - 1
    for pos, c in enumerate(piece):
        if c in (UNK_CHAR, "\0", UPP_BOUNDARY, " ") or 0xD800 <= ord(c) <= 0xDFFF:
            return False
        if c == WS:
            if not (allow_whitespace_only_pieces and all_ws):
                if treat_whitespace_as_suffix:
                    bad = pos < last if split_by_whitespace else (pos < last and pos == 0)
                else:
                    bad = pos > 0 if split_by_whitespace else (pos > 0 and pos == last)
                if bad:
                    return False
            continue
        s = "Han" if c == "\u30fc" else _script(c)
        if s == "Inherited":
            s = prev
        if not split_by_number and _is_decimal(c):
            s = any_script
        if split_digits and _is_decimal(c) and len(piece) > 1:
            return False
        if split_by_unicode_script and s is not any_script and prev is not any_script and prev != s:
            return False
        prev = s
    return True


def _sorted_by_value(items: Iterable[tuple], key_of=lambda k: k) -> list[tuple]:
    """sentencepiece's Sorted(): value descending, then key ascending. (std::string compares bytes, which for
    UTF-8 is code point order, i.e. Python's str order.)"""
    return sorted(items, key=lambda kv: (-kv[1], key_of(kv[0])))


def split_into_words(text: str, treat_whitespace_as_suffix: bool = False, allow_ws_only: bool = False) -> list[str]:
    """model_interface.cc SplitIntoWords: a new word starts at each '▁' (or, as suffix, after each '▁'); with
    allow_ws_only a run of '▁' stays together."""
    words: list[str] = []
    if treat_whitespace_as_suffix:
        if text:
            words.append("")
        in_ws = False
        for k, c in enumerate(text):
            is_ws = c == WS
            if is_ws:
                in_ws = True
            elif in_ws:
                if allow_ws_only:
                    words.append("")
                in_ws = False
            words[-1] += c
            if k + 1 < len(text) and is_ws and not allow_ws_only:
                words.append("")
        return words
    in_ws = False
    for k, c in enumerate(text):
        is_ws = c == WS
        if k == 0 or (is_ws and (not in_ws or not allow_ws_only)):
            words.append("")
            in_ws = True
        if in_ws and not is_ws:
            in_ws = False
        words[-1] += c
    return words


def _replace_meta(text: str, meta: Sequence[str]) -> str:
    """PrefixMatcher::GlobalReplace: the longest meta piece matching at each position becomes a tab."""
    if not meta:
        return text
    out, i = [], 0
    while i < len(text):
        match = max((m for m in meta if m and text.startswith(m, i)), key=len, default="")
        if match:
            out.append(UPP_BOUNDARY)
            i += len(match)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _seed_pieces(lines: list[tuple[str, int]], seed_size: int, max_piece_length: int, valid) -> list[tuple[str, float]]:
    """MakeSeedSentencePieces. sentencepiece joins all sentences with NUL separators into one array, builds its
    suffix array (esaxx) and takes every internal node of the suffix tree: a substring occurring at least twice
    whose occurrences are followed by at least two different characters (the NUL after a sentence counts as a
    character). Here the same set is found by counting substrings sentence by sentence (a sentence that occurs
    `count` times counts `count` times, as `count` identical lines would; substrings longer than
    max_piece_length are never valid, so they are not counted). Then:
    - every character of the corpus (except '▅') is a seed with score = its frequency, sorted by
      (frequency desc, char asc), first;
    - substrings of length >= 2 that are valid pieces and contain no NUL score frequency * length; the best
      `seed_size` of them follow, sorted by (score desc, suffix-tree node index asc). esaxx numbers nodes in
      the order it pops them while scanning the suffix array: by right end of the SA interval, deeper first,
      which is lexicographic order of the substrings in which a string comes *before* its own prefixes;
    - scores become log(score / sum of scores), in float32 (ToLogProb)."""
    chars: dict[str, int] = {}
    occurrences: dict[str, int] = {}
    followers: dict[str, set[str]] = {}
    for text, count in lines:
        for c in text:
            if c != UNK_CHAR:
                chars[c] = chars.get(c, 0) + count
        n = len(text)
        for i in range(n):
            for j in range(i + 2, min(n, i + max_piece_length) + 1):
                sub = text[i:j]
                occurrences[sub] = occurrences.get(sub, 0) + count
                followers.setdefault(sub, set()).add(text[j] if j < n else SENTENCE_BOUNDARY)
    seeds: list[tuple[str, float]] = [(c, _f32(f)) for c, f in _sorted_by_value(chars.items())]
    candidates = [(s, f * len(s)) for s, f in occurrences.items() if len(followers[s]) >= 2 and valid(s)]

    def node_order(s: str) -> tuple[int, ...]:
        return (*map(ord, s), 0x110000)

    candidates.sort(key=lambda kv: (-kv[1], node_order(kv[0])))
    seeds += [(s, _f32(score)) for s, score in candidates[:seed_size]]
    total = 0.0
    for _, f in seeds:
        total = _f32(total + f)
    log_total = _f32(math.log(total))
    return [(s, _f32(math.log(f) - log_total)) for s, f in seeds]


def _digamma(x: float) -> float:
    """The digamma function as unigram_model_trainer.cc computes it: shift x up to >= 7 with
    psi(x) = psi(x + 1) - 1/x, then the asymptotic series at x - 1/2."""
    result = 0.0
    while x < 7:
        result -= 1 / x
        x += 1
    x -= 1.0 / 2.0
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    result += math.log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2
    result -= (127.0 / 30720.0) * xx4 * xx4
    return result


class _TrainerModel:
    """TrainerModel: the current pieces in order, each with a float32 score. Its lattices use unknown score
    min(score) - 10; an unknown node's vocabulary id is 0 (ModelInterface::unk_id_ is never set for a
    TrainerModel), so whatever expected count or Viterbi frequency an unknown character gets is credited to
    piece number 0. This reproduces sentencepiece, odd as it is."""

    def __init__(self, pieces: list[tuple[str, float]]) -> None:
        self.pieces = pieces
        self.index = {p: i for i, (p, _) in enumerate(pieces)}
        self.min_score = min((s for _, s in pieces), default=FLT_MAX)
        self.table = {p: (NORMAL, s) for p, s in pieces}
        self.unk_score = _f32(self.min_score - K_UNK_PENALTY)
        self.max_len = max((len(p) for p in self.table), default=1)

    def lattice(self, text: str) -> _Lattice:
        return _Lattice(text, self.table, self.unk_score, self.max_len)

    def node_id(self, node: _Node) -> int:
        return 0 if node.kind == UNKNOWN else self.index[node.piece]


def _e_step(model: _TrainerModel, sentences: list[tuple[str, int]]) -> list[float]:
    """RunEStep (one thread): expected counts of every piece, each sentence weighted by its frequency."""
    expected: dict[str, float] = {}
    unk_key = model.pieces[0][0]
    for text, freq in sentences:
        _populate_marginal(model.lattice(text), _f32(freq), expected, unk_key)
    return [expected.get(p, 0.0) for p, _ in model.pieces]


def _m_step(model: _TrainerModel, expected: list[float]) -> list[tuple[str, float]]:
    """RunMStep: drop pieces with expected count < 0.5, then the Bayesian (Dirichlet-process flavoured) update
    score = digamma(count) - digamma(sum of kept counts), instead of log(count / sum). float32 sums."""
    kept = []
    total = 0.0
    for (piece, _), count in zip(model.pieces, expected, strict=True):
        if count < K_EXPECTED_FREQUENCY_THRESHOLD:
            continue
        kept.append((piece, count))
        total = _f32(total + count)
    log_total = _f32(_digamma(total))
    return [(piece, _f32(_digamma(count) - log_total)) for piece, count in kept]


def _prune(
    model: _TrainerModel, sentences: list[tuple[str, int]], desired: int, shrinking_factor: float
) -> list[tuple[str, float]]:
    """PruneSentencePieces.
    1. Each piece alone: its two best segmentations (A*). If there is only one, the piece is kept
       unconditionally (if used). If the best one has >= 2 pieces, the piece can never be produced and is
       dropped. Otherwise the second best is its `alternative`.
    2. Viterbi over all sentences: freq[i] = sentence-frequency-weighted count of piece i in best paths.
    3. A piece with freq 0 is dropped; one without alternative is kept; for the others
       loss = F * (logprob_sp - logprob_alt) where F = freq[i] / total sentence frequency,
       logprob_sp = log(freq[i]) - log(sum), and logprob_alt = sum over the alternative's pieces n of
       log(freq[n] + freq[i]) - log(sum + freq[i] * (len(alternative) - 1)): the likelihood lost if every use
       of piece i were replaced by its alternative.
    4. New vocabulary: the unconditionally kept pieces (in current order), then candidates by (loss desc,
       index asc) until the size reaches max(desired, int(shrinking_factor * current size))."""
    pieces = model.pieces
    always_keep = [True] * len(pieces)
    alternatives: list[list[int]] = [[] for _ in pieces]
    for i, (piece, _) in enumerate(pieces):
        best = _nbest_paths(model.lattice(piece), 2)
        if len(best) == 1:
            continue
        if len(best[0][0]) >= 2:
            always_keep[i] = False
        elif len(best[0][0]) == 1:
            alternatives[i] = [model.node_id(node) for node in best[1][0]]

    freq = [0.0] * len(pieces)
    inverted: list[list[int]] = [[] for _ in pieces]
    vsum = 0.0
    for k, (text, count) in enumerate(sentences):
        vsum = _f32(vsum + count)
        for node in model.lattice(text).viterbi():
            i = model.node_id(node)
            freq[i] = _f32(freq[i] + count)
            inverted[i].append(k)

    total_d = 0.0
    for f in freq:  # std::accumulate(..., 0.0) sums in double
        total_d += f
    total = _f32(total_d)
    log_total = _f32(math.log(total))
    kept: list[tuple[str, float]] = []
    candidates: list[tuple[int, float]] = []
    for i, piece in enumerate(pieces):
        if freq[i] == 0 or not always_keep[i]:
            continue
        if not alternatives[i]:
            kept.append(piece)
            continue
        big_f = 0.0
        for k in inverted[i]:
            big_f = _f32(big_f + sentences[k][1])
        big_f = _f32(big_f / vsum)
        logprob_sp = _f32(math.log(freq[i]) - log_total)
        log_total_alt = _f32(math.log(_f32(total + _f32(freq[i] * (len(alternatives[i]) - 1)))))
        logprob_alt = 0.0
        for n in alternatives[i]:
            logprob_alt = _f32(logprob_alt + (math.log(_f32(freq[n] + freq[i])) - log_total_alt))
        candidates.append((i, _f32(big_f * _f32(logprob_sp - logprob_alt))))

    pruned_size = max(desired, int(_f32(_f32(shrinking_factor) * len(pieces))))
    for i, _ in _sorted_by_value(candidates):
        if len(kept) == pruned_size:  # (an equality test, as in sentencepiece)
            break
        kept.append(pieces[i])
    return kept


def train(
    sentences: dict[str, int],
    *,
    vocab_size: int,
    character_coverage: float = 1.0,
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
    shrinking_factor: float = 0.75,
    num_sub_iterations: int = 2,
    required_chars: str | None = None,
    split_by_whitespace: bool = True,
    treat_whitespace_as_suffix: bool = False,
    allow_whitespace_only_pieces: bool = False,
    split_by_unicode_script: bool = True,
    split_by_number: bool = True,
    split_digits: bool = False,
    meta_pieces: Sequence[str] = ("<unk>", "<s>", "</s>"),
) -> dict[str, float]:
    """sentencepiece's Unigram trainer (num_threads=1). `sentences` maps each normalized sentence to the number
    of lines it appears on (dict order = line order). Returns the NORMAL pieces with their scores in the order
    sentencepiece writes them after the meta pieces (`meta_pieces`: unk/bos/eos, control, user-defined and byte
    pieces, which take `len(meta_pieces)` of the `vocab_size` slots).

    Steps: (1) meta pieces in the text become tabs; lines containing '▅' are skipped. (2) Required characters:
    `required_chars` first, then by frequency (ties: smaller code point), taken while the float32 coverage so far
    is < character_coverage; the others become '▅'. (3) Seeds from whole sentences (`_seed_pieces`). (4) If
    split_by_whitespace, sentences become words with summed counts, sorted (count desc, word asc). (5) Repeat:
    `num_sub_iterations` x (E-step, M-step); stop once size <= int(vocab_size * 1.1); else prune. (6) Finalize:
    required characters first (their score, or if pruned away: min score + 0.0001 * k for the k-th missing one in
    (frequency desc, char asc) order), then the other pieces by (score desc, piece asc) up to the budget; the
    result sorted by (score desc, piece asc). Sentences longer than max_sentence_length (4192 bytes) are not
    filtered here: pass shorter ones."""
    valid_opts = {
        "max_piece_length": max_piece_length,
        "split_by_whitespace": split_by_whitespace,
        "treat_whitespace_as_suffix": treat_whitespace_as_suffix,
        "allow_whitespace_only_pieces": allow_whitespace_only_pieces,
        "split_by_unicode_script": split_by_unicode_script,
        "split_by_number": split_by_number,
        "split_digits": split_digits,
    }

    def valid(piece: str) -> bool:
        return is_valid_piece(piece, **valid_opts)

    # (1) load
    lines = [(_replace_meta(s, meta_pieces), c) for s, c in sentences.items() if s and UNK_CHAR not in s and c > 0]

    # (2) required characters and coverage
    required_set = set(required_chars or "")
    char_counts: dict[str, int] = {c: 0 for c in required_set if c != "\0"}
    total_chars = 0
    for text, count in lines:
        for c in text:
            if c in ("\0", " "):
                continue
            char_counts[c] = char_counts.get(c, 0) + count
            total_chars += count
    required: dict[str, int] = {}
    accumulated = 0
    for c, _ in sorted(char_counts.items(), key=lambda kv: (kv[0] not in required_set, -kv[1], kv[0])):
        coverage = _f32(accumulated / total_chars) if total_chars else 0.0
        if coverage >= character_coverage:
            break
        accumulated += char_counts[c]
        if c == UPP_BOUNDARY:
            continue
        required[c] = char_counts[c]
    lines = [("".join(c if c in required else UNK_CHAR for c in text), count) for text, count in lines]

    # (3) seeds, from whole sentences
    model = _TrainerModel(_seed_pieces(lines, seed_size, max_piece_length, valid))

    # (4) words
    if split_by_whitespace:
        words: dict[str, int] = {}
        for text, count in lines:
            for w in split_into_words(text, treat_whitespace_as_suffix, allow_whitespace_only_pieces):
                words[w] = words.get(w, 0) + count
        corpus = _sorted_by_value(words.items())
    else:
        corpus = [(text, 1) for text, count in lines for _ in range(count)]

    # (5) EM and pruning
    desired = int(vocab_size * K_DESIRED_VOCAB_FACTOR)
    while True:
        for _ in range(num_sub_iterations):
            model = _TrainerModel(_m_step(model, _e_step(model, corpus)))
        if len(model.pieces) <= desired:
            break
        model = _TrainerModel(_prune(model, corpus, desired, shrinking_factor))

    # (6) finalize
    current = dict(model.pieces)
    final: dict[str, float] = {}
    penalty = 0.0
    for c, _ in _sorted_by_value(required.items()):
        if c in current:
            final[c] = current[c]
        else:
            final[c] = _f32(model.min_score + penalty)
            penalty = _f32(penalty + K_MIN_SCORE_PENALTY_DELTA)
    budget = vocab_size - len(meta_pieces)
    for piece, score in _sorted_by_value(model.pieces):
        if piece in final:
            continue
        if len(final) == budget:
            break
        final[piece] = score
    return dict(_sorted_by_value(final.items()))
