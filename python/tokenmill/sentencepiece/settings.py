"""sentencepiece's module-wide settings: the generator sampling draws from, the n-best time
limit, and `ThreadPool`, a thread count to hand to batch calls.

>>> ThreadPool(4).num_threads()
4
>>> set_nbest_timeout(1000)     # n-best searches longer than 1 s give the best cut alone
"""

from __future__ import annotations

import operator
import os
import random

_random = random.Random()
# sentencepiece's default: 30 s; 0 or less is no limit.
_nbest_timeout_ms = 30_000
# The sentencepiece release followed where releases differ (`follow_release`).
RELEASES = ("0.2.1", "0.2.3")
_release = RELEASES[-1]


def follow_release(version: str) -> None:
    """Follows sentencepiece `version` where releases differ. One place does: 0.2.1's
    `SentencePieceNormalizer` turns the whitespace flags not given off, 0.2.3's keeps its
    spec's."""
    global _release
    if version not in RELEASES:
        raise ValueError(f"tokenmill.sentencepiece follows sentencepiece {' or '.join(RELEASES)}, not {version!r}")
    _release = version


def release() -> str:
    return _release


def set_random_generator_seed(seed: int) -> None:
    """Seeds the generator sampling draws from, so that samples repeat."""
    _random.seed(seed)


def set_min_log_level(v: int) -> None:
    """Accepted for compatibility: tokenmill's trainers and encoder do not log."""


def set_data_dir(data_dir: str) -> None:
    """Accepted for compatibility: tokenmill's rules are built in, not read from a directory."""


def set_nbest_timeout(timeout_ms: int) -> None:
    """Limits n-best searches to `timeout_ms` milliseconds (0 or less: no limit); a search that
    takes longer gives the best cut alone, as sentencepiece's does. tokenmill's search is not
    cut short: it finishes, then the late result is replaced by its best cut."""
    global _nbest_timeout_ms
    _nbest_timeout_ms = _int(timeout_ms, "SetNBestTimeout")


def nbest_timeout_ms() -> int:
    return _nbest_timeout_ms


def seed() -> int:
    """A fresh seed for one sampled cut."""
    return _random.getrandbits(64)


def rng() -> random.Random:
    return _random


def _int(value: object, what: str) -> int:
    if isinstance(value, float):
        raise TypeError(f"{what}(): incompatible function arguments: an int is needed, not a float")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{what}(): incompatible function arguments: an int is needed, not {value!r}") from None


class ThreadPool:
    """A number of threads for batch calls (`encode(texts, thread_pool=pool)`): tokenmill's
    batch calls run on its own Rust thread pool, so this holds only the count. A count below 1
    means one thread per CPU, and 0 one thread, as sentencepiece's pool has it."""

    __slots__ = ("_num_threads",)

    def __init__(self, num_threads: int) -> None:
        n = _int(num_threads, "ThreadPool")
        self._num_threads = 1 if n == 0 else (os.cpu_count() or 1) if n < 0 else n

    def num_threads(self) -> int:
        return self._num_threads

    def __repr__(self) -> str:
        return f"ThreadPool({self._num_threads})"
