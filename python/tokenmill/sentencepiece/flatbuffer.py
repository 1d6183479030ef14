"""`ConvertToFlatbuffer`: a SentencePiece model in the FlatBuffers form of sentencepiece 0.2.3's
lite runtime (`.spm.fb`, schema `lite/sentencepiece_lite.fbs`), byte for byte as sentencepiece
writes it.

The file repeats the model's pieces, scores (integer ranks for BPE) and types, and adds what the
lite runtime would otherwise build at load time, each a Darts-clone trie (`darts.py`):

- `pieces_trie_blob`: every piece to its id;
- `prefix_matcher_trie_blob`: the user-defined pieces to their ids (absent when there are none);
- `char_bigram_trie_blob`: every pair of adjacent characters inside a piece, each leaf patched to
  point at the node of its second character (the runtime splits BPE input where a pair is in no
  piece); left out for unigram models with `skip_char_bigrams`;
- for BPE, `is_direct_mapping`: which pieces BPE encodes to themselves (an encoder may take a
  whole chunk found in the vocabulary as one piece). sentencepiece finds them by encoding each
  piece with its lite BPE; `_bpe_ids` is that encoder.

>>> ConvertToFlatbuffer()
Traceback (most recent call last):
...
ValueError: Exactly one of model_file, model_proto, or serialized_model_proto must be specified.
"""

from __future__ import annotations

import heapq
import itertools
import math
import os
import struct
from typing import Any

from tokenmill.formats import sentencepiece as spm_format
from tokenmill.formats.sentencepiece import ModelType, PieceType, SentencePieceModel
from tokenmill.sentencepiece import darts
from tokenmill.sentencepiece.flatbuffer_builder import FlatBufferWriter

_MAX_PIECE_BYTES = 4096
_MAX_DIRECT_MAPPING_BYTES = 128
_INVISIBLE = (PieceType.UNKNOWN, PieceType.CONTROL, PieceType.UNUSED, PieceType.BYTE)
_UNSUPPORTED = (ModelType.WORD, ModelType.CHAR)


def ConvertToFlatbuffer(
    model_file: str | os.PathLike[str] | None = None,
    model_proto: Any = None,
    serialized_model_proto: bytes | None = None,
    output_file: str | os.PathLike[str] | None = None,
    skip_char_bigrams: bool = False,
    treat_null_byte_as_unused: bool = False,
    allow_unsupported_model_type: bool = False,
) -> bytes | None:
    """The `.spm.fb` bytes of a model given one way (a file, a `ModelProto` or its bytes), or
    None after writing them to `output_file`. WORD and CHAR models are refused (ValueError)
    unless `allow_unsupported_model_type`; `treat_null_byte_as_unused` turns a byte-fallback
    model's one-byte piece "\\0" into an unused `<unused_ID>`.

    >>> import sentencepiece
    >>> fb = ConvertToFlatbuffer(model_file="spm.model")
    >>> fb == sentencepiece.ConvertToFlatbuffer(model_file="spm.model"), len(fb) % 8
    (True, 0)
    """
    given = sum(x is not None for x in (model_file, model_proto, serialized_model_proto))
    if given != 1:
        raise ValueError("Exactly one of model_file, model_proto, or serialized_model_proto must be specified.")
    out_path = ""
    if output_file is not None:
        out_path = os.fsdecode(os.fspath(output_file))
        if not out_path:
            raise ValueError("output_file must not be empty.")
    if model_file is not None:
        path = os.fsdecode(os.fspath(model_file))
        if not path:
            raise ValueError("model_file must not be empty.")
        try:
            with open(path, "rb") as f:
                serialized = f.read()
        except OSError as e:  # sentencepiece's NOT_FOUND status, a RuntimeError
            raise RuntimeError(f'NOT_FOUND: "{path}": {e.strerror}') from None
    elif model_proto is not None:
        if hasattr(model_proto, "SerializeToString"):
            serialized = model_proto.SerializeToString()
        elif isinstance(model_proto, bytes):
            serialized = model_proto
        else:
            raise TypeError("model_proto must be a ModelProto object or bytes.")
    else:
        if not isinstance(serialized_model_proto, bytes):
            raise TypeError("serialized_model_proto must be bytes.")
        serialized = serialized_model_proto
    try:
        model = spm_format.read_model(serialized)
    except ValueError as e:
        raise ValueError(f"Failed to parse ModelProto from serialized bytes: {e}") from None
    fb = model_to_flatbuffer(model, skip_char_bigrams, treat_null_byte_as_unused, allow_unsupported_model_type)
    if out_path:
        with open(out_path, "wb") as f:
            f.write(fb)
        return None
    return fb


