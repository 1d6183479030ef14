"""SentencePiece `.model` files ↔ tokenmill tokenizers.

`sentencepiece.py` reads and writes the protobuf; this module turns its `SentencePieceModel`
into tokenmill's file description (the one way a tokenizer is built) and back:

- piece types become token kinds: NORMAL → normal, USER_DEFINED → normal and matched first in
  the lattice, UNKNOWN/CONTROL/BYTE/UNUSED → the kinds of the same names;
- the normalizer spec (precompiled character map, dummy prefix, whitespace rules) becomes the
  SentencePiece normalizer; spaces are `▁`, and the text is cut before each `▁` (after, with
  `treat_whitespace_as_suffix`) when no piece spans one, which gives the same cut as one lattice
  over the whole text and lets the piece cache work.
"""

from __future__ import annotations

import base64
import math
from typing import Any

from tokenmill import _core
from tokenmill.formats import sentencepiece as spm
from tokenmill.formats.sentencepiece import ModelType, PieceType

METASPACE = "\u2581"

_KIND_OF_TYPE = {
    PieceType.UNKNOWN: "unknown",
    PieceType.CONTROL: "control",
    PieceType.BYTE: "byte",
    PieceType.UNUSED: "unused",
}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _pretokenizer(model: spm.SentencePieceModel, suffix: bool) -> str:
    """`metaspace` (or `metaspace_suffix`) when cutting at each `▁` cannot change the result:
    spaces are escaped, `▁` alone is a piece, and no piece holds a `▁` except at its start (end)."""
    if not model.normalizer_spec.escape_whitespaces:
        return "none"
    pieces = [p.piece for p in model.pieces if p.type in (PieceType.NORMAL, PieceType.USER_DEFINED)]
    if METASPACE not in pieces:
        return "none"
    for piece in pieces:
        inner = piece[:-1] if suffix else piece[1:]
        if METASPACE in inner:
            return "none"
    return "metaspace_suffix" if suffix else "metaspace"


def description(model: spm.SentencePieceModel, where: str) -> dict[str, Any]:
    """The tokenmill file description of a SentencePiece Unigram model."""
    if model.trainer_spec.model_type != ModelType.UNIGRAM:
        name = ModelType(model.trainer_spec.model_type).name
        raise _core.FormatError(f"{where}: SentencePiece {name} models are not supported yet (Unigram models are)")
    tokens: list[str | None] = [None] * len(model.pieces)
    others: list[list[Any]] = []
    user_defined: list[int] = []
    scores: list[float] = []
    seen: dict[str, int] = {}
    for i, p in enumerate(model.pieces):
        if p.piece in seen:
            raise _core.FormatError(f"{where}: piece {p.piece!r} appears twice (ids {seen[p.piece]} and {i})")
        seen[p.piece] = i
        if not math.isfinite(p.score):
            raise _core.FormatError(f"{where}: piece {i} ({p.piece!r}) has score {p.score}")
        scores.append(p.score)
        if p.type in (PieceType.NORMAL, PieceType.USER_DEFINED):
            if not p.piece:
                raise _core.FormatError(f"{where}: piece {i} is empty")
            tokens[i] = _b64(p.piece)
            if p.type == PieceType.USER_DEFINED:
                user_defined.append(i)
        elif p.type in _KIND_OF_TYPE:
            others.append([p.piece, i, _KIND_OF_TYPE[p.type]])
        else:
            raise _core.FormatError(f"{where}: piece {i} ({p.piece!r}) has unknown type {int(p.type)}")
    if not any(kind == "unknown" for _, _, kind in others):
        raise _core.FormatError(f"{where}: the model has no unknown piece (type UNKNOWN)")
    norm = model.normalizer_spec
    try:
        rules = spm.charsmap_rules(norm.precompiled_charsmap) if norm.precompiled_charsmap else {}
    except _core.FormatError as e:
        raise _core.FormatError(f"{where}: {e}") from None
    suffix = model.trainer_spec.treat_whitespace_as_suffix
    return {
        "format": "tokenmill",
        "version": 3,
        "normalizer": "none",
        "sentencepiece_normalizer": {
            "rules": sorted(rules.items()),
            "keep": [model.pieces[i].piece for i in user_defined],
            "add_dummy_prefix": norm.add_dummy_prefix,
            "remove_extra_whitespaces": norm.remove_extra_whitespaces,
            "escape_whitespaces": norm.escape_whitespaces,
            "treat_whitespace_as_suffix": suffix,
        },
        "pretokenizer": _pretokenizer(model, suffix),
        "special_tokens": [],
        "other_tokens": others,
        "model": {
            "type": "unigram",
            "tokens": tokens,
            "scores": scores,
            "user_defined": user_defined,
            "byte_fallback": model.trainer_spec.byte_fallback,
            "unknown_surface": model.trainer_spec.unk_surface,
        },
    }


def read(path: str, source: str | bytes) -> _core.CoreTokenizer:
    """A tokenizer from a `.model` file's path or bytes; `path` names it in errors."""
    import json

    model = spm.read_model(source)
    return _core.CoreTokenizer.from_json(json.dumps(description(model, path)))
