"""What a "word" is for tokens/word, counted by the Rust pre-tokenizer on threads.

A word is a run of letters, marks, digits and connector punctuation, kept whole across an inner
apostrophe or period (``don't``, ``l'homme``, ``e.g``) and across digit groups (``1,000.50``),
as Unicode word segmentation (UAX #29) keeps them. Scripts written without spaces follow UAX #29
too: each Han ideograph and each Hiragana character is a word by itself, a run of Katakana is one
word. Thai, Lao, Khmer and Myanmar need a dictionary to find word ends, which UAX #29 leaves to
the implementation; here a run of them between spaces or punctuation is one word, so their
tokens/word reads high (compare them by characters/token or the parallel premium instead).
Punctuation, symbols, emoji and spaces are not words.

>>> count_words_in(["Hello, world! don't", "日本語のテキスト"])   # 3 + 日 本 語 の テキスト
8
"""

from __future__ import annotations

from tokenmill import _core

# Scripts UAX #29 does not cut at spaces.
_NO_SPACES = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
_LETTER = r"[\p{L}\p{M}\p{N}\p{Pc}--[" + _NO_SPACES + "]]"
WORD_PATTERN = (
    r"[\p{Han}\p{Hiragana}]\p{M}*"
    r"|[\p{Katakana}ー]+\p{M}*"
    r"|[\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]+"
    rf"|{_LETTER}+(?:['’.·]{_LETTER}+|,\p{{Nd}}+)*"
)


def count_words_in(texts: list[str]) -> int:
    """Words (as the module says) in `texts`, counted on the Rust threads by a scanner written for
    `WORD_PATTERN` (src/words.rs; the tests hold it equal to the regex)."""
    return _core.count_words(list(texts))


def split_words(text: str) -> list[str]:
    """The words of `text`, for showing what was counted.

    >>> split_words("l'homme a 1,000 日本")
    ["l'homme", 'a', '1,000', '日', '本']
    """
    return _core.split(WORD_PATTERN, text)
