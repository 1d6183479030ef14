"""A small, slow, obviously-correct BPE in pure Python: the oracle for tokenmill's trainer and
encoder. Each merge recounts every pair from scratch; nothing is incremental or clever.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise


def train(
    words: dict[bytes, int],
    *,
    num_merges: int | None = None,
    vocab_size: int | None = None,
    byte_level: bool = True,
    end_of_word_suffix: str | None = None,
    special_tokens: tuple[str, ...] = (),
    min_frequency: int = 1,
    max_token_length: int | None = None,
    limit_alphabet: int | None = None,
    initial_alphabet: str = "",
) -> list[tuple[bytes, bytes]]:
    """Merges in order, as pairs of token bytes. Ties: higher count, then smaller left bytes,
    then smaller right bytes. Character-level, `limit_alphabet` keeps `initial_alphabet` plus the
    most frequent other characters (ties: smaller code point), and a character left out cuts
    its word in two."""
    suffix = end_of_word_suffix.encode() if end_of_word_suffix else None
    seqs: dict[tuple[bytes, ...], int] = Counter()
    alphabet: set[bytes] = set()
    if byte_level:
        for word, count in words.items():
            seqs[tuple(bytes([b]) for b in word)] += count
    else:
        char_counts: Counter[str] = Counter()
        for word, count in words.items():
            for c in word.decode("utf-8"):
                char_counts[c] += count
        others = sorted((c for c in char_counts if c not in initial_alphabet), key=lambda c: (-char_counts[c], c))
        if limit_alphabet is not None:
            others = others[: limit_alphabet - len(set(initial_alphabet))]
        kept = set(initial_alphabet) | set(others)
        alphabet = {c.encode() for c in kept}
        for word, count in words.items():
            pieces: list[list[bytes]] = [[]]
            for c in word.decode("utf-8"):
                if c in kept:
                    pieces[-1].append(c.encode())
                else:
                    pieces.append([])
            if suffix:
                pieces[-1].append(suffix)
            for piece in pieces:
                seqs[tuple(piece)] += count
    vocab = set(bytes([b]) for b in range(256)) if byte_level else alphabet | ({suffix} if suffix else set())
    vocab_len = len(vocab) + len(special_tokens)

    def token_len(t: bytes) -> int:
        if byte_level:
            return len(t)
        if suffix and t.endswith(suffix):
            t = t[: -len(suffix)]
        return len(t.decode("utf-8"))

    merges: list[tuple[bytes, bytes]] = []
    skipped: set[tuple[bytes, bytes]] = set()
    while True:
        if vocab_size is not None and vocab_len >= vocab_size:
            break
        if num_merges is not None and len(merges) >= num_merges:
            break
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for seq, count in seqs.items():
            for a, b in pairwise(seq):
                pairs[(a, b)] += count
        candidates = [(c, p) for p, c in pairs.items() if p not in skipped]
        if not candidates:
            break
        count, best = min(candidates, key=lambda cp: (-cp[0], cp[1][0], cp[1][1]))
        if count < max(min_frequency, 1):
            break
        merged = best[0] + best[1]
        if max_token_length is not None and token_len(merged) > max_token_length:
            skipped.add(best)
            continue
        merges.append(best)
        if merged not in vocab:
            vocab.add(merged)
            vocab_len += 1
        new_seqs: dict[tuple[bytes, ...], int] = Counter()
        for seq, c in seqs.items():
            out, i = [], 0
            while i < len(seq):
                if i + 1 < len(seq) and (seq[i], seq[i + 1]) == best:
                    out.append(merged)
                    i += 2
                else:
                    out.append(seq[i])
                    i += 1
            new_seqs[tuple(out)] += c
        seqs = new_seqs
    return merges


def encode_piece(
    piece: bytes, merges: list[tuple[bytes, bytes]], *, byte_level: bool = True, end_of_word_suffix: str | None = None
) -> list[bytes]:
    """Tokens of one piece: repeatedly merge the adjacent pair of lowest rank, leftmost first."""
    rank = {}
    for i, m in enumerate(merges):
        rank.setdefault(m, i)
    if byte_level:
        symbols = [bytes([b]) for b in piece]
    else:
        symbols = [c.encode() for c in piece.decode("utf-8")]
        if end_of_word_suffix:
            symbols.append(end_of_word_suffix.encode())
    while len(symbols) > 1:
        ranked = [(rank[p], i) for i, p in enumerate(pairwise(symbols)) if p in rank]
        if not ranked:
            break
        _, i = min(ranked)
        symbols[i : i + 2] = [symbols[i] + symbols[i + 1]]
    return symbols
