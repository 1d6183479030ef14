"""The vocabulary-size trade-off: train once, then evaluate every smaller size by truncation
(`Tokenizer.truncated(V)` is what training with vocab_size=V gives) on held-back text.

A bigger vocabulary shortens sequences, but the embedding and output layers cost 2·V·d
parameters (untied; half that when tied), which dominates small models. Each size also gets the
efficiency of its token distribution p, after Zouhar et al. 2023 ("Tokenization and the
Noiseless Channel"): Shannon efficiency H(p) / log V and Rényi efficiency H_α(p) / log V with
H_α(p) = log(Σ pᵢ^α) / (1 − α); they found α = 2.5 to track downstream quality best. Sizes where
bytes/token barely improves while 2·V·d still grows are where a bigger vocabulary stops paying.

cl100k_base, cut to four sizes, on text it was not trained on:

>>> sweep = vocab_sweep(tok, "corpus.txt", sizes=[1000, 4000, 16000, 64000], d_model=768, body_params=85_000_000)
>>> [(r.vocab_size, round(r.bytes_per_token, 2)) for r in sweep.rows]
[(1000, 2.23), (4000, 2.95), (16000, 3.85), (64000, 4.5)]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tokenmill import _checks, _core
from tokenmill.analysis._corpus import CorpusArg, corpus_groups
from tokenmill.analysis._counting import count_group
from tokenmill.analysis._load import TokenizerArg, load_one
from tokenmill.analysis._table import format_table
from tokenmill.tokenizer import Tokenizer


@dataclass
class SweepRow:
    vocab_size: int
    tokens: int
    bytes_per_token: float
    tokens_per_word: float
    shannon_efficiency: float
    renyi_efficiency: float
    embedding_params: int | None
    """2·V·d (embedding and output layer), with `d_model`."""
    embedding_share: float | None
    """2·V·d / (body_params + 2·V·d), with both."""


@dataclass
class VocabSweep:
    tokenizer: str
    text_bytes: int
    words: int
    renyi_alpha: float
    d_model: int | None
    body_params: int | None
    rows: list[SweepRow]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def format(self) -> str:
        columns = [
            "vocab",
            "tokens",
            "bytes/token",
            "tokens/word",
            "Shannon eff.",
            f"Rényi eff. (α={self.renyi_alpha})",
        ]
        columns += ["2·V·d", "share of model"]
        body = [
            [r.vocab_size, r.tokens, f"{r.bytes_per_token:.3f}", f"{r.tokens_per_word:.3f}"]
            + [f"{r.shannon_efficiency:.3f}", f"{r.renyi_efficiency:.3f}"]
            + ["" if r.embedding_params is None else f"{r.embedding_params:,}"]
            + ["" if r.embedding_share is None else f"{100 * r.embedding_share:.1f}%"]
            for r in self.rows
        ]
        return format_table(columns, body)


def efficiencies(counts: Sequence[int], vocab_size: int, alpha: float = 2.5) -> tuple[float, float]:
    """(Shannon, Rényi) efficiency of a token distribution given as counts per id.

    >>> efficiencies([1, 1, 1, 1], 4)      # uniform over the whole vocabulary: 1 and 1
    (1.0, 1.0)
    >>> [round(x, 3) for x in efficiencies([2, 1, 1, 0], 4)]
    [0.75, 0.688]
    """
    total = sum(counts)
    if not total or vocab_size < 2:
        return 0.0, 0.0
    probs = [c / total for c in counts if c]
    shannon = -sum(p * math.log(p) for p in probs)
    if alpha == 1:
        renyi = shannon
    else:
        renyi = math.log(sum(p**alpha for p in probs)) / (1 - alpha)
    scale = math.log(vocab_size)
    return shannon / scale, renyi / scale


def default_sizes(vocab_size: int, points: int = 8) -> list[int]:
    """Halvings of the full size, smallest first.

    >>> default_sizes(32768, 4)
    [4096, 8192, 16384, 32768]
    """
    return sorted({max(1, vocab_size >> k) for k in range(points)})


def vocab_sweep(
    tokenizer: TokenizerArg | Mapping[str, TokenizerArg],
    held_back: CorpusArg,
    *,
    sizes: Sequence[int] | None = None,
    d_model: int | None = None,
    body_params: int | None = None,
    renyi_alpha: float = 2.5,
    num_threads: int | None = None,
) -> VocabSweep:
    """Bytes/token, tokens/word, Shannon and Rényi efficiency and the 2·V·d parameter cost at
    each vocabulary size in `sizes` (default: halvings of the full size, those truncation
    allows), measured on `held_back` text the tokenizer was not trained on. `body_params`: the
    model's parameters outside the embedding and output layers."""
    name, tok = load_one(tokenizer)
    _checks.count("d_model", d_model, minimum=1, optional=True)
    _checks.count("body_params", body_params, optional=True)
    if isinstance(renyi_alpha, bool) or not isinstance(renyi_alpha, (int, float)) or renyi_alpha <= 0:
        raise _core.ConfigError(f"renyi_alpha must be a number > 0, got {renyi_alpha!r}")
    explicit = sizes is not None
    wanted = sorted(set(sizes)) if sizes is not None else default_sizes(tok.vocab_size)
    if not wanted:
        raise _core.ConfigError("sizes is empty")
    smalls: dict[int, Tokenizer] = {}
    for size in wanted:
        _checks.count("sizes", size, minimum=1)
        try:
            smalls[size] = tok if size == tok.vocab_size else tok.truncated(size)
        except _core.ConfigError:
            if explicit:
                raise
            # below the base alphabet: not a size this tokenizer can have
    # Every size counted in one pass over the held-back text.
    text_bytes = words = 0
    per_size = {size: [0] * small.n_vocab for size, small in smalls.items()}
    for group in corpus_groups(held_back).values():
        c = count_group(list(smalls.values()), group, id_counts=True, words=True, num_threads=num_threads)
        text_bytes += c.text_bytes
        words += c.words
        for size, seen in zip(smalls, c.id_counts or [], strict=True):
            per_size[size] = [a + b for a, b in zip(per_size[size], seen, strict=True)]
    rows = []
    for size, counts in per_size.items():
        tokens = sum(counts)
        shannon, renyi = efficiencies(counts, size, renyi_alpha)
        params = 2 * size * d_model if d_model is not None else None
        share = params / (body_params + params) if params is not None and body_params is not None else None
        rows.append(
            SweepRow(
                size,
                tokens,
                text_bytes / tokens if tokens else 0.0,
                tokens / words if words else 0.0,
                shannon,
                renyi,
                params,
                share,
            )
        )
    return VocabSweep(name, text_bytes, words, float(renyi_alpha), d_model, body_params, rows)
