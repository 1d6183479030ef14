"""Documents held in Arrow string columns: Parquet shards, `pyarrow` tables and arrays, and
Hugging Face `datasets` objects, handed to Rust as one data buffer and one offsets buffer per
batch — never one Python string per document.

`pyarrow` is optional (``pip install 'tokenmill[parquet]'``) and imported only when a column is read.

Designs weighed: the Rust entry points take `bytes`, so each batch's data buffer is copied once
(`Buffer.to_pybytes`, one memcpy); PyO3's `&[u8]` refuses memoryviews and Arrow
buffers, and taking a `PyBuffer` in Rust would remove the copy at the price of unsafe code for a
few percent. Joining the per-document strings in Python (`to_pylist`) was the alternative to
buffers and costs a Python object per document. Decoding Parquet pages (~3 s per GB, one core) is
what remains; it runs on a read-ahead thread while Rust counts the previous batch.

>>> import pyarrow as pa
>>> column_buffers(pa.array(["ab", None, "c"]))   # (data, offsets, offset width): None is ""
(b'abc', b'\\x00\\x00\\x00\\x00\\x02\\x00\\x00\\x00\\x02\\x00\\x00\\x00\\x03\\x00\\x00\\x00', 4)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tokenmill import _core

PARQUET_SUFFIXES = (".parquet", ".pq")
# Rows per Arrow batch read from a Parquet file; batches are joined up to _BATCH_BYTES of text
# before they go to Rust, so every thread gets work and the per-call cost is paid rarely.
_ROWS_PER_READ = 8192
_BATCH_BYTES = 16 << 20
DEFAULT_COLUMN = "text"


def is_parquet(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() in PARQUET_SUFFIXES


def import_pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise _core.ConfigError(
            "reading Parquet and Arrow columns needs pyarrow: pip install 'tokenmill[parquet]'"
        ) from None
    return pyarrow


def column_buffers(array: Any) -> tuple[bytes, bytes, int]:
    """An Arrow string array → (data, offsets, offset width) for `WordCounter.add_column` and
    `CoreTokenizer.encode_column`: offsets little-endian int32 (``string``) or int64
    (``large_string``), one more than the documents, absolute into `data`. Nulls become empty
    documents; a sliced array passes only its own bytes."""
    pa = import_pyarrow()
    import pyarrow.compute as pc

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    if pa.types.is_string_view(array.type) or pa.types.is_dictionary(array.type):
        array = array.cast(pa.large_string())
    if pa.types.is_string(array.type):
        width, offset_type = 4, pa.int32()
    elif pa.types.is_large_string(array.type):
        width, offset_type = 8, pa.int64()
    else:
        raise _core.FormatError(f"the text column holds {array.type}, not strings")
    if array.null_count:
        # A null slot's offsets may enclose bytes (Arrow allows it): make it an empty document.
        array = pc.fill_null(array, "")
    n = len(array)
    if n == 0:
        return b"", (0).to_bytes(width, "little"), width
    _, offsets_buf, data_buf = array.buffers()
    offsets = pa.Array.from_buffers(offset_type, n + 1, [None, offsets_buf], offset=array.offset)
    first, last = offsets[0].as_py(), offsets[n].as_py()
    if first:
        offsets = pc.subtract(offsets, pa.scalar(first, offset_type))
        offsets_bytes = offsets.buffers()[1].to_pybytes()[: (n + 1) * width]
    else:
        offsets_bytes = offsets_buf.slice(array.offset * width, (n + 1) * width).to_pybytes()
    data = data_buf.slice(first, last - first).to_pybytes() if data_buf is not None else b""
    return data, offsets_bytes, width


def text_column(table: Any, column: str, where: str) -> Any:
    """The string column `column` of an Arrow table or record batch, or a `FormatError` naming
    the columns there are."""
    names = list(table.schema.names)
    if column not in names:
        raise _core.FormatError(f"{where}: no column {column!r} (columns: {', '.join(map(repr, names)) or 'none'})")
    return table.column(column)


def parquet_batches(path: str | os.PathLike[str], column: str) -> Iterator[Any]:
    """The text column of a Parquet file as Arrow arrays of about `_BATCH_BYTES` of text."""
    pa = import_pyarrow()
    import pyarrow.parquet as pq

    name = os.fspath(path)
    try:
        reader = pq.ParquetFile(name)
    except FileNotFoundError:
        raise _core.CorpusError(f"{name}: no such file") from None
    except OSError as e:
        raise _core.CorpusError(f"{name}: {e.strerror}") from None
    except (pa.ArrowInvalid, pa.ArrowException) as e:
        raise _core.FormatError(f"{name}: not a Parquet file ({e})") from None
    schema = reader.schema_arrow
    if column not in schema.names:
        cols = ", ".join(map(repr, schema.names)) or "none"
        raise _core.FormatError(f"{name}: no column {column!r} (columns: {cols})")
    kind = schema.field(column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)):
        raise _core.FormatError(f"{name}: column {column!r} holds {kind}, not strings")
    pending: list[Any] = []
    size = 0
    try:
        for batch in reader.iter_batches(batch_size=_ROWS_PER_READ, columns=[column]):
            array = batch.column(0)
            pending.append(array)
            size += array.nbytes
            if size >= _BATCH_BYTES:
                yield _concat(pending)
                pending, size = [], 0
    except (pa.ArrowInvalid, pa.ArrowException, OSError) as e:
        raise _core.FormatError(f"{name}: damaged Parquet file ({e})") from None
    if pending:
        yield _concat(pending)


def _concat(arrays: list[Any]) -> Any:
    if len(arrays) == 1:
        return arrays[0]
    pa = import_pyarrow()
    types = {a.type for a in arrays}
    if len(types) > 1:
        arrays = [a.cast(pa.large_string()) for a in arrays]
    return pa.concat_arrays(arrays)


def arrow_batches(obj: Any, column: str) -> Iterator[Any] | None:
    """The text column of an in-memory Arrow object (table, record batch, array, chunked array)
    or a Hugging Face `datasets.Dataset`, in batches; None for anything else."""
    module = type(obj).__module__ or ""
    if module.startswith("pyarrow"):
        pa = import_pyarrow()
        if isinstance(obj, (pa.Table, pa.RecordBatch)):
            return _chunks(text_column(obj, column, "the Arrow table"))
        if isinstance(obj, (pa.Array, pa.ChunkedArray)):
            return _chunks(obj)
        return None
    if module.startswith("datasets.") and hasattr(obj, "with_format") and hasattr(obj, "column_names"):
        if not hasattr(obj, "num_rows"):
            return None  # an IterableDataset: its rows are dicts, read as such
        if column not in obj.column_names:
            cols = ", ".join(map(repr, obj.column_names))
            raise _core.FormatError(f"the dataset has no column {column!r} (columns: {cols})")
        return _dataset_batches(obj, column)
    return None


def _chunks(array: Any) -> Iterator[Any]:
    chunks = array.chunks if hasattr(array, "chunks") else [array]
    pending: list[Any] = []
    size = 0
    for chunk in chunks:
        pending.append(chunk)
        size += chunk.nbytes
        if size >= _BATCH_BYTES:
            yield _concat(pending)
            pending, size = [], 0
    if pending:
        yield _concat(pending)


def _dataset_batches(dataset: Any, column: str) -> Iterator[Any]:
    # Arrow batches straight from the dataset's memory-mapped table (its row selection applied).
    arrow = dataset.select_columns([column]).with_format("arrow")
    for batch in arrow.iter(batch_size=_ROWS_PER_READ * 4):
        yield from _chunks(batch.column(column))


def count_column_batches(counter: _core.WordCounter, batches: Iterator[Any]) -> Iterator[int]:
    """Counts each batch; yields the bytes of text of each as it goes (for progress)."""
    for data, offsets, width in prefetched_buffers(batches):
        counter.add_column(data, offsets, width)
        yield len(data)


def prefetched_buffers(batches: Iterator[Any]) -> Iterator[tuple[bytes, bytes, int]]:
    """`column_buffers` of each batch, the next one read and decoded on a second thread while
    the caller works on this one (Arrow and the Rust calls both release the GIL, so the reading
    fills the moments the counting threads wait on their serial merge)."""
    from concurrent.futures import ThreadPoolExecutor

    def take() -> tuple[bytes, bytes, int] | None:
        array = next(batches, None)
        return None if array is None else column_buffers(array)

    with ThreadPoolExecutor(1, thread_name_prefix="tokenmill-read") as pool:
        ahead = pool.submit(take)
        while True:
            item = ahead.result()
            if item is None:
                return
            ahead = pool.submit(take)
            yield item
