"""Counting tokens: the one place every analysis encodes text, so it can move into Rust whole.

Today it calls the Rust encoder on Python threads (each call releases the GIL) and adds ids up
with numpy's `bincount` (or a `Counter` without numpy). Special-token text counts as ordinary
text: an analysis measures what text costs, and text is not a prompt template.

>>> ids, tokens = count_ids(tok, ["hello world", "hello"])   # doctest: +SKIP
>>> tokens   # doctest: +SKIP
[2, 1]
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tokenmill.tokenizer import Tokenizer


def _threads(num_threads: int | None) -> int:
    return max(1, num_threads or os.cpu_count() or 1)


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

        def encode(text: str) -> Any:
            return self.tok.encode_to_numpy(text, allowed_special=(), disallowed_special=())

        with ThreadPoolExecutor(_threads(self.num_threads)) as pool:
            arrays = list(pool.map(encode, texts))
        if arrays:
            self._array += np.bincount(np.concatenate(arrays), minlength=self.size)[: self.size]
        lengths = [len(a) for a in arrays]
        self.total += sum(lengths)
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
    """Tokens in each text, without counting ids."""
    try:
        import numpy  # noqa: F401 - the array path has no Python list per token
    except ImportError:
        return [len(ids) for ids in tok.encode_ordinary_batch(list(texts), num_threads=num_threads)]

    def length(text: str) -> int:
        return len(tok.encode_to_numpy(text, allowed_special=(), disallowed_special=()))

    with ThreadPoolExecutor(_threads(num_threads)) as pool:
        return list(pool.map(length, texts))