convert_to_flatbuffer = ConvertToFlatbuffer


def model_to_flatbuffer(
    model: SentencePieceModel,
    skip_char_bigrams: bool = False,
    treat_null_byte_as_unused: bool = False,
    allow_unsupported_model_type: bool = False,
) -> bytes:
    """The `.spm.fb` bytes of a parsed model (see `ConvertToFlatbuffer`).

    >>> from tokenmill.formats.sentencepiece import Piece
    >>> len(model_to_flatbuffer(SentencePieceModel(pieces=[Piece("<unk>", 0.0, PieceType.UNKNOWN)])))
    2160
    """
    count = len(model.pieces)
    if not 0 < count <= 16_000_000:
        raise ValueError(f"Model vocabulary size ({count}) is out of safe bounds [1, 16,000,000].")
    has_trainer_spec = "trainer_spec" in model.explicit
    ts = model.trainer_spec
    if has_trainer_spec:
        if ts.model_type in _UNSUPPORTED and not allow_unsupported_model_type:
            raise ValueError(f"Unsupported model type: {ts.model_type.name}")
        model_type = ts.model_type
    else:
        model_type = ModelType.UNIGRAM
    is_bpe = model_type == ModelType.BPE
    special = {
        "bos": (ts.bos_piece or "<s>").encode() if has_trainer_spec else b"<s>",
        "eos": (ts.eos_piece or "</s>").encode() if has_trainer_spec else b"</s>",
        "pad": (ts.pad_piece or "<pad>").encode() if has_trainer_spec else b"<pad>",
    }
    special_ids = dict.fromkeys(special, -1)

    pieces: list[bytes] = []
    types: list[int] = []
    scores: list[float] = []
    for i, p in enumerate(model.pieces):
        piece, kind = p.piece.encode(), p.type
        if not piece or len(piece) > _MAX_PIECE_BYTES:
            raise ValueError(f"Piece at index {i} is invalid (empty or too long).")
        if b"\0" in piece:
            if not (treat_null_byte_as_unused and has_trainer_spec and ts.byte_fallback and len(piece) == 1):
                raise ValueError(f"Piece at index {i} is invalid (contains null byte).")
            piece, kind = f"<unused_{i}>".encode(), PieceType.UNUSED
        if kind == PieceType.CONTROL:
            for name, text in special.items():
                if piece == text:
                    special_ids[name] = i
        if is_bpe and (math.isnan(p.score) or abs(p.score) > 2147483520.0):
            raise ValueError(f"Piece at index {i} has an invalid BPE score.")
        pieces.append(piece)
        types.append(int(kind))
        scores.append(p.score)

    pieces_trie = _trie_blob([(piece, i) for i, piece in enumerate(pieces)])
    user_defined = [(pieces[i], i) for i in range(count) if types[i] == PieceType.USER_DEFINED]
    prefix_trie = _trie_blob(user_defined) if user_defined else b""
    bigram_trie = _bigram_blob(pieces) if is_bpe or not skip_char_bigrams else b""
    fields = {
        "pieces": pieces,
        "scores": scores,
        "types": types,
        "is_bpe": is_bpe,
        "unk_id": ts.unk_id if has_trainer_spec else 0,
        "unk_surface": ts.unk_surface.encode() if has_trainer_spec else b"",
        "model_type": int(model_type),
        "normalizer": _normalizer(model, has_trainer_spec),
        "pieces_trie": pieces_trie,
        "prefix_trie": prefix_trie,
        "bigram_trie": bigram_trie,
        "direct": None,
        **{f"{name}_id": i for name, i in special_ids.items()},
    }
    if is_bpe:
        # sentencepiece loads a first version of the file to run its BPE on the pieces
        _check_loadable(fields, RuntimeError("Failed to initialize preliminary processor for BPE direct mapping."))
        direct = _direct_mappings(pieces, types, scores, user_defined, fields["unk_id"])
        if any(direct[i] and types[i] not in _INVISIBLE for i in range(count)):
            fields["direct"] = b"" if all(direct) else bytes(direct)
    _check_loadable(fields, ValueError("Model verification failed: Converted FlatBuffers model is invalid."))
    return _write(fields)


def _trie_blob(entries: list[tuple[bytes, int]]) -> bytes:
    entries.sort()
    for (a, _), (b, _) in itertools.pairwise(entries):
        if a == b:
            raise ValueError(f"Duplicate key for trie building: {a.decode(errors='replace')}")
    units = darts.build_trie(entries)
    return struct.pack(f"<{len(units)}I", *units)


