"""WordPiece training: merges by likelihood (count(ab) / (count(a)·count(b))), checked against a
pure-Python reference of the same rule; deterministic; different from BPE on real text; what it
trains saves, loads and exports exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_wordpiece import train as reference_train
from tokenizers import Tokenizer as HFTokenizer

import tokenmill

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def ours(words: dict[str, int], vocab_size: int) -> list[str]:
    tok = tokenmill.train_wordpiece(
        tokenmill.count_words(words, pattern="bert"), vocab_size=vocab_size, special_tokens=SPECIALS
    )
    return [tok.id_to_token(i) for i in range(tok.vocab_size)]


@pytest.mark.parametrize(
    "words",
    [
        {"low": 5, "lower": 2, "newest": 6, "widest": 3},
        {"aaaa": 3, "aaa": 1, "baaab": 2, "ab": 7},
        {"hu": 10, "ha": 30, "bu": 30, "qx": 2},
        {"東京": 3, "京都": 2, "naïve": 4, "café": 1, "👍🏽": 2},
    ],
)
def test_equals_the_reference(words: dict[str, int]) -> None:
    base = len(SPECIALS) + len(alphabet(words))
    for size in (base, base + 3, base + 40):
        assert ours(words, size) == reference_train(words, size, SPECIALS)


def alphabet(words: dict[str, int]) -> set[str]:
    return {c if i == 0 else "##" + c for w in words for i, c in enumerate(w)}


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(alphabet="abcé東", min_size=1, max_size=7), st.integers(1, 9), min_size=1, max_size=8))
def test_generated_word_counts_equal_the_reference(words: dict[str, int]) -> None:
    size = len(SPECIALS) + len(alphabet(words)) + 10
    assert ours(words, size) == reference_train(words, size, SPECIALS)


def test_deterministic_and_unlike_bpe(stdlib_text: str, tmp_path: Path) -> None:
    text = stdlib_text[:300_000]
    a = tokenmill.train_wordpiece([text], vocab_size=800)
    b = tokenmill.train_wordpiece(text.splitlines(), vocab_size=800)
    assert [a.id_to_token(i) for i in range(800)] == [b.id_to_token(i) for i in range(800)]
    bpe = tokenmill.train_bpe([text.lower()], vocab_size=800, pattern="whitespace", byte_level=False)
    first_wordpiece = [a.id_to_token(i) for i in range(a.vocab_size)][-20:]
    first_bpe = [bpe.id_to_token(i) for i in range(bpe.vocab_size)][-20:]
    assert first_wordpiece != first_bpe
    # What it trains saves, loads, and encodes the same in Hugging Face tokenizers.
    a.save(tmp_path / "wp.json")
    again = tokenmill.Tokenizer.load(tmp_path / "wp.json")
    sample = stdlib_text[300_000:310_000]
    assert again.encode_for_model(sample).ids == a.encode_for_model(sample).ids
    a.to_huggingface(tmp_path / "tokenizer.json")
    hf = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert hf.encode(sample).ids == a.encode_for_model(sample).ids


def test_bad_arguments() -> None:
    with pytest.raises(tokenmill.ConfigError, match="smaller than"):
        tokenmill.train_wordpiece(["abcdefg hijk"], vocab_size=8)
    with pytest.raises(tokenmill.ConfigError, match="unk_token"):
        tokenmill.train_wordpiece(["abc"], vocab_size=50, special_tokens=["[PAD]"])
    with pytest.raises(tokenmill.ConfigError, match="pattern='bert'"):
        tokenmill.train_wordpiece(tokenmill.count_words(["abc"], pattern="cl100k"), vocab_size=50)
