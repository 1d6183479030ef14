"""Streaming decode: what a stream emits, joined, equals `decode` of all the ids, and text comes
out as soon as its characters are whole."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vocab_files import vocabulary_path

import tokenmill

any_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=80)


@pytest.fixture(scope="module")
def tokenizers() -> list[tokenmill.Tokenizer]:
    cl100k = tokenmill.Tokenizer.from_tiktoken(vocabulary_path("cl100k_base"), pattern="cl100k_base")
    words = {"low": 5, "lower": 2, "newest": 6, "widest": 3, "<unk>": 0}
    suffix = tokenmill.train_bpe(
        words, num_merges=10, byte_level=False, end_of_word_suffix="</w>", pattern="whitespace", unk_token="<unk>"
    )
    return [cl100k, suffix]


def streamed(tok: tokenmill.Tokenizer, ids: list[int], chunk: int, **kwargs: bool) -> str:
    stream = tok.decode_stream(**kwargs)
    out = [stream.feed(ids[i : i + chunk]) for i in range(0, len(ids), chunk)]
    return "".join(out) + stream.finish()


@settings(max_examples=200, deadline=None)
@given(any_text, st.integers(min_value=1, max_value=4), st.booleans())
def test_stream_equals_decode(tokenizers: list[tokenmill.Tokenizer], text: str, chunk: int, skip: bool) -> None:
    for tok in tokenizers:
        ids = tok.encode(text + "<|endoftext|>" + text, allowed_special="all")
        assert streamed(tok, ids, chunk, skip_special_tokens=skip) == tok.decode(ids, skip_special_tokens=skip)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=100_255), max_size=30))
def test_arbitrary_ids_stream_like_decode(tokenizers: list[tokenmill.Tokenizer], ids: list[int]) -> None:
    # Any ids, even ones whose bytes never form characters: invalid bytes become U+FFFD in both.
    assert streamed(tokenizers[0], ids, 1) == tokenizers[0].decode(ids)


def test_characters_come_out_as_soon_as_they_are_whole(tokenizers: list[tokenmill.Tokenizer]) -> None:
    tok = tokenizers[0]
    ids = tok.encode("a👍🏽b")
    stream = tok.decode_stream()
    emitted = [stream.step(i) for i in ids]
    assert "".join(emitted) + stream.finish() == "a👍🏽b"
    assert "" in emitted  # a token that ended inside the emoji waited for the rest
    suffix = tokenizers[1]
    stream = suffix.decode_stream()
    ids = suffix.encode("lower newest")
    pieces = [stream.step(i) for i in ids]
    assert "".join(pieces) + stream.finish() == "lower newest" == suffix.decode(ids)
    assert not pieces[-1].endswith(" ")  # the final suffix's space is held, then dropped
