"""SentencePiece `.model` files, read and written in Python without a protobuf dependency:
the writer of `save_sentencepiece` for tokenizers not read from a `.model` file, and the tests'
view of a file's every field. (Tokenizers are read by the Rust reader,
`src/io/sentencepiece.rs`.)

A `.model` file is one protobuf `ModelProto` (sentencepiece's `src/sentencepiece_model.proto`):
the pieces with their scores and types, the trainer's settings, and the normalizer's settings,
whose `precompiled_charsmap` holds the normalization rules as a Darts-clone double-array trie.
This module decodes the protobuf wire format by hand, keeps every field it does not model as raw
bytes, and so writes back a file byte for byte identical to what sentencepiece wrote::

    >>> model = read_model("spm.model")
    >>> model.pieces[0], model.trainer_spec.model_type
    (Piece(piece='<unk>', score=0.0, type=<PieceType.UNKNOWN: 2>), <ModelType.UNIGRAM: 1>)
    >>> with open("spm.model", "rb") as f:
    ...     model_bytes(model) == f.read()
    True

`build_charsmap` makes a precompiled character map from rules (the tests' `reference_sentencepiece`
reads one back, and models sentencepiece's normalizer, as oracles for the Rust side).
"""

from __future__ import annotations

import dataclasses
import enum
import os
import struct
from collections.abc import Iterator, Mapping
from typing import Any

from tokenmill import _core
from tokenmill._files import input_file, write_atomically


class PieceType(enum.IntEnum):
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


class ModelType(enum.IntEnum):
    UNIGRAM = 1
    BPE = 2
    WORD = 3
    CHAR = 4


# --- The messages. Each field's metadata names its protobuf field number and kind; defaults are
# the proto2 defaults of sentencepiece_model.proto, which a reader must assume for absent fields.
# `explicit` records which fields the file held: proto2 writes a field that was set even when it
# equals its default, so a faithful rewrite must too. `unknown` keeps fields this module does not
# model (newer options, extensions, SelfTestData) as (field number, raw tag and payload).


def _field(number: int, kind: str, default: Any = None, *, factory: Any = None) -> Any:
    meta = {"number": number, "kind": kind}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _explicit() -> Any:
    return dataclasses.field(default_factory=set, repr=False, compare=False)


def _unknown() -> Any:
    return dataclasses.field(default_factory=list, repr=False)


@dataclasses.dataclass
class Piece:
    """One vocabulary entry: `Piece("\u2581the", -3.2)` is a normal piece with its log probability."""

    piece: str = _field(1, "string", "")
    score: float = _field(2, "float", 0.0)
    type: PieceType = _field(3, "piece_type", PieceType.NORMAL)
    explicit: set[str] = _explicit()
    unknown: list[tuple[int, bytes]] = _unknown()


@dataclasses.dataclass
class TrainerSpec:
    input: list[str] = _field(1, "repeated_string", factory=list)
    input_format: str = _field(7, "string", "")
    model_prefix: str = _field(2, "string", "")
    model_type: ModelType = _field(3, "model_type", ModelType.UNIGRAM)
    vocab_size: int = _field(4, "int32", 8000)
    accept_language: list[str] = _field(5, "repeated_string", factory=list)
    self_test_sample_size: int = _field(6, "int32", 0)
    enable_differential_privacy: bool = _field(50, "bool", False)
    differential_privacy_noise_level: float = _field(51, "float", 0.0)
    differential_privacy_clipping_threshold: int = _field(52, "uint64", 0)
    character_coverage: float = _field(10, "float", 0.9995)
    input_sentence_size: int = _field(11, "uint64", 0)
    shuffle_input_sentence: bool = _field(19, "bool", True)
    mining_sentence_size: int = _field(12, "int32", 0)
    training_sentence_size: int = _field(13, "int32", 0)
    seed_sentencepiece_size: int = _field(14, "int32", 1000000)
    shrinking_factor: float = _field(15, "float", 0.75)
    max_sentence_length: int = _field(18, "int32", 4192)
    num_threads: int = _field(16, "int32", 16)
    num_sub_iterations: int = _field(17, "int32", 2)
    max_sentencepiece_length: int = _field(20, "int32", 16)
    split_by_unicode_script: bool = _field(21, "bool", True)
    split_by_number: bool = _field(23, "bool", True)
    split_by_whitespace: bool = _field(22, "bool", True)
    treat_whitespace_as_suffix: bool = _field(24, "bool", False)
    allow_whitespace_only_pieces: bool = _field(26, "bool", False)
    split_digits: bool = _field(25, "bool", False)
    pretokenization_delimiter: str = _field(53, "string", "")
    control_symbols: list[str] = _field(30, "repeated_string", factory=list)
    user_defined_symbols: list[str] = _field(31, "repeated_string", factory=list)
    required_chars: str = _field(36, "string", "")
    byte_fallback: bool = _field(35, "bool", False)
    vocabulary_output_piece_score: bool = _field(32, "bool", True)
    hard_vocab_limit: bool = _field(33, "bool", True)
    use_all_vocab: bool = _field(34, "bool", False)
    unk_id: int = _field(40, "int32", 0)
    bos_id: int = _field(41, "int32", 1)
    eos_id: int = _field(42, "int32", 2)
    pad_id: int = _field(43, "int32", -1)
    unk_piece: str = _field(45, "string", "<unk>")
    bos_piece: str = _field(46, "string", "<s>")
    eos_piece: str = _field(47, "string", "</s>")
    pad_piece: str = _field(48, "string", "<pad>")
    unk_surface: str = _field(44, "string", " \u2047 ")
    train_extremely_large_corpus: bool = _field(49, "bool", False)
    seed_sentencepieces_file: str = _field(54, "string", "")
    explicit: set[str] = _explicit()
    unknown: list[tuple[int, bytes]] = _unknown()


