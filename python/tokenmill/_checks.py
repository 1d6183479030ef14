"""Argument checks shared by the API and the CLI: a wrong argument is a `ConfigError` (or a
`PatternError`) that names it, before anything reaches Rust, where it would surface as an
`OverflowError`, a `TypeError` or an `AttributeError` instead.

The CLI passes its options to the API unchanged, so both report the same messages.

>>> count("vocab_size", 300)
300
>>> count("vocab_size", 2**64)
Traceback (most recent call last):
tokenmill.ConfigError: vocab_size must be an int from 0 to 18446744073709551615, got 18446744073709551616
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

from tokenmill import _core

U64_MAX = 2**64 - 1
# The largest token id (ids are u32; 2³² − 1 is kept free as "no token").
MAX_ID = 2**32 - 2

# Every name the Rust pre-tokenizer takes for a preset (src/pipeline/pretokenize/mod.rs, `PRESET_NAMES`).
PRESET_NAMES = tuple(_core.PRESET_NAMES)

T = TypeVar("T")


def count(name: str, value: T, *, minimum: int = 0, maximum: int = U64_MAX, optional: bool = False) -> T:
    """An int in [minimum, maximum] (`bool` and `float` are refused: `True` is no count)."""
    if value is None and optional:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        none = " or None" if optional else ""
        raise _core.ConfigError(f"{name} must be an int from {minimum} to {maximum}{none}, got {value!r}")
    return value


def flag(name: str, value: T, *, optional: bool = False) -> T:
    if not (isinstance(value, bool) or (optional and value is None)):
        none = " or None" if optional else ""
        raise _core.ConfigError(f"{name} must be True or False{none}, got {value!r}")
    return value


def text(name: str, value: T, *, optional: bool = False, nonempty: bool = False) -> T:
    """A str that can be UTF-8 (no lone surrogates)."""
    if value is None and optional:
        return value
    if not isinstance(value, str) or (nonempty and not value):
        what = "a non-empty str" if nonempty else "a str"
        none = " or None" if optional else ""
        raise _core.ConfigError(f"{name} must be {what}{none}, got {value!r}")
    if not _is_utf8(value):
        raise _core.ConfigError(f"{name} holds a lone surrogate, which is not text: {value!r}")
    return value


def texts(name: str, value: Iterable[str]) -> list[str]:
    """A collection of non-empty strings (a single str is refused: it is not a list of tokens)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise _core.ConfigError(f"{name} must be a collection of non-empty strings, got {value!r}")
    items = list(value)
    if not all(isinstance(s, str) and s and _is_utf8(s) for s in items):
        raise _core.ConfigError(f"{name} must be a collection of non-empty strings, got {items!r}")
    return items


def pattern(value: str) -> str:
    """A preset name or a regex. A bare identifier that names no preset is an error, not a
    literal regex: ``"CL100K"`` would otherwise match nothing and leave an empty corpus."""
    if not isinstance(value, str):
        raise _core.ConfigError(f"pattern must be a preset name or a regex string, got {value!r}")
    if not value:
        raise _core.PatternError('bad pattern "": the pattern is empty')
    if not _is_utf8(value):
        raise _core.PatternError(f"bad pattern {value!r}: it holds a lone surrogate, which is not text")
    if value not in PRESET_NAMES and value.isascii() and all(c.isalnum() or c == "_" for c in value):
        lower = value.lower()
        hint = f' (preset names are lowercase: "{lower}")' if lower in PRESET_NAMES else ""
        raise _core.PatternError(
            f'bad pattern "{value}": unknown preset{hint}; use gpt2, r50k_base, p50k_base, cl100k, '
            "cl100k_base, o200k, o200k_base, bert, whitespace, none or a regex"
        )
    return value


def decode_errors(value: str) -> str:
    """An error handler `bytes.decode` knows (``"strict"``, ``"replace"``, ``"ignore"``, …)."""
    if not isinstance(value, str):
        raise _core.ConfigError(f"errors must be the name of a decoding error handler, got {value!r}")
    try:
        codecs.lookup_error(value)
    except LookupError:
        raise _core.ConfigError(
            f"errors must be an error handler such as 'strict', 'replace', 'ignore' or 'backslashreplace', "
            f"got {value!r}"
        ) from None
    return value


def _is_utf8(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def has_surrogates(text: str) -> bool:
    return not _is_utf8(text)


def without_surrogates(text: str) -> str:
    """Lone surrogates cannot be UTF-8; like tiktoken, encode them as U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def input_text(value: object) -> str:
    """A text to encode: a str (its lone surrogates become U+FFFD where it enters the core,
    `src/python/text.rs`)."""
    if not isinstance(value, str):
        raise _core.ConfigError(f"expected a str, got {type(value).__name__}")
    return value


def threads(num_threads: int | None) -> int | None:
    return count("num_threads", num_threads, minimum=1, maximum=4096, optional=True)


def bad_ids(ids: Sequence[int]) -> _core.TokenIdError:
    """The error for ids that are not ints in 0..2³²−2 (Rust cannot even hold them)."""
    for i in ids:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i <= MAX_ID:
            return _core.TokenIdError(f"token id {i!r} is not an id (an int from 0 to {MAX_ID})")
    return _core.TokenIdError("token ids must be ints")


def special_pairs(special_tokens: Mapping[str, int]) -> list[tuple[str, int]]:
    """`special_tokens` as (text, id) pairs, checked: non-empty strings without lone
    surrogates, ids that fit."""
    pairs = []
    for text, i in special_tokens.items():
        if not isinstance(text, str) or not text:
            raise _core.ConfigError(f"special tokens must be non-empty strings, got {text!r}")
        if has_surrogates(text):
            raise _core.ConfigError(f"special token {text!r} holds a lone surrogate, which is not text")
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i <= MAX_ID:
            raise _core.ConfigError(f"special token {text!r}: id {i!r} is not an int from 0 to {MAX_ID}")
        pairs.append((text, i))
    return pairs
