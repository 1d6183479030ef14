"""Compression and fertility: what a tokenizer makes of a corpus, per group (a language, a file),
several tokenizers side by side; and the token premium of each language on parallel text.

>>> table = fertility(["cl100k_base", "o200k_base"], {"en": "en.txt", "de": "de.txt"})
>>> print(table.format())
tokenizer    group  bytes  words  tokens  bytes/token  chars/token  tokens/word  byte-token %  unk %
-----------  -----  -----  -----  ------  -----------  -----------  -----------  ------------  -----
cl100k_base  en     79     16     19      4.158        4.158        1.188        0.00          0.00
cl100k_base  de     76     15     22      3.455        3.364        1.467        0.00          0.00
cl100k_base  (all)  155    31     41      3.780        3.732        1.323        0.00          0.00
o200k_base   en     79     16     19      4.158        4.158        1.188        0.00          0.00
o200k_base   de     76     15     18      4.222        4.111        1.200        0.00          0.00
o200k_base   (all)  155    31     37      4.189        4.135        1.194        0.00          0.00
>>> premium = parallel_premium(["cl100k_base", "o200k_base"],
...                            {"en": ["The train leaves at nine."], "de": ["Der Zug fährt um neun."]})
>>> premium.tokens
{'cl100k_base': {'en': 6, 'de': 9}, 'o200k_base': {'en': 6, 'de': 6}}
>>> premium.premium["cl100k_base"]["de"], premium.premium["o200k_base"]["de"]
(1.5, 1.0)

Words are counted as `tokenmill.analysis._words` says (Unicode word segmentation: each Han
character is a word, so tokens/word works for Chinese and Japanese).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tokenmill import _core
from tokenmill.analysis._corpus import CorpusArg, corpus_groups
from tokenmill.analysis._counting import count_group, count_ids
from tokenmill.analysis._load import TokenizersArg, load_tokenizers
from tokenmill.analysis._table import format_table
from tokenmill.analysis._vocab import token_table

ALL = "(all)"


@dataclass
class FertilityRow:
    """One tokenizer on one group of text."""

    tokenizer: str
    group: str
    bytes: int
    chars: int
    words: int
    tokens: int
    byte_token_bytes: int
    """Bytes of text that came out as byte tokens: byte-fallback pieces, and byte-level tokens
    that are not whole characters (a character spelled in pieces), all of their bytes."""
    unknown_tokens: int
    bytes_per_token: float = field(init=False)
    chars_per_token: float = field(init=False)
    tokens_per_word: float = field(init=False)
    byte_token_share: float = field(init=False)
    """Share of the text's bytes that fell to byte tokens."""
    unknown_share: float = field(init=False)
    """Share of tokens that are the unknown token."""

    def __post_init__(self) -> None:
        self.bytes_per_token = _ratio(self.bytes, self.tokens)
        self.chars_per_token = _ratio(self.chars, self.tokens)
        self.tokens_per_word = _ratio(self.tokens, self.words)
        self.byte_token_share = _ratio(self.byte_token_bytes, self.bytes)
        self.unknown_share = _ratio(self.unknown_tokens, self.tokens)


@dataclass
class FertilityTable:
    rows: list[FertilityRow]
    token_counts: dict[str, list[int]] = field(repr=False, default_factory=dict)
    """Count of each id per tokenizer over the whole corpus (for rank plots and audits)."""

    def to_dict(self) -> dict[str, Any]:
        return {"rows": [asdict(r) for r in self.rows]}

    def pivot(self, metric: str = "tokens_per_word") -> dict[str, dict[str, float]]:
        """``{group: {tokenizer: value}}`` of one metric."""
        out: dict[str, dict[str, float]] = {}
        for r in self.rows:
            out.setdefault(r.group, {})[r.tokenizer] = getattr(r, metric)
        return out

    def format_pivot(self, metric: str = "tokens_per_word") -> str:
        """One metric with a row per group and a column per tokenizer: the side-by-side view.

        >>> table = fertility(["cl100k_base", "o200k_base"], {"en": "en.txt", "ja": "ja.txt"})
        >>> print(table.format_pivot("bytes_per_token"))
        bytes_per_token  cl100k_base  o200k_base
        ---------------  -----------  ----------
        en               4.158        4.158
        ja               3.000        3.923
        (all)            3.415        4.022
        """
        pivot = self.pivot(metric)
        names = list(dict.fromkeys(r.tokenizer for r in self.rows))
        body = [[group] + [f"{values.get(n, 0.0):.3f}" for n in names] for group, values in pivot.items()]
        return format_table([metric] + names, body)

    def format(self) -> str:
        columns = ["tokenizer", "group", "bytes", "words", "tokens", "bytes/token", "chars/token", "tokens/word"]
        columns += ["byte-token %", "unk %"]
        body = [
            [r.tokenizer, r.group, r.bytes, r.words, r.tokens, f"{r.bytes_per_token:.3f}", f"{r.chars_per_token:.3f}"]
            + [f"{r.tokens_per_word:.3f}", f"{100 * r.byte_token_share:.2f}", f"{100 * r.unknown_share:.2f}"]
            for r in self.rows
        ]
        return format_table(columns, body)


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def fertility(
    tokenizers: TokenizersArg,
    corpus: CorpusArg,
    *,
    num_threads: int | None = None,
) -> FertilityTable:
    """Bytes/token, characters/token, tokens/word, byte-token and unknown-token shares for each
    tokenizer on each group of `corpus` (see `corpus_groups`), plus an ``(all)`` row per
    tokenizer when there are several groups.

    >>> t = fertility({"cl100k": tok}, {"en": ["one two three"], "ja": ["東京は日本の首都です。"]})
    >>> [(r.group, r.words, r.tokens, r.tokens_per_word) for r in t.rows]
    [('en', 3, 3, 1.0), ('ja', 10, 11, 1.1), ('(all)', 13, 14, 1.0769230769230769)]
    """
    toks = load_tokenizers(tokenizers)
    groups = corpus_groups(corpus)
    tables = {name: token_table(tok) for name, tok in toks.items()}
    totals: dict[str, list[int]] = {}
    rows: list[FertilityRow] = []
    sizes: dict[str, tuple[int, int, int]] = {}
    per: dict[tuple[str, str], list[int]] = {}
    for group, docs in groups.items():
        c = count_group(list(toks.values()), docs, id_counts=True, words=True, num_threads=num_threads)
        sizes[group] = (c.text_bytes, c.chars, c.words)
        for name, counts in zip(toks, c.id_counts or [], strict=True):
            per[(name, group)] = counts
            total = totals.setdefault(name, [0] * len(counts))
            for i, n in enumerate(counts):
                if n:
                    total[i] += n
    for name in toks:
        for group in groups:
            rows.append(_row(name, group, sizes[group], per[(name, group)], tables[name]))
        if len(groups) > 1:
            whole = (
                sum(s[0] for s in sizes.values()),
                sum(s[1] for s in sizes.values()),
                sum(s[2] for s in sizes.values()),
            )
            rows.append(_row(name, ALL, whole, totals[name], tables[name]))
    return FertilityTable(rows, totals)


