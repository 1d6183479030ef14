"""Tokenizer descriptions built in memory: the tokenmill file format's JSON, which every format
reader (tiktoken ranks, GPT-2 files, `tokenizer.json`, `vocab.txt`, SentencePiece `.model`)
produces and `build` turns into a tokenizer — the one way a tokenizer is assembled.

>>> core = build(bpe(tokens=[(i, bytes([i])) for i in range(256)], merges=[], special_tokens=[],
...                  pattern="gpt2"))
>>> core.n_vocab
256
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from typing import Any

from tokenmill import _checks, _core

FORMAT_VERSION: int = _core.FORMAT_VERSION  # the one Rust writes and reads up to
_MAX_ID = _checks.MAX_ID


def _id(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_ID:
        raise _core.FormatError(f"{what}: token ids must be between 0 and {_MAX_ID}, got {value!r}")
    return value


def token_lists(tokens: Iterable[tuple[int, bytes]]) -> tuple[list[str | None], list[tuple[int, str]]]:
    """(id, bytes) pairs as the format's `tokens` list by id (base64, null for gaps) and
    `far_tokens` for ids far past the rest, so a stray id of 4·10⁹ costs no list of that length."""
    pairs = sorted((_id(i, "token"), bytes(b)) for i, b in tokens)
    limit = 2 * len(pairs) + 256
    listed: list[str | None] = [None] * min(limit, pairs[-1][0] + 1 if pairs else 0)
    far: list[tuple[int, str]] = []
    for i, b in pairs:
        encoded = base64.b64encode(b).decode("ascii")
        if i < len(listed):
            listed[i] = encoded
        else:
            far.append((i, encoded))
    return listed, far


def bpe(
    *,
    tokens: Iterable[tuple[int, bytes]],
    merges: Sequence[tuple[int, int]] | None,
    special_tokens: Sequence[tuple[str, int]],
    pattern: str,
    keep_gaps: bool = False,
    normalizer: str = "none",
    byte_level: bool = True,
    end_of_word_suffix: str | None = None,
    unk_token: str | None = None,
    whole_piece_first: bool = False,
) -> dict[str, Any]:
    """The description of a BPE tokenizer: tokens as (id, bytes), merges as pairs of ids in rank
    order (`None`: the ids are ranks, as in tiktoken)."""
    listed, far = token_lists(tokens)
    return {
        "format": "tokenmill",
        "version": FORMAT_VERSION,
        "normalizer": normalizer,
        "pretokenizer": pattern,
        "pretokenizer_keeps_gaps": keep_gaps,
        "special_tokens": [[text, _id(i, f"special token {text!r}")] for text, i in special_tokens],
        "model": {
            "type": "bpe",
            "byte_level": byte_level,
            "end_of_word_suffix": end_of_word_suffix,
            "unk_token": unk_token,
            "whole_piece_first": whole_piece_first,
            "tokens": listed,
            "far_tokens": far,
            "merges": None if merges is None else [[_id(a, "merge"), _id(b, "merge")] for a, b in merges],
        },
    }


def build(description: dict[str, Any]) -> _core.CoreTokenizer:
    """The tokenizer a description describes (errors keep their kind: a bad pattern is a
    `PatternError`, a vocabulary without its single bytes a `ConfigError`)."""
    return _core.CoreTokenizer.from_description(json.dumps(description))
