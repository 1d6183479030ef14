"""Decoding, part of `SentencePieceProcessor`: ids or pieces back to text, bytes, a proto or an
offset mapping, one sequence or a batch, as sentencepiece 0.2.3 takes them (lists, tuples,
NumPy arrays of any integer type, lists of arrays, 2-D arrays).

>>> import numpy
>>> from tokenmill.sentencepiece import SentencePieceProcessor
>>> sp = SentencePieceProcessor(model_file="spm.model")
>>> sp.encode("hello")
[3, 37, 91, 11]
>>> sp.decode(numpy.array([[3, 37, 91, 11], [3, 37, 91, 11]]), return_type=bytes)
[b'hello', b'hello']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tokenmill.sentencepiece import id_inputs
from tokenmill.sentencepiece.arguments import DECODE_TYPES, RefusedError, as_asked, resolve, thread_count
from tokenmill.sentencepiece.proto import ImmutableSentencePiece, ImmutableSentencePieceText

# One sequence to decode: ids (False) or pieces (True), and its items.
_Sequence = tuple[bool, list[Any]]


class Decoding:
    """The processor's decoding methods (a part of `SentencePieceProcessor`)."""

    _core: Any
    _unk: int
    _num_threads: int
    _pieces: Any
    PieceToId: Any
    _in_range: Any

    def Decode(
        self,
        input: Any,
        out_type: type | str | None = None,
        num_threads: int | None = None,
        thread_pool: object = None,
        return_type: type | str | None = None,
        return_bytes: bool | None = None,
    ) -> Any:
        """Ids or pieces back to text (`out_type=str`), `bytes`, a proto, or the text with each
        piece's place (`"offset_mapping"`, with byte offsets and bytes for `return_bytes=True`);
        a batch (a list of sequences, a 2-D array) decodes each. Pieces given as bytes give
        bytes back."""
        out_type = resolve(return_type, out_type, str)
        if out_type not in DECODE_TYPES:
            raise RefusedError(f"unknown return_type={out_type} or input type")
        if return_bytes is not None and out_type != "offset_mapping":
            raise ValueError("return_bytes is only supported when return_type='offset_mapping'")
        thread_count(num_threads, self._num_threads, thread_pool)
        batch, sequences = _sequences(input)
        decoded = [self._decode_one(seq, out_type, bool(return_bytes)) for seq in sequences]
        return decoded if batch else decoded[0]

    def _decode_one(self, sequence: _Sequence, out_type: object, return_bytes: bool = False) -> Any:
        """One sequence as `out_type` asks."""
        is_pieces, items = sequence
        if is_pieces:
            # sentencepiece answers pieces given as bytes with bytes.
            return_bytes = return_bytes or any(isinstance(x, bytes) for x in items)
            pieces = [x.decode("utf-8", errors="replace") if isinstance(x, bytes) else x for x in items]
            parts, ids = self._decode_pieces(pieces)
            raw = b"".join(parts)
            if out_type is str and return_bytes:
                return raw
        else:
            ids = [self._in_range(i) for i in items]
            if out_type in (str, bytes):
                raw = self._core.decode_bytes(ids) if ids else b""
                return raw if out_type is bytes else raw.decode("utf-8", errors="replace")
            parts = self._core.decode_parts(ids) if ids else []
            spelled = self._pieces()
            pieces = [spelled[i] for i in ids]
            raw = b"".join(parts)
        if out_type is bytes:
            return raw
        text = raw.decode("utf-8", errors="replace")
        if out_type is str:
            return text
        proto = self._decoded_proto(text, pieces, ids, parts)
        if out_type != "offset_mapping":
            return as_asked(proto, out_type)
        if return_bytes:
            return {
                "text": raw,
                "ids": ids,
                "pieces": [p.encode("utf-8") for p in pieces],
                "offsets": [p._byte_span for p in proto._pieces],
            }
        return {"text": text, "ids": ids, "pieces": pieces, "offsets": [(p.begin, p.end) for p in proto._pieces]}

    def _decode_pieces(self, pieces: list[str]) -> tuple[list[bytes], list[int]]:
        """Each piece's bytes in the decoded text: pieces of the vocabulary decode as their ids
        do; a piece it lacks stands for itself, as written, in the place of an unknown piece
        (so the pieces around it decode as they would around one)."""
        ids = [self.PieceToId(p) for p in pieces]
        spelled = self._pieces()
        parts = self._core.decode_parts(ids) if ids else []
        for k, (p, i) in enumerate(zip(pieces, ids, strict=True)):
            if i == self._unk and p != spelled[i]:
                parts[k] = p.encode("utf-8")
        return parts, ids

    def _decoded_proto(
        self, text: str, pieces: list[str], ids: list[int], parts: list[bytes]
    ) -> ImmutableSentencePieceText:
        out, byte_at, char_at = [], 0, 0
        kind = self._core.token_kind
        k = 0
        while k < len(parts):
            # Byte pieces that spell a character together: as sentencepiece's decoder reports
            # them, the last carries the character (its whole span) and those before it an
            # empty surface (set, unlike the encoder's), placed where it starts.
            width = _char_spelled(parts, k, lambda m: kind(ids[m]) == "byte")
            if width > 1:
                char = b"".join(parts[k : k + width])
                for m in range(k, k + width - 1):
                    before = ImmutableSentencePiece(pieces[m], ids[m], "", char_at, char_at, (byte_at, byte_at))
                    out.append(before)
                last = k + width - 1
                span = (byte_at, byte_at + len(char))
                out.append(ImmutableSentencePiece(pieces[last], ids[last], char.decode(), char_at, char_at + 1, span))
                byte_at += len(char)
                char_at += 1
                k += width
                continue
            part = parts[k]
            surface = part.decode("utf-8", errors="replace")
            n = len(surface)
            span = (byte_at, byte_at + len(part))
            out.append(ImmutableSentencePiece(pieces[k], ids[k], surface, char_at, char_at + n, span))
            byte_at += len(part)
            char_at += n
            k += 1
        return ImmutableSentencePieceText(text, out)


