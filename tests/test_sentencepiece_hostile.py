"""SentencePiece `.model` files with any protobuf field — of the model, of a piece, of the trainer
or normalizer spec — given another value, another wire type, removed or repeated: loading and
using them through `Tokenizer.from_sentencepiece` and `tokenmill.sentencepiece` either works or
raises a tokenmill error, each in a child with memory and time limits (a crash, an abort or a
hang fails the test). The files are edited at the protobuf wire level, so no schema decides
which damage is possible."""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Any

import pytest
from bounded import bounded, expect_clean
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenmill
from tokenmill.sentencepiece import SentencePieceProcessor

spm = pytest.importorskip("sentencepiece")

# A protobuf field: (number, wire type, value) — an int for varints and fixed widths, bytes for
# length-delimited fields.
Field = tuple[int, int, Any]
# ModelProto's message-valued fields, which the edits may descend into: pieces, trainer_spec,
# normalizer_spec, self_test_data, denormalizer_spec.
NESTED = {1, 2, 3, 4, 5}
TEXTS = ["Hello wörld, 東京 123  x", "", " ", "\u2581a<unk>\x00 é", "a" * 300]


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, pos


def _put_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def parse(data: bytes) -> list[Field]:
    """The fields of a well-formed message, in order."""
    fields, pos = [], 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = struct.unpack_from("<Q", data, pos)[0], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = struct.unpack_from("<I", data, pos)[0], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        fields.append((number, wire, value))
    return fields


def serialize(fields: list[Field]) -> bytes:
    out = bytearray()
    for number, wire, value in fields:
        out += _put_varint(number << 3 | wire)
        if wire == 0:
            out += _put_varint(value)
        elif wire == 1:
            out += struct.pack("<Q", value & (1 << 64) - 1)
        elif wire == 2:
            out += _put_varint(len(value)) + value
        elif wire == 5:
            out += struct.pack("<I", value & (1 << 32) - 1)
        # Wire type 3 (a group's start, which no SentencePiece field uses) is the bare key.
    return bytes(out)


def trained(model_type: str) -> bytes:
    lines = [f"the quick brown fox {i} jumps over the lazy dog 東京 café" for i in range(200)]
    writer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=writer,
        vocab_size=330,
        model_type=model_type,
        byte_fallback=True,
        user_defined_symbols=["<sep>"],
        hard_vocab_limit=False,
        minloglevel=2,
    )
    return writer.getvalue()


MODELS = {kind: trained(kind) for kind in ("unigram", "bpe", "word", "char")}
VARINTS = st.one_of(st.integers(0, 8), st.integers(0, 2**64 - 1), st.sampled_from([2**31, 2**32 - 1, 2**63]))
FIXED = st.one_of(
    st.integers(0, 2**32 - 1),
    st.sampled_from([struct.unpack("<I", struct.pack("<f", x))[0] for x in (float("nan"), float("inf"), -1e38)]),
)
PAYLOADS = st.one_of(
    st.binary(max_size=12),
    st.text(max_size=6).map(str.encode),
    st.sampled_from([b"", b"\xff\xfe", b"\x00", "\u2581".encode(), b"<0x41>", b"<0xZZ>", bytes(300)]),
)


class Blob(bytes):
    """Bytes shown in hypothesis' reports by their size (a `.model` file is ~0.5 MB)."""

    def __repr__(self) -> str:
        return f"<{len(self)} bytes>"


class Edited(bytes):
    """A changed file, shown in a failure report as the change made, not as its bytes."""

    change: str

    def __repr__(self) -> str:
        return f"<file with {self.change}>"


@st.composite
def edited(draw: st.DrawFn, data: bytes, top: bool = True) -> Edited:
    """`data` with one field changed: a new value of its wire type, another wire type, removed,
    repeated, renumbered — at the top level or inside a message-valued field."""
    fields = parse(data)
    i = draw(st.integers(0, len(fields) - 1))
    where = f"field #{i}"
    number, wire, value = fields[i]
    if top and wire == 2 and number in NESTED and value and draw(st.booleans()):
        inner = draw(edited(Blob(value), top=False))
        fields[i] = (number, 2, bytes(inner))
        change = f"{where} (number {number}): {inner.change}"
    else:
        fields, change = _edit_one(draw, fields, i)
        change = f"{where} (number {number}, wire {wire}): {change}"
    out = Edited(serialize(fields))
    out.change = change
    return out


def _edit_one(draw: st.DrawFn, fields: list[Field], i: int) -> tuple[list[Field], str]:
    number, wire, value = fields[i]
    action = draw(st.sampled_from(["value", "wire", "remove", "repeat", "number"]))
    if action == "remove":
        del fields[i]
        return fields, "removed"
    if action == "repeat":
        fields.insert(i, fields[i])
        return fields, "repeated"
    if action == "number":
        fields[i] = (draw(st.integers(1, 40)), wire, value)
        return fields, f"renumbered {fields[i][0]}"
    new_wire = wire if action == "value" else draw(st.sampled_from([0, 1, 2, 3, 5]))
    new = draw({0: VARINTS, 1: st.integers(0, 2**64 - 1), 2: PAYLOADS, 3: st.none(), 5: FIXED}[new_wire])
    fields[i] = (number, new_wire, new)
    return fields, f"wire {new_wire} value {new!r}"


def _load_and_use(path: Path) -> None:
    """Run in a bounded child: whatever loads can encode, decode and answer about its pieces."""
    try:
        tok = tokenmill.Tokenizer.from_sentencepiece(path)
    except tokenmill.TokenmillError as e:
        assert str(path) in str(e), e
    else:
        for text in TEXTS:
            tok.decode(tok.encode(text))
    try:
        sp = SentencePieceProcessor(model_file=str(path))
    except tokenmill.TokenmillError:
        return
    for text in TEXTS:
        ids = sp.encode(text)
        sp.decode(ids)
        sp.encode(text, out_type=str)
    for sample in (
        lambda: sp.encode(TEXTS[0], enable_sampling=True, alpha=0.5, nbest_size=-1),
        lambda: sp.nbest_encode_as_ids(TEXTS[0], 3),
    ):
        try:
            sample()
        except RuntimeError as e:  # as sentencepiece's: the model's type has no sampling or n-best
            assert "needs a" in str(e)
    [sp.id_to_piece(i) for i in range(sp.get_piece_size())]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), kind=st.sampled_from(sorted(MODELS)))
def test_any_field_any_value_is_a_tokenmill_error_or_works(tmp_path: Path, data: st.DataObject, kind: str) -> None:
    changed = data.draw(edited(Blob(MODELS[kind])))
    path = tmp_path / "m.model"
    path.write_bytes(changed)
    expect_clean(bounded(_load_and_use, path), (tokenmill.TokenmillError,), changed)


def test_the_codec_round_trips() -> None:
    for data in MODELS.values():
        assert serialize(parse(data)) == data
        assert serialize([(n, w, serialize(parse(v)) if w == 2 and n in NESTED else v) for n, w, v in parse(data)])