def _char_len(piece: bytes, at: int) -> int:
    """Bytes of the UTF-8 character starting at `at`, judged by its first byte, as sentencepiece
    does (cut short at the end of `piece`)."""
    lead = piece[at]
    n = 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return min(n, len(piece) - at)


def _bigram_blob(pieces: list[bytes]) -> bytes:
    bigrams = set()
    for piece in pieces:
        at, prev = 0, 0
        while at < len(piece):
            n = _char_len(piece, at)
            if prev:
                bigrams.add(piece[at - prev : at + n])
            prev, at = n, at + n
    keys = sorted(bigrams)
    if not keys:
        return b""
    units = darts.build_keyset_trie(keys)
    for key in keys:
        second = darts.node_of(units, key[_char_len(key, 0) :])
        leaf = darts.leaf_of(units, key)
        if leaf < 0:
            raise RuntimeError("Out-of-bounds leaf position in bigram trie patching.")
        units[leaf] = max(second, 0) | (1 << 31)
    return struct.pack(f"<{len(units)}I", *units)


def _normalizer(model: SentencePieceModel, has_trainer_spec: bool) -> dict[str, Any] | None:
    if "normalizer_spec" not in model.explicit:
        return None
    ns = model.normalizer_spec
    return {
        "name": ns.name.encode(),
        "charsmap": ns.precompiled_charsmap,
        "add_dummy_prefix": ns.add_dummy_prefix,
        "remove_extra_whitespaces": ns.remove_extra_whitespaces,
        "escape_whitespaces": ns.escape_whitespaces,
        "treat_whitespace_as_suffix": has_trainer_spec and model.trainer_spec.treat_whitespace_as_suffix,
    }


def _direct_mappings(
    pieces: list[bytes], types: list[int], scores: list[float], user_defined: list[tuple[bytes, int]], unk_id: int
) -> list[int]:
    """1 for each piece that the lite BPE encodes to itself alone (and for the invisible ones)."""
    ids = {piece: i for i, piece in enumerate(pieces)}
    ranks = [int(s) for s in scores]  # C++ truncates the float scores to int32 ranks
    user = {piece: i for piece, i in user_defined}
    longest_user = max((len(p) for p in user), default=0)
    byte_start = _byte_fallback_start(ids, types)
    out = []
    for i, piece in enumerate(pieces):
        if types[i] in _INVISIBLE:
            out.append(1)
        elif len(piece) > _MAX_DIRECT_MAPPING_BYTES:
            out.append(0)
        else:
            encoded = _bpe_ids(piece, ids, types, ranks, user, longest_user, unk_id, byte_start)
            out.append(1 if encoded == [i] else 0)
    return out


def _byte_fallback_start(ids: dict[bytes, int], types: list[int]) -> int:
    first = ids.get(b"<0x00>", -1)
    return first if first >= 0 and types[first] == PieceType.BYTE else -1


def _bpe_ids(
    text: bytes,
    ids: dict[bytes, int],
    types: list[int],
    ranks: list[int],
    user: dict[bytes, int],
    longest_user: int,
    unk_id: int,
    byte_start: int,
) -> list[int]:
    """The ids the lite runtime's BPE gives `text` (one pre-split chunk): characters (or
    user-defined pieces, which never merge) merged best rank first, leftmost first on ties."""

    def visible(piece: bytes) -> int:
        i = ids.get(piece, -1)
        return -1 if i < 0 or types[i] not in (PieceType.NORMAL, PieceType.USER_DEFINED) else i

    symbols: list[list[Any]] = []  # [piece, id, frozen, prev, next]
    at = 0
    while at < len(text):
        n = 0
        for length in range(min(longest_user, len(text) - at), 0, -1):
            if text[at : at + length] in user:
                n = length
                break
        if n:
            symbols.append([text[at : at + n], user[text[at : at + n]], True])
        else:
            n = _char_len(text, at)
            i = visible(text[at : at + n])
            symbols.append([text[at : at + n], unk_id if i < 0 else i, False])
        at += n
    last = len(symbols) - 1
    for k, s in enumerate(symbols):
        s += [k - 1, -1 if k == last else k + 1]

    agenda: list[tuple[int, int, int, int, int]] = []  # (-rank, left, right, size, id)

    def consider(left: int, right: int) -> None:
        if left == -1 or right == -1 or symbols[left][2] or symbols[right][2]:
            return
        merged = symbols[left][0] + symbols[right][0]
        i = visible(merged)
        if i >= 0:
            heapq.heappush(agenda, (-ranks[i], left, right, len(merged), i))

    for k in range(last):
        consider(k, k + 1)
    while agenda:
        _, left, right, size, i = heapq.heappop(agenda)
        a, b = symbols[left], symbols[right]
        if not a[0] or not b[0] or len(a[0]) + len(b[0]) != size:
            continue
        a[0], a[1], b[0] = a[0] + b[0], i, b""
        a[4] = b[4]
        if b[4] != -1:
            symbols[b[4]][3] = left
        consider(a[3], left)
        consider(left, a[4])
    out: list[int] = []
    k = 0
    while k != -1:
        piece, i = symbols[k][0], symbols[k][1]
        if piece:
            if i == unk_id and byte_start != -1:
                out.extend(byte_start + byte for byte in piece)
            elif i != unk_id or not out or out[-1] != unk_id:
                out.append(i)
        k = symbols[k][4]
    return out


