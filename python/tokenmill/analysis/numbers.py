"""How numbers split: for integers (and decimals) of each length, tokens per number, the
distinct split shapes, and whether the splits follow place value.

A shape writes each digit as ``d`` and each token boundary as ``|``: cl100k splits ``12345`` as
``ddd|dd`` (left to right in threes), which does not follow place value (``12|345`` would).
A split is *aligned* when the integer part is cut from its end into groups of one size, the
first group no longer than the others: ``dd|ddd`` (thousands), ``d|d|d`` (single digits) and
``ddddd`` (one token) are aligned, ``ddd|dd`` and ``ddd|d`` are not.

Besides tokenizers, `patterns` compare pre-tokenizers alone (every piece counted as one token,
as a vocabulary holding all of them would give): ``gpt2`` (digit runs whole), ``cl100k``
(groups of 1–3 from the left), ``digits`` (cl100k's rule with single digits, as Llama 2 and
DeepSeek split).

>>> report = number_splits([], patterns=["cl100k"], lengths=[5], samples=3)
>>> report.rows[0].shapes
{'ddd|dd': 3}
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tokenmill import _checks, _core
from tokenmill.analysis._load import TokenizersArg, load_tokenizers
from tokenmill.analysis._table import format_table
from tokenmill.pretokenize_patterns import CL100K, GPT2

NUMBER_PATTERNS = {"gpt2": GPT2, "cl100k": CL100K, "digits": CL100K.replace(r"\p{N}{1,3}+", r"\p{N}")}


@dataclass
class NumberSplitRow:
    tokenizer: str
    kind: str
    """``integer``, or ``decimal`` (integer part of `length` digits, then a point and fraction)."""
    length: int
    """Digits in the integer part."""
    samples: int
    tokens_per_number: float
    shapes: dict[str, int]
    """Shape → how many numbers split that way, most common first."""
    aligned_share: float
    examples: dict[str, str]
    """Shape → one number split that way (``12|345``)."""


@dataclass
class NumberReport:
    rows: list[NumberSplitRow]
    context: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def format(self) -> str:
        body = [
            [r.tokenizer, r.kind, r.length, f"{r.tokens_per_number:.2f}", len(r.shapes), f"{100 * r.aligned_share:.0f}"]
            + [", ".join(f"{s} ({c})" for s, c in list(r.shapes.items())[:3])]
            for r in self.rows
        ]
        columns = ["tokenizer", "kind", "digits", "tokens/number", "shapes", "aligned %", "most common shapes"]
        return format_table(columns, body)


def sample_numbers(length: int, count: int, *, decimals: int = 0, seed: int = 0) -> list[str]:
    """Up to `count` distinct numbers with `length` integer digits (no leading zero unless the
    length is 1), and `decimals` fraction digits, the same for the same seed.

    >>> sample_numbers(1, 20)
    ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']
    """
    rng = random.Random(f"{seed}:{length}:{decimals}")
    low = 0 if length == 1 else 10 ** (length - 1)
    space = 10**length - low
    if space <= count:
        ints = [str(i) for i in range(low, 10**length)]
    else:
        ints = sorted({str(rng.randrange(low, 10**length)) for _ in range(count)})
    if not decimals:
        return ints
    return [f"{i}.{rng.randrange(10**decimals):0{decimals}d}" for i in ints]


def split_shape(pieces: Sequence[str]) -> str:
    """The shape of a number cut into `pieces`.

    >>> split_shape(["12", "34", ".5"])
    'dd|dd|.d'
    """
    return "|".join("".join("d" if c.isdigit() else c for c in p) for p in pieces)


def is_aligned(pieces: Sequence[str]) -> bool:
    """Whether the cuts inside the integer part fall at multiples of one group size from its end.

    >>> is_aligned(["12", "345"]), is_aligned(["123", "45"]), is_aligned(["1", "2", "3"])
    (True, False, True)
    """
    integer = "".join(pieces).split(".")[0]
    cuts, at = [], 0
    for p in pieces:
        at += len(p)
        if at < len(integer):
            cuts.append(len(integer) - at)
    if not cuts:
        return True
    group = min(cuts)
    leading = len(integer) - max(cuts)
    return set(cuts) == set(range(group, max(cuts) + 1, group)) and leading <= group


def number_splits(
    tokenizers: TokenizersArg,
    *,
    patterns: Sequence[str] = (),
    lengths: Sequence[int] = tuple(range(1, 13)),
    samples: int = 200,
    decimals: int = 0,
    context: str = "The total is {} today.",
    seed: int = 0,
) -> NumberReport:
    """Splits of sampled numbers of each length in `context` (``{}`` marks the number), for each
    tokenizer and each pre-tokenizer pattern in `patterns` (``gpt2``, ``cl100k``, ``digits`` or a
    regex; see the module)."""
    _checks.count("samples", samples, minimum=1, maximum=10**6)
    _checks.count("decimals", decimals, maximum=30)
    for n in lengths:
        _checks.count("lengths", n, minimum=1, maximum=100)
    if not isinstance(context, str) or context.count("{}") != 1:
        raise _core.ConfigError(f"context must hold one {{}} where the number goes, got {context!r}")
    splitters: dict[str, Callable[[str], list[str]]] = {}
    if tokenizers is not None and not (isinstance(tokenizers, (list, tuple)) and not tokenizers):
        for name, tok in load_tokenizers(tokenizers).items():
            splitters[name] = _token_pieces(tok)
    for p in patterns:
        regex = NUMBER_PATTERNS.get(p, p)
        _checks.pattern(regex)
        splitters[f"pre:{p}"] = _pattern_pieces(regex)
    if not splitters:
        raise _core.ConfigError("give at least one tokenizer or pattern")
    before, after = context.split("{}")
    kinds = ["integer"] if not decimals else ["decimal"]
    rows = []
    for name, split in splitters.items():
        for kind in kinds:
            for length in lengths:
                numbers = sample_numbers(length, samples, decimals=decimals, seed=seed)
                shapes: Counter[str] = Counter()
                examples: dict[str, str] = {}
                tokens = aligned = 0
                for number in numbers:
                    pieces = _number_pieces(split(before + number + after), len(before), len(number))
                    shape = split_shape(pieces)
                    shapes[shape] += 1
                    examples.setdefault(shape, "|".join(pieces))
                    tokens += len(pieces)
                    aligned += is_aligned(pieces)
                rows.append(
                    NumberSplitRow(
                        name,
                        kind,
                        length,
                        len(numbers),
                        tokens / len(numbers),
                        dict(shapes.most_common()),
                        aligned / len(numbers),
                        {s: examples[s] for s, _ in shapes.most_common()},
                    )
                )
    return NumberReport(rows, context)


def _pattern_pieces(regex: str) -> Callable[[str], list[str]]:
    def split(text: str) -> list[str]:
        return _core.split(regex, text)

    return split


def _token_pieces(tok: Any) -> Callable[[str], list[str]]:
    def split(text: str) -> list[str]:
        # Byte lengths of the tokens, mapped back to characters: the text is ASCII around the
        # number in the default context, but a user's context may not be.
        data = text.encode("utf-8")
        out, at = [], 0
        for raw in tok.decode_tokens_bytes(tok.encode_ordinary(text)):
            out.append(data[at : at + len(raw)].decode("utf-8", "replace"))
            at += len(raw)
        return out

    return split


def _number_pieces(pieces: list[str], start: int, length: int) -> list[str]:
    """The parts of the pieces that fall inside characters [start, start + length)."""
    out, at = [], 0
    for p in pieces:
        lo, hi = max(at, start), min(at + len(p), start + length)
        if lo < hi:
            out.append(p[lo - at : hi - at])
        at += len(p)
    return out
