"""Counting tokens: the one place every analysis encodes text, so it can move into Rust whole.

The Rust encoder runs the batch on its threads into one flat id buffer, and numpy's `bincount`
adds the ids up (without numpy: lists of ids and a `Counter`). Special-token text counts as ordinary
text: an analysis measures what text costs, and text is not a prompt template.

>>> ids, tokens = count_ids(tok, ["hello world", "hello"])   # doctest: +SKIP
>>> tokens   # doctest: +SKIP
[2, 1]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from tokenmill.tokenizer import Tokenizer


class IdCounter:
    """Counts of each id over batches of texts, kept in a numpy array when numpy is there.

    >>> counter = IdCounter(tok)                  # doctest: +SKIP
    >>> counter.add(["hello world", "hello"])     # doctest: +SKIP
    [2, 1]
    >>> counter.total                             # doctest: +SKIP
    3
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
