"""The `tokenmill` command line: train, encode, decode and --help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tokenmill


def run(*args: str, stdin: str | bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    if isinstance(stdin, bytes):
        raw = subprocess.run(
            [sys.executable, "-m", "tokenmill", *args], input=stdin, capture_output=True, timeout=300, cwd=cwd
        )
        return subprocess.CompletedProcess(raw.args, raw.returncode, raw.stdout.decode(), raw.stderr.decode())
    return subprocess.run(
        [sys.executable, "-m", "tokenmill", *args], input=stdin, capture_output=True, text=True, timeout=300, cwd=cwd
    )


def assert_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    """A user error: one line `tokenmill: error: ...` holding `words`, exit status 2."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = [line for line in result.stderr.splitlines() if not line.startswith("training on")]
    assert len(lines) == 1 and lines[0].startswith("tokenmill: error: "), result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


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
    assert result.returncode == 2
    assert "tokenmill: error:" in result.stderr and "missing.txt" in result.stderr
    assert "Traceback" not in result.stderr
    bad = run("decode", "-t", str(tmp_path / "none.json"), "1")
    assert bad.returncode == 2 and "none.json" in bad.stderr


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
    assert byte_level.returncode == 2 and "character-level" in byte_level.stderr


def test_train_reports_stopping_early(tmp_path: Path) -> None:
    (tmp_path / "abc.txt").write_text("abc " * 1000)
    out = str(tmp_path / "t.json")
    result = run("train", str(tmp_path / "abc.txt"), "--vocab-size", "500", "-o", out, "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "vocab size      259 (3 merges; stopped early" in result.stdout


@pytest.fixture(scope="module")
def tok_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "tok.json"
    tokenmill.train_bpe(["hello world, héllo wörld " * 50], vocab_size=280).save(path)
    return path


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"tokenmill {tokenmill.__version__}"


def test_decode_bad_ids_and_errors(tok_file: Path) -> None:
    t = str(tok_file)
    assert_error(run("decode", "-t", t, "--", "-1"), "token ids are integers from 0 to 4294967295", "'-1'")
    assert_error(run("decode", "-t", t, "1" * 24), "token ids are integers", "1" * 24)
    assert_error(run("decode", "-t", t, "x"), "'x'")
    assert_error(run("decode", "-t", t, "1", "--errors", "bogus"), "errors must be an error handler", "'bogus'")
    split_char = tokenmill.Tokenizer.load(tok_file).encode("é")[:1]
    assert run("decode", "-t", t, str(split_char[0])).stdout == "\ufffd\n"
    assert_error(run("decode", "-t", t, str(split_char[0]), "--errors", "strict"), "invalid UTF-8 at byte offset 0")


def test_encode_reads_utf8_strictly_from_file_and_stdin_alike(tok_file: Path, tmp_path: Path) -> None:
    t = str(tok_file)
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9".encode("latin-1"))
    assert_error(run("encode", "-t", t, "--file", str(bad)), "latin1.txt: invalid UTF-8 at byte offset 3")
    assert_error(run("encode", "-t", t, stdin="caf\xe9".encode("latin-1")), "<stdin>: invalid UTF-8 at byte offset 3")
    good = run("encode", "-t", t, stdin="héllo".encode())
    assert good.returncode == 0 and good.stdout == run("encode", "-t", t, "héllo").stdout


def test_encode_text_and_file_together_is_an_error(tok_file: Path, tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("hello")
    assert_error(run("encode", "-t", str(tok_file), "world", "--file", str(f)), "not both")


def test_odd_paths_give_one_line_errors(tok_file: Path, tmp_path: Path) -> None:
    t = str(tok_file)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert_error(run("train", "", "--no-progress", cwd=tmp_path), "the corpus path is empty")
    assert_error(run("train", str(tmp_path / "nothing"), "--no-progress"), "nothing: no such file")
    assert_error(run("train", str(empty), "--vocab-size", "300", "--no-progress"), "empty corpus")
    assert_error(run("encode", "-t", t, "--file", str(tmp_path)), "Is a directory")
    assert_error(run("encode", "-t", t, "--file", str(tmp_path / "absent.txt")), "absent.txt")
    assert_error(run("encode", "-t", t, "--file", ""), "empty")
    assert run("encode", "-t", t, "--file", str(empty)).stdout == "\n"
    for tokenizer in ("", str(tmp_path), str(empty), str(tmp_path / "absent.json")):
        assert_error(run("encode", "-t", tokenizer, "hi"))
        assert_error(run("decode", "-t", tokenizer, "1"))


def test_bad_train_options_fail_before_counting(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 100)
    c = str(corpus)
    out = ["-o", str(tmp_path / "t.json"), "--no-progress"]
    assert_error(run("train", c, "--vocab-size", "-3", *out), "vocab_size must be an int from 0 to")
    assert_error(run("train", c, "--vocab-size", "9" * 24, *out), "vocab_size")
    assert_error(run("train", c, "--min-frequency", "-1", *out), "min_frequency")
    assert_error(run("train", c, "--pattern", "CL100K", *out), 'preset names are lowercase: "cl100k"')
    assert_error(run("train", c, "--special-token", "", *out), "special_tokens")
    assert_error(run("train", c, "-o", ""), "output file name is empty")
    assert_error(run("train", c, "-o", str(tmp_path)), "is a directory")
    assert_error(run("train", c, "-o", str(tmp_path / "no" / "t.json")), "does not exist")
    # The same message as the API's, word for word.
    with pytest.raises(tokenmill.ConfigError) as api:
        tokenmill.train_bpe([c], vocab_size=-3)
    assert str(api.value) in run("train", c, "--vocab-size", "-3", *out).stderr


def test_zst_corpus_without_zstandard_says_the_sample_is_unreadable(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    for i in range(2):
        (tmp_path / f"doc{i}.txt.zst").write_bytes(zstandard.ZstdCompressor().compress(b"hello world " * 500))
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "zstandard.py").write_text("raise ImportError('hidden for this test')\n")
    env_path = os.pathsep.join([str(hide), *sys.path])
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tokenmill",
            "train",
            str(tmp_path / "*.zst"),
            "--vocab-size",
            "270",
            "--no-progress",
            "-o",
            str(tmp_path / "t.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": env_path},
    )
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if x.startswith("bytes/token"))
    assert "nan" not in line and "n/a: could not read a sample" in line and "pip install zstandard" in line


def test_train_wordpiece(tmp_path: Path) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("The quick brown fox jumps over the lazy dog. Café naïve 東京.\n" * 200)
    out = tmp_path / "wp.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tokenmill",
            "train",
            str(corpus),
            "--model",
            "wordpiece",
            "--vocab-size",
            "120",
            "-o",
            str(out),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    tok = tokenmill.Tokenizer.load(out)
    assert tok.model_type == "wordpiece" and tok.vocab_size <= 120
    assert tok.tokenize("the quick fox [MASK]")[-1] == "[MASK]"


def test_an_unexpected_failure_is_one_line_not_a_traceback(monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import argparse

    import tokenmill.cli as cli

    parser = argparse.ArgumentParser()
    parser.set_defaults(run=lambda args: 1 / 0)
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.delenv("TOKENMILL_TRACEBACK", raising=False)
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert "ZeroDivisionError" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    monkeypatch.setenv("TOKENMILL_TRACEBACK", "1")
    with pytest.raises(ZeroDivisionError):
        cli.main([])