@dataclasses.dataclass
class NormalizerSpec:
    name: str = _field(1, "string", "")
    precompiled_charsmap: bytes = _field(2, "bytes", b"")
    add_dummy_prefix: bool = _field(3, "bool", True)
    remove_extra_whitespaces: bool = _field(4, "bool", True)
    escape_whitespaces: bool = _field(5, "bool", True)
    normalization_rule_tsv: str = _field(6, "string", "")
    explicit: set[str] = _explicit()
    unknown: list[tuple[int, bytes]] = _unknown()


@dataclasses.dataclass
class SentencePieceModel:
    """A `ModelProto`: `pieces[i]` is the piece of id `i`; an absent spec reads as all defaults.

    >>> SentencePieceModel(pieces=[Piece("<unk>", 0.0, PieceType.UNKNOWN)]).normalizer_spec.add_dummy_prefix
    True
    """

    pieces: list[Piece] = _field(1, "repeated_piece", factory=list)
    trainer_spec: TrainerSpec = _field(2, "trainer_spec", factory=TrainerSpec)
    normalizer_spec: NormalizerSpec = _field(3, "normalizer_spec", factory=NormalizerSpec)
    denormalizer_spec: NormalizerSpec = _field(5, "normalizer_spec", factory=NormalizerSpec)
    explicit: set[str] = _explicit()
    unknown: list[tuple[int, bytes]] = _unknown()


_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5
_ENUMS: dict[str, type[enum.IntEnum]] = {"piece_type": PieceType, "model_type": ModelType}
_MESSAGES: dict[str, type] = {"trainer_spec": TrainerSpec, "normalizer_spec": NormalizerSpec}


def _wire_type(kind: str) -> int:
    if kind == "float":
        return _FIXED32
    if kind in ("string", "bytes", "repeated_string", "repeated_piece") or kind in _MESSAGES:
        return _BYTES
    return _VARINT


# --- Wire format: reading.


