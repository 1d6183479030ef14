"""Which corpora are paths and which are text: decided by types and spelling alone, never by
which files happen to exist (tokenmill.corpus.resolve_files)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import tokenmill
from tokenmill import CorpusError
from tokenmill.corpus import resolve_files


@pytest.fixture
def in_tmp(tmp_path: Path) -> Path:
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path  # type: ignore[misc]
    finally:
        os.chdir(cwd)


def test_an_empty_path_is_an_error_not_the_current_directory(in_tmp: Path) -> None:
    (in_tmp / "here.txt").write_text("words that must not be trained on")
    for call in (lambda: tokenmill.train_bpe("", vocab_size=300), lambda: tokenmill.count_words("")):
        with pytest.raises(CorpusError, match="the corpus path is empty"):
            call()
    with pytest.raises(CorpusError, match="the corpus path is empty"):
        tokenmill.count_words([Path("here.txt"), ""])


def test_a_text_that_names_an_existing_file_stays_text(in_tmp: Path) -> None:
    (in_tmp / "README").write_text("file content, not to be read")
    (in_tmp / "notes.md").write_text("file content, not to be read")
    counts = tokenmill.count_words(["README", "some text"], pattern="whitespace")
    assert counts["README"] == 1 and counts["content,"] == 0
    counts = tokenmill.count_words(["read notes.md first", "notes.md"], pattern="whitespace")
    assert counts["notes.md"] == 2 and counts["content,"] == 0


def test_strings_that_all_look_like_paths_are_paths(in_tmp: Path) -> None:
    (in_tmp / "a.txt").write_text("alpha alpha")
    (in_tmp / "sub").mkdir()
    (in_tmp / "sub" / "b.txt").write_text("beta")
    assert resolve_files(["a.txt", "sub/", "*.txt"]) == [Path("a.txt"), Path("sub/b.txt"), Path("a.txt")]
    # A missing one is an error that names it, never a silent switch to text.
    with pytest.raises(CorpusError, match="missing.txt: no such file"):
        tokenmill.count_words(["a.txt", "missing.txt"])


def test_forcing_either_reading() -> None:
    # Path objects are always paths; an iterator is always text.
    with pytest.raises(CorpusError, match="no such file"):
        resolve_files([Path("no-such-dir-xyz")])
    counts = tokenmill.count_words(iter(["a.txt", "b.txt"]), pattern="whitespace")
    assert counts["a.txt"] == 1
    assert resolve_files(("hello", "world")) is None
    assert resolve_files(["line one\nline two.txt"]) is None


@pytest.mark.parametrize(
    ("text", "is_path"),
    [
        ("data/a.txt", True),
        ("*.jsonl", True),
        ("notes.md", True),
        ("My Documents/a b.txt", True),
        ("data", False),
        ("hello world", False),
        (" a.txt", False),
        ("", False),
        ("two\nlines.txt", False),
    ],
)
def test_looks_like_path(text: str, is_path: bool) -> None:
    from tokenmill.corpus import looks_like_path

    assert looks_like_path(text) is is_path
