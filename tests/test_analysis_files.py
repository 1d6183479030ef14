"""Analyses over files, counted in Rust (`src/io/file_counts.rs`): tokens, each id's count, bytes, invalid
bytes, characters and words equal what decoding the whole file the way Python does
(`errors="replace"`) and encoding it with tiktoken give."""

from __future__ import annotations

import gzip
import random
from collections import Counter
from pathlib import Path

import pytest
from analysis_data import (
    real,
    tiktoken_cache,  # noqa: F401 - autouse fixture: encoding names load offline
    tiktoken_real,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import analysis
from tokenmill.analysis._corpus import Files, Texts
from tokenmill.analysis._counting import count_group


def _mixed_file(path: Path, size: int, seed: int) -> bytes:
    """Words, lines, blank lines, indents, CJK, emoji and bytes that are not UTF-8, spread so that
    documents of 64 KB are cut at many kinds of places."""
    rng = random.Random(seed)
    parts = ["word", " ", "\n", "\n\n", "  indented", "東京", "😀", ".", "'s", "123", "\t", "é"]
    bad = [b"\xff", b"\xe2\x82", b"\x80\x80", b"\xf0\x9f\x98"]
    out = bytearray()
    while len(out) < size:
        if rng.random() < 0.01:
            out += rng.choice(bad)
        else:
            out += rng.choice(parts).encode()
    path.write_bytes(bytes(out))
    return bytes(out)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_a_large_file_counts_as_its_whole_text(tmp_path: Path, name: str) -> None:
    data = _mixed_file(tmp_path / "mixed.txt", 600_000, seed=len(name))
    text = data.decode("utf-8", "replace")
    ids = tiktoken_real(name).encode_ordinary(text)
    c = count_group([real(name)], Files([tmp_path / "mixed.txt"]), id_counts=True, words=True)
    assert c.bytes_read == len(data)
    assert c.invalid_bytes == len(data) - (len(text.encode()) - 3 * text.count("\ufffd")) > 0
    assert (c.text_bytes, c.chars) == (len(text.encode()), len(text))
    assert c.words == analysis.count_words_in([text])
    assert c.tokens == [len(ids)]
    assert c.id_counts is not None
    expected = Counter(ids)
    assert {i: n for i, n in enumerate(c.id_counts[0]) if n} == dict(expected)


def test_several_tokenizers_and_files_in_one_pass(tmp_path: Path) -> None:
    a = _mixed_file(tmp_path / "a.txt", 150_000, seed=1)
    b = _mixed_file(tmp_path / "b.txt", 90_000, seed=2)
    (tmp_path / "c.txt.gz").write_bytes(gzip.compress(b))
    toks = [real("cl100k_base"), real("o200k_base")]
    c = count_group(toks, Files([tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt.gz"]))
    texts = [a.decode("utf-8", "replace"), b.decode("utf-8", "replace"), b.decode("utf-8", "replace")]
    for tok, got in zip(toks, c.tokens, strict=True):
        assert got == sum(len(tok.encode_ordinary(t)) for t in texts)
    assert c.bytes_read == len(a) + 2 * len(b)
    assert c.id_counts is None and c.words == 0


def test_files_and_the_same_texts_count_alike(tmp_path: Path, multilingual_text: str) -> None:
    path = tmp_path / "m.txt"
    path.write_text(multilingual_text, encoding="utf-8")
    toks = [real("cl100k_base")]
    from_file = count_group(toks, Files([path]), id_counts=True, words=True)
    from_texts = count_group(toks, Texts([multilingual_text]), id_counts=True, words=True)
    assert from_file == from_texts


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_decode_as_python_replaces_them(tmp_path_factory, data: bytes) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("bytes") / "b.txt"
    path.write_bytes(data)
    text = data.decode("utf-8", "replace")
    c = count_group([real("cl100k_base")], Files([path]))
    assert (c.text_bytes, c.chars) == (len(text.encode()), len(text))
    assert c.tokens == [len(tiktoken_real("cl100k_base").encode_ordinary(text))]


def test_count_tokens_audit_and_sweep_read_files_in_rust(tmp_path: Path) -> None:
    data = _mixed_file(tmp_path / "t.txt", 80_000, seed=5)
    text = data.decode("utf-8", "replace")
    tok = tokenmill.train_bpe(iter([text]), vocab_size=400)
    report = analysis.count_tokens(tok, [tmp_path / "t.txt"])
    assert report.total_tokens == len(tok.encode_ordinary(text))
    sweep = analysis.vocab_sweep(tok, str(tmp_path / "t.txt"), sizes=[300, 400])
    by_size = {row.vocab_size: row.tokens for row in sweep.rows}
    assert by_size == {n: len(tok.truncated(n).encode_ordinary(text)) for n in (300, 400)}
    assert sweep.text_bytes == len(text.encode())
    audit = analysis.audit_tokens(tok, str(tmp_path / "t.txt"))
    seen = Counter(tok.encode_ordinary(text))
    assert audit.corpus_tokens == sum(seen.values())
    assert all(e.count == seen[e.id] for e in audit.entries)


def test_a_missing_or_corrupt_file_names_itself(tmp_path: Path) -> None:
    with pytest.raises(tokenmill.CorpusError, match="nothing.txt"):
        count_group([real("cl100k_base")], Files([tmp_path / "nothing.txt"]))
    (tmp_path / "cut.txt.gz").write_bytes(gzip.compress(b"hello " * 1000)[:-20])
    with pytest.raises(tokenmill.TokenmillError, match="cut.txt.gz"):
        count_group([real("cl100k_base")], Files([tmp_path / "cut.txt.gz"]))
