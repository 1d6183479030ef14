"""Progress display: tqdm's (terminal or Jupyter widget) when tqdm is installed, else a small
bar of our own on stderr. Shown by default in terminals and notebooks, hidden in pipes."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable


def _human(n: float, unit: str) -> str:
    if unit == "B":
        for suffix in ("B", "KB", "MB", "GB", "TB"):
            if n < 1000 or suffix == "TB":
                return f"{n:.1f} {suffix}" if suffix != "B" else f"{int(n)} B"
            n /= 1000
    return f"{int(n):,} {unit}" if unit else f"{int(n):,}"


class Progress:
    """``with Progress("counting", total=1000, unit="B") as p: p.update(10)``"""

    def __init__(self, desc: str, total: int | None, unit: str = "", enabled: bool | None = None) -> None:
        self.desc, self.total, self.unit, self.done = desc, total, unit, 0
        in_notebook = "ipykernel" in sys.modules
        self.enabled = (sys.stderr.isatty() or in_notebook) if enabled is None else enabled
        self.start = self._last = time.perf_counter()
        self._tqdm = None
        if self.enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                pass
            else:
                self._tqdm = tqdm(total=total, desc=desc, unit=unit or "it", unit_scale=bool(unit), leave=True)

    def update(self, n: int = 1) -> None:
        self.set(self.done + n)

    def set(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        now = time.perf_counter()
        if self.enabled and now - self._last >= 0.1:
            self._last = now
            if self._tqdm is not None:
                self._tqdm.total = self.total
                self._tqdm.n = done
                self._tqdm.refresh()
            else:
                self._draw(now)

    def _draw(self, now: float, end: str = "") -> None:
        elapsed = max(now - self.start, 1e-9)
        rate = f"{_human(self.done / elapsed, self.unit)}/s"
        if self.total:
            frac = min(self.done / self.total, 1.0)
            bar = "#" * int(frac * 30)
            line = f"\r{self.desc:<9} [{bar:<30}] {_human(self.done, self.unit)}/{_human(self.total, self.unit)} {rate}"
        else:
            line = f"\r{self.desc:<9} {_human(self.done, self.unit)} {rate}"
        sys.stderr.write(line + end)
        sys.stderr.flush()

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.n = self.done
            self._tqdm.close()
        elif self.enabled:
            self._draw(time.perf_counter(), end="\n")

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def shrinking(bar: Progress) -> Callable[[int, int], None]:
    """A callback for Unigram training's reports (pieces now, target): `bar` fills as the
    vocabulary shrinks from its first reported size to the target.

    >>> with Progress("training", None, "", False) as bar:
    ...     report = shrinking(bar)
    ...     report(1000, 100); report(550, 100)
    ...     bar.done, bar.total
    (450, 900)
    """
    start: list[int] = []

    def report(pieces: int, target: int) -> None:
        if not start:
            start.append(pieces)
        bar.set(start[0] - pieces, max(start[0] - target, 1))

    return report
