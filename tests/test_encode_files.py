"""Files of documents read, cut and encoded in Rust (`encode_files`, and `encode_corpus` on text and
JSON Lines files): the documents are the file's pieces between separator occurrences (empty
ones dropped), a whole file, or JSON Lines fields, and their ids equal tiktoken's — plain, gzip
and zstd files, whatever the batch boundaries."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import MULTILINGUAL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vocab_files import tiktoken_encoding, vocabulary_path

import tokenmill
from tokenmill.shards import TokenShards, encode_corpus


@pytest.fixture(scope="module")
def pair():  # type: ignore[no-untyped-def]
    path = vocabulary_path("cl100k_base")
    return tokenmill.Tokenizer.from_tiktoken(path, pattern="cl100k_base"), tiktoken_encoding("cl100k_base", path)


def documents(ids: np.ndarray, offsets: np.ndarray) -> list[list[int]]:
    return [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:], strict=True)]


def write(path: Path, data: bytes) -> Path:
    if path.suffix == ".gz":
        data = gzip.compress(data)
    elif path.suffix == ".zst":
        import zstandard

        data = zstandard.ZstdCompressor().compress(data)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("suffix", [".txt", ".gz", ".zst"])
def test_separated_documents_equal_tiktoken_on_each_piece(pair, tmp_path: Path, suffix: str, stdlib_text: str) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    text = stdlib_text[:400_000] + "\n\n" + "\n\n".join(MULTILINGUAL) + "\n\n\n\n"
    path = write(tmp_path / f"docs{suffix}", text.encode())
    ids, offsets = tok.encode_files(path, separator="\n\n")
    assert ids.dtype == np.uint32 and offsets.dtype == np.uint64 and offsets[0] == 0
    pieces = [p for p in text.split("\n\n") if p]
    assert documents(ids, offsets) == enc.encode_ordinary_batch(pieces)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.sampled_from(["a", "hello", " ", "\n", "\n\n", "<|endoftext|>", "東京", "é", "12"]), max_size=40),
    st.sampled_from(["\n\n", "<|endoftext|>", "\n"]),
)
def test_any_text_splits_as_str_split_does(pair, tmp_path: Path, parts: list[str], separator: str) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    text = "".join(parts)
    path = write(tmp_path / "t.txt", text.encode())
    ids, offsets = tok.encode_files(path, separator=separator)
    assert documents(ids, offsets) == enc.encode_ordinary_batch([p for p in text.split(separator) if p])


def test_many_files_in_order_whole_or_json_lines(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    texts = [f"file {i}: " + MULTILINGUAL[i % len(MULTILINGUAL)] * (i + 1) for i in range(12)]
    paths = [write(tmp_path / f"{i:02}.txt", t.encode()) for i, t in enumerate(texts)]
    ids, offsets = tok.encode_files(paths)
    assert documents(ids, offsets) == enc.encode_ordinary_batch(texts)
    rows = [{"id": i, "text": t, "meta": {"x": [1, 2]}} for i, t in enumerate(texts)] + [{"text": None}]
    lines = write(tmp_path / "d.jsonl.gz", "\n".join(json.dumps(r) for r in rows).encode())
    ids, offsets = tok.encode_files(lines, text_field="text")
    assert documents(ids, offsets) == [*enc.encode_ordinary_batch(texts), []]


def test_special_tokens_are_text_unless_allowed(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    path = write(tmp_path / "s.txt", b"a <|endoftext|> b")
    assert documents(*tok.encode_files(path)) == [enc.encode_ordinary("a <|endoftext|> b")]
    allowed = documents(*tok.encode_files(path, allowed_special="all"))
    assert allowed == [enc.encode("a <|endoftext|> b", allowed_special="all")]


def test_bad_input_is_a_clear_error(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tok, _ = pair
    bad = write(tmp_path / "bad.txt", b"fine\n\nnot \xff fine")
    with pytest.raises(tokenmill.CorpusError, match=r"bad\.txt: invalid UTF-8 at byte offset 10"):
        tok.encode_files(bad, separator="\n\n")
    with pytest.raises(tokenmill.ConfigError, match="not both"):
        tok.encode_files(bad, separator="\n\n", text_field="text")
    with pytest.raises(tokenmill.ConfigError, match="separator"):
        tok.encode_files(bad, separator="")
    with pytest.raises(tokenmill.CorpusError):
        tok.encode_files(tmp_path / "missing.txt")
    broken = tmp_path / "cut.gz"
    broken.write_bytes(gzip.compress(b"x" * 100_000)[:-20])
    with pytest.raises(tokenmill.FormatError, match=r"cut\.gz"):
        tok.encode_files(broken)


def test_encode_corpus_cuts_text_files_at_the_separator(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    texts = ["first document", "second one, longer", MULTILINGUAL[4]]
    path = write(tmp_path / "c.txt", "<|endoftext|>".join(texts).encode())
    manifest = encode_corpus(path, tok, tmp_path / "out", separator="<|endoftext|>", show_progress=False)
    assert manifest["documents"] == 3 and manifest["separator"] == "<|endoftext|>"
    shards = TokenShards(tmp_path / "out")
    eot = enc.eot_token
    assert [shards.document(0, j).tolist() for j in range(3)] == [[*enc.encode_ordinary(t), eot] for t in texts]
    with pytest.raises(tokenmill.ConfigError, match="separator"):
        encode_corpus(path, tok, tmp_path / "out", separator="\n", show_progress=False)
