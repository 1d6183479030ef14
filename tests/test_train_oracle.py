"""tokenmill's trainer and encoder agree with the pure-Python reference (tests/reference_bpe.py)."""

from __future__ import annotations

from collections import Counter

import pytest
import regex

import tokenmill
from tokenmill.pretokenize_patterns import PRESET_PATTERNS as PRESETS

import reference_bpe


def word_counts(text: str, pattern: str) -> dict[bytes, int]:
    return dict(Counter(w.encode() for w in regex.findall(PRESETS[pattern], text)))


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_byte_level_merges_equal_reference_on_source(stdlib_text: str, pattern: str) -> None:
    text = stdlib_text[:150_000]
    tok = tokenmill.train_bpe([text], num_merges=120, pattern=pattern)
    assert tok.merges == reference_bpe.train(word_counts(text, pattern), num_merges=120)


def test_byte_level_merges_equal_reference_on_multilingual(multilingual_text: str) -> None:
    text = multilingual_text * 3
    tok = tokenmill.train_bpe(iter([text]), vocab_size=256 + 150, pattern="o200k")
    expected = reference_bpe.train(word_counts(text, "o200k"), vocab_size=256 + 150)
    assert tok.merges == expected
    assert tok.vocab_size == 256 + 150


def test_char_level_with_suffix_equals_reference(multilingual_text: str, stdlib_text: str) -> None:
    text = multilingual_text + stdlib_text[:50_000]
    tok = tokenmill.train_bpe([text], num_merges=150, byte_level=False, end_of_word_suffix="</w>", pattern="whitespace")
    words = Counter(w.encode() for w in text.split())
    expected = reference_bpe.train(words, num_merges=150, byte_level=False, end_of_word_suffix="</w>")
    assert tok.merges == expected


def test_options_equal_reference(stdlib_text: str) -> None:
    text = stdlib_text[:80_000]
    words = word_counts(text, "cl100k")
    tok = tokenmill.train_bpe([text], num_merges=100, min_frequency=40, max_token_length=4)
    assert tok.merges == reference_bpe.train(words, num_merges=100, min_frequency=40, max_token_length=4)
    assert all(len(a + b) <= 4 for a, b in tok.merges)


def test_special_tokens_are_reserved_and_not_learned(stdlib_text: str) -> None:
    text = stdlib_text[:50_000]
    marked = "<|doc|>".join([text[:25_000], text[25_000:]]) + "<|doc|>"
    tok = tokenmill.train_bpe([marked], vocab_size=300, special_tokens=["<|doc|>", "<|pad|>"])
    assert tok.special_tokens == {"<|doc|>": 0, "<|pad|>": 1}
    # The special token's text contributed nothing: merges equal training without it.
    plain = reference_bpe.train(
        word_counts(text[:25_000] + text[25_000:], "cl100k"), vocab_size=300, special_tokens=("<|doc|>", "<|pad|>")
    )
    assert tok.merges == plain
    ids = tok.encode("x<|doc|>y", allowed_special="all")
    assert 0 in ids and tok.decode(ids) == "x<|doc|>y"


@pytest.mark.parametrize("pattern", ["gpt2", "o200k"])
def test_encoding_equals_reference(stdlib_text: str, multilingual_text: str, pattern: str) -> None:
    train_text = stdlib_text[:200_000]
    tok = tokenmill.train_bpe([train_text], num_merges=400, pattern=pattern)
    merges = tok.merges
    for text in [stdlib_text[200_000:260_000], multilingual_text, "a" * 3000, "ab" * 2000]:
        expected = [
            t
            for piece in regex.findall(PRESETS[pattern], text)
            for t in reference_bpe.encode_piece(piece.encode(), merges)
        ]
        got = [tok.decode_single_token_bytes(i) for i in tok.encode_ordinary(text)]
        assert got == expected


def test_char_level_encoding_equals_reference(multilingual_text: str) -> None:
    tok = tokenmill.train_bpe(
        [multilingual_text], num_merges=80, byte_level=False, end_of_word_suffix="</w>", pattern="whitespace"
    )
    for word in multilingual_text.split():
        expected = reference_bpe.encode_piece(word.encode(), tok.merges, byte_level=False, end_of_word_suffix="</w>")
        assert [t.encode() for t in tok.tokenize(word)] == expected


def test_result_does_not_depend_on_corpus_order(stdlib_text: str) -> None:
    lines = stdlib_text[:100_000].splitlines(keepends=True)
    a = tokenmill.train_bpe(iter(lines), num_merges=100)
    b = tokenmill.train_bpe(iter(lines[::-1]), num_merges=100)
    assert a.merges == b.merges


@pytest.mark.parametrize("unk_token", [None, "<unk>"])
def test_limit_alphabet_equals_reference(multilingual_text: str, stdlib_text: str, unk_token: str | None) -> None:
    text = multilingual_text * 5 + stdlib_text[:40_000]
    words = Counter(w.encode() for w in text.split())
    n_chars = len(set(text) - set(" \t\r\n\x0b\x0c"))
    assert n_chars > 150  # many rare scripts, so the limit drops characters inside words
    tok = tokenmill.train_bpe(
        {w.decode(): c for w, c in words.items()},
        num_merges=150,
        byte_level=False,
        end_of_word_suffix="</w>",
        unk_token=unk_token,
        limit_alphabet=59,
        initial_alphabet="€ж",
    )
    expected = reference_bpe.train(
        words, num_merges=150, byte_level=False, end_of_word_suffix="</w>", limit_alphabet=59, initial_alphabet="€ж"
    )
    assert tok.merges == expected
    chars = {t for t in tok.token_byte_values() if len(t.decode()) == 1}
    assert len(chars) == 59 and {"€".encode(), "ж".encode()} <= chars
    # A dropped character encodes as unk_token, or is an error without one.
    rare = next(c for c in "東京北京" if c.encode() not in chars)
    if unk_token is None:
        with pytest.raises(tokenmill.OutOfVocabularyError):
            tok.encode(rare)
    else:
        assert tok.encode(rare) == [tok.token_to_id(unk_token), tok.token_to_id("</w>")]


def test_initial_alphabet_equals_reference(stdlib_text: str) -> None:
    text = stdlib_text[:60_000]
    words = Counter(w.encode() for w in text.split())
    tok = tokenmill.train_bpe(
        {w.decode(): c for w, c in words.items()}, num_merges=80, byte_level=False, initial_alphabet=["λ", "ß"]
    )
    assert tok.merges == reference_bpe.train(words, num_merges=80, byte_level=False, initial_alphabet="λß")
    assert tok.tokenize("λß") == ["λ", "ß"]
    # Byte-level holds every byte already: the same characters change nothing there.
    plain = tokenmill.train_bpe([text], num_merges=50)
    assert tokenmill.train_bpe([text], num_merges=50, initial_alphabet="λß").merges == plain.merges


def test_huge_single_words_equal_reference() -> None:
    # Words of thousands of symbols (an unwrapped genome, say) are merged through a position
    # index instead of being rescanned by every merge; the merges must not change.
    import random

    rng = random.Random(7)
    dna = "".join(rng.choices("ACGT", k=6000))
    runs = "".join(c * rng.randint(1, 6) for c in rng.choices("ab", k=1500))
    words = {dna: 3, runs: 2, "ACGTACGT": 40, "abab": 9}
    tok = tokenmill.train_bpe(words, num_merges=150)
    expected = reference_bpe.train({w.encode(): n for w, n in words.items()}, num_merges=150)
    assert tok.merges == expected
    assert tok.decode(tok.encode_ordinary(dna)) == dna
