"""`SentencePieceProcessor._processor`: the low-level decode methods of sentencepiece 0.2.3's
compiled binding (`_DecodeIds`, `_DecodePiecesBatch`, `_DecodeAsOffsetMappingBatch`…), which
its Python class calls and its tests call directly. Each is `Decode` with the output type its
name says; a batch's length is read once.

>>> from tokenmill.sentencepiece import SentencePieceProcessor
>>> sp = SentencePieceProcessor(model_file="spm.model")
>>> sp._processor._DecodePiecesBatch([["▁", "he", "ll", "o"], ["▁world"]], 1, None)
['hello', 'world']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tokenmill.sentencepiece import id_inputs


class Binding:
    """A processor's low-level decode methods, by sentencepiece's names."""

    __slots__ = ("_processor",)

    def __init__(self, processor: Any) -> None:
        self._processor = processor

    def _decode(self, input: Any, out_type: object, return_bytes: bool | None = None) -> Any:
        return self._processor.Decode(input, return_type=out_type, return_bytes=return_bytes)

    def _decode_batch(self, batch: Any, out_type: object, return_bytes: bool | None = None) -> list[Any]:
        sequences = id_inputs.items(batch)
        if not sequences:
            return []
        return self._decode(sequences, out_type, return_bytes)  # type: ignore[no-any-return]

    def _DecodeAsOffsetMapping(self, input: Any, return_bytes: bool) -> Any:
        return self._decode(input, "offset_mapping", return_bytes)

    def _DecodeAsOffsetMappingBatch(self, batch: Any, num_threads: int, thread_pool: object, return_bytes: bool) -> Any:
        return self._decode_batch(batch, "offset_mapping", return_bytes)


def _single(out_type: object) -> Callable[[Binding, Any], Any]:
    def decode(self: Binding, input: Any) -> Any:
        return self._decode(input, out_type)

    return decode


def _batch(out_type: object) -> Callable[[Binding, Any, int, object], Any]:
    def decode(self: Binding, batch: Any, num_threads: int, thread_pool: object) -> Any:
        return self._decode_batch(batch, out_type)

    return decode


for _kind in ("Ids", "Pieces"):
    for _suffix, _type in (("", str), ("AsBytes", bytes), ("AsSerializedProto", "serialized_proto")):
        setattr(Binding, f"_Decode{_kind}{_suffix}", _single(_type))
        setattr(Binding, f"_Decode{_kind}{_suffix}Batch", _batch(_type))