class _Reader:
    """Walks one protobuf message in `data[start:end]`; `where` (the file) and `label` (the field
    path) go into every error, with the absolute byte offset."""

    def __init__(self, data: bytes, where: str) -> None:
        self.data = data
        self.where = where

    def fail(self, what: str, offset: int) -> _core.FormatError:
        return _core.FormatError(f"{self.where}: not a SentencePiece model: {what} at byte offset {offset}")

    def varint(self, pos: int, end: int) -> tuple[int, int]:
        start, result, shift = pos, 0, 0
        while True:
            if pos >= end:
                raise self.fail("truncated varint", start)
            byte = self.data[pos]
            result |= (byte & 0x7F) << shift
            pos += 1
            if byte < 0x80:
                return result, pos
            shift += 7
            if shift >= 70:
                raise self.fail("varint longer than 10 bytes", start)

    def fields(self, start: int, end: int) -> Iterator[tuple[int, int, Any, int, int]]:
        """(field number, wire type, value, tag offset, end offset) for each field; the value is an
        int for varints, 4 or 8 raw bytes for fixed fields, and a (start, end) span for the rest."""
        pos = start
        while pos < end:
            tag_at = pos
            tag, pos = self.varint(pos, end)
            number, wire = tag >> 3, tag & 7
            if number == 0:
                raise self.fail("field number 0", tag_at)
            value: Any
            if wire == _VARINT:
                value, pos = self.varint(pos, end)
            elif wire in (_FIXED32, _FIXED64):
                size = 4 if wire == _FIXED32 else 8
                if pos + size > end:
                    raise self.fail(f"field {number}: {size}-byte value past the end", tag_at)
                value, pos = self.data[pos : pos + size], pos + size
            elif wire == _BYTES:
                length, pos = self.varint(pos, end)
                if pos + length > end:
                    raise self.fail(f"field {number}: length {length} runs past the end", tag_at)
                value, pos = (pos, pos + length), pos + length
            else:  # 3 and 4 are proto2 groups, which ModelProto never uses; 6 and 7 do not exist
                raise self.fail(f"field {number} has wire type {wire}, which ModelProto does not use", tag_at)
            yield number, wire, value, tag_at, pos

    def text(self, span: tuple[int, int], label: str) -> str:
        try:
            return self.data[span[0] : span[1]].decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.fail(f"{label} is not UTF-8", span[0] + e.start) from None

    def merge(self, message: Any, start: int, end: int, label: str) -> Any:
        """Reads fields into `message` as protobuf merges them: a scalar seen again overrides,
        a message seen again merges, a repeated field appends."""
        known = {f.metadata["number"]: f for f in dataclasses.fields(message) if f.metadata}
        for number, wire, value, tag_at, pos in self.fields(start, end):
            f = known.get(number)
            if f is None:
                message.unknown.append((number, bytes(self.data[tag_at:pos])))
                continue
            kind, name = f.metadata["kind"], f"{label}.{f.name}"
            if wire != _wire_type(kind):
                raise self.fail(f"{name} has wire type {wire}, not {_wire_type(kind)}", tag_at)
            message.explicit.add(f.name)
            if kind == "repeated_piece":
                i = len(message.pieces)
                message.pieces.append(self.merge(Piece(), *value, f"{label}.pieces[{i}]"))
            elif kind in _MESSAGES:
                self.merge(getattr(message, f.name), *value, name)
            elif kind == "repeated_string":
                getattr(message, f.name).append(self.text(value, name))
            else:
                setattr(message, f.name, self.scalar(kind, value, name, tag_at))
        return message

    def scalar(self, kind: str, value: Any, name: str, tag_at: int) -> Any:
        if kind == "string":
            return self.text(value, name)
        if kind == "bytes":
            return bytes(self.data[value[0] : value[1]])
        if kind == "float":
            return struct.unpack("<f", value)[0]
        if kind == "bool":
            return value != 0
        if kind == "uint64":
            return value & 0xFFFF_FFFF_FFFF_FFFF
        # int32 and enums: the low 32 bits, signed (a negative int32 is written sign-extended to 64 bits)
        number = value & 0xFFFF_FFFF
        number = number - (1 << 32) if number >= 1 << 31 else number
        if kind in _ENUMS:
            try:
                return _ENUMS[kind](number)
            except ValueError:
                raise self.fail(f"{name} has the unknown value {number}", tag_at) from None
        return number


def read_model(source: str | os.PathLike[str] | bytes) -> SentencePieceModel:
    """Reads a SentencePiece `.model` file (a path), or its contents (bytes).

    >>> read_model("spm.model").trainer_spec.vocab_size
    120
    """
    if isinstance(source, bytes):
        data, where = source, "<bytes>"
    else:
        p = input_file(source, "a SentencePiece model")
        where = str(p)
        data = p.read_bytes()
    reader = _Reader(data, where)
    model = reader.merge(SentencePieceModel(), 0, len(data), "ModelProto")
    if not model.pieces:
        raise _core.FormatError(f"{where}: not a SentencePiece model: no pieces")
    for i, piece in enumerate(model.pieces):
        if not piece.piece:
            raise _core.FormatError(f"{where}: not a SentencePiece model: piece {i} is empty")
    return model


def read_specs(data: bytes, where: str) -> SentencePieceModel:
    """A `.model` file's trainer and normalizer specs without its pieces, which are most of its
    bytes (the Rust reader has them): for what needs only the specs, such as the ids of
    `<s>` and `</s>`, at a fraction of `read_model`'s cost.

    >>> unknown = Piece("<unk>", 0.0, PieceType.UNKNOWN)
    >>> read_specs(model_bytes(SentencePieceModel(pieces=[unknown])), "<bytes>").trainer_spec.bos_id
    1
    """
    reader = _Reader(data, where)
    model = SentencePieceModel()
    names = {2: "trainer_spec", 3: "normalizer_spec", 5: "denormalizer_spec"}
    for number, wire, value, _tag_at, _pos in reader.fields(0, len(data)):
        if number in names and wire == _BYTES:
            reader.merge(getattr(model, names[number]), *value, f"ModelProto.{names[number]}")
            model.explicit.add(names[number])
    return model


