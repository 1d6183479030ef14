"""Writing files atomically from Python (Rust's writer, for tokenmill's own formats, names and
creates its temporary files the same way: `src/io/serialize.rs`).

A save writes `.NAME.PID.NONCE.tmp` beside `NAME`, then renames it over `NAME`. The file gets the
mode any new file gets (0o666 less the umask), as Rust's writer and `open()` give. A save that
was killed leaves its temporary file behind; the next save of the same target removes those of
processes that no longer run (see `remove_stale_temp_files`).
"""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

from tokenmill import _core

# A temporary file untouched for this long, whose process is gone, is not being written. (A live
# writer touches its file with every write; the age also protects a writer on another machine
# sharing the directory, whose pid means nothing here.)
STALE_AFTER_SECONDS = 60.0


def input_file(path: str | os.PathLike[str], what: str) -> Path:
    """`path` as a regular file to read, or a `CorpusError` saying what it is instead: missing,
    a directory, or not a regular file (reading a FIFO or a device would wait for ever).

    >>> try:
    ...     input_file("/", "a tokenizer.json")
    ... except _core.CorpusError as e:
    ...     print(e)
    /: is a directory, not a tokenizer.json
    """
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        raise _core.CorpusError(f"{p}: no such file") from None
    except OSError as e:
        raise _core.CorpusError(f"{p}: cannot be read ({e.strerror})") from None
    if stat.S_ISDIR(mode):
        raise _core.CorpusError(f"{p}: is a directory, not {what}")
    if not stat.S_ISREG(mode):
        raise _core.CorpusError(f"{p}: is not a regular file (a pipe or a device), not {what}")
    return p


def temp_name(name: str, pid: int, nonce: str) -> str:
    return f".{name}.{pid}.{nonce}.tmp"


def _temp_pattern(name: str) -> re.Pattern[str]:
    """Our names for temporary files of `name`: `.NAME.PID.NONCE.tmp` (both writers), and
    `.NAME.tmpPID` (Rust's writer before version 0.2); the pid is the writer's."""
    n = re.escape(name)
    return re.compile(rf"\.{n}\.(?:(?P<pid>[0-9]+)\.[0-9a-f]{{8}}\.tmp|tmp(?P<rust_pid>[0-9]+))")


def _process_is_gone(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, OSError):
        return False  # alive under another user, or not a pid we can ask about: keep its file
    return False


def remove_stale_temp_files(path: str | os.PathLike[str]) -> list[Path]:
    """Removes temporary files of `path` left by killed saves: only names of our own pattern,
    only of processes that are gone, only when untouched for `STALE_AFTER_SECONDS`. Returns
    what was removed; errors are ignored (a stale file is untidy, never wrong)."""
    p = Path(path)
    pattern = _temp_pattern(p.name)
    removed = []
    try:
        entries = list(os.scandir(p.parent if str(p.parent) else "."))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if not m:
            continue
        pid = int(m.group("pid") or m.group("rust_pid"))
        try:
            stat = entry.stat(follow_symlinks=False)
            if pid == os.getpid() or not entry.is_file(follow_symlinks=False):
                continue
            if now - stat.st_mtime < STALE_AFTER_SECONDS or not _process_is_gone(pid):
                continue
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
    return removed


def write_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    """Writes to a temporary file beside `path`, then renames it over `path`."""
    p = Path(path)
    if not p.name:
        raise _core.ConfigError(f"{p}: not a file path")
    remove_stale_temp_files(p)
    tmp = p.parent / temp_name(p.name, os.getpid(), os.urandom(4).hex())
    try:
        # Not tempfile.mkstemp: it creates files with mode 0o600 whatever the umask.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
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
