"""Token counting and cost: tokens per file and in total, and what they cost at a price per
million tokens — the first question of anyone paying for an API by the token.

>>> report = count_tokens("cl100k_base", ["en.txt", "de.txt"], price_per_million=2.5)
>>> report.total_tokens, report.total_cost
(41, 0.0001025)
>>> print(report.format())
tokenizer    file    bytes  tokens  cost at 2.5/M
-----------  ------  -----  ------  -------------
cl100k_base  en.txt  79     19      0.000048
cl100k_base  de.txt  76     22      0.000055
cl100k_base  total   155    41      0.000102
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tokenmill import _core
from tokenmill.analysis._corpus import CorpusArg, corpus_groups
from tokenmill.analysis._counting import count_group
from tokenmill.analysis._load import TokenizersArg, load_tokenizers
from tokenmill.analysis._table import format_table


@dataclass
class TokenCount:
    tokenizer: str
    group: str
    bytes: int
    tokens: int
    cost: float | None
    """tokens × price per million / 10⁶ (None without a price)."""
    invalid_bytes: int = 0
    """Bytes of the group's files that were not UTF-8 (counted as U+FFFD)."""


@dataclass
class TokenCountReport:
    rows: list[TokenCount]
    totals: dict[str, int]
    """Tokens per tokenizer over all groups."""
    total_costs: dict[str, float | None]
    price_per_million: float | None

    @property
    def total_tokens(self) -> int:
        """The first tokenizer's total (the common case: one tokenizer)."""
        return next(iter(self.totals.values()))

    @property
    def total_cost(self) -> float | None:
        return next(iter(self.total_costs.values()))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def format(self) -> str:
        priced = self.price_per_million is not None
        columns = ["tokenizer", "file", "bytes", "tokens"] + ([f"cost at {self.price_per_million}/M"] if priced else [])
        body: list[list[Any]] = []
        for r in self.rows:
            body.append([r.tokenizer, r.group, r.bytes, r.tokens] + ([_money(r.cost)] if priced else []))
        for name, total in self.totals.items():
            size = sum(r.bytes for r in self.rows if r.tokenizer == name)
            body.append([name, "total", size, total] + ([_money(self.total_costs[name])] if priced else []))
        notes = {r.group: r.invalid_bytes for r in self.rows if r.invalid_bytes}
        said = "".join(f"\n{group}: {n} of its bytes are not UTF-8 (read as U+FFFD)" for group, n in notes.items())
        return format_table(columns, body) + said


def _money(x: float | None) -> str:
    return "" if x is None else f"{x:.6f}" if x < 1 else f"{x:.2f}"


def count_tokens(
    tokenizers: TokenizersArg,
    corpus: CorpusArg,
    *,
    price_per_million: float | None = None,
    num_threads: int | None = None,
) -> TokenCountReport:
    """Tokens of each group (file) of `corpus` and in total, for each tokenizer; with
    `price_per_million`, their cost in the same currency."""
    if price_per_million is not None and (
        isinstance(price_per_million, bool) or not isinstance(price_per_million, (int, float)) or price_per_million < 0
    ):
        raise _core.ConfigError(f"price_per_million must be a number ≥ 0, got {price_per_million!r}")
    toks = load_tokenizers(tokenizers)
    groups = corpus_groups(corpus)

    def cost(tokens: int) -> float | None:
        return None if price_per_million is None else tokens * price_per_million / 1e6

    rows: list[TokenCount] = []
    for group, docs in groups.items():
        # Files: their own bytes, not the decoded text's (an invalid byte reads as 3-byte U+FFFD).
        c = count_group(list(toks.values()), docs, num_threads=num_threads)
        rows.extend(
            TokenCount(name, group, c.bytes_read, n, cost(n), c.invalid_bytes)
            for name, n in zip(toks, c.tokens, strict=True)
        )
    rows.sort(key=lambda r: list(toks).index(r.tokenizer))
    totals = {name: sum(r.tokens for r in rows if r.tokenizer == name) for name in toks}
    return TokenCountReport(rows, totals, {n: cost(t) for n, t in totals.items()}, price_per_million)