# --- Wire format: writing. Fields go out in field-number order, as protobuf's C++ serializer
# (which wrote the file) puts them, with unknown fields in their numbered place among them.


def _varint(value: int) -> bytes:
    value &= 0xFFFF_FFFF_FFFF_FFFF  # negative int32s are written as 10-byte two's complement
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _length_delimited(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | _BYTES) + _varint(len(payload)) + payload


def _encode_scalar(number: int, kind: str, value: Any) -> bytes:
    if kind == "string":
        return _length_delimited(number, value.encode("utf-8"))
    if kind == "bytes":
        return _length_delimited(number, bytes(value))
    if kind == "float":
        return _varint(number << 3 | _FIXED32) + struct.pack("<f", value)
    return _varint(number << 3 | _VARINT) + _varint(int(value))


def _same_value(kind: str, a: Any, b: Any) -> bool:
    if kind == "float":  # compared as stored: 0.9995 read back from a file is float32(0.9995)
        return struct.pack("<f", a) == struct.pack("<f", b)
    return bool(a == b)


def _encode(message: Any) -> bytes:
    parts: list[tuple[int, bytes]] = list(message.unknown)
    for f in dataclasses.fields(message):
        if not f.metadata:
            continue
        number, kind, value = f.metadata["number"], f.metadata["kind"], getattr(message, f.name)
        if kind == "repeated_piece":
            parts.extend((number, _length_delimited(number, _encode(piece))) for piece in value)
        elif kind == "repeated_string":
            parts.extend((number, _encode_scalar(number, "string", s)) for s in value)
        elif kind in _MESSAGES:
            payload = _encode(value)
            if payload or f.name in message.explicit:
                parts.append((number, _length_delimited(number, payload)))
        elif f.name in message.explicit or not _same_value(kind, value, f.default):
            parts.append((number, _encode_scalar(number, kind, value)))
    parts.sort(key=lambda part: part[0])  # stable: repeated fields keep their order
    return b"".join(raw for _, raw in parts)


def model_bytes(model: SentencePieceModel) -> bytes:
    """The `.model` file contents of `model`.

    >>> model_bytes(SentencePieceModel(pieces=[Piece("<unk>", 0.0, PieceType.UNKNOWN)]))
    b'\\n\\t\\n\\x05<unk>\\x18\\x02'
    """
    if not model.pieces:
        raise _core.ConfigError("a SentencePiece model needs at least one piece")
    for i, piece in enumerate(model.pieces):
        if not piece.piece:
            raise _core.ConfigError(f"piece {i} is empty; SentencePiece refuses empty pieces")
    return _encode(model)


def normalizer_spec_bytes(spec: NormalizerSpec) -> bytes:
    """A `NormalizerSpec` message on its own, as sentencepiece serializes one.

    >>> normalizer_spec_bytes(NormalizerSpec(name="identity", explicit={"name"}))
    b'\\n\\x08identity'
    """
    return _encode(spec)


def read_normalizer_spec(data: bytes, where: str = "<normalizer spec>") -> NormalizerSpec:
    """A `NormalizerSpec` message read from its bytes (`normalizer_spec_bytes` undone)."""
    reader = _Reader(bytes(data), where)
    return reader.merge(NormalizerSpec(), 0, len(data), "NormalizerSpec")  # type: ignore[no-any-return]


def write_model(path: str | os.PathLike[str], model: SentencePieceModel) -> None:
    """Writes `model` to `path` atomically (a temporary file beside it, then a rename)."""
    write_atomically(path, model_bytes(model))


# --- The precompiled character map: <uint32 trie size><double-array trie><NUL-terminated strings>.
# Each trie unit is a little-endian uint32 in Darts-clone's layout:
#   bits 0-7  label: the byte that leads to this unit (bit 31 is part of the label, so a value unit,
#             whose bit 31 is set, never matches a byte)
#   bit 8     has_leaf: the key ending here has a value, stored in the unit at `base ^ 0`
#   bit 9     the stored offset is to be shifted left by 8 (how offsets of 2^21 and more are kept)
#   bits 10-  offset: this unit's children sit at `base ^ byte`, where `base = position ^ offset`
# and a value unit holds the value (an offset into the strings) in bits 0-30.

