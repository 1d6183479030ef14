"""What sentencepiece's methods take and refuse, shared by the processor's parts: output types,
texts, the error both releases' callers catch, and offsets between characters and bytes.

>>> resolve(None, str, int)
<class 'str'>
>>> byte_offsets("é!")
[0, 2, 3]
"""

from __future__ import annotations

from typing import Any

from tokenmill import _checks

PROTO_TYPES = ("serialized_proto", "immutable_proto")
# Output types: sentencepiece 0.2.1's (`out_type`) and 0.2.3's (`return_type`: bytes, NumPy
# arrays, offset mappings).
ENCODE_TYPES = (int, str, bytes, *PROTO_TYPES, "numpy", "offset_mapping")
DECODE_TYPES = (str, bytes, *PROTO_TYPES, "offset_mapping")

# A cut's pieces from the core: (id, normalized text, start, end) with character offsets.
Piece = tuple[int, str, int, int]


class RefusedError(RuntimeError, ValueError):
    """An argument sentencepiece refuses (an unknown output type, sampling without its
    settings, `add_bos` on a model without `<s>`): 0.2.1 raised RuntimeError, 0.2.3
    ValueError; this is both."""


def resolve(return_type: object, out_type: object, default: object) -> Any:
    """`out_type` (0.2.1's name) or `return_type` (0.2.3's), not both; `default` for neither."""
    if out_type is not None and return_type is not None:
        raise ValueError("Cannot specify both out_type and return_type. Use return_type instead.")
    chosen = out_type if out_type is not None else return_type
    return default if chosen is None else chosen


def thread_count(num_threads: object, default: object, pool: Any) -> int | None:
    """The threads a batch call runs on: a `ThreadPool`'s, else `num_threads` (the processor's
    `default` for None; below 1: all), else all (None)."""
    if num_threads is None:
        num_threads = default
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise TypeError("num_threads must be int")
    if pool is not None:
        return int(pool.num_threads())
    return None if num_threads < 1 else num_threads


def as_text(value: object, batch: bool = False) -> str:
    """A text to encode: `str`, or UTF-8 `bytes` (invalid bytes read as U+FFFD)."""
    if isinstance(value, str):
        return _checks.without_surrogates(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    raise TypeError("List elements must be str or bytes" if batch else "Input must be str or bytes")


def refuse_options(out_type: object, opts: dict[str, bool]) -> None:
    """Protos and offset mappings show the cut as it is: no added or reversed pieces."""
    if out_type in (*PROTO_TYPES, "offset_mapping") and any(opts.values()):
        raise RuntimeError("Unimplemented: add_bos, add_eos, reverse, and emit_unk_piece is not supported in proto API")


def as_asked(proto: Any, out_type: object) -> Any:
    """A proto object, or its wire bytes (with byte offsets) for ``"serialized_proto"``."""
    return proto._wire(True) if out_type == "serialized_proto" else proto


def char_index(text: str) -> list[int]:
    """For each byte offset of `text` (and its end), the index of the character it falls in."""
    out = []
    for n, ch in enumerate(text):
        out.extend([n] * len(ch.encode("utf-8")))
    out.append(len(text))
    return out


def byte_offsets(text: str) -> list[int]:
    """For each character offset of `text` (and its end), its byte offset."""
    out, at = [0], 0
    for ch in text:
        at += len(ch.encode("utf-8"))
        out.append(at)
    return out
