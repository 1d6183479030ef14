"""decode(encode(x)) == x for every string, for every lossless pipeline."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenmill

any_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=200)


@pytest.fixture(scope="module")
def byte_level_tokenizers(stdlib_text: str, multilingual_text: str) -> list[tokenmill.Tokenizer]:
    corpus = [stdlib_text[:200_000], multilingual_text * 5]
    return [
        tokenmill.train_bpe(corpus, vocab_size=600, pattern=p, special_tokens=["<|eot|>"])
        for p in ("gpt2", "cl100k", "o200k", "none")
    ]


@settings(max_examples=400, deadline=None)
@given(any_text)
def test_byte_level_round_trip(byte_level_tokenizers: list[tokenmill.Tokenizer], text: str) -> None:
    for tok in byte_level_tokenizers:
        assert tok.decode(tok.encode(text, disallowed_special=())) == text
        assert tok.decode_bytes(tok.encode_ordinary(text)) == text.encode("utf-8")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["<|eot|>", "<|eot", "|>", " ", "a", "\n", "é"]), max_size=20))
def test_round_trip_with_special_tokens(byte_level_tokenizers: list[tokenmill.Tokenizer], parts: list[str]) -> None:
    text = "".join(parts)
    for tok in byte_level_tokenizers:
        ids = tok.encode(text, allowed_special="all")
        assert tok.decode(ids) == text
        assert ids.count(0) == text.count("<|eot|>")


def test_char_level_round_trip_on_its_alphabet(multilingual_text: str) -> None:
    tok = tokenmill.train_bpe(
        [multilingual_text], num_merges=200, byte_level=False, end_of_word_suffix="</w>", pattern="cl100k"
    )
    for line in multilingual_text.splitlines():
        assert tok.decode(tok.encode(line)) == line
    spaced = tokenmill.train_bpe(
        [multilingual_text], num_merges=200, byte_level=False, end_of_word_suffix="</w>", pattern="whitespace"
    )
    # Whitespace pre-tokenization drops spaces; the end-of-word marker brings one back.
    assert spaced.decode(spaced.encode("Москва — столица")) == "Москва — столица"


def test_huge_inputs_stay_linear(byte_level_tokenizers: list[tokenmill.Tokenizer]) -> None:
    tok = byte_level_tokenizers[1]
    for text in ["a" * 1_000_000, "ab" * 500_000, " " * 1_000_000, "<|eot|>" * 10_000, "中" * 300_000]:
        assert tok.decode(tok.encode(text, allowed_special="all")) == text
