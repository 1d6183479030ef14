"""Arbitrary arguments, not only arbitrary text: every call returns a result or raises a
`tokenmill` error — never another exception type, a panic, an abort or a hang."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill import TokenmillError

# Values a user might pass by mistake: wrong types, signs and sizes, odd strings.
odd_ints = st.sampled_from([-(2**70), -1, 0, 1, 2, 255, 300, 2**31, 2**32 - 1, 2**32, 2**63, 2**64, 10**10])
odd_scalars = st.one_of(
    odd_ints,
    st.integers(min_value=-5, max_value=5000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=8),
    st.binary(max_size=8),
    st.sampled_from(["all", "CL100K", "gpt2", "", "\ud800", "<|eot|>", "(", "nfkc+lowercase", "bogus"]),
)
odd_values = st.one_of(odd_scalars, st.lists(odd_scalars, max_size=4), st.dictionaries(st.text(max_size=4), odd_ints))


def outcome(call: Callable[[], Any]) -> None:
    try:
        call()
    except TokenmillError:
        pass


@pytest.fixture(scope="module")
def tok() -> tokenmill.Tokenizer:
    return tokenmill.train_bpe(["hello world, hello there <|eot|>"] * 20, vocab_size=270, special_tokens=["<|eot|>"])


TRAIN_ARGS = [
    "vocab_size",
    "num_merges",
    "pattern",
    "normalizer",
    "byte_level",
    "end_of_word_suffix",
    "unk_token",
    "special_tokens",
    "min_frequency",
    "max_token_length",
    "limit_alphabet",
    "initial_alphabet",
    "base",
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TRAIN_ARGS), odd_values, st.sampled_from([None, 280, 10**10]))
def test_train_bpe_arguments(name: str, value: object, vocab_size: int | None) -> None:
    kwargs: dict[str, Any] = {"vocab_size": vocab_size, "show_progress": False, name: value}
    if "vocab_size" not in kwargs or kwargs["vocab_size"] is None and name != "num_merges":
        kwargs["num_merges"] = 5
    outcome(lambda: tokenmill.train_bpe(["low lower lowest newer wider"] * 3, **kwargs))


COUNT_ARGS = ["pattern", "normalizer", "special_tokens", "byte_level", "text_field", "max_memory"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(COUNT_ARGS), odd_values)
def test_count_words_arguments(name: str, value: object) -> None:
    outcome(lambda: tokenmill.count_words(["some text to count"], show_progress=False, **{name: value}))


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["encode", "encode_batch", "decode", "decode_bytes", "token_to_id", "id_to_token", "truncated"]),
    odd_values,
    odd_values,
)
def test_tokenizer_methods(tok: tokenmill.Tokenizer, method: str, first: object, second: object) -> None:
    calls: dict[str, Callable[[], Any]] = {
        "encode": lambda: tok.encode("hello <|eot|>", allowed_special=first, disallowed_special=second),  # type: ignore[arg-type]
        "encode_batch": lambda: tok.encode_batch(["hello", "<|eot|>"], num_threads=first),  # type: ignore[arg-type]
        "decode": lambda: tok.decode(first if isinstance(first, list) else [first]),  # type: ignore[list-item]
        "decode_bytes": lambda: tok.decode_bytes(second if isinstance(second, list) else [second]),  # type: ignore[list-item]
        "token_to_id": lambda: tok.token_to_id(first),  # type: ignore[arg-type]
        "id_to_token": lambda: tok.id_to_token(first),  # type: ignore[arg-type]
        "truncated": lambda: tok.truncated(first),  # type: ignore[arg-type]
    }
    outcome(calls[method])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=6), odd_ints, max_size=4), odd_values)
def test_from_tiktoken_arguments(special_tokens: dict[str, int], pattern: object) -> None:
    ranks = {bytes([b]): b for b in range(256)}
    outcome(lambda: tokenmill.Tokenizer.from_tiktoken(ranks, pattern="cl100k", special_tokens=special_tokens))
    outcome(lambda: tokenmill.Tokenizer.from_tiktoken(ranks, pattern=pattern))  # type: ignore[arg-type]