def _row(name: str, group: str, size: tuple[int, int, int], counts: list[int], table: Any) -> FertilityRow:
    n_bytes, n_chars, n_words = size
    byte_bytes = unknown = 0
    for i, c in enumerate(counts):
        if not c:
            continue
        if table.byte_pieces[i]:
            byte_bytes += c * (1 if table.kinds[i] == "byte" else len(table.token_bytes[i]))
        elif table.kinds[i] == "unknown":
            unknown += c
    return FertilityRow(name, group, n_bytes, n_chars, n_words, sum(counts), byte_bytes, unknown)


@dataclass
class ParallelPremium:
    """Tokens per language on the same content, relative to a reference language."""

    reference: str
    tokens: dict[str, dict[str, int]]
    """``{tokenizer: {language: tokens}}``."""
    premium: dict[str, dict[str, float]]
    """``{tokenizer: {language: tokens(language) / tokens(reference)}}``."""
    summary: dict[str, dict[str, Any]]
    """Per tokenizer: mean, max (and its language), min, max/min spread, and the languages within
    10% of the reference (at parity)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def format(self) -> str:
        names = list(self.premium)
        langs = list(next(iter(self.premium.values())))
        body: list[list[Any]] = [[lang] + [f"{self.premium[n][lang]:.2f}×" for n in names] for lang in langs]
        body.append(["mean"] + [f"{self.summary[n]['mean']:.2f}×" for n in names])
        body.append(["max/min"] + [f"{self.summary[n]['spread']:.2f}" for n in names])
        body.append(["at parity"] + [str(len(self.summary[n]["at_parity"])) for n in names])
        return format_table([f"premium vs {self.reference}"] + names, body)


def parallel_premium(
    tokenizers: TokenizersArg,
    texts: Mapping[str, Sequence[str]],
    *,
    reference: str = "en",
    num_threads: int | None = None,
) -> ParallelPremium:
    """On parallel text (``{language: [sentence, ...]}``, item i the same content in every
    language), each language's tokens over the reference's (Petrov et al. 2023 call it the
    tokenization premium); 1.0 is parity, 2.0 costs twice the tokens for the same content.

    >>> p = parallel_premium({"cl100k": tok}, {"en": ["a b"], "xx": ["a b a b"]})
    >>> p.premium
    {'cl100k': {'en': 1.0, 'xx': 2.0}}
    """
    toks = load_tokenizers(tokenizers)
    if not isinstance(texts, Mapping) or reference not in texts:
        raise _core.ConfigError(f"parallel text must be a mapping of language → sentences that includes {reference!r}")
    lengths = {lang: len(items) for lang, items in texts.items()}
    if len(set(lengths.values())) != 1 or not lengths[reference]:
        raise _core.ConfigError(f"parallel text needs the same number of items (at least one) per language: {lengths}")
    tokens: dict[str, dict[str, int]] = {}
    premium: dict[str, dict[str, float]] = {}
    summary: dict[str, dict[str, Any]] = {}
    for name, tok in toks.items():
        tokens[name] = {
            lang: sum(count_ids(tok, list(items), num_threads=num_threads)[1]) for lang, items in texts.items()
        }
        ref = tokens[name][reference]
        premium[name] = {lang: _ratio(n, ref) for lang, n in tokens[name].items()}
        others = {lang: p for lang, p in premium[name].items() if lang != reference} or {reference: 1.0}
        worst = max(others, key=others.__getitem__)
        best = min(others, key=others.__getitem__)
        summary[name] = {
            "mean": sum(others.values()) / len(others),
            "max": others[worst],
            "max_language": worst,
            "min": others[best],
            "min_language": best,
            "spread": _ratio(others[worst], others[best]),
            "at_parity": sorted(lang for lang, p in others.items() if p <= 1.1),
        }
    return ParallelPremium(reference, tokens, premium, summary)
