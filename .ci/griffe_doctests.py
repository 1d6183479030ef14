"""Griffe extension: show docstrings' doctest examples as Python console code.

tokenmill's docstrings hold doctests (run by tests/test_docstrings.py) outside any "Examples:"
section, where Markdown would read `>>>` as a nested block quote and `[a][b]` in an output as a
link. Each run of `>>>`/`...` lines and the output lines after it (up to a blank line) becomes a
```pycon fence, with doctest flags (`# doctest: +SKIP`) taken out.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_FLAGS = re.compile(r"\s*#\s*doctest:\s*[+-]\w+(?:\s*,\s*[+-]\w+)*\s*$")


def fence_doctests(text: str) -> str:
    out: list[str] = []
    in_fence = in_example = False
    example_indent = ""
    for line in text.split("\n"):
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith("```"):
            if in_example:
                out.append(f"{indent}```")
                in_example = False
            in_fence = not in_fence
            out.append(line)
        elif in_fence:
            out.append(line)
        elif in_example:
            if not stripped:
                out.append(f"{example_indent}```")
                in_example = False
                out.append(line)
            else:
                out.append(_FLAGS.sub("", line))
        elif stripped.startswith(">>>"):
            example_indent = indent
            if out and out[-1].strip():
                out.append("")
            out.append(f"{indent}```pycon")
            out.append(_FLAGS.sub("", line))
            in_example = True
        else:
            out.append(line)
    if in_example:
        out.append(f"{example_indent}```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
