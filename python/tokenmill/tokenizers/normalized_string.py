"""`NormalizedString`: a text being normalized, each of its characters aligned with the characters
of the original it came from, as Hugging Face's `tokenizers.NormalizedString` — the object custom
normalizers (`normalizers.Normalizer.custom`) and custom pre-tokenizers' `split` functions work on.

Alignments follow tokenizers' rules, per character where tokenizers keeps them per byte (the same
offsets once converted to characters): a replaced character keeps the place of the one it
replaces, an inserted one takes the place of the character before it (the first one of the text
for `prepend`), a composed one the place of its first part. A slice (`normalized[2:5]`) knows
where it sits in the whole original, so offsets stay whole-text offsets after splitting.

>>> n = NormalizedString("Héllo  World")
>>> n.nfd(); n.lowercase(); n.replace("  ", " ")
>>> n.normalized, n.original
('he\u0301llo world', 'Héllo  World')
>>> [str(part) for part in n.split(" ", "removed")]
['he\u0301llo', 'world']

`NormalizedStringRefMut` is what a custom normalizer's `normalize` receives: the same methods on
the string being normalized, refused once `normalize` has returned.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

from tokenmill import _core
from tokenmill.tokenizers._component import Regex

Span = tuple[int, int]

_BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")


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
        # Per normalized character, its original characters (in `_original`).
        self._spans: list[Span] = [(i, i + 1) for i in range(len(sequence))]
        # Where `_original` starts in the text this string was sliced from (0 unless a slice).
        self._shift = 0

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

    def _copy(self) -> NormalizedString:
        made = NormalizedString.__new__(NormalizedString)
        made._original, made._shift = self._original, self._shift
        made._chars, made._spans = list(self._chars), list(self._spans)
        return made

    # -- where characters come from ------------------------------------------------------------
    def _offsets_original(self) -> Span:
        """Where this string's original sits in the whole text (tokenizers' `offsets_original`)."""
        return self._shift, self._shift + len(self._original)

    def _to_original(self, start: int, end: int) -> Span:
        """Normalized characters [start, end) as characters of the whole original text (an empty
        range is given back as it is, shifted, as tokenizers gives it)."""
        if start >= end or end > len(self._spans):
            return self._shift + start, self._shift + end
        return self._shift + self._spans[start][0], self._shift + self._spans[end - 1][1]

    def _transform(
        self, dest: Iterable[tuple[str, int]], initial_offset: int = 0, start: int = 0, end: int = -1
    ) -> None:
        """Replaces normalized characters [start, end) by `dest`, tokenizers' `transform_range`
        on characters: each new character with its change — 0 replaces the next old character
        (and keeps its place), n > 0 is inserted (at the place of the old character before it),
        -n replaces the next one and removes the n after it; `initial_offset` old characters are
        removed first."""
        end = len(self._chars) if end < 0 else end
        old = self._spans
        at = start + initial_offset  # the next old character to consume
        chars: list[str] = []
        spans: list[Span] = []
        for c, change in dest:
            if change > 0:
                span = old[at - 1] if at >= 1 else (0, 0)
            else:
                span = old[at] if at < len(old) else (old[-1][1], old[-1][1]) if old else (0, 0)
                at += 1 - min(change, 0)
            chars.append(c)
            spans.append(span)
        self._chars[start:end] = chars
        self._spans[start:end] = spans

    # -- Unicode forms ---------------------------------------------------------------------------
    def _decomposed(self, form: str) -> tuple[list[tuple[str, int]], int]:
        """Each character's decomposition (its first character replacing it, the others inserted)
        in canonical order, what tokenizers' decomposition yields; and how many characters at the
        start decompose to nothing."""
        out: list[tuple[str, int]] = []
        removed_first = 0
        for c in self._chars:
            parts = unicodedata.normalize(form, c)
            if not parts:
                if out:
                    out[-1] = (out[-1][0], out[-1][1] - 1)
                else:
                    removed_first += 1
                continue
            out.append((parts[0], 0))
            out.extend((p, 1) for p in parts[1:])
        # Canonical order: each run of combining marks sorted (stably) by combining class.
        i = 0
        while i < len(out):
            if unicodedata.combining(out[i][0]) == 0:
                i += 1
                continue
            j = i
            while j < len(out) and unicodedata.combining(out[j][0]) != 0:
                j += 1
            out[i:j] = sorted(out[i:j], key=lambda item: unicodedata.combining(item[0]))
            i = j
        return out, removed_first

    def _form(self, form: str) -> None:
        decomposed, initial = self._decomposed("NFD" if form in ("NFD", "NFC") else "NFKD")
        self._transform(_composed(decomposed) if form in ("NFC", "NFKC") else decomposed, initial)

    def nfd(self) -> None:
        self._form("NFD")

    def nfkd(self) -> None:
        self._form("NFKD")

    def nfc(self) -> None:
        self._form("NFC")

    def nfkc(self) -> None:
        self._form("NFKC")

    # -- character by character ------------------------------------------------------------------
    def _per_char(self, change: Callable[[str], str]) -> None:
        dest = []
        for c in self._chars:
            new = change(c)
            dest.extend((n, 0 if k == 0 else 1) for k, n in enumerate(new))
        self._transform(dest)

    def lowercase(self) -> None:
        self._per_char(str.lower)

    def uppercase(self) -> None:
        self._per_char(str.upper)

    def map(self, func: Callable[[str], str]) -> None:
        """Each character replaced by `func(character)` (one character)."""
        _callable(func, "`map` expect a callable with the signature: `fn(char) -> char`")
        out = []
        for c in self._chars:
            new = func(c)
            if not isinstance(new, str) or len(new) != 1:
                raise TypeError("map: the function must return one character")
            out.append(new)
        self._chars = out

    def filter(self, func: Callable[[str], bool]) -> None:
        """Only the characters for which `func` is true."""
        _callable(func, "`filter` expect a callable with the signature: `fn(char) -> bool`")
        kept = [(c, span) for c, span in zip(self._chars, self._spans, strict=True) if func(c)]
        self._chars, self._spans = [c for c, _ in kept], [span for _, span in kept]

    def for_each(self, func: Callable[[str], Any]) -> None:
        _callable(func, "`for_each` expect a callable with the signature: `fn(char)`")
        for c in self._chars:
            func(c)

    # -- ends ------------------------------------------------------------------------------------
    def prepend(self, s: str) -> None:
        """`s` before the text, standing where its first character does (nothing before an empty
        text, as in tokenizers)."""
        if not self._chars or not s:
            return
        self._transform([(s[0], 0), *((c, 1) for c in s[1:]), (self._chars[0], 1)], 0, 0, 1)

    def append(self, s: str) -> None:
        """`s` after the text, standing where its last character does."""
        if not s:
            return
        if self._chars:
            n = len(self._chars)
            self._transform([(self._chars[-1], 0), *((c, 1) for c in s)], 0, n - 1, n)
        else:
            self._transform([(c, 1) for c in s])

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

    def clear(self) -> None:
        """Removes the whole normalized text (the original stays)."""
        self._chars, self._spans = [], []

    # -- patterns --------------------------------------------------------------------------------
    def _matches(self, pattern: str | Regex) -> list[tuple[Span, bool]]:
        """The text cut into matches of `pattern` and what lies between, in order, covering it
        all (tokenizers' `find_matches`, in characters)."""
        text = self.normalized
        if isinstance(pattern, Regex):
            regex = re.compile(pattern.pattern)
        elif isinstance(pattern, str):
            if not pattern:
                return [((0, len(text)), False)]
            regex = re.compile(re.escape(pattern))
        else:
            raise TypeError(f"pattern must be a str or a tokenizers Regex, not {type(pattern).__name__}")
        if not text:
            return [((0, 0), False)]
        out: list[tuple[Span, bool]] = []
        at = 0
        for m in regex.finditer(text):
            if at != m.start():
                out.append(((at, m.start()), False))
            out.append(((m.start(), m.end()), True))
            at = m.end()
        if at != len(text):
            out.append(((at, len(text)), False))
        return out

    def replace(self, pattern: str | Regex, content: str) -> None:
        """Each match of `pattern` (a str, literally, or a `Regex`, run by Python's `re`: its `\\s`
        also matches U+001C..U+001F) replaced by `content`, which takes the place of the match's
        last character (as tokenizers aligns it)."""
        chars: list[str] = []
        spans: list[Span] = []
        at = 0
        for (start, end), is_match in self._matches(pattern):
            if not is_match:
                continue
            chars.extend(self._chars[at:start])
            spans.extend(self._spans[at:start])
            place = self._spans[end - 1] if end >= 1 else (0, 0)
            chars.extend(content)
            spans.extend([place] * len(content))
            at = end
        self._chars, self._spans = chars + self._chars[at:], spans + self._spans[at:]

    def split(self, pattern: str | Regex, behavior: str) -> list[NormalizedString]:
        """The parts between matches of `pattern`, the matches themselves kept as `behavior`
        says: "removed", "isolated", "merged_with_previous", "merged_with_next" or "contiguous".

        >>> [str(p) for p in NormalizedString("the-final--countdown").split("-", "merged_with_next")]
        ['the', '-final', '-', '-countdown']
        """
        if behavior not in _BEHAVIORS:
            raise ValueError(f"Wrong value for SplitDelimiterBehavior, expected one of: `{', '.join(_BEHAVIORS)}`")
        matches = self._matches(pattern)
        parts: list[tuple[Span, bool]] = []  # (range, dropped)
        if behavior in ("removed", "isolated"):
            parts = [(span, behavior == "removed" and is_match) for span, is_match in matches]
        elif behavior == "merged_with_next":
            previous = False
            for (start, end), is_match in reversed(matches):
                if is_match and not previous and parts:
                    (_, last_end), _ = parts[-1]
                    parts[-1] = ((start, last_end), False)
                else:
                    parts.append(((start, end), False))
                previous = is_match
            parts.reverse()
        else:  # contiguous / merged_with_previous: a run joins the part before it
            previous = False
            for (start, end), is_match in matches:
                joins = is_match == previous if behavior == "contiguous" else is_match and not previous
                if joins and parts:
                    (first, _), _ = parts[-1]
                    parts[-1] = ((first, end), False)
                else:
                    parts.append(((start, end), False))
                previous = is_match
        return [self._sliced(start, end) for (start, end), dropped in parts if not dropped]

    # -- slices ----------------------------------------------------------------------------------
    def slice(self, range: int | tuple[int, int] | slice) -> NormalizedString | None:
        """The normalized characters `range` covers (an index, a `(start, end)` pair or a slice)
        as a NormalizedString of their original, or None outside the text.

        >>> n = NormalizedString("Hello world")
        >>> n.slice((6, 11)), n[:5].original
        (NormalizedString(original="world", normalized="world"), 'Hello')
        """
        n = len(self._chars)
        if isinstance(range, slice):
            start, end, step = range.indices(n)
            if step != 1:
                raise ValueError("a NormalizedString slice takes no step")
        elif isinstance(range, tuple) and len(range) == 2 and all(isinstance(i, int) for i in range):
            start, end = range
        elif isinstance(range, int) and not isinstance(range, bool):
            if range < 0:
                if -range > n:
                    raise ValueError(f"{-range} is bigger than max len")
                range += n
            start, end = range, range + 1
        else:
            raise TypeError("a NormalizedString is sliced by an int, a (start, end) tuple or a slice")
        # Where tokenizers' character range has no bytes: nothing (an empty range stands at a
        # character, or at 0).
        if start < 0 or end < start or (start >= n and (start, end) != (0, 0)):
            return None
        return self._sliced(start, min(end, n))

    __getitem__ = slice

    def _sliced(self, start: int, end: int) -> NormalizedString:
        made = NormalizedString.__new__(NormalizedString)
        if start < end:
            first, last = self._spans[start][0], self._spans[end - 1][1]
            last = max(first, last)
        else:  # tokenizers takes an empty normalized range as the same original range
            first = last = start
        made._original = self._original[first:last]
        made._chars = self._chars[start:end]
        made._spans = [(a - first, b - first) for a, b in self._spans[start:end]]
        made._shift = self._shift + first
        return made


def _callable(func: Any, message: str) -> None:
    if not callable(func):
        raise TypeError(message)


def _composite(first: str, second: str) -> str | None:
    """The character `first` and `second` compose into, if any."""
    joined = unicodedata.normalize("NFC", first + second)
    return joined if len(joined) == 1 else None


def _composed(decomposed: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Canonical composition of a decomposed sequence: a character composed into the starter
    before it adds its change, less one, to the starter's."""
    out: list[tuple[str, int]] = []
    starter = -1  # index in `out` of the last starter
    last_class = -1  # combining class of the last character kept after it (-1: none)
    for c, change in decomposed:
        cls = unicodedata.combining(c)
        if starter >= 0 and (last_class == -1 or 0 < last_class < cls):
            made = _composite(out[starter][0], c)
            if made is not None:
                out[starter] = (made, out[starter][1] + change - 1)
                continue
        if cls == 0:
            starter, last_class = len(out), -1
        else:
            last_class = cls
        out.append((c, change))
    return out


class NormalizedStringRefMut:
    """The NormalizedString a custom normalizer's `normalize` works on (tokenizers' class of the
    same name): its methods while `normalize` runs, refused after.

    >>> from tokenmill.tokenizers import normalizers
    >>> class Shout:
    ...     def normalize(self, normalized):
    ...         self.kept = normalized
    ...         normalized.uppercase()
    >>> shout = Shout()
    >>> normalizers.Normalizer.custom(shout).normalize_str("hey")
    'HEY'
    >>> shout.kept.normalized
    Traceback (most recent call last):
    ...
    tokenmill.TokenmillError: Cannot use a NormalizedStringRefMut outside `normalize`
    """

    __slots__ = ("_target",)

    def __init__(self, target: NormalizedString) -> None:
        self._target: NormalizedString | None = target

    def _get(self) -> NormalizedString:
        if self._target is None:
            raise _core.TokenmillError("Cannot use a NormalizedStringRefMut outside `normalize`")
        return self._target

    def _close(self) -> None:
        self._target = None

    @property
    def normalized(self) -> str:
        return self._get().normalized

    @property
    def original(self) -> str:
        return self._get().original

    def __repr__(self) -> str:
        target = self._target
        return "NormalizedStringRefMut(<outside normalize>)" if target is None else repr(target)

    def __str__(self) -> str:
        return str(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __getitem__(self, range: Any) -> NormalizedString | None:
        return self._get().slice(range)


def _forward(name: str) -> Callable[..., Any]:
    def method(self: NormalizedStringRefMut, *args: Any) -> Any:
        return getattr(self._get(), name)(*args)

    method.__name__ = name
    method.__doc__ = getattr(NormalizedString, name).__doc__
    return method


for _name in (
    "nfd",
    "nfkd",
    "nfc",
    "nfkc",
    "lowercase",
    "uppercase",
    "prepend",
    "append",
    "lstrip",
    "rstrip",
    "strip",
    "clear",
    "slice",
    "filter",
    "for_each",
    "map",
    "split",
    "replace",
):
    setattr(NormalizedStringRefMut, _name, _forward(_name))
del _name


def target_of(normalized: Any) -> NormalizedString:
    """The NormalizedString behind `normalized` (itself, or what a ref-mut stands for)."""
    if isinstance(normalized, NormalizedStringRefMut):
        return normalized._get()
    if not isinstance(normalized, NormalizedString):
        raise TypeError(f"expected a NormalizedString, not {type(normalized).__name__}")
    return normalized
