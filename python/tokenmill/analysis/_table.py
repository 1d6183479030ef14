"""Plain-text tables for the terminal.

>>> print(format_table(["a", "bb"], [[1, "x"], [22, "y"]]))
a   bb
--  --
1   x
22  y
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def format_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(c) for c in columns]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
