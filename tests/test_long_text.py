"""One long text encoded in parts on the pool's threads (`src/long_text.rs`): cut after a line
feed before other text, or at a space between an ASCII letter or digit and an ASCII letter,
where every tiktoken-style preset starts a piece anyway. The ids must be tiktoken's on texts
long enough to be cut (over 256 KB), built from fragments that sit on both sides of such places
— for each preset pattern, with special tokens in the text, and through every call that
encodes one text."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vocab_files import open_model_encoding, tiktoken_encoding, vocabulary_path

import tokenmill
from tokenmill.pretokenize_patterns import PRESET_PATTERNS

LONG = 300_000

# Fragments that put every kind of character beside a cut: line feeds before letters, spaces,
# digits, punctuation, CJK and marks; runs of whitespace; contractions; CRLF.
FRAGMENTS = [
    "\n", "\n\n", "\r\n", " ", "  ", "\t", "\u3000", "a", "The", " word", "x1", "123", "4567", ",", ".\n", "'s", "'LL",
    "(", "))", "東京", "é", "e\u0301", "Ünïcödé", "\u0645\u0631\u062d\u0628\u0627", "😀", "  \n  ", "\n\t", "//", "_x",
]  # fmt: skip


def long_text(seed: int, fragments: list[str]) -> str:
    rng = random.Random(seed)
    parts, size = [], 0
    while size < LONG:
        part = rng.choice(fragments)
        parts.append(part)
        size += len(part)
    return "".join(parts)


@pytest.fixture(scope="module")
def cl100k_ranks():  # type: ignore[no-untyped-def]
    return tiktoken_encoding("cl100k_base", vocabulary_path("cl100k_base"))._mergeable_ranks


@pytest.fixture(scope="module", params=sorted(PRESET_PATTERNS))
def pair(request: pytest.FixtureRequest, cl100k_ranks):  # type: ignore[no-untyped-def]
    """cl100k's ranks split by each preset pattern, in tokenmill and in tiktoken."""
    import tiktoken

    pattern = PRESET_PATTERNS[request.param]
    specials = {"<|endoftext|>": 100257, "<|x|>": 100258}
    enc = tiktoken.Encoding(request.param, pat_str=pattern, mergeable_ranks=cl100k_ranks, special_tokens=specials)
    tok = tokenmill.Tokenizer.from_tiktoken(cl100k_ranks, pattern=request.param, special_tokens=specials)
    return tok, enc


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32), kinds=st.lists(st.sampled_from(FRAGMENTS), min_size=3, max_size=12, unique=True))
def test_long_text_equals_tiktoken_for_every_preset(pair, seed: int, kinds: list[str]) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    text = long_text(seed, kinds + ["\nz", "a b"])
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


def test_special_tokens_between_long_stretches(pair) -> None:  # type: ignore[no-untyped-def]
    tok, enc = pair
    text = long_text(1, FRAGMENTS) + "<|endoftext|>" + long_text(2, FRAGMENTS) + "<|x|>\nabc"
    want = enc.encode(text, allowed_special="all")
    assert tok.encode(text, allowed_special="all") == want
    assert tok.encode_to_numpy(text, allowed_special="all").tolist() == want
    assert tok.encode_batch([text, text[:1000]], allowed_special="all")[0] == want
    with pytest.raises(ValueError):
        tok.encode(text)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "llama3", "qwen3"])
def test_real_text_equals_tiktoken(name: str, stdlib_text: str, multilingual_text: str) -> None:
    if name in ("llama3", "qwen3"):
        enc = open_model_encoding(name)
        tok = tokenmill.Tokenizer.from_tiktoken(enc._mergeable_ranks, pattern=enc._pat_str)
    else:
        enc = tiktoken_encoding(name, vocabulary_path(name))
        tok = tokenmill.Tokenizer.from_tiktoken(vocabulary_path(name), pattern=name)
    text = stdlib_text[:LONG] + (multilingual_text + "\n") * 200
    assert len(text) > LONG
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert np.array_equal(tok.encode_to_numpy(text), np.array(enc.encode_ordinary(text), dtype=np.uint32))
