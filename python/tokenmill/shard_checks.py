"""What `TokenShards` checks before it reads a token-shard directory: every field of
`manifest.json` against what it describes — the dtype against `n_vocab`, each shard's counts
against its files' sizes, the document starts against the token count, the ids against
`n_vocab`, packed rows against `sequence_length` — so that a damaged or hand-edited directory
is a `FormatError` naming the file and the field, never a crash, a bare exception or ids read
wrongly.

>>> checked_manifest(Path("m.json"), {"n_vocab": 300, "dtype": "<u2", "sequence_length": None, "shards": []})["dtype"]
'<u2'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tokenmill import _core

# The id dtypes a directory may hold, by their width in bytes.
WIDTHS = {"<u2": 2, "<u4": 4}
# Counts beyond this are not counts of anything a file holds.
_LARGEST = 2**62


def _is_count(value: object, minimum: int = 0) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= _LARGEST


def checked_manifest(path: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """`manifest` (read from `path`), its fields checked for type and agreement."""

    def bad(field: str, why: str) -> _core.FormatError:
        return _core.FormatError(f"{path}: {field} {why}")

    n_vocab = manifest.get("n_vocab")
    if not _is_count(n_vocab, 1):
        raise bad("n_vocab", f"must be a positive integer, not {n_vocab!r}")
    dtype = manifest.get("dtype")
    if not isinstance(dtype, str) or dtype not in WIDTHS:
        raise bad("dtype", f"must be '<u2' or '<u4', not {dtype!r}")
    if dtype == "<u2" and n_vocab > 2**16:
        raise bad("dtype", f"'<u2' cannot hold the ids of {n_vocab} tokens (n_vocab)")
    length = manifest.get("sequence_length")
    if length is not None and not _is_count(length, 1):
        raise bad("sequence_length", f"must be a positive integer or null, not {length!r}")
    shards = manifest.get("shards")
    if not isinstance(shards, list):
        raise bad("shards", f"must be a list, not {type(shards).__name__}")
    seen: set[int] = set()
    for k, entry in enumerate(shards):
        if not isinstance(entry, dict):
            raise bad(f"shards[{k}]", "must be an object")
        for field in ("index", "documents", "tokens"):
            if not _is_count(entry.get(field)):
                raise bad(f"shards[{k}].{field}", f"must be a non-negative integer, not {entry.get(field)!r}")
        if entry["index"] in seen:
            raise bad(f"shards[{k}].index", f"{entry['index']} is listed twice")
        seen.add(entry["index"])
        if entry.get("rows") is not None:
            if length is None:
                raise bad(f"shards[{k}].rows", "is given without sequence_length")
            for field in ("rows", "cu_seqlens"):
                if not _is_count(entry.get(field)):
                    raise bad(f"shards[{k}].{field}", f"must be a non-negative integer, not {entry.get(field)!r}")
    return manifest


def _file_size(path: Path, expected: int, what: str) -> None:
    """A `FormatError` unless `path` is a regular file of `expected` bytes (`what` says why)."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise _core.FormatError(f"{path}: cannot be read ({e.strerror})") from None
    if not path.is_file():
        raise _core.FormatError(f"{path}: not a regular file")
    if size != expected:
        raise _core.FormatError(f"{path}: {size} bytes, where the manifest's {what} make {expected}")


def checked_shard(stem: Path, entry: dict[str, Any], manifest: dict[str, Any]) -> tuple[Any, Any]:
    """Shard `entry`'s ids (memory-mapped) and document starts, its files (`stem` + suffix)
    checked against the manifest: sizes, starts rising from 0 to the token count, ids below
    n_vocab, and (packing) the rows and their cu_seqlens."""
    import numpy as np

    dtype, width = manifest["dtype"], WIDTHS[manifest["dtype"]]
    tokens, documents = entry["tokens"], entry["documents"]
    bin_path, idx_path = stem.with_suffix(".bin"), stem.with_suffix(".idx")
    _file_size(bin_path, tokens * width, f"tokens ({tokens}) of {width} bytes")
    _file_size(idx_path, 8 * (documents + 1), f"documents ({documents}) + 1 starts of 8 bytes")
    starts = np.fromfile(idx_path, dtype="<u8")
    if starts[0] != 0 or starts[-1] != tokens or np.any(np.diff(starts.astype(np.int64)) < 0):
        raise _core.FormatError(f"{idx_path}: document starts must rise from 0 to the shard's tokens ({tokens})")
    ids = np.memmap(bin_path, dtype=dtype, mode="r") if tokens else np.zeros(0, dtype=dtype)
    if tokens and int(ids.max()) >= manifest["n_vocab"]:
        raise _core.FormatError(f"{bin_path}: id {int(ids.max())} is not below n_vocab ({manifest['n_vocab']})")
    return ids, starts


def checked_rows(stem: Path, entry: dict[str, Any], manifest: dict[str, Any]) -> tuple[Any, Any]:
    """Shard `entry`'s packed rows: cu_seqlens and where each row's start, checked."""
    import numpy as np

    length, rows, count = manifest["sequence_length"], entry.get("rows"), entry.get("cu_seqlens")
    if length is None or rows is None:
        raise _core.ConfigError(f"{stem.parent}: the shards were written without sequence_length")
    if rows * length > entry["tokens"]:
        raise _core.FormatError(f"{stem.parent / 'manifest.json'}: {rows} rows of {length} need more than its tokens")
    cu_path, rows_path = stem.with_suffix(".cu.bin"), stem.with_suffix(".cu.idx")
    _file_size(cu_path, 4 * count, f"cu_seqlens ({count}) of 4 bytes")
    _file_size(rows_path, 8 * (rows + 1), f"rows ({rows}) + 1 starts of 8 bytes")
    cu = np.fromfile(cu_path, dtype="<i4")
    starts = np.fromfile(rows_path, dtype="<u8")
    if starts[0] != 0 or starts[-1] != count or np.any(np.diff(starts.astype(np.int64)) < 2):
        raise _core.FormatError(f"{rows_path}: row starts must rise from 0 to cu_seqlens ({count}), two or more apart")
    if count and (int(cu.min()) < 0 or int(cu.max()) > length):
        raise _core.FormatError(f"{cu_path}: cu_seqlens must lie within 0..sequence_length ({length})")
    return cu, starts
