"""Counting tokens: the one place every analysis encodes text, so it can move into Rust whole.

Today it calls the Rust encoder on Python threads (each call releases the GIL) and adds ids up
with numpy's `bincount` (or a `Counter` without numpy). Special-token text counts as ordinary
text: an analysis measures what text costs, and text is not a prompt template.

>>> ids, tokens = count_ids(tok, ["hello world", "hello"])   # doctest: +SKIP
>>> tokens
[2, 1]
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from tokenmill.tokenizer import Tokenizer


def _threads(num_threads: int | None) -> int:
    return max(1, num_threads or os.cpu_count() or 1)


def count_ids(tok: Tokenizer, texts: Sequence[str], *, num_threads: int | None = None) -> tuple[list[int], list[int]]:
    """(count of each id over all texts, indexed by id up to `n_vocab`; tokens per text)."""
    size = tok.n_vocab
    try:
        import numpy as np
    except ImportError:
        counter: Counter[int] = Counter()
        per_text = []
        for ids in tok.encode_ordinary_batch(list(texts), num_threads=num_threads):
            counter.update(ids)
            per_text.append(len(ids))
        return [counter.get(i, 0) for i in range(size)], per_text

    def encode(text: str) -> np.ndarray:
        return tok.encode_to_numpy(text, disallowed_special=())

    with ThreadPoolExecutor(_threads(num_threads)) as pool:
        arrays = list(pool.map(encode, texts))
    totals = np.zeros(size, dtype=np.int64)
    if arrays:
        joined = np.concatenate(arrays)
        totals += np.bincount(joined, minlength=size)[:size]
    return totals.tolist(), [len(a) for a in arrays]


def encode_all(tok: Tokenizer, texts: Sequence[str], *, num_threads: int | None = None) -> list[list[int]]:
    """The ids of each text (for analyses that look at the tokens themselves, not only counts)."""
    return tok.encode_ordinary_batch(list(texts), num_threads=num_threads)
