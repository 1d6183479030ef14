"""Corpora for the analyses: named groups (a language, a file) of documents, read in bounded
memory. Files are cut into documents of about 64 KB only at a newline with a non-space
character on each side, where no preset pre-tokenizer joins two words, so encoding the pieces
gives the tokens encoding the whole file would.

>>> groups = corpus_groups({"en": ["Hello world."], "de": ["Hallo Welt."]})
>>> [(name, list(docs())) for name, docs in groups.items()]
[('en', [['Hello world.']]), ('de', [['Hallo Welt.']])]
"""

from __future__ import annotations

import codecs
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from tokenmill import _core
from tokenmill.corpus import batched_by_size, expand_paths

# A group of documents: a path (str or PathLike; globs and directories too) or texts.
GroupArg = Union[str, "os.PathLike[str]", Sequence[str]]
CorpusArg = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]], Mapping[str, GroupArg]]
Batches = Callable[[], Iterator[list[str]]]

DOCUMENT_SIZE = 1 << 16
BATCH_BYTES = 8 << 20
_SAFE_CUT = re.compile(r"(?<=\S)\n(?=\S)")


def corpus_groups(corpus: CorpusArg) -> dict[str, Batches]:
    """Named groups, each a function that yields batches of documents (read again on each call).

    - a mapping ``{"en": "en.txt", "de": ["Hallo Welt.", ...]}``: a str or path value is a file
      (or glob or directory), a list is the texts themselves;
    - a path, a glob or a list of paths: one group per file, named after the file.
    """
    if isinstance(corpus, Mapping):
        if not corpus:
            raise _core.ConfigError("the corpus has no groups")
        out: dict[str, Batches] = {}
        for name, group in corpus.items():
            if not isinstance(name, str):
                raise _core.ConfigError(f"corpus group names must be str, got {name!r}")
            out[name] = _group(name, group)
        return out
    if isinstance(corpus, (str, os.PathLike)):
        corpus = [corpus]
    if not isinstance(corpus, Iterable) or isinstance(corpus, bytes):
        raise _core.ConfigError(f"corpus must be paths or a mapping of name → path or texts, got {corpus!r}")
    files = expand_paths(list(corpus))
    out = {}
    for f in files:
        name, n = f.name, 2
        while name in out:
            name, n = f"{f.name}#{n}", n + 1
        out[name] = _file_batches(f)
    return out


@dataclass
class ReadStats:
    """What reading a group's files found: their bytes, and how many of those were not UTF-8
    (read as U+FFFD, which is three bytes of text, so the text's length is not the files')."""

    bytes: int = 0
    invalid: int = 0


class FileBatches:
    """Batches of a group of files (a `Batches`), counting what it reads in `stats` (reset on
    each call)."""

    def __init__(self, files: list[Path]) -> None:
        self.files = files
        self.stats = ReadStats()

    def __call__(self) -> Iterator[list[str]]:
        self.stats = ReadStats()
        return (
            batch for f in self.files for batch in batched_by_size(read_documents(f, stats=self.stats), BATCH_BYTES)
        )


def _group(name: str, group: GroupArg) -> Batches:
    if isinstance(group, (str, os.PathLike)):
        return FileBatches(expand_paths([group]))
    if isinstance(group, Iterable) and not isinstance(group, bytes):
        texts = list(group)
        if not all(isinstance(t, str) for t in texts):
            raise _core.ConfigError(f"corpus group {name!r}: texts must be str")
        return lambda: iter([texts])
    raise _core.ConfigError(f"corpus group {name!r} must be a path or a list of texts, got {group!r}")


def _file_batches(path: Path) -> Batches:
    return FileBatches([path])


# The `ReadStats` the decoding under way in this thread counts invalid bytes into.
_reading = threading.local()


def _count_invalid(error: UnicodeError) -> tuple[str, int]:
    """The "replace" handler (one U+FFFD per maximal invalid sequence), counting the bytes."""
    assert isinstance(error, UnicodeDecodeError)
    stats = getattr(_reading, "stats", None)
    if stats is not None:
        stats.invalid += error.end - error.start
    return "\ufffd", error.end


codecs.register_error("tokenmill.count-invalid", _count_invalid)


def read_documents(
    path: str | os.PathLike[str], size: int = DOCUMENT_SIZE, stats: ReadStats | None = None
) -> Iterator[str]:
    """The text of a file (UTF-8; invalid bytes become U+FFFD) in documents of about `size`
    characters, cut only where encoding the pieces equals encoding the whole; `stats` counts
    the bytes read and those that were not UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8")("tokenmill.count-invalid")
    pending = ""
    try:
        with open(path, "rb") as f:
            while True:
                block = f.read(BATCH_BYTES)
                _reading.stats = stats
                try:
                    pending += decoder.decode(block, final=not block)
                finally:
                    _reading.stats = None
                if stats is not None:
                    stats.bytes += len(block)
                # Cut by index and slice the rest once per block: slicing after every document
                # would copy the block over and over.
                start = 0
                while len(pending) - start >= 2 * size:
                    cut = _cut(pending, start + size)
                    if cut is None:
                        break
                    yield pending[start:cut]
                    start = cut
                pending = pending[start:]
                if not block:
                    break
    except OSError as e:
        raise _core.CorpusError(f"{path}: {e.strerror}") from None
    if pending:
        yield pending


def _cut(text: str, at: int) -> int | None:
    """Just after the first safe newline at or beyond index `at`, if any."""
    m = _SAFE_CUT.search(text, at)
    return m.end() if m else None
