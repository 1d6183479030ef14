"""Turning what the user passes as a corpus into work for the Rust counter.

A corpus is a path, a glob, a directory, a list of those, an iterable of strings or of dicts
(their `text_field`, default ``"text"``), an Arrow table or array, a Hugging Face dataset, or a
mapping word → count (already split words). Globs and directories expand here; Rust reads the
files, except Parquet, read here in Arrow batches (`columns.py`). `resolve_files` holds the rule
that tells a list of paths from a list of texts.
"""

from __future__ import annotations

import glob
import os
import re
import sysconfig
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Union

from tokenmill import _core
from tokenmill.columns import DEFAULT_COLUMN, arrow_batches, count_column_batches, is_parquet, parquet_batches
from tokenmill.progress import Progress

Corpus = Union[str, "os.PathLike[str]", Iterable[str], Iterable["os.PathLike[str]"], Mapping[str, int]]

_GLOB_MAGIC = set("*?[")
_TEXT_BATCH_BYTES = 4 << 20


def default_corpus_files() -> list[Path]:
    """The running Python's standard-library sources: text that exists on every machine."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts and p.is_file())


def _expand(item: str | os.PathLike[str]) -> list[Path]:
    """One path, directory or glob → the files it names (sorted); a clear error if none."""
    text = os.fspath(item)
    if not isinstance(text, str):
        raise _core.CorpusError(f"{text!r}: corpus paths must be str or os.PathLike[str], not bytes")
    if not text:
        # Path("") is ".": an empty string must not quietly mean the current directory.
        raise _core.CorpusError("the corpus path is empty (an empty string names no file)")
    if _GLOB_MAGIC & set(text):
        files = sorted(Path(p) for p in glob.glob(text, recursive=True) if os.path.isfile(p))
        if not files:
            raise _core.CorpusError(f"{text}: no files match this pattern")
        return files
    path = Path(text)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
        if not files:
            raise _core.CorpusError(f"{text}: directory holds no files")
        return files
    if not path.exists():
        if path.is_symlink():
            raise _core.CorpusError(f"{text}: broken symbolic link")
        raise _core.CorpusError(f"{text}: no such file")
    return [path]


def expand_paths(items: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Every item is a path, directory or glob: the files they name, in order."""
    return [f for item in items for f in _expand(item)]


_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")


def looks_like_path(s: str) -> bool:
    """A single line with no surrounding space that holds a directory separator or a glob
    character, or ends in a file extension. A glob character counts only without spaces: text
    such as "a [MASK] b" is text.

    >>> [looks_like_path(s) for s in ["data/a.txt", "*.jsonl", "notes.md", "hello world", "data", "a [MASK] b"]]
    [True, True, True, False, False, False]
    """
    if not 0 < len(s) < 4096 or s != s.strip() or "\n" in s or "\x00" in s:
        return False
    seps = {os.sep, os.altsep or os.sep}
    glob = bool(_GLOB_MAGIC & set(s)) and not any(c.isspace() for c in s)
    return bool(seps & set(s)) or glob or _EXTENSION.search(s) is not None


def resolve_files(corpus: object) -> list[Path] | None:
    """The files a corpus names, or None if the corpus is text (an iterable of strings) or words.

    The rule depends on the corpus's types and spelling only, never on which files happen to
    exist, so the same call means the same thing in every directory:

    - a `str` or `os.PathLike` on its own is a path, directory or glob;
    - a list or tuple holding any `os.PathLike` is a list of paths (its strings too);
    - a list or tuple of strings that *all* look like paths (see `looks_like_path`: a
      separator, a glob character or a file extension, on one line without surrounding
      space) is a list of paths, and a missing one is an error, never quietly text;
    - any other list of strings, and every other iterable, is text.

    To train on strings that look like paths, pass an iterator (``iter(texts)``); to name
    files whatever their spelling, pass `pathlib.Path` objects.
    """
    if isinstance(corpus, (str, os.PathLike)):
        return _expand(corpus)
    if isinstance(corpus, (list, tuple)) and corpus:
        if any(isinstance(c, os.PathLike) for c in corpus):
            bad = next((c for c in corpus if not isinstance(c, (str, os.PathLike))), None)
            if bad is not None:
                raise _core.CorpusError(f"a list of paths holds {type(bad).__name__} {bad!r}, not a path")
            return expand_paths(corpus)
        if all(isinstance(c, str) and looks_like_path(c) for c in corpus):
            return expand_paths(corpus)
    return None


