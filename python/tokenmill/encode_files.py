"""Files of documents → token ids in two NumPy arrays, read and encoded in Rust on all cores
(`src/io/documents.rs`): no Python string per document, no Python int per token.

>>> import tokenmill
>>> with open("docs.txt", "w") as f:
...     _ = f.write("hello world\\n\\nsecond document")
>>> tok = tokenmill.train_bpe(["hello world second document"] * 3, vocab_size=270)
>>> ids, offsets = encode_files(tok, "docs.txt", separator="\\n\\n")
>>> [tok.decode(ids[a:b].tolist()) for a, b in zip(offsets[:-1], offsets[1:])]
['hello world', 'second document']
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from tokenmill import _checks, _core
from tokenmill.corpus import resolve_files

if TYPE_CHECKING:
    import numpy as np

    from tokenmill.tokenizer import Tokenizer


def encode_files(
    tokenizer: Tokenizer,
    files: str | os.PathLike[str] | Collection[str | os.PathLike[str]],
    *,
    separator: str | None = None,
    text_field: str | None = None,
    allowed_special: str | Collection[str] = (),
    num_threads: int | None = None,
) -> tuple[np.ndarray[Any, np.dtype[np.uint32]], np.ndarray[Any, np.dtype[np.uint64]]]:
    """The ids of every document of `files` (paths, a directory or a glob; plain, `.gz`, `.zst`)
    as one flat `uint32` array, and `offsets` (`uint64`, one more than the documents): document
    j is ``ids[offsets[j]:offsets[j + 1]]``, in file order.

    A text file is one document, or with `separator` the pieces between its occurrences (empty
    pieces are no documents); with `text_field`, each line of a JSON Lines file is an object
    whose field holds a document (null is an empty one). Special-token text is ordinary text
    unless `allowed_special` names it (or is ``"all"``). Needs numpy.
    """
    import numpy as np

    paths = resolve_files(files)
    if paths is None:
        raise _core.ConfigError(f"files must name files (paths, a directory or a glob), not {type(files).__name__}")
    _checks.text("separator", separator, optional=True, nonempty=True)
    _checks.text("text_field", text_field, optional=True, nonempty=True)
    if allowed_special != "all":
        allowed_special = frozenset(_checks.texts("allowed_special", allowed_special))
    ids: list[bytes] = []
    counts: list[bytes] = []

    def keep(batch_ids: bytes, batch_counts: bytes, _read: int) -> None:
        ids.append(batch_ids)
        counts.append(batch_counts)

    tokenizer._core.encode_files_flat(
        [os.fspath(p) for p in paths],
        separator,
        text_field,
        allowed_special,
        None,
        4,
        _checks.threads(num_threads),
        keep,
    )
    flat = np.frombuffer(b"".join(ids), dtype="<u4")
    offsets = np.zeros(sum(len(c) for c in counts) // 8 + 1, dtype=np.uint64)
    np.cumsum(np.frombuffer(b"".join(counts), dtype="<u8"), out=offsets[1:])
    return flat, offsets
