"""SentencePiece `.model` files ↔ tokenmill tokenizers.

`sentencepiece.py` reads and writes the protobuf; this module turns its `SentencePieceModel`
into tokenmill's file description (the one way a tokenizer is built) and back:

- piece types become token kinds: NORMAL → normal, USER_DEFINED → normal and matched first in
  the lattice, UNKNOWN/CONTROL/BYTE/UNUSED → the kinds of the same names;
- the normalizer spec (precompiled character map, dummy prefix, whitespace rules) becomes the
  SentencePiece normalizer; spaces are `▁`, and the text is cut before each `▁` (after, with
  `treat_whitespace_as_suffix`) when no piece spans one, which gives the same cut as one lattice
  over the whole text and lets the piece cache work.

`write` goes back: the file a tokenizer was read from, byte for byte, while the tokenizer still
matches its `fingerprint`; otherwise `model_of` builds the model from the description (kinds
become piece types, the rules a precompiled map), with SentencePiece's defaults for the training
options a tokenizer does not hold.
"""

from __future__ import annotations

import base64
import math
import os
from typing import Any

from tokenmill import _core
from tokenmill._files import write_atomically
from tokenmill.formats import sentencepiece as spm
from tokenmill.formats.sentencepiece import ModelType, Piece, PieceType

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
    spaces are escaped, `▁` alone is a piece, and no piece holds a `▁` except at its start (end).
    A BPE model with unused pieces is one piece of text: SentencePiece splits an unused piece
    back by the pair that last formed it anywhere in the text."""
    if not model.normalizer_spec.escape_whitespaces:
        return "none"
    if model.trainer_spec.model_type == ModelType.BPE and any(p.type == PieceType.UNUSED for p in model.pieces):
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
    """The tokenmill file description of a SentencePiece Unigram or BPE model."""
    model_type = model.trainer_spec.model_type
    if model_type not in (ModelType.UNIGRAM, ModelType.BPE):
        name = ModelType(model_type).name if model_type in iter(ModelType) else str(model_type)
        raise _core.FormatError(
            f"{where}: SentencePiece {name} models are not supported (Unigram and BPE models are; "
            "WORD and CHAR models are rarely used)"
        )
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
        "model": _unigram_model(model, tokens, scores, user_defined)
        if model_type == ModelType.UNIGRAM
        else _bpe_model(model, tokens, scores, user_defined, others),
    }


def _unigram_model(
    model: spm.SentencePieceModel, tokens: list[str | None], scores: list[float], user_defined: list[int]
) -> dict[str, Any]:
    return {
        "type": "unigram",
        "tokens": tokens,
        "scores": scores,
        "user_defined": user_defined,
        "byte_fallback": model.trainer_spec.byte_fallback,
        "unknown_surface": model.trainer_spec.unk_surface,
    }


def _bpe_model(
    model: spm.SentencePieceModel,
    tokens: list[str | None],
    scores: list[float],
    user_defined: list[int],
    others: list[list[Any]],
) -> dict[str, Any]:
    """SentencePiece BPE: character-level, merges implied by the scores; a run of unknown
    characters is one unknown token (SentencePiece joins them when it reports pieces)."""
    unknown = next(text for text, _, kind in others if kind == "unknown")
    return {
        "type": "bpe",
        "byte_level": False,
        "end_of_word_suffix": None,
        "unk_token": unknown,
        "whole_piece_first": False,
        "tokens": tokens,
        "merges": None,
        "byte_fallback": model.trainer_spec.byte_fallback,
        "fuse_unk": True,
        "scores": scores,
        "user_defined": user_defined,
        "unknown_surface": model.trainer_spec.unk_surface,
    }


def read(path: str, source: str | os.PathLike[str] | bytes) -> tuple[_core.CoreTokenizer, tuple[bytes, str]]:
    """A tokenizer from a `.model` file's path or bytes (`path` names it in errors), and the
    file's bytes with the tokenizer's `fingerprint`, for `write` to give the file back."""
    import json

    model = spm.read_model(source)
    core = _core.CoreTokenizer.from_json(json.dumps(description(model, path)))
    # `model_bytes` gives back what protobuf wrote, byte for byte (unknown fields included).
    data = source if isinstance(source, bytes) else spm.model_bytes(model)
    return core, (data, fingerprint(core))


# --- Back to a `.model` file.

_TYPE_OF_KIND = {
    "unknown": PieceType.UNKNOWN,
    "control": PieceType.CONTROL,
    "byte": PieceType.BYTE,
    "unused": PieceType.UNUSED,
    # A token matched in text only when asked (a Hugging Face special added token): SentencePiece
    # calls such tokens, never matched in text, control symbols (as transformers' converters do).
    "special": PieceType.CONTROL,
}
# The meta pieces SentencePiece's trainer names in its spec, found by their text.
_META_PIECES = (("bos", "<s>"), ("eos", "</s>"), ("pad", "<pad>"))


def fingerprint(core: _core.CoreTokenizer) -> str:
    """A digest of everything a `.model` file holds about `core` (not its template, truncation
    or padding, which the format has no place for): equal digests, equal models."""
    import hashlib
    import json

    bare = core.with_model_inputs_json(json.dumps({"post_processor": None, "truncation": None, "padding": None}))
    return hashlib.sha256(bare.to_json().encode("utf-8")).hexdigest()


def _pieces(doc: dict[str, Any]) -> list[Piece]:
    """The pieces by id, from a tokenmill description; ids must run 0, 1, 2, ... with no gap."""
    model = doc["model"]
    texts: dict[int, tuple[str, str]] = {}  # id -> (text, kind)
    for i, b64 in enumerate(model["tokens"]):
        if b64 is not None:
            texts[i] = (base64.b64decode(b64).decode("utf-8"), "normal")
    for i, b64 in model.get("far_tokens", []):
        texts[i] = (base64.b64decode(b64).decode("utf-8"), "normal")
    for text, i in doc.get("special_tokens", []):
        texts[i] = (text, "special")
    for text, i, kind in doc.get("other_tokens", []):
        texts[i] = (text, kind)
    missing = sorted(set(range(len(texts))) - set(texts))
    if missing:
        raise _core.ConfigError(
            f"a SentencePiece model numbers its pieces 0, 1, 2, ...; this one has no id {missing[0]}"
        )
    user_defined = set(model.get("user_defined", []))
    scores = model["scores"]
    pieces = []
    for i in range(len(texts)):
        text, kind = texts[i]
        if kind == "normal":
            kind_type = PieceType.USER_DEFINED if i in user_defined else PieceType.NORMAL
        else:
            kind_type = _TYPE_OF_KIND[kind]
        piece = Piece(text, scores[i] if i < len(scores) else 0.0, kind_type)
        piece.explicit.add("score")  # SentencePiece writes every score, 0 too
        pieces.append(piece)
    return pieces


def _check_expressible(doc: dict[str, Any]) -> None:
    model = doc["model"]
    if model["type"] == "bpe" and model.get("scores") is None:
        raise _core.ConfigError(
            "save_sentencepiece writes Unigram models and SentencePiece-style BPE models (read from a "
            "`.model` file); this BPE model has a merge list, which SentencePiece cannot express "
            "(it merges any two pieces that make a piece, by score)"
        )
    if model["type"] not in ("unigram", "bpe"):
        raise _core.ConfigError(f"save_sentencepiece writes Unigram and BPE models; this tokenizer is {model['type']}")
    if doc.get("normalizer", "none") != "none":
        raise _core.ConfigError(
            f"normalizer {doc['normalizer']!r} has no place in a SentencePiece model (only its own "
            "character map and whitespace rules do)"
        )
    suffix = (doc.get("sentencepiece_normalizer") or {}).get("treat_whitespace_as_suffix", False)
    expected = {"none", "metaspace_suffix" if suffix else "metaspace"}
    if doc["pretokenizer"] not in expected or doc.get("pretokenizer_keeps_gaps"):
        raise _core.ConfigError(f"pre-tokenizer {doc['pretokenizer']!r} has no SentencePiece equivalent")


def model_of(doc: dict[str, Any]) -> spm.SentencePieceModel:
    """The SentencePiece model of a tokenmill Unigram or SentencePiece BPE description
    (`json.loads(core.to_json())`).
    Training options the description does not hold keep SentencePiece's defaults; the
    normalizer is named "identity" without rules and "tokenmill" with them.

    >>> model_of(json.loads(tok._core.to_json())).trainer_spec.vocab_size   # doctest: +SKIP
    8000
    """
    _check_expressible(doc)
    pieces = _pieces(doc)
    unknown = [i for i, p in enumerate(pieces) if p.type == PieceType.UNKNOWN]
    if len(unknown) != 1:
        raise _core.ConfigError(f"a SentencePiece model needs exactly one unknown piece, not {len(unknown)}")
    trainer = spm.TrainerSpec(
        model_type=ModelType.UNIGRAM if doc["model"]["type"] == "unigram" else ModelType.BPE,
        vocab_size=len(pieces),
        byte_fallback=doc["model"].get("byte_fallback", False),
        unk_id=unknown[0],
        unk_piece=pieces[unknown[0]].piece,
        unk_surface=doc["model"].get("unknown_surface", spm.TrainerSpec.unk_surface),
    )
    trainer.explicit |= {"model_type", "vocab_size"}  # the fields SentencePiece's trainer always sets
    controls = {p.piece: i for i, p in enumerate(pieces) if p.type == PieceType.CONTROL}
    for name, text in _META_PIECES:
        setattr(trainer, f"{name}_id", controls.pop(text, -1))
    trainer.control_symbols = list(controls)
    trainer.user_defined_symbols = [p.piece for p in pieces if p.type == PieceType.USER_DEFINED]

    spec = doc.get("sentencepiece_normalizer")
    if spec is None:  # text goes to the model as it is
        spec = {"rules": [], "add_dummy_prefix": False, "remove_extra_whitespaces": False}
        spec["escape_whitespaces"] = False
    trainer.treat_whitespace_as_suffix = spec.get("treat_whitespace_as_suffix", False)
    rules = dict(spec["rules"])
    normalizer = spm.NormalizerSpec(
        name="tokenmill" if rules else "identity",
        precompiled_charsmap=spm.build_charsmap(rules),
        add_dummy_prefix=spec["add_dummy_prefix"],
        remove_extra_whitespaces=spec["remove_extra_whitespaces"],
        escape_whitespaces=spec["escape_whitespaces"],
    )
    normalizer.explicit |= {"name", "precompiled_charsmap"}  # SentencePiece writes both, an empty map too
    return spm.SentencePieceModel(pieces=pieces, trainer_spec=trainer, normalizer_spec=normalizer)


def write(path: str | os.PathLike[str], core: _core.CoreTokenizer, source: tuple[bytes, str] | None) -> None:
    """Writes `core` as a `.model` file. `source` is the file it was read from with its
    `fingerprint`: while the tokenizer still matches it, that file is written as it was, byte
    for byte (its training options and normalizer name included)."""
    import json

    doc = json.loads(core.to_json())
    _check_expressible(doc)
    if source is not None and fingerprint(core) == source[1]:
        write_atomically(path, source[0])
    else:
        spm.write_model(path, model_of(doc))
