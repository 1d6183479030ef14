"""The results sentencepiece returns as protocol buffers: `SentencePieceText` (a text and its
pieces) and `NBestSentencePieceText` (several), immutable, comparable, hashable and written to
the wire format byte for byte as sentencepiece writes them.

>>> text = ImmutableSentencePieceText("hi", [ImmutableSentencePiece("▁hi", 5, "hi", 0, 2)])
>>> text.pieces[0].surface, len(text.SerializeAsString())
('hi', 23)
"""

from __future__ import annotations

import struct
from collections.abc import Sequence


def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1  # negative int32s go out as ten bytes, as protobuf writes them
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _bytes_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _quote(value: str) -> str:
    """A string as protobuf's text format prints it (UTF-8 kept, quotes and controls escaped)."""
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _float_text(value: float) -> str:
    # Protobuf prints a float field with the shortest digits that read back as the same float.
    single = struct.unpack("<f", struct.pack("<f", value))[0]
    for digits in range(6, 10):
        text = f"{single:.{digits}g}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == single:
            return text
    return repr(single)


class ImmutableSentencePiece:
    """One piece: its string, id, the surface text it stands for, and where that is in the
    text (`begin`, `end`: characters in these objects, bytes in serialized protos)."""

    __slots__ = ("_piece", "_id", "_surface", "_begin", "_end", "_byte_span", "_partial")

    def __init__(
        self,
        piece: str,
        id: int,
        surface: str,
        begin: int,
        end: int,
        byte_span: tuple[int, int] | None = None,
        partial: bool = False,
    ) -> None:
        self._piece, self._id, self._surface, self._begin, self._end = piece, id, surface, begin, end
        self._byte_span = byte_span if byte_span is not None else (begin, end)
        # A byte piece before the last of a character's: sentencepiece leaves its surface unset.
        self._partial = partial

    piece = property(lambda self: self._piece)
    id = property(lambda self: self._id)
    surface = property(lambda self: self._surface)
    begin = property(lambda self: self._begin)
    end = property(lambda self: self._end)
    piece_as_bytes = property(lambda self: self._piece.encode("utf-8"))
    surface_as_bytes = property(lambda self: self._surface.encode("utf-8"))

    def _wire(self, byte_offsets: bool) -> bytes:
        begin, end = self._byte_span if byte_offsets else (self._begin, self._end)
        return (
            _bytes_field(1, self._piece.encode("utf-8"))
            + _varint_field(2, self._id)
            + (b"" if self._partial else _bytes_field(3, self._surface.encode("utf-8")))
            + _varint_field(4, begin)
            + _varint_field(5, end)
        )

    def SerializeAsString(self) -> bytes:
        return self._wire(False)

    def _key(self) -> tuple[object, ...]:
        return (self._piece, self._id, self._surface, self._begin, self._end)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ImmutableSentencePiece) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _text_lines(self) -> list[str]:
        return [
            f"piece: {_quote(self._piece)}",
            f"id: {self._id}",
            f"surface: {_quote(self._surface)}",
            f"begin: {self._begin}",
            f"end: {self._end}",
        ]

    def __str__(self) -> str:
        return "\n".join(self._text_lines()) + "\n"

    __repr__ = __str__


class ImmutableSentencePieceText:
    """A text and its pieces (sentencepiece's `SentencePieceText`); `score` is set for n-best
    results (the cut's score) and left out of the wire format otherwise."""

    __slots__ = ("_text", "_pieces", "_score")

    def __init__(self, text: str | None, pieces: Sequence[ImmutableSentencePiece], score: float | None = None) -> None:
        self._text, self._pieces, self._score = text, list(pieces), score

    text = property(lambda self: self._text or "")
    text_as_bytes = property(lambda self: (self._text or "").encode("utf-8"))
    pieces = property(lambda self: list(self._pieces))
    score = property(lambda self: self._score or 0.0)

    def _wire(self, byte_offsets: bool) -> bytes:
        # Joined once at the end: adding to a bytes object each time is quadratic on long texts.
        out = [] if self._text is None else [_bytes_field(1, self._text.encode("utf-8"))]
        out.extend(_bytes_field(2, p._wire(byte_offsets)) for p in self._pieces)
        if self._score is not None:
            out.append(_varint(3 << 3 | 5) + struct.pack("<f", self._score))
        return b"".join(out)

    def SerializeAsString(self) -> bytes:
        return self._wire(False)

    def _key(self) -> tuple[object, ...]:
        return (self._text or "", tuple(p._key() for p in self._pieces), self._score or 0.0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ImmutableSentencePieceText) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _text_lines(self) -> list[str]:
        lines = [] if self._text is None else [f"text: {_quote(self._text)}"]
        if self._score is not None:
            lines.append(f"score: {_float_text(self._score)}")
        for p in self._pieces:
            lines += ["pieces {", *p._text_lines(), "}"]
        return lines

    def __str__(self) -> str:
        lines = self._text_lines()
        return "\n".join(lines) + "\n" if lines else ""

    __repr__ = __str__


class ImmutableNBestSentencePieceText:
    """Several cuts of one text, best first (sentencepiece's `NBestSentencePieceText`)."""

    __slots__ = ("_nbests",)

    def __init__(self, nbests: Sequence[ImmutableSentencePieceText]) -> None:
        self._nbests = list(nbests)

    nbests = property(lambda self: list(self._nbests))

    def _wire(self, byte_offsets: bool) -> bytes:
        return b"".join(_bytes_field(1, n._wire(byte_offsets)) for n in self._nbests)

    def SerializeAsString(self) -> bytes:
        return self._wire(False)

    def _key(self) -> tuple[object, ...]:
        return tuple(n._key() for n in self._nbests)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ImmutableNBestSentencePieceText) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        lines = []
        for n in self._nbests:
            lines += ["nbests {", *n._text_lines(), "}"]
        return "\n".join(lines) + "\n" if lines else ""

    __repr__ = __str__
