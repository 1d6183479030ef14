"""Lone surrogates (which Python strings may hold and UTF-8 cannot) are U+FFFD on every path
text takes into tokenmill — one rule where Rust receives a `str` (`src/python/text.rs`), as
tiktoken encodes them: each entry point gives for a text with surrogates exactly what it gives
for the text with each surrogate replaced."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill

WITH_SURROGATES = st.lists(
    st.sampled_from(["ab", " cd", "\ud800", "\udfff", "\ud83d", "😀", "é", "\n", "<|endoftext|>", "12"]), max_size=10
).map("".join)


def replaced(text: str) -> str:
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@pytest.fixture(scope="module")
def tok() -> tokenmill.Tokenizer:
    return tokenmill.train_bpe(iter(["ab cd é 😀 12\n" * 50]), vocab_size=280, special_tokens=["<|endoftext|>"])


ENTRY_POINTS: dict[str, Callable[[tokenmill.Tokenizer, str], Any]] = {
    "encode": lambda tok, t: tok.encode(t, allowed_special="all"),
    "encode_ordinary": lambda tok, t: tok.encode_ordinary(t),
    "encode_batch": lambda tok, t: tok.encode_batch([t, t + "x"], allowed_special="all"),
    "encode_to_numpy": lambda tok, t: tok.encode_to_numpy(t, allowed_special="all").tolist(),
    "call": lambda tok, t: tok([t, "ab"], ["cd", t])["input_ids"],
    "call numpy": lambda tok, t: tok([t], return_tensors="np", padding=True)["input_ids"].tolist(),
    "encode_for_model": lambda tok, t: tok.encode_for_model(t).ids,
    "pre_tokenize": lambda tok, t: tok.pre_tokenize(t),
    "count_words": lambda tok, t: (lambda w: (w.most_common(), w.text_bytes))(tokenmill.count_words([t, t])),
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@settings(max_examples=60, deadline=None)
@given(text=WITH_SURROGATES)
def test_every_entry_point_reads_surrogates_as_replacement_characters(tok, entry: str, text: str) -> None:  # type: ignore[no-untyped-def]
    run = ENTRY_POINTS[entry]
    assert run(tok, text) == run(tok, replaced(text))


def test_training_on_text_with_surrogates_is_training_on_the_replaced_text() -> None:
    corpus = ["ab\ud800cd ef \udfff" * 20, "gh ij"]
    a = tokenmill.train_bpe(corpus, vocab_size=270)
    b = tokenmill.train_bpe([replaced(t) for t in corpus], vocab_size=270)
    assert a.merges == b.merges
