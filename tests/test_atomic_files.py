"""Files tokenmill writes from Python: the usual mode (0o666 less the umask, as Rust's writer
gives) and no temporary files left behind by killed saves."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import tokenmill


@pytest.fixture(scope="module")
def tok() -> tokenmill.Tokenizer:
    return tokenmill.train_bpe(["hello world " * 20], vocab_size=270)


@pytest.fixture
def umask_027() -> Iterator[None]:
    old = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(old)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.usefixtures("umask_027")
def test_python_written_files_get_the_umask_mode(tok: tokenmill.Tokenizer, tmp_path: Path) -> None:
    tok.save(tmp_path / "rust.json")
    tok.to_huggingface(tmp_path / "hf.json")
    tok.save_tiktoken(tmp_path / "t.tiktoken")
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    assert modes == {"rust.json": 0o640, "hf.json": 0o640, "t.tiktoken": 0o640}


def test_stale_temp_files_of_dead_processes_are_removed(tok: tokenmill.Tokenizer, tmp_path: Path) -> None:
    gone = dead_pid()
    old = time.time() - 3600
    stale = [tmp_path / f".tok.json.{gone}.0badf00d.tmp", tmp_path / f".tok.json.tmp{gone}"]
    kept = [
        tmp_path / f".tok.json.{gone}.1badf00d.tmp",  # touched just now: perhaps a live writer elsewhere
        tmp_path / ".tok.json.1.2badf00d.tmp",  # pid 1 runs
        tmp_path / f".other.json.{gone}.3badf00d.tmp",  # another target
        tmp_path / f".tok.json.{gone}.tmp.bak",  # not our pattern
        tmp_path / f"tok.json.{gone}.4badf00d.tmp",  # not hidden: not ours
    ]
    for p in stale + kept:
        p.write_text("partial")
    for p in stale + kept[1:]:
        os.utime(p, (old, old))
    for save in (tok.to_huggingface, tok.save):
        target = tmp_path / "tok.json"
        save(target)
        assert not any(p.exists() for p in stale) and all(p.exists() for p in kept)
        for p in stale:
            p.write_text("partial")
            os.utime(p, (old, old))
    counts = tokenmill.count_words(["a b"])
    stale_counts = tmp_path / f".c.counts.tmp{gone}"
    stale_counts.write_text("partial")
    os.utime(stale_counts, (old, old))
    counts.save(tmp_path / "c.counts")
    assert not stale_counts.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "c.counts",
        "tok.json",
        f"tok.json.{gone}.4badf00d.tmp",
    ]
