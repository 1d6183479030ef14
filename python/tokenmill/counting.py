"""`count_words` and `WordCounts`: counting as a first-class step, so counts can be made in
pieces (processes, machines), added up, saved, and trained on later."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from tokenmill import _checks, _core
from tokenmill._files import remove_stale_temp_files
from tokenmill.corpus import count_into

_UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}


def parse_size(size: int | str) -> int:
    """``"4GB"`` → 4_000_000_000; ints pass through.

    >>> parse_size("512MiB")
    536870912
    """
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        return size
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", str(size))
    if not m or m.group(2).upper() not in _UNITS or float(m.group(1)) <= 0:
        raise _core.ConfigError(f"max_memory must be a positive size like 4GB or 512MiB, got {size!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


class WordCounts:
    """Unique words with u64 counts, and how they were split (pattern, normalizer, specials).

    >>> a = count_words(["low lower lowest"], pattern="whitespace")
    >>> b = count_words(["low"], pattern="whitespace")
    >>> (a + b)["low"]
    2
    """

    __slots__ = ("_core", "dropped_words", "dropped_count")

    def __init__(self, core: _core.WordCounter, dropped_words: int = 0, dropped_count: int = 0) -> None:
        self._core = core
        self.dropped_words = dropped_words
        """Words pruned to stay within `max_memory` (0 when nothing was dropped)."""
        self.dropped_count = dropped_count
        """Sum of the counts of the pruned words."""

    def __len__(self) -> int:
        return self._core.num_words

    def __getitem__(self, word: str | bytes) -> int:
        return self._core.get(word.encode("utf-8") if isinstance(word, str) else bytes(word))

    def __add__(self, other: WordCounts) -> WordCounts:
        if not isinstance(other, WordCounts):
            return NotImplemented
        merged = self._core.copy()
        merged.merge(other._core)
        return WordCounts(merged, self.dropped_words + other.dropped_words, self.dropped_count + other.dropped_count)

    @property
    def total(self) -> int:
        """Sum of all counts."""
        return self._core.total

    @property
    def text_bytes(self) -> int:
        """Bytes of text counted."""
        return self._core.text_bytes

    @property
    def memory_bytes(self) -> int:
        """Approximate memory the table holds."""
        return self._core.memory_bytes

    @property
    def pattern(self) -> str:
        return self._core.pattern

    @property
    def normalizer(self) -> str:
        return self._core.normalizer

    def most_common(self, n: int = 10) -> list[tuple[str, int]]:
        """The `n` most frequent words; bytes that are not UTF-8 come back as surrogate escapes."""
        return [(w.decode("utf-8", "surrogateescape"), c) for w, c in self._core.most_common(n)]

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes a compact binary file with a version header (atomically)."""
        remove_stale_temp_files(path)
        self._core.save(os.fspath(path))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> WordCounts:
        return cls(_core.WordCounter.load(os.fspath(path)))

    def to_bytes(self) -> bytes:
        """The saved file's bytes (words in byte order, so equal counts give equal bytes)."""
        return counts_to_bytes(self._core)

    @classmethod
    def from_bytes(cls, data: bytes) -> WordCounts:
        """Reads `to_bytes` output (or a `.counts` file's contents)."""
        return cls(counts_from_bytes(data))

    def __reduce__(self) -> tuple[object, tuple[bytes, int, int]]:
        # Pickled as the compact saved form, so Ray, Spark, Dask or multiprocessing can move it.
        return (_unpickle, (self.to_bytes(), self.dropped_words, self.dropped_count))

    def __eq__(self, other: object) -> bool:
        """Equal words with equal counts, text bytes and configuration (pattern, normalizer,
        special tokens, byte level); what was pruned is not compared."""
        if not isinstance(other, WordCounts):
            return NotImplemented
        return self is other or self.to_bytes() == other.to_bytes()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<tokenmill.WordCounts {len(self)} words, total {self.total}, pattern={self.pattern!r}>"


def _unpickle(data: bytes, dropped_words: int, dropped_count: int) -> WordCounts:
    return WordCounts(counts_from_bytes(data), dropped_words, dropped_count)


def counts_to_bytes(core: _core.WordCounter) -> bytes:
    """A counter's saved form, in memory."""
    return core.to_bytes()


def counts_from_bytes(data: bytes) -> _core.WordCounter:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise _core.ConfigError(f"word counts are read from bytes, not {type(data).__name__}")
    return _core.WordCounter.from_bytes(bytes(data))


def count_words(
    corpus: object,
    *,
    pattern: str = "cl100k",
    normalizer: str = "none",
    special_tokens: Iterable[str] = (),
    byte_level: bool = True,
    text_field: str | None = None,
    max_memory: int | str | None = None,
    show_progress: bool | None = None,
) -> WordCounts:
    """Counts the pre-tokenized words of a corpus (paths, globs, directories, .gz/.zst files,
    JSON Lines with `text_field`, Parquet files (column `text_field`, default ``"text"``), an
    iterable of strings or of dicts, an Arrow table or a Hugging Face dataset; a list of strings
    is paths only when every item looks like one, as `train_bpe` says). With `max_memory`, the
    rarest words are pruned whenever the table would pass it; `dropped_count` says how much count
    was lost. `tokenmill.distributed.count_words_on_ray` does the same on a Ray cluster.

    >>> count_words([{"text": "a b a"}], pattern="whitespace")["a"]
    2
    """
    _checks.pattern(pattern)
    _checks.text("normalizer", normalizer)
    specials = _checks.texts("special_tokens", special_tokens)
    _checks.flag("byte_level", byte_level)
    _checks.text("text_field", text_field, optional=True)
    _checks.flag("show_progress", show_progress, optional=True)
    counter = _core.WordCounter(pattern, normalizer, specials, byte_level)
    budget = parse_size(max_memory) if max_memory is not None else None
    dropped = [0, 0]

    def keep_within_budget() -> None:
        if budget is not None and counter.memory_bytes > budget:
            # Prune to 3/4 of the budget so the next batches have room before pruning again.
            words, mass = counter.prune_to(budget * 3 // 4)
            dropped[0] += words
            dropped[1] += mass

    count_into(counter, corpus, show_progress, text_field=text_field, after_batch=keep_within_budget)
    return WordCounts(counter, dropped[0], dropped[1])
