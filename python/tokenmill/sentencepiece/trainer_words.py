"""The trainer's words when Python must see each sentence: a custom normalizer
(`normalizer=`), a `pretokenizer` callable or a `pretokenization_delimiter`. Each sentence is
normalized as the model will normalize it (spaces as `▁`), cut where the pretokenizer cuts it,
and each part into words before each `▁`; pieces then never cross a cut. Without these, the
trainer counts words in Rust (`tokenmill.corpus`), which this mirrors.

>>> spec = spm_format.NormalizerSpec(name="identity")   # spaces as ▁, a ▁ in front
>>> count_words(["New York-based company"], spec, None, False, "", [])
Counter({'▁New': 1, '▁York-based': 1, '▁company': 1})
>>> count_words(["New York-based company"], spec, None, False, "-", [])   # cut at each "-"
Counter({'▁New': 1, '▁York': 1, 'based': 1, '▁company': 1})
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from tokenmill.formats import sentencepiece as spm_format

Pretokenizer = Callable[[str], Iterable[str]]


def split_words(text: str) -> list[str]:
    """`text` cut before each `▁` (sentencepiece's words), empty parts left out.

    >>> split_words("foo▁bar▁▁baz")
    ['foo', '▁bar', '▁', '▁baz']
    """
    return [w for w in re.split("(?=\u2581)", text) if w]


def count_words(
    sentences: Iterable[str],
    spec: spm_format.NormalizerSpec,
    pretokenizer: Pretokenizer | None,
    allow_inconsistent: bool,
    delimiter: str,
    symbols: list[str],
) -> Counter[str]:
    """The words of `sentences` normalized by `spec` (its spaces always as `▁`), counted."""
    normalize = _normalizer(spec)
    counts: Counter[str] = Counter()
    for n, sentence in enumerate(sentences):
        normalized = normalize(sentence)
        if delimiter:
            chunks: Iterable[str] = normalized.split(delimiter)
        elif pretokenizer is not None:
            chunks = _pretokenized(pretokenizer, normalized, n, allow_inconsistent)
        else:
            chunks = [normalized]
        for chunk in chunks:
            for part in _without_symbols(chunk, symbols):
                counts.update(split_words(part))
    return counts


def _pretokenized(pretokenizer: Pretokenizer, text: str, n: int, allow_inconsistent: bool) -> list[str]:
    try:
        chunks = [str(c) for c in pretokenizer(text)]
    except Exception as e:
        raise RuntimeError(f"Pretokenizer failed: {e}") from e
    if not allow_inconsistent and "".join(chunks) != text:
        raise ValueError(
            f"Pretokenized output mismatch at sample {n}: joined={''.join(chunks)!r}, original={text!r}. "
            "Set allow_inconsistent_pretokenization=True to bypass."
        )
    return chunks


def _without_symbols(text: str, symbols: list[str]) -> list[str]:
    """`text` cut around the user-defined symbols, which are pieces of their own."""
    if not symbols:
        return [text]
    pattern = "|".join(re.escape(s) for s in sorted(symbols, key=len, reverse=True))
    return re.split(pattern, text)


def _normalizer(spec: spm_format.NormalizerSpec) -> Callable[[str], str]:
    from tokenmill.sentencepiece.processor import SentencePieceProcessor

    spec = dataclasses.replace(spec, escape_whitespaces=True)  # spaces become ▁, where words start
    model = spm_format.SentencePieceModel(pieces=[spm_format.Piece("<unk>", 0.0, spm_format.PieceType.UNKNOWN)])
    model.normalizer_spec = spec
    processor = SentencePieceProcessor(model_proto=spm_format.model_bytes(model))
    return processor.normalize  # type: ignore[no-any-return]


def as_word_counts(counts: Counter[str], symbols: list[str]) -> Any:
    """`counts` as the `WordCounts` table Unigram training takes."""
    from tokenmill import _core
    from tokenmill.counting import WordCounts

    counter = _core.WordCounter("metaspace", "sentencepiece", symbols, False)
    counter.add_words(list(counts.items()))
    return WordCounts(counter)