_LEAF_FLAG, _VALUE_FLAG = 1 << 8, 1 << 31
# sentencepiece collects at most 32 rule matches per position on the stack; its builder
# refuses maps in which a key has 32 or more keys among its prefixes (itself included).
_MAX_PREFIX_MATCHES = 32


def build_charsmap(rules: Mapping[str, str]) -> bytes:
    """A `precompiled_charsmap` holding `rules` (source → normalized), which sentencepiece loads
    and applies by longest match. No rules give `b""`, which sentencepiece reads as "no map".

    >>> build_charsmap({"Ａ": "A"})[:4]   # the trie's size in bytes, then the trie and b"A\\0"
    b'\\x00\\x04\\x00\\x00'
    """
    if not rules:
        return b""
    for key, value in rules.items():
        if not key or "\0" in key or "\0" in value:
            raise _core.ConfigError(f"normalization rule {key!r} -> {value!r}: keys must be non-empty, and no NULs")
    # The normalized strings, each once, NUL-terminated; the trie values are offsets into them.
    offsets: dict[str, int] = {}
    strings = bytearray()
    for value in sorted(set(rules.values())):
        offsets[value] = len(strings)
        strings += value.encode("utf-8") + b"\0"
    keys = sorted((key.encode("utf-8"), offsets[value]) for key, value in rules.items())
    units = _place(*_automaton(keys))
    return struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + bytes(strings)


def read_charsmap(charsmap: bytes) -> list[tuple[str, str]]:
    """The rules (source, normalized) a `precompiled_charsmap` holds, sorted by the source's
    bytes: `build_charsmap` undone.

    >>> read_charsmap(build_charsmap({"Ａ": "A", "ﬁ": "fi"}))
    [('ﬁ', 'fi'), ('Ａ', 'A')]
    """
    if not charsmap:
        return []
    (trie_size,) = struct.unpack_from("<I", charsmap)
    if trie_size % 4 or 4 + trie_size > len(charsmap):
        raise _core.FormatError(f"precompiled_charsmap: trie size {trie_size} does not fit {len(charsmap)} bytes")
    units = struct.unpack_from(f"<{trie_size // 4}I", charsmap, 4)
    strings = charsmap[4 + trie_size :]

    def offset(unit: int) -> int:
        return (unit >> 10) << ((unit & (1 << 9)) >> 6)

    # A unit labelled c at position p is the child by byte c of the state whose base is p ^ c:
    # indexing units by that base lists each state's children at once.
    children: dict[int, list[tuple[int, int]]] = {}
    for pos, unit in enumerate(units):
        if not unit & _VALUE_FLAG and unit & 0xFF:
            children.setdefault(pos ^ (unit & 0xFF), []).append((unit & 0xFF, pos))
    found: list[tuple[bytes, int]] = []
    stack = [(offset(units[0]), b"")]
    while stack:
        base, prefix = stack.pop()
        if len(prefix) > 256:
            raise _core.FormatError("precompiled_charsmap: the trie loops")
        for label, pos in children.get(base, ()):
            key, child = prefix + bytes([label]), pos ^ offset(units[pos])
            if units[pos] & _LEAF_FLAG and child < len(units):
                found.append((key, units[child] & ~_VALUE_FLAG))
            stack.append((child, key))
    found.sort()
    out = []
    for key, at in found:
        end = strings.find(b"\0", at)
        out.append((key.decode("utf-8", errors="replace"), strings[at:end].decode("utf-8", errors="replace")))
    return out


