"""Writing files atomically from Python (the Rust side has its own for tokenmill's format)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tokenmill import _core


def write_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    """Writes to a temporary file beside `path`, then renames it over `path`."""
    p = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    except OSError as e:
        raise _core.CorpusError(f"{p}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise _core.CorpusError(f"{p}: {e.strerror}") from None
        raise
