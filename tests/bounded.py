"""Running one hostile input in a forked child with a memory and a time limit, so that a crash,
an abort or a hang is a test failure that names the input — not a dead or stuck test run.

    outcome = bounded(load_and_use, path)  # in the child: returns, or raises
    assert outcome.ok or outcome.error in ALLOWED

The child inherits everything the test built (fork), gets an address-space limit of what it
already maps plus `memory` bytes, and reports back through a pipe either its return value's
repr or its exception's class and message. The parent fails the test if the child dies by a
signal, exits without reporting, or outlives `seconds`.
"""

from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

# On top of what the process maps already: glibc reserves 64 MB of address space per thread
# arena and the thread pool's stacks, so the budget is generous for what a small input needs.
MEMORY = 3 << 30
SECONDS = 30.0


@dataclass(frozen=True)
class Outcome:
    """What the child did: returned (`value` is its repr) or raised (`error` is the class name,
    `classes` its class and the classes it derives from)."""

    value: str | None = None
    error: str | None = None
    classes: tuple[str, ...] = ()
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


def _mapped_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _child(write_fd: int, memory: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    code = 0
    try:
        limit = _mapped_bytes() + memory
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        try:
            result: tuple[str, str, str, tuple[str, ...]] = ("ok", repr(fn(*args))[:2000], "", ())
        except BaseException as e:  # noqa: BLE001 - every exception is reported, by class
            tb = "".join(traceback.format_exception(e))[-4000:]
            classes = tuple(c.__name__ for c in type(e).__mro__)
            result = ("raised", type(e).__name__, f"{e}"[:2000] + "\n" + tb, classes)
        os.write(write_fd, pickle.dumps(result))
    except BaseException:  # noqa: BLE001 - the parent sees the missing report
        code = 3
    finally:
        os._exit(code)


def bounded(fn: Callable[..., Any], *args: Any, memory: int = MEMORY, seconds: float = SECONDS) -> Outcome:
    """Runs `fn(*args)` in a forked child; fails the calling test on a signal death or a hang."""
    sys.stdout.flush()
    sys.stderr.flush()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(write_fd, memory, fn, args)
    os.close(write_fd)
    chunks, deadline, status = [], time.monotonic() + seconds, None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                status = "hung"
                break
            ready, _, _ = select.select([read_fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(read_fd, 1 << 16)
                if chunk:
                    chunks.append(chunk)
                    continue
                _, raw = os.waitpid(pid, 0)
                status = raw
                break
    finally:
        os.close(read_fd)
    what = f"{getattr(fn, '__name__', fn)}{args!r}"[:600]
    if status == "hung":
        pytest.fail(f"no answer within {seconds:.0f} s (killed): {what}")
    assert isinstance(status, int)
    if os.WIFSIGNALED(status):
        pytest.fail(f"the child died of {signal.Signals(os.WTERMSIG(status)).name}: {what}")
    if not chunks or os.WEXITSTATUS(status) != 0:
        pytest.fail(f"the child exited with status {os.WEXITSTATUS(status)} without an answer: {what}")
    kind, first, message, classes = pickle.loads(b"".join(chunks))
    return Outcome(value=first) if kind == "ok" else Outcome(error=first, classes=classes, message=message)


def expect_clean(outcome: Outcome, allowed: tuple[type[BaseException], ...], what: object) -> None:
    """Fails unless the child returned or raised one of `allowed` (by class name)."""
    names = {cls.__name__ for cls in allowed}
    if outcome.error is not None and not names.intersection(outcome.classes):
        pytest.fail(f"{outcome.error} (not one of {sorted(names)}) for {what!r:.600}:\n{outcome.message}")
