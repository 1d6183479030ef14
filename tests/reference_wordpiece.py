"""A slow, obviously correct WordPiece trainer: every step recounts every pair and symbol and
merges the pair with the highest count(ab) / (count(a)·count(b)); ties go to the smaller left
token's bytes, then the smaller right's. The oracle for tokenmill's incremental trainer."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise


def train(words: dict[str, int], vocab_size: int, specials: list[str], prefix: str = "##") -> list[str]:
    tokens = list(specials)
    seqs = []
    alphabet: set[str] = set()
    for word, count in sorted(words.items()):
        symbols = [c if i == 0 else prefix + c for i, c in enumerate(word)]
        alphabet.update(symbols)
        seqs.append((symbols, count))
    tokens += sorted(alphabet, key=lambda t: t.encode("utf-8"))
    while len(tokens) < vocab_size:
        pair_counts: Counter[tuple[str, str]] = Counter()
        symbol_counts: Counter[str] = Counter()
        for symbols, count in seqs:
            for s in symbols:
                symbol_counts[s] += count
            for a, b in pairwise(symbols):
                pair_counts[(a, b)] += count
        if not pair_counts:
            break

        def key(pair: tuple[str, str], pairs: Counter = pair_counts, symbols: Counter = symbol_counts) -> tuple:
            a, b = pair
            score = float(pairs[pair]) / (float(symbols[a]) * float(symbols[b]))
            return (-score, a.encode("utf-8"), b.encode("utf-8"))

        a, b = min(pair_counts, key=key)
        merged = a + b[len(prefix) :] if b.startswith(prefix) else a + b
        if merged not in tokens:
            tokens.append(merged)
        new_seqs = []
        for symbols, count in seqs:
            out, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
                    out.append(merged)
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            new_seqs.append((out, count))
        seqs = new_seqs
    return tokens
