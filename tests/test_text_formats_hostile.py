"""The line-based vocabulary files — a `.tiktoken` file, a BERT `vocab.txt`, GPT-2's
`vocab.json` + `merges.txt` — with lines of any shape: loading and using them either works or
raises a tokenmill error naming the file, in a child with memory and time limits (a crash, a
bare exception or a hang fails the test)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from bounded import bounded, expect_clean
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenmill

TEXTS = ["hello world, hi", "", "  \n\t", "héllo 東京 123", "a" * 500]
RANKS = st.one_of(st.integers(0, 300), st.integers(-(2**40), 2**40), st.just(10**8))
TOKENS = st.one_of(st.binary(min_size=1, max_size=4), st.sampled_from([b"h", b"e", b"l", b"o", b"he", b"ll", b" "]))
LINES = st.one_of(
    st.tuples(TOKENS, RANKS).map(lambda t: f"{base64.b64encode(t[0]).decode()} {t[1]}"),
    st.text(max_size=10),
    st.sampled_from(["", " ", "aGVsbG8=", "!!! 3", "aGVsbG8= x", "aGVsbG8= 1 2", "aGVsbG8=  5"]),
)


def _use(tok: tokenmill.Tokenizer) -> None:
    for text in TEXTS:
        try:
            tok.decode(tok.encode(text))
        except tokenmill.TokenmillError:
            pass


def _load_tiktoken(path: Path) -> None:
    try:
        tok = tokenmill.Tokenizer.from_tiktoken(path, pattern="cl100k_base", special_tokens={"<|end|>": 10**6})
    except tokenmill.TokenmillError as e:
        assert str(path) in str(e), e
        return
    _use(tok)


def _load_wordpiece(path: Path) -> None:
    try:
        tok = tokenmill.Tokenizer.from_wordpiece_vocab(path)
    except tokenmill.TokenmillError as e:
        assert str(path) in str(e), e
        return
    _use(tok)


def _load_gpt2(vocab: Path, merges: Path) -> None:
    try:
        tok = tokenmill.Tokenizer.from_gpt2(vocab, merges)
    except tokenmill.TokenmillError as e:
        assert str(vocab) in str(e) or str(merges) in str(e), e
        return
    _use(tok)


def _byte_lines() -> list[str]:
    return [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(extra=st.lists(LINES, max_size=6), drop=st.lists(st.integers(0, 255), max_size=3))
def test_any_tiktoken_lines(tmp_path: Path, extra: list[str], drop: list[int]) -> None:
    lines = [line for i, line in enumerate(_byte_lines()) if i not in drop] + extra
    path = tmp_path / "v.tiktoken"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    expect_clean(bounded(_load_tiktoken, path), (tokenmill.TokenmillError,), extra)


WORDPIECE_LINES = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]", "##", "##a", "", " ", "a b", "\u00a0", "##\n"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(WORDPIECE_LINES, max_size=30), raw=st.one_of(st.none(), st.binary(max_size=20)))
def test_any_vocab_txt(tmp_path: Path, lines: list[str], raw: bytes | None) -> None:
    path = tmp_path / "vocab.txt"
    path.write_bytes(raw if raw is not None else "\n".join(lines).encode())
    expect_clean(bounded(_load_wordpiece, path), (tokenmill.TokenmillError,), (lines, raw))


MERGE_LINES = ["h e", "#version: 0.2", "he llo", "a"]
JSON_VALUES = st.one_of(st.integers(-(2**40), 2**40), st.text(max_size=3), st.none(), st.just([1]), st.floats())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    vocab=st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=12),
    merges=st.lists(
        st.one_of(st.text(max_size=8), st.sampled_from(["h e", "#version: 0.2", "he llo", "a"])), max_size=8
    ),
    as_list=st.booleans(),
)
def test_any_gpt2_files(tmp_path: Path, vocab: dict[str, object], merges: list[str], as_list: bool) -> None:
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    vocab_path.write_text(json.dumps(list(vocab) if as_list else vocab), "utf-8")
    merges_path.write_text("\n".join(merges), "utf-8")
    expect_clean(bounded(_load_gpt2, vocab_path, merges_path), (tokenmill.TokenmillError,), (vocab, merges))
