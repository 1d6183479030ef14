"""SentencePiece `.model` files ↔ tokenmill tokenizers.

`read` hands the file's bytes to the Rust reader (`src/io/sentencepiece.rs`), which turns
pieces into tokens of their kinds and keeps the normalizer's precompiled character map as it is;
the tokenizer remembers the file, and `write` gives that file back byte for byte. A tokenizer
not read from a `.model` file goes through `model_of`, which builds the model from the
tokenizer's description (kinds become piece types, the rules or the kept map a precompiled map),
with SentencePiece's defaults for the training options a tokenizer does not hold.

>>> core = read("spm.model")
>>> core.model_type, core.vocab_size
('unigram', 120)
>>> write("copy.model", core)
>>> with open("copy.model", "rb") as copy, open("spm.model", "rb") as original:
...     copy.read() == original.read()
True
"""

from __future__ import annotations

import base64
import os
from typing import Any

from tokenmill import _core
from tokenmill._files import input_file, write_atomically
from tokenmill.formats import sentencepiece as spm
from tokenmill.formats.sentencepiece import ModelType, Piece, PieceType

METASPACE = "\u2581"


def read(source: str | os.PathLike[str] | bytes) -> _core.CoreTokenizer:
    """A tokenizer from a `.model` file's path or bytes; a missing path is a `CorpusError`, a
    file that is not a SentencePiece Unigram or BPE model a `FormatError` naming it."""
    if isinstance(source, (bytes, bytearray)):
        return _core.CoreTokenizer.from_sentencepiece(bytes(source), "<bytes>")
    p = input_file(source, "a SentencePiece model")
    data = p.read_bytes()
    return _core.CoreTokenizer.from_sentencepiece(data, str(p))


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


# SentencePiece's basic normalizer (`SentencePieceNormalizerSpec::basic` in Rust: tabs and line
# breaks become spaces, runs of spaces one, a ▁ in front, spaces as ▁), which a tokenizer's
# description names as its normalizer step "sentencepiece" instead of spelling it out.
BASIC_SENTENCEPIECE: dict[str, Any] = {
    "rules": [["\t", " "], ["\n", " "], ["\r", " "]],
    "keep": [],
    "add_dummy_prefix": True,
    "remove_extra_whitespaces": True,
    "escape_whitespaces": True,
    "treat_whitespace_as_suffix": False,
}


def normalizer_parts(doc: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """A description's normalizer as (its other steps, a spec or "none"; its SentencePiece part,
    None if it has none): a trained Unigram model's `nfkc+sentencepiece` is ("nfkc", the basic
    SentencePiece normalizer).

    >>> normalizer_parts({"normalizer": "nfkc+sentencepiece"})[0]
    'nfkc'
    """
    spec, sentencepiece = doc.get("normalizer", "none"), doc.get("sentencepiece_normalizer")
    if spec.startswith("hf:"):
        return spec, sentencepiece
    steps = [s for s in spec.split("+") if s not in ("", "none")]
    if "sentencepiece" in steps:
        steps.remove("sentencepiece")
        sentencepiece = sentencepiece or dict(BASIC_SENTENCEPIECE)
    return "+".join(steps) or "none", sentencepiece


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
    steps, sentencepiece = normalizer_parts(doc)
    if steps != "none":
        # SentencePiece normalizes with a map from each code point (or sequence) to its
        # replacement: NFKC composing across characters, or lowercasing Σ by its place, is not such
        # a map, so the model would normalize otherwise than this tokenizer does.
        raise _core.ConfigError(
            f"normalizer {steps!r} has no exact place in a SentencePiece model (only its own character map "
            "and whitespace rules do); train with normalizer='none', or write a .model with "
            "tokenmill.sentencepiece.SentencePieceTrainer, whose map is SentencePiece's own"
        )
    suffix = (sentencepiece or {}).get("treat_whitespace_as_suffix", False)
    expected = {"none", "metaspace_suffix"} if suffix else {"none", "metaspace", "metaspace_runs"}
    if doc["pretokenizer"] not in expected or doc.get("pretokenizer_keeps_gaps"):
        raise _core.ConfigError(f"pre-tokenizer {doc['pretokenizer']!r} has no SentencePiece equivalent")


def model_of(doc: dict[str, Any]) -> spm.SentencePieceModel:
    """The SentencePiece model of a tokenmill Unigram or SentencePiece BPE description
    (`json.loads(core.to_json())`).
    Training options the description does not hold keep SentencePiece's defaults; the
    normalizer is named "identity" without rules and "tokenmill" with them.

    >>> import json
    >>> from tokenmill import Tokenizer
    >>> description = json.loads(Tokenizer.from_sentencepiece("spm.model")._core.to_json())
    >>> model = model_of(description)
    >>> model.trainer_spec.vocab_size, model.normalizer_spec.name
    (120, 'tokenmill')
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

    spec = normalizer_parts(doc)[1]
    if spec is None:  # text goes to the model as it is
        spec = {"rules": [], "add_dummy_prefix": False, "remove_extra_whitespaces": False}
        spec["escape_whitespaces"] = False
    trainer.treat_whitespace_as_suffix = spec.get("treat_whitespace_as_suffix", False)
    kept = spec.get("precompiled_charsmap")  # a map read from a `.model` file, written back as it was
    charsmap = base64.b64decode(kept) if kept else spm.build_charsmap(dict(spec["rules"]))
    normalizer = spm.NormalizerSpec(
        name="tokenmill" if charsmap else "identity",
        precompiled_charsmap=charsmap,
        add_dummy_prefix=spec["add_dummy_prefix"],
        remove_extra_whitespaces=spec["remove_extra_whitespaces"],
        escape_whitespaces=spec["escape_whitespaces"],
    )
    normalizer.explicit |= {"name", "precompiled_charsmap"}  # SentencePiece writes both, an empty map too
    return spm.SentencePieceModel(pieces=pieces, trainer_spec=trainer, normalizer_spec=normalizer)


def write(path: str | os.PathLike[str], core: _core.CoreTokenizer) -> None:
    """Writes `core` as a `.model` file: the file it was read from, byte for byte (its training
    options and normalizer name included), when it was read from one; else `model_of` its
    description."""
    import json

    source = core.sentencepiece_source()
    if source is not None:
        write_atomically(path, source)
        return
    doc = json.loads(core.to_json())
    _check_expressible(doc)
    spm.write_model(path, model_of(doc))
