"""Wrong arguments to train_bpe, count_words and encode_batch are ConfigErrors (or PatternErrors)
that name the argument, never OverflowError, TypeError or AttributeError from the layers below."""

from __future__ import annotations

from typing import Any

import pytest

import tokenmill
from tokenmill import ConfigError, CorpusError, PatternError

BAD_TRAIN_OPTIONS: list[tuple[str, Any]] = [
    ("vocab_size", 2**64),
    ("vocab_size", 300.0),
    ("vocab_size", True),
    ("vocab_size", "300"),
    ("num_merges", -1),
    ("min_frequency", True),
    ("min_frequency", 1.5),
    ("min_frequency", 2**64),
    ("max_token_length", 2**64),
    ("limit_alphabet", 2**70),
    ("base", "x"),
    ("pattern", 3),
    ("normalizer", None),
    ("byte_level", "no"),
    ("unk_token", 3),
    ("unk_token", ""),
    ("end_of_word_suffix", b"</w>"),
    ("special_tokens", None),
    ("special_tokens", "<s>"),
    ("special_tokens", ["ok", "\ud800"]),
    ("show_progress", "yes"),
    ("initial_alphabet", 5),
]


@pytest.mark.parametrize(("name", "value"), BAD_TRAIN_OPTIONS)
def test_train_bpe_rejects(name: str, value: Any) -> None:
    options: dict[str, Any] = {"vocab_size": 300, name: value}
    with pytest.raises(ConfigError, match=name):
        tokenmill.train_bpe(["abc abd"], **options)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("pattern", None),
        ("normalizer", 1),
        ("special_tokens", 7),
        ("byte_level", 1),
        ("text_field", 3),
        ("show_progress", 0),
        ("max_memory", True),
    ],
)
def test_count_words_rejects(name: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=name):
        tokenmill.count_words(["abc"], **{name: value})


@pytest.mark.parametrize("num_threads", [-1, 0, 2**64, 1.0, True, "2"])
def test_encode_batch_rejects_num_threads(num_threads: Any) -> None:
    tok = tokenmill.train_bpe(["hello world"], vocab_size=260)
    with pytest.raises(ConfigError, match="num_threads"):
        tok.encode_batch(["abc"], num_threads=num_threads)
    with pytest.raises(ConfigError, match="texts must be a sequence of str"):
        tok.encode_batch("abc")


def test_decode_rejects_an_unknown_error_handler() -> None:
    tok = tokenmill.train_bpe(["hello world"], vocab_size=260)
    with pytest.raises(ConfigError, match="errors must be an error handler"):
        tok.decode(tok.encode("hi"), errors="bogus")


@pytest.mark.parametrize("pattern", ["CL100K", "Cl100k", "GPT2", "O200K_BASE", "Whitespace"])
def test_wrong_case_preset_names_the_presets(pattern: str) -> None:
    # Once such a name was taken as a literal regex that matched nothing: "empty corpus".
    for call in (
        lambda: tokenmill.train_bpe(["abc"], vocab_size=300, pattern=pattern),
        lambda: tokenmill.count_words(["abc"], pattern=pattern),
    ):
        with pytest.raises(PatternError, match=rf"preset names are lowercase: \"{pattern.lower()}\".*cl100k, "):
            call()
    with pytest.raises(PatternError, match="unknown preset; use gpt2"):
        tokenmill.count_words(["abc"], pattern="Nonsense")
    with pytest.raises(PatternError, match="empty"):
        tokenmill.count_words(["abc"], pattern="")


def test_a_regex_that_finds_no_words_says_so() -> None:
    with pytest.raises(CorpusError, match=r"empty corpus: the pattern '\\\\d\+' found no words in 3 bytes"):
        tokenmill.train_bpe(["abc"], vocab_size=300, pattern=r"\d+")
