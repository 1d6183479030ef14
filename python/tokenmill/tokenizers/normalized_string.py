"""`NormalizedString`: a text being normalized, each of its characters aligned with the characters
of the original it came from, as Hugging Face's `tokenizers.NormalizedString` — the object custom
normalizers work on. (tokenmill runs its own normalizers in Rust and refuses custom Python ones in
a pipeline; this is for code that builds and inspects normalized strings itself.)

>>> n = NormalizedString("Héllo  World")
>>> n.nfd(); n.lowercase(); n.replace("  ", " ")
>>> n.normalized, n.original
('he\u0301llo world', 'Héllo  World')
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

from tokenmill.tokenizers._component import Regex


def _is_space(c: str) -> bool:
    """Unicode's White_Space, as tokenizers strips (`str.isspace` also counts U+001C..U+001F)."""
    return c.isspace() and not "\x1c" <= c <= "\x1f"


class NormalizedString:
    """A text and its normalized form, each normalized character with the (start, end) of the
    original characters it stands for."""

    def __init__(self, sequence: str) -> None:
        if not isinstance(sequence, str):
            raise TypeError(f"NormalizedString takes a str, not {type(sequence).__name__}")
        self._original = sequence
        self._chars = list(sequence)
        self._spans = [(i, i + 1) for i in range(len(sequence))]

    @property
    def original(self) -> str:
        return self._original

    @property
    def normalized(self) -> str:
        return "".join(self._chars)

    def __str__(self) -> str:
        return self.normalized

    def __repr__(self) -> str:
        return f'NormalizedString(original="{self._original}", normalized="{self.normalized}")'

    def __len__(self) -> int:
        return len(self._chars)

    # -- rewriting, keeping the alignment ------------------------------------------------------
    def _rewrite(self, pieces: list[tuple[str, tuple[int, int]]]) -> None:
        """Replaces the normalized text by `pieces`: (text, span) each, every character of a
        piece's text aligned with its span."""
        chars, spans = [], []
        for text, span in pieces:
            chars.extend(text)
            spans.extend([span] * len(text))
        self._chars, self._spans = chars, spans

    def _clusters(self) -> list[tuple[str, tuple[int, int]]]:
        """A base character with the combining marks after it (what a normal form may merge)."""
        out: list[tuple[str, tuple[int, int]]] = []
        for c, span in zip(self._chars, self._spans, strict=True):
            if out and unicodedata.combining(c):
                text, (start, _) = out[-1]
                out[-1] = (text + c, (start, span[1]))
            else:
                out.append((c, span))
        return out

    def _form(self, form: str) -> None:
        self._rewrite([(unicodedata.normalize(form, text), span) for text, span in self._clusters()])  # type: ignore[arg-type]

    def nfd(self) -> None:
        self._form("NFD")

    def nfkd(self) -> None:
        self._form("NFKD")

    def nfc(self) -> None:
        self._form("NFC")

    def nfkc(self) -> None:
        self._form("NFKC")

    def lowercase(self) -> None:
        self._rewrite([(c.lower(), span) for c, span in zip(self._chars, self._spans, strict=True)])

    def uppercase(self) -> None:
        self._rewrite([(c.upper(), span) for c, span in zip(self._chars, self._spans, strict=True)])

    def map(self, func: Callable[[str], str]) -> None:
        """Each character replaced by `func(character)` (one character)."""
        out = []
        for c, span in zip(self._chars, self._spans, strict=True):
            new = func(c)
            if not isinstance(new, str) or len(new) != 1:
                raise TypeError("map: the function must return one character")
            out.append((new, span))
        self._rewrite(out)

    def filter(self, func: Callable[[str], bool]) -> None:
        """Only the characters for which `func` is true."""
        self._rewrite([(c, span) for c, span in zip(self._chars, self._spans, strict=True) if func(c)])

    def for_each(self, func: Callable[[str], Any]) -> None:
        for c in self._chars:
            func(c)

    def prepend(self, s: str) -> None:
        if not self._chars:  # nothing to stand before, as in tokenizers
            return
        first = self._spans[0]
        self._chars[:0], self._spans[:0] = list(s), [(first[0], first[0])] * len(s)

    def append(self, s: str) -> None:
        # After the end of the text (even an empty one, as tokenizers appends).
        last = self._spans[-1] if self._spans else (len(self._original), len(self._original))
        self._chars.extend(s)
        self._spans.extend([(last[1], last[1])] * len(s))

    def lstrip(self) -> None:
        self._strip(left=True, right=False)

    def rstrip(self) -> None:
        self._strip(left=False, right=True)

    def strip(self) -> None:
        self._strip(left=True, right=True)

    def _strip(self, left: bool, right: bool) -> None:
        start, end = 0, len(self._chars)
        while left and start < end and _is_space(self._chars[start]):
            start += 1
        while right and end > start and _is_space(self._chars[end - 1]):
            end -= 1
        self._chars, self._spans = self._chars[start:end], self._spans[start:end]

    def replace(self, pattern: str | Regex, content: str) -> None:
        """Each match of `pattern` (a str, literally, or a `Regex`, run by Python's `re`: its `\\s`
        also matches U+001C..U+001F) replaced by `content`, which stands for the original characters
        the match covered."""
        regex = re.compile(pattern.pattern if isinstance(pattern, Regex) else re.escape(pattern))
        chars: list[str] = []
        spans: list[tuple[int, int]] = []
        at = 0
        for m in regex.finditer(self.normalized):
            if m.start() == m.end():
                continue
            chars.extend(self._chars[at : m.start()])
            spans.extend(self._spans[at : m.start()])
            chars.extend(content)
            spans.extend([self._span(m.start(), m.end())] * len(content))
            at = m.end()
        self._chars, self._spans = chars + self._chars[at:], spans + self._spans[at:]

    def _span(self, start: int, end: int) -> tuple[int, int]:
        return (self._spans[start][0], self._spans[end - 1][1])

    def slice(self, range: tuple[int, int]) -> NormalizedString | None:
        """The normalized characters `range` covers, as a NormalizedString of their original."""
        start, end = range
        if not 0 <= start <= end <= len(self._chars):
            return None
        made = NormalizedString.__new__(NormalizedString)
        origin = self._span(start, end)[0] if end > start else 0
        made._original = self._original[self._span(start, end)[0] : self._span(start, end)[1]] if end > start else ""
        made._chars = self._chars[start:end]
        made._spans = [(a - origin, b - origin) for a, b in self._spans[start:end]]
        return made
