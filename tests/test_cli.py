"""The `tokenmill` command line: train, encode, decode and --help."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tokenmill


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tokenmill", *args], input=stdin, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("command", [[], ["train"], ["encode"], ["decode"]])
def test_help(command: list[str]) -> None:
    result = run(*command, "--help")
    assert result.returncode == 0 and "usage: tokenmill" in result.stdout


def test_train_encode_decode(tmp_path: Path, multilingual_text: str) -> None:
    for i in range(3):
        (tmp_path / f"doc{i}.txt").write_text(multilingual_text * (i + 1), encoding="utf-8")
    out = tmp_path / "tok.json"
    result = run("train", str(tmp_path / "*.txt"), "--vocab-size", "300", "-o", str(out), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "vocab size      300" in result.stdout and "bytes/token" in result.stdout
    assert out.exists() and out.with_suffix(".vocab.txt").exists()
    ids = run("encode", "-t", str(out), "Москва — столица").stdout.split()
    assert ids and all(i.isdigit() for i in ids)
    assert run("decode", "-t", str(out), *ids).stdout == "Москва — столица\n"
    assert run("decode", "-t", str(out), stdin=" ".join(ids)).stdout == "Москва — столица\n"


def test_default_corpus_is_the_standard_library(tmp_path: Path) -> None:
    out = tmp_path / "std.json"
    result = run("train", "--vocab-size", "400", "-o", str(out), "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "standard library" in result.stderr
    assert "held-back text" in result.stdout and "sample" in result.stdout
    unique = next(line for line in result.stdout.splitlines() if line.startswith("unique words"))
    assert int(unique.split()[2]) > 10_000


def test_errors_are_reported_not_raised(tmp_path: Path) -> None:
    result = run("train", str(tmp_path / "missing.txt"), "-o", str(tmp_path / "x.json"))
    assert result.returncode == 1
    assert "tokenmill: error:" in result.stderr and "missing.txt" in result.stderr
    assert "Traceback" not in result.stderr
    bad = run("decode", "-t", str(tmp_path / "none.json"), "1")
    assert bad.returncode == 1 and "none.json" in bad.stderr


def test_train_char_level_with_a_limited_alphabet(tmp_path: Path, multilingual_text: str) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(2):
        (corpus / f"doc{i}.txt").write_text(multilingual_text * (i + 1), encoding="utf-8")
    out = tmp_path / "tok.json"
    args = ["train", str(corpus), "--num-merges", "40", "-o", str(out), "--no-progress", "--limit-alphabet", "30"]
    result = run(*args, "--char-level", "--initial-alphabet", "ЖΩ")
    assert result.returncode == 0, result.stderr
    # Without --unk-token the held-back text cannot be encoded; training still succeeds and says why.
    assert "bytes/token     n/a" in result.stdout and "--unk-token" in result.stdout
    tok = tokenmill.Tokenizer.load(out)
    chars = [t for t in tok.token_byte_values() if len(t.decode()) == 1]
    assert len(chars) == 30 and "Ж".encode() in chars and "Ω".encode() in chars
    with_unk = run(*args, "--char-level", "--unk-token", "<unk>")
    assert with_unk.returncode == 0 and "bytes/token     n/a" not in with_unk.stdout
    byte_level = run(*args)
    assert byte_level.returncode == 1 and "character-level" in byte_level.stderr


def test_train_reports_stopping_early(tmp_path: Path) -> None:
    (tmp_path / "abc.txt").write_text("abc " * 1000)
    out = str(tmp_path / "t.json")
    result = run("train", str(tmp_path / "abc.txt"), "--vocab-size", "500", "-o", out, "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "vocab size      259 (3 merges; stopped early" in result.stdout
