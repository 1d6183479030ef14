"""A FlatBuffers writer with the layout rules of the C++ `FlatBufferBuilder`, enough for
sentencepiece's `.spm.fb` models: strings, scalar and offset vectors, tables with deduplicated
vtables. The buffer grows from its end towards its start, as the C++ builder's does, so that an
object's offset (`size` when it was finished) is counted from the end; padding goes in so that
each value is aligned both when written and in the final buffer.

>>> b = FlatBufferWriter()
>>> name = b.string(b"hi")
>>> b.start_table()
>>> b.add_offset(0, name)
>>> b.add_scalar(1, "<i", 7, 0)
>>> b.finish(b.end_table()).hex()
'0c00000008000c00080004000800000007000000040000000200000068690000'
"""

from __future__ import annotations

import struct


class FlatBufferWriter:
    def __init__(self) -> None:
        self._chunks: list[bytes | bytearray] = []  # in writing order; the buffer is their reverse
        self.size = 0
        self._min_align = 1
        self._vtables: list[tuple[int, bytes]] = []  # (offset, bytes) of every vtable written
        self._fields: list[tuple[int, int]] = []  # (field index, offset) of the open table
        self._table_start = 0

    def _push(self, data: bytes | bytearray) -> None:
        self._chunks.append(data)
        self.size += len(data)

    def pre_align(self, length: int, alignment: int) -> None:
        """Pads so that `length` bytes written next end aligned to `alignment`."""
        self._min_align = max(self._min_align, alignment)
        pad = -(self.size + length) % alignment
        if pad:
            self._push(bytes(pad))

    def _refer(self, offset: int) -> bytes:
        self.pre_align(0, 4)
        return struct.pack("<I", self.size - offset + 4)

    def string(self, data: bytes) -> int:
        self.pre_align(len(data) + 1, 4)
        self._push(data + b"\0")
        self._push(struct.pack("<I", len(data)))
        return self.size

    def vector(self, data: bytes, count: int, element_size: int, alignment: int = 0) -> int:
        """A vector of `count` scalars already packed little-endian in `data`; `alignment` forces
        its elements to a larger boundary (the schema's `force_align`)."""
        if alignment:
            self.pre_align(len(data), alignment)
        self.pre_align(len(data), 4)
        self.pre_align(len(data), element_size)
        self._push(data)
        self._push(struct.pack("<I", count))
        return self.size

    def offset_vector(self, offsets: list[int]) -> int:
        self.pre_align(4 * len(offsets), 4)
        for offset in reversed(offsets):
            self._push(self._refer(offset))
        self._push(struct.pack("<I", len(offsets)))
        return self.size

    def start_table(self) -> None:
        self._fields = []
        self._table_start = self.size

    def add_scalar(self, index: int, fmt: str, value: object, default: object) -> None:
        """Field `index` (its place in the schema) unless it equals its default, as the C++
        builder leaves defaults out."""
        if value == default:
            return
        data = struct.pack(fmt, value)
        self.pre_align(0, len(data))
        self._push(data)
        self._fields.append((index, self.size))

    def add_offset(self, index: int, offset: int) -> None:
        if offset:
            self._push(self._refer(offset))
            self._fields.append((index, self.size))

    def end_table(self) -> int:
        self.pre_align(0, 4)
        self._push(soffset := bytearray(4))
        table = self.size
        slots = 1 + max((index for index, _ in self._fields), default=-1)
        entries = [0] * slots
        for index, at in self._fields:
            entries[index] = table - at
        vtable = struct.pack(f"<{2 + slots}H", 4 + 2 * slots, table - self._table_start, *entries)
        where = next((at for at, known in self._vtables if known == vtable), None)
        if where is None:
            self._push(vtable)
            where = self.size
            self._vtables.append((where, vtable))
        soffset[:] = struct.pack("<i", where - table)
        return table

    def finish(self, root: int) -> bytes:
        self.pre_align(4, self._min_align)
        self._push(self._refer(root))
        return b"".join(reversed(self._chunks))
