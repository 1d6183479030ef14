"""Counting tokens: the one place every analysis encodes text.

A group of files is read, encoded and counted in Rust (`count_group`, `src/io/file_counts.rs`),
for every tokenizer in one pass over the files. Texts go to the Rust encoder in one batch on its
threads into one flat id buffer, and numpy's `bincount` adds the ids up (without numpy: lists of
ids and a `Counter`). Special-token text counts as ordinary text: an analysis measures what text
costs, and text is not a prompt template.

>>> ids, tokens = count_ids(tok, ["hello world", "hello"])   # cl100k_base
>>> tokens, ids[15339], ids[1917]   # tokens per text; "hello" twice, " world" once
([2, 1], 2, 1)
"""

from __future__ import annotations

import os
import sys
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tokenmill import _core
from tokenmill.analysis._corpus import Files, Group
from tokenmill.analysis._words import count_words_in
from tokenmill.tokenizer import Tokenizer


class IdCounter:
    """Counts of each id over batches of texts, kept in a numpy array when numpy is there.

    >>> counter = IdCounter(tok)
    >>> counter.add(["hello world", "hello"])
    [2, 1]
    >>> counter.add(["goodbye world"])
    [3]
    >>> counter.total, counter.counts()[1917]   # " world" twice
    (6, 2)
    """

    def __init__(self, tok: Tokenizer, *, num_threads: int | None = None) -> None:
        self.tok = tok
        self.size = tok.n_vocab
        self.num_threads = num_threads
        self.total = 0
        try:
            import numpy as np
        except ImportError:
            self._np: Any = None
            self._counter: Counter[int] = Counter()
        else:
            self._np = np
            self._array = np.zeros(self.size, dtype=np.int64)

    def add(self, texts: Sequence[str]) -> list[int]:
        """Adds the ids of `texts`; returns how many tokens each text gave."""
        if self._np is None:
            lengths = []
            for ids in self.tok.encode_ordinary_batch(list(texts), num_threads=self.num_threads):
                self._counter.update(ids)
                lengths.append(len(ids))
            self.total += sum(lengths)
            return lengths
        np = self._np
        # One flat buffer of ids from the Rust threads: no Python int per token.
        flat, per_text = self.tok._core.encode_flat(list(texts), (), (), num_threads=self.num_threads)
        ids = np.frombuffer(flat, dtype="<u4")
        if len(ids):
            self._array += np.bincount(ids, minlength=self.size)[: self.size]
        lengths = np.frombuffer(per_text, dtype="<u8").tolist()
        self.total += int(ids.size)
        return lengths

    def counts(self) -> list[int]:
        """The count of each id, indexed by id up to `n_vocab`."""
        if self._np is None:
            return [self._counter.get(i, 0) for i in range(self.size)]
        return self._array.tolist()


def count_ids(tok: Tokenizer, texts: Sequence[str], *, num_threads: int | None = None) -> tuple[list[int], list[int]]:
    """(count of each id over all texts, indexed by id up to `n_vocab`; tokens per text)."""
    counter = IdCounter(tok, num_threads=num_threads)
    lengths = counter.add(texts)
    return counter.counts(), lengths


def token_lengths(tok: Tokenizer, texts: Sequence[str], *, num_threads: int | None = None) -> list[int]:
    """Tokens in each text, without counting ids (and with no Python int per token)."""
    _, per_text = tok._core.encode_flat(list(texts), (), (), num_threads=num_threads)
    return [int.from_bytes(per_text[i : i + 8], "little") for i in range(0, len(per_text), 8)]


@dataclass
class GroupCounts:
    """What a group of documents holds, for each of several tokenizers."""

    bytes_read: int
    """The files' bytes (texts: their UTF-8 bytes)."""
    invalid_bytes: int
    """Bytes of the files that were not UTF-8 (each maximal invalid sequence read as one U+FFFD)."""
    text_bytes: int
    """UTF-8 bytes of the text as decoded (a U+FFFD is three)."""
    chars: int
    words: int
    """Words as tokens-per-word counts them (0 unless asked for)."""
    tokens: list[int]
    """Tokens, per tokenizer."""
    id_counts: list[list[int]] | None
    """Each id's count (indexed by id up to `n_vocab`), per tokenizer, when asked for."""


def count_group(
    toks: Sequence[Tokenizer],
    group: Group,
    *,
    id_counts: bool = False,
    words: bool = False,
    num_threads: int | None = None,
) -> GroupCounts:
    """Counts `group` for every tokenizer of `toks`: files in one pass in Rust, texts in a batch.

    >>> from pathlib import Path
    >>> from tokenmill.analysis._corpus import Files, Texts
    >>> c = count_group([tok, bert], Texts(["hello world"]), words=True)
    >>> c.words, c.tokens
    (2, [2, 2])
    >>> count_group([tok, bert], Files([Path("en.txt")])).tokens
    [19, 19]
    """
    if isinstance(group, Files):
        raw = _core.count_files_for(
            [t._core for t in toks], [os.fspath(p) for p in group.paths], id_counts, words, num_threads
        )
        per_id = None
        if raw["id_counts"] is not None:
            per_id = []
            for blob in raw["id_counts"]:
                counts = array("Q", blob)
                if sys.byteorder == "big":
                    counts.byteswap()  # the core writes little-endian
                per_id.append(counts.tolist())
        sizes = (raw["bytes_read"], raw["invalid_bytes"], raw["text_bytes"], raw["chars"], raw["words"])
        return GroupCounts(*sizes, raw["tokens"], per_id)
    texts = group.texts
    size = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    n_words = count_words_in(texts) if words else 0
    if id_counts:
        counters = [IdCounter(t, num_threads=num_threads) for t in toks]
        for c in counters:
            c.add(texts)
        tokens, per = [c.total for c in counters], [c.counts() for c in counters]
    else:
        tokens, per = [sum(token_lengths(t, texts, num_threads=num_threads)) for t in toks], None
    return GroupCounts(size, 0, size, sum(map(len, texts)), n_words, tokens, per)