def _check_loadable(f: dict[str, Any], bad: Exception) -> None:
    """Raises `bad` where sentencepiece's lite runtime would refuse to load the file."""
    count = len(f["pieces"])
    if any(not -1 <= f[k] < count for k in ("unk_id", "bos_id", "eos_id", "pad_id")):
        raise bad
    ns = f["normalizer"]
    if ns is not None and ns["charsmap"]:
        blob = ns["charsmap"]
        trie_size = int.from_bytes(blob[:4], "little") if len(blob) > 4 else -1
        if trie_size < 0 or trie_size >= len(blob) - 4 or blob[-1] != 0 or trie_size < 1024 or trie_size % 1024:
            raise bad
    if not f["is_bpe"] and any(math.isnan(s) or math.isinf(s) for s in f["scores"]):
        raise bad
    if len(f["unk_surface"]) > _MAX_PIECE_BYTES:
        raise bad
    ids = {piece: i for i, piece in enumerate(f["pieces"])}
    start = _byte_fallback_start(ids, f["types"])
    if start >= 0:
        for byte in range(256):
            i = ids.get(b"<0x%02X>" % byte, -1)
            if i != start + byte or f["types"][i] != PieceType.BYTE:
                raise bad
    elif f["unk_id"] == -1:
        raise bad


def _write(f: dict[str, Any]) -> bytes:
    """Lays the model out as flatc's generated `ModelProto::Pack` does: the children in schema
    order, then the table's fields, widest first and each width in reverse schema order."""
    b = FlatBufferWriter()
    count = len(f["pieces"])
    pieces = b.offset_vector([b.string(p) for p in f["pieces"]])
    scores = 0 if f["is_bpe"] else b.vector(struct.pack(f"<{count}f", *f["scores"]), count, 4)
    int_scores = b.vector(struct.pack(f"<{count}i", *(int(s) for s in f["scores"])), count, 4) if f["is_bpe"] else 0
    types = b.vector(struct.pack(f"<{count}b", *f["types"]), count, 1)
    unk_surface = b.string(f["unk_surface"]) if f["unk_surface"] else 0
    normalizer = _write_normalizer(b, f["normalizer"]) if f["normalizer"] is not None else 0
    blobs = [b.vector(f[k], len(f[k]), 1, 8) if f[k] else 0 for k in ("pieces_trie", "prefix_trie", "bigram_trie")]
    direct = b.vector(f["direct"], len(f["direct"]), 1) if f["direct"] else 0
    b.start_table()
    b.add_scalar(15, "<i", f["pad_id"], -1)
    b.add_scalar(14, "<i", f["eos_id"], -1)
    b.add_scalar(13, "<i", f["bos_id"], -1)
    b.add_offset(12, direct)
    for index, blob in zip((10, 9, 8), reversed(blobs), strict=True):
        b.add_offset(index, blob)
    b.add_offset(7, normalizer)
    b.add_offset(5, unk_surface)
    b.add_scalar(4, "<i", f["unk_id"], 0)
    b.add_offset(3, types)
    b.add_offset(2, int_scores)
    b.add_offset(1, scores)
    b.add_offset(0, pieces)
    b.add_scalar(11, "<?", f["direct"] is not None, False)
    b.add_scalar(6, "<b", f["model_type"], 1)
    return b.finish(b.end_table())


def _write_normalizer(b: FlatBufferWriter, ns: dict[str, Any]) -> int:
    name = b.string(ns["name"]) if ns["name"] else 0
    charsmap = b.vector(ns["charsmap"], len(ns["charsmap"]), 1, 8) if ns["charsmap"] else 0
    b.start_table()
    b.add_offset(1, charsmap)
    b.add_offset(0, name)
    b.add_scalar(5, "<?", ns["treat_whitespace_as_suffix"], False)
    b.add_scalar(4, "<?", ns["escape_whitespaces"], True)
    b.add_scalar(3, "<?", ns["remove_extra_whitespaces"], True)
    b.add_scalar(2, "<?", ns["add_dummy_prefix"], True)
    return b.end_table()