def count_into(
    counter: _core.WordCounter,
    corpus: object,
    show_progress: bool | None,
    *,
    text_field: str | None = None,
    after_batch: Callable[[], None] = lambda: None,
) -> None:
    """Feeds `corpus` to `counter` in batches; Ctrl-C takes effect between batches, and
    `after_batch` runs after each (to keep memory within a budget)."""
    column = text_field or DEFAULT_COLUMN
    batches = arrow_batches(corpus, column)
    if batches is not None:
        with Progress("counting", None, "B", show_progress) as bar:
            for read in count_column_batches(counter, batches):
                after_batch()
                bar.update(read)
        return
    if isinstance(corpus, Mapping):
        words = []
        for word, count in corpus.items():
            if not isinstance(word, str) or not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise _core.CorpusError(
                    f"word-count mappings need str keys and non-negative int counts; got {word!r}: {count!r}"
                )
            words.append((word, count))
        counter.add_words(words)
        return
    files = resolve_files(corpus)
    if files is not None:
        count_files(counter, files, show_progress, text_field, after_batch)
        return
    if isinstance(corpus, (bytes, bytearray)) or not isinstance(corpus, Iterable):
        raise _core.CorpusError(
            "corpus must be a path, glob, list of paths, iterable of str or word→count mapping, "
            f"not {type(corpus).__name__}"
        )
    with Progress("counting", None, "B", show_progress) as bar:
        for batch in text_batches(corpus, column):
            counter.add_texts(batch)
            after_batch()
            bar.update(sum(map(len, batch)))


def text_batches(corpus: Iterable[object], column: str) -> Iterator[list[str]]:
    """The texts of an iterable of strings or dicts (their `column`), in batches of about
    `_TEXT_BATCH_BYTES` characters."""

    def texts() -> Iterator[str]:
        for i, text in enumerate(corpus):
            if isinstance(text, Mapping):
                yield document_text(text, column, i)
            elif isinstance(text, str):
                yield text
            else:
                raise _core.CorpusError(f"corpus item {i} is {type(text).__name__}, expected str or dict")

    return batched_by_size(texts())


def batched_by_size(texts: Iterable[str], limit: int = _TEXT_BATCH_BYTES) -> Iterator[list[str]]:
    """`texts` in lists of about `limit` characters (a list closes once it reaches the limit).

    >>> list(batched_by_size(["ab", "cd", "e"], limit=3))
    [['ab', 'cd'], ['e']]
    """
    batch: list[str] = []
    size = 0
    for text in texts:
        batch.append(text)
        size += len(text)
        if size >= limit:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def document_text(row: Mapping[str, object], field: str, i: int) -> str:
    """The text of a dict document (a row of a dataset): a missing field or one that is not a
    string is an error; null is an empty document (as in JSON Lines and Arrow columns)."""
    text = row.get(field)
    if not isinstance(text, str):
        if field not in row:
            keys = ", ".join(map(repr, list(row)[:10]))
            raise _core.CorpusError(f"corpus item {i} has no field {field!r} (fields: {keys}); pass text_field=")
        if text is None:
            return ""
        raise _core.CorpusError(f"corpus item {i}: field {field!r} is {type(text).__name__}, expected str")
    return text


# File names that say JSON Lines (plain or compressed).
_JSON_LINES = tuple(f"{ext}{z}" for ext in (".jsonl", ".ndjson") for z in ("", ".gz", ".zst", ".zstd"))


def count_files(
    counter: _core.WordCounter,
    files: list[Path],
    show_progress: bool | None,
    text_field: str | None = None,
    after_batch: Callable[[], None] = lambda: None,
) -> None:
    """Rust reads the files block by block; after each block the bar moves and `after_batch`
    runs, so a single huge file still shows progress and stays within a memory budget."""
    if text_field is None:
        # Counting a JSON Lines file's raw JSON (keys, quotes, escapes) as text is never what
        # was meant, and would train a vocabulary on it without a word of warning.
        for f in files:
            if f.name.endswith(_JSON_LINES):
                raise _core.CorpusError(
                    f"{f} holds JSON Lines: pass text_field= (the field that holds each document's text, "
                    "such as 'text'); without it its JSON would be counted as text"
                )
    sizes = []
    for f in files:
        try:
            sizes.append(f.stat().st_size)
        except OSError as e:
            raise _core.CorpusError(f"{f}: {e.strerror}") from None
    # Compressed files (Parquet too) report text bytes, which their sizes on disk cannot total.
    compressed = any(f.suffix in (".gz", ".zst", ".zstd") or is_parquet(f) for f in files)
    with Progress("counting", None if compressed else sum(sizes), "B", show_progress) as bar:

        def on_block(read: int) -> None:
            bar.update(read)
            after_batch()

        parquet = [f for f in files if is_parquet(f)]
        others = [os.fspath(f) for f in files if not is_parquet(f)]
        if others:
            counter.add_files(others, text_field, on_block)
        for f in parquet:
            for read in count_column_batches(counter, parquet_batches(f, text_field or DEFAULT_COLUMN)):
                on_block(read)