def _automaton(keys: list[tuple[bytes, int | None]]) -> tuple[list[dict[int, int]], list[int | None]]:
    """The minimal automaton of sorted `keys` (Daciuk et al.'s algorithm for sorted input): states
    with the same continuations are one state, as in Darts-clone's DAWG. nmt_nfkc's 225,000 rules
    are mostly Hangul jamo sequences sharing their tails; merging them makes the map 10 times
    smaller. State 0 is the root; `children[s]` maps a byte to a state, `values[s]` is the value
    of the key ending at `s`."""
    children: list[dict[int, int]] = [{}]
    values: list[int | None] = [None]
    register: dict[tuple[Any, ...], int] = {}
    # The states along the previous key, which may still gain children and so are not merged yet;
    # the byte leading to each; and how many keys end on the way to each (itself included).
    path, path_labels, path_matches = [0], [0], [0]
    previous = b""
    for key, value in keys + [(b"", None)]:  # the empty key at the end merges the last path
        limit, common = min(len(key), len(previous)), 0
        while common < limit and key[common] == previous[common]:
            common += 1
        for depth in range(len(path) - 1, common, -1):  # deepest first: a state's children are final
            state = path[depth]
            twin = register.setdefault((values[state], *children[state].items()), state)
            if twin != state:
                children[path[depth - 1]][path_labels[depth]] = twin
        del path[common + 1 :], path_labels[common + 1 :], path_matches[common + 1 :]
        for byte in key[common:]:
            children[path[-1]][byte] = len(children)
            path.append(len(children))
            path_labels.append(byte)
            path_matches.append(path_matches[-1])
            children.append({})
            values.append(None)
        if key:
            values[path[-1]] = value
            path_matches[-1] += 1
            if path_matches[-1] >= _MAX_PREFIX_MATCHES:
                raise _core.ConfigError(f"normalization rule {key.decode()!r}: too many rules are prefixes of it")
        previous = key
    return children, values


# _LOW_HALVES[k]: the units of a block whose index has bit k clear.
_LOW_HALVES = [sum(1 << i for i in range(256) if not i >> k & 1) for k in range(8)]


def _xor_units(units: int, c: int) -> int:
    """The set {u ^ c : u in units}, for sets of a block's units as 256-bit masks: each bit of c
    swaps the halves of every aligned group of 2^(k+1) units."""
    for k in range(8):
        if c >> k & 1:
            units = ((units & _LOW_HALVES[k]) << (1 << k)) | ((units >> (1 << k)) & _LOW_HALVES[k])
    return units


def _place(children: list[dict[int, int]], values: list[int | None]) -> list[int]:
    """Lays the automaton out as a double array. Each state gets its own base (so that no byte
    walks from one state into another's children); its transitions go to `base ^ byte` and its
    value to `base ^ 0`. A transition's unit stores the offset to the base of the state it leads
    to, so a state reached by several transitions is laid out once.

    The array grows in blocks of 256 units, and `base ^ byte` stays in the block of `base`, so a
    state fits a block where its labels, XORed with the base's low byte, hit only free units. With
    the free units of a block as a 256-bit mask, the low bytes that fit are one AND per label
    (a per-unit search took 20 times longer on nmt_nfkc). States with most labels are placed first,
    while blocks are empty; the rest fill the holes."""
    states, seen = [0], {0}
    for state in states:
        fresh = [child for child in children[state].values() if child not in seen]
        seen.update(fresh)
        states.extend(fresh)
    states.sort(key=lambda state: -len(children[state]))

    everything = (1 << 256) - 1
    free = [everything & ~1]  # per block, the units not in use (unit 0 is the root's)
    bases = [1]  # per block, the units that are some state's base (none takes 0: NUL would reach the root)
    base_of: dict[int, int] = {}
    # Blocks only lose free units, so a label set that did not fit a block never will: each set
    # resumes its search where the last state with the same labels was placed.
    resume: dict[tuple[int, ...], int] = {}
    for state in states:
        labels = (0,) * (values[state] is not None) + tuple(sorted(children[state]))
        for block in range(resume.get(labels, 0), len(free) + 1):
            if block == len(free):
                free.append(everything)
                bases.append(0)
            fits = everything & ~bases[block]
            for label in labels:
                fits &= _xor_units(free[block], label)
                if not fits:
                    break
            if fits:
                low = (fits & -fits).bit_length() - 1
                break
        resume[labels] = block
        for label in labels:
            free[block] &= ~(1 << (low ^ label))
        bases[block] |= 1 << low
        base_of[state] = block << 8 | low
    if len(free) >= 1 << 13:  # offsets of 2^21 units and more need Darts-clone's shifted form
        raise _core.ConfigError(f"{len(free) * 256} trie units are too many for a precompiled charsmap")

    # Unused units must match no byte; a value unit's label (bit 31 set) matches none.
    units = [_VALUE_FLAG] * (len(free) * 256)
    units[0] = base_of[0] << 10  # the root: label 0, no value
    for state, base in base_of.items():
        value = values[state]
        if value is not None:
            units[base] = _VALUE_FLAG | value
        for label, child in children[state].items():
            unit = base ^ label
            has_leaf = _LEAF_FLAG if values[child] is not None else 0
            units[unit] = label | has_leaf | (unit ^ base_of[child]) << 10
    return units
