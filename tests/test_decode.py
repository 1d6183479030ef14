"""Decoding depends on what the vocabulary is, not on how its pattern is spelled: a byte-level
vocabulary decodes to its bytes whatever the pre-tokenizer; an end-of-word suffix becomes a space
only where pre-tokenization dropped the whitespace."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vocab_files import vocabulary_path

import tokenmill
from tokenmill.pretokenize_patterns import CL100K, GPT2, O200K

any_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=120)
# Character-level vocabularies only know the characters they were trained on.
ALPHABET = "abcdefghij XYZ.,!?\n\t0123456789éü'"
known_text = st.text(alphabet=ALPHABET, max_size=120)
CORPUS = [("the quick brown fox, jumped! over 12 lazy dogs? é ü XYZ abc'd\n\tj 34567890. " + ALPHABET) * 40]

# The three OpenAI regexes spelled out, and a user regex that keeps every character.
REGEX_PATTERNS = [GPT2, CL100K, O200K, r"\s+|\S+"]


@pytest.fixture(scope="module")
def cl100k_by_regex() -> tokenmill.Tokenizer:
    return tokenmill.Tokenizer.from_tiktoken(vocabulary_path("cl100k_base"), pattern=CL100K)


def test_trailing_space_survives_a_regex_pattern(cl100k_by_regex: tokenmill.Tokenizer) -> None:
    assert cl100k_by_regex.decode([15339, 220]) == "hello "
    assert cl100k_by_regex.decode([220]) == " "
    assert cl100k_by_regex.decode_with_offsets([15339, 220]) == ("hello ", [0, 5])


@settings(max_examples=150, deadline=None)
@given(any_text)
def test_loaded_vocabulary_round_trips_with_its_regex(cl100k_by_regex: tokenmill.Tokenizer, text: str) -> None:
    ids = cl100k_by_regex.encode_ordinary(text)
    assert cl100k_by_regex.decode(ids) == text
    assert cl100k_by_regex.decode_with_offsets(ids)[0] == text


@pytest.fixture(scope="module")
def byte_level() -> list[tokenmill.Tokenizer]:
    patterns = ["gpt2", "cl100k", "o200k", "none", *REGEX_PATTERNS]
    return [tokenmill.train_bpe(CORPUS, vocab_size=300, pattern=p) for p in patterns]


@pytest.fixture(scope="module")
def char_level() -> list[tokenmill.Tokenizer]:
    out = []
    for p in ["gpt2", "cl100k", "o200k", "none", *REGEX_PATTERNS]:
        for suffix in (None, "</w>"):
            out.append(
                tokenmill.train_bpe(CORPUS, vocab_size=80, pattern=p, byte_level=False, end_of_word_suffix=suffix)
            )
    return out


@settings(max_examples=150, deadline=None)
@given(any_text)
def test_byte_level_round_trip_for_presets_and_regexes(byte_level: list[tokenmill.Tokenizer], text: str) -> None:
    for tok in byte_level:
        ids = tok.encode_ordinary(text)
        assert tok.decode(ids) == text, tok.pattern
        decoded, offsets = tok.decode_with_offsets(ids)
        assert decoded == text
        assert offsets == sorted(offsets)


@settings(max_examples=150, deadline=None)
@given(known_text)
def test_char_level_round_trip_with_and_without_suffix(char_level: list[tokenmill.Tokenizer], text: str) -> None:
    for tok in char_level:
        ids = tok.encode_ordinary(text)
        assert tok.decode(ids) == text, (tok.pattern, tok.end_of_word_suffix)
        assert tok.decode_with_offsets(ids)[0] == text


def test_suffix_is_a_space_where_whitespace_was_dropped() -> None:
    tok = tokenmill.train_bpe(CORPUS, num_merges=20, pattern="whitespace", byte_level=False, end_of_word_suffix="</w>")
    ids = tok.encode("the fox  jumped")
    assert tok.decode(ids) == "the fox jumped"
    text, offsets = tok.decode_with_offsets(ids)
    assert text == "the fox jumped" and "</w>" not in text
    assert len(offsets) == len(ids)
