"""Ids in and out the way sentencepiece 0.2.3 takes and gives them: an id, a sequence of ids
(a list, a tuple, a 1-D NumPy array of any integer type) or a batch of them (a list of those, a
2-D array), and read-only `int32` NumPy arrays out. NumPy is optional and imported only when
an array is asked for.

>>> id_list((5, 6))
[5, 6]
>>> id_list("5")
Traceback (most recent call last):
...
TypeError: Input must be an integer buffer, list of integers, or a sequence of integers.
"""

from __future__ import annotations

import operator
from typing import Any

NOT_IDS = "Input must be an integer buffer, list of integers, or a sequence of integers."


def is_array(value: object) -> bool:
    """A NumPy array of one dimension or more (not a NumPy scalar)."""
    return hasattr(value, "dtype") and getattr(value, "ndim", 0) >= 1


def is_sequence(value: object) -> bool:
    """sentencepiece's test of a sequence: has a length and is not a text."""
    return hasattr(value, "__len__") and not isinstance(value, (str, bytes))


def check_array(value: Any, ndim: int = 1) -> None:
    """An integer array of `ndim` dimensions, or TypeError with sentencepiece's words."""
    if value.dtype.kind not in "iu":
        raise TypeError("Buffer must be of integer type")
    if value.ndim != ndim:
        raise TypeError("Buffer must be 1-dimensional")


def one_id(value: object) -> int:
    """An id: an int, a bool or a NumPy integer (anything with `__index__`)."""
    if isinstance(value, (str, bytes, float)):
        raise TypeError(NOT_IDS)
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(NOT_IDS) from None


def id_list(value: object) -> list[int]:
    """The ids of a sequence (a 1-D integer array included); TypeError for anything else."""
    if is_array(value):
        check_array(value)
        return [int(i) for i in value.tolist()]  # type: ignore[attr-defined]
    if not is_sequence(value):
        raise TypeError(NOT_IDS)
    return [one_id(x) for x in items(value)]


def items(value: Any) -> list[Any]:
    """A sequence's items, its length read once (a batch whose `__len__` changes between calls
    is read as it was at the first)."""
    return [value[i] for i in range(len(value))]


class VectorBuffer(bytearray):
    """The memory behind a NumPy array of ids (its `base.obj`, as in sentencepiece): native
    `int32`s that the array views without a copy and keeps alive."""

    def data_address(self) -> int:
        """The address of the first id (0 when there is none)."""
        if not self:
            return 0
        import ctypes

        return ctypes.addressof(ctypes.c_char.from_buffer(self))


def as_array(ids: list[int]) -> Any:
    """`ids` as a read-only `int32` NumPy array over a `VectorBuffer`."""
    np = _numpy()
    buffer = VectorBuffer(4 * len(ids))
    if ids:
        np.frombuffer(buffer, dtype=np.int32)[:] = ids
    return np.frombuffer(memoryview(buffer).cast("i").toreadonly(), dtype=np.int32)


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as e:
        raise ImportError("numpy is required when return_type='numpy': pip install numpy") from e
    return numpy