def _char_spelled(parts: list[bytes], k: int, is_byte: Callable[[int], bool]) -> int:
    """How many byte pieces from `parts[k]` on spell one multi-byte UTF-8 character (0 if they
    do not)."""
    if not is_byte(k) or len(parts[k]) != 1 or parts[k][0] < 0xC2:
        return 0
    lead = parts[k][0]
    width = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    if k + width > len(parts) or not all(is_byte(m) and len(parts[m]) == 1 for m in range(k + 1, k + width)):
        return 0
    try:
        b"".join(parts[k : k + width]).decode()
    except UnicodeDecodeError:
        return 0
    return width


def _sequences(value: Any) -> tuple[bool, list[_Sequence]]:
    """Decode's input as (is it a batch, its sequences): an id, a piece, a sequence of either,
    or a batch of sequences, whose kind the first non-empty one tells."""
    if value is None or isinstance(value, (str, bytes)) and not value:
        value = []
    if id_inputs.is_array(value) and value.ndim == 2:
        id_inputs.check_array(value, ndim=2)
        return True, [(False, id_inputs.id_list(row)) for row in value]
    if not id_inputs.is_sequence(value):
        value = [value]
    items = id_inputs.items(value)
    if not items or not id_inputs.is_sequence(items[0]):
        return False, [_sequence(value, items, _holds_pieces(value, items))]
    kind = next((_holds_pieces(x, None) for x in items if id_inputs.is_sequence(x) and len(x)), False)
    return True, [_sequence(x, None, kind) for x in items]


def _holds_pieces(sequence: Any, items: list[Any] | None) -> bool:
    if id_inputs.is_array(sequence) or not (items if items is not None else len(sequence)):
        return False
    first = items[0] if items is not None else sequence[0]
    return isinstance(first, (str, bytes))


def _sequence(value: Any, items: list[Any] | None, is_pieces: bool) -> _Sequence:
    if not is_pieces:
        return False, id_inputs.id_list(value)
    if not id_inputs.is_sequence(value):
        raise TypeError(id_inputs.NOT_IDS)
    items = id_inputs.items(value) if items is None else items
    if not all(isinstance(x, (str, bytes)) for x in items):
        raise TypeError("List elements must be str or bytes")
    return True, items
