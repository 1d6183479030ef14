"""Corpora for the analyses: named groups (a language, a file) of documents. A group of files is
read, decoded and counted in Rust (`src/io/file_counts.rs`: bounded memory, cut into documents
only where encoding the pieces equals encoding the whole); a group of texts is counted as given.

>>> groups = corpus_groups({"en": ["Hello world."], "de": ["Hallo Welt."]})
>>> [(name, group.texts) for name, group in groups.items()]
[('en', ['Hello world.']), ('de', ['Hallo Welt.'])]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from tokenmill import _core
from tokenmill.corpus import expand_paths

# A group of documents: a path (str or PathLike; globs and directories too) or texts.
GroupArg = Union[str, "os.PathLike[str]", Sequence[str]]
CorpusArg = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]], Mapping[str, GroupArg]]


@dataclass(frozen=True)
class Files:
    """A group read from files (plain, `.gz`, `.zst`; UTF-8, invalid bytes read as U+FFFD)."""

    paths: list[Path]


@dataclass(frozen=True)
class Texts:
    """A group given as texts."""

    texts: list[str]


Group = Files | Texts


def corpus_groups(corpus: CorpusArg) -> dict[str, Group]:
    """Named groups of documents.

    - a mapping ``{"en": "en.txt", "de": ["Hallo Welt.", ...]}``: a str or path value is a file
      (or glob or directory), a list is the texts themselves;
    - a path, a glob or a list of paths: one group per file, named after the file.
    """
    if isinstance(corpus, Mapping):
        if not corpus:
            raise _core.ConfigError("the corpus has no groups")
        out: dict[str, Group] = {}
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
        out[name] = Files([f])
    return out


def _group(name: str, group: GroupArg) -> Group:
    if isinstance(group, (str, os.PathLike)):
        return Files(expand_paths([group]))
    if isinstance(group, Iterable) and not isinstance(group, bytes):
        texts = list(group)
        if not all(isinstance(t, str) for t in texts):
            raise _core.ConfigError(f"corpus group {name!r}: texts must be str")
        return Texts(texts)
    raise _core.ConfigError(f"corpus group {name!r} must be a path or a list of texts, got {group!r}")
