"""`tokenmill.tokenizers.pre_tokenizers`: Hugging Face's pre-tokenizers, each its `tokenizer.json`
node. The splitting steps run in tokenmill's Rust splitters; `ByteLevel` and `Metaspace`, which
rewrite the pieces (GPT-2's byte characters, `▁` for spaces), spell the pieces those splitters cut.

>>> Whitespace().pre_tokenize_str("Hey friend!")
[('Hey', (0, 3)), ('friend', (4, 10)), ('!', (10, 11))]

A custom pre-tokenizer (`PreTokenizer.custom(obj)`) is Python code: `obj.pre_tokenize(pretok)`
cuts a `PreTokenizedString`, usually through `pretok.split(func)`. It runs alone or in a
`Sequence` with built-in steps (which then run on the `PreTokenizedString` too, `pre_tokenize`),
and a `Tokenizer` holding one encodes through Python:

>>> class Sentences:
...     def pre_tokenize(self, pretok):
...         pretok.split(lambda i, normalized: normalized.split(".", "merged_with_previous"))
>>> Sequence([PreTokenizer.custom(Sentences()), WhitespaceSplit()]).pre_tokenize_str("Hi there. Bye.")
[('Hi', (0, 2)), ('there.', (3, 9)), ('Bye.', (10, 14))]
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from typing import Any, ClassVar

from tokenmill import _core
from tokenmill.tokenizers._component import (
    CUSTOM,
    Component,
    call_custom,
    custom_node,
    pattern_node,
    register_custom,
)
from tokenmill.tokenizers._component import Sequence as _Sequence
from tokenmill.tokenizers.normalized_string import NormalizedString
from tokenmill.tokenizers.pre_tokenized_string import PreTokenizedString, PreTokenizedStringRefMut, target_of

Piece = tuple[str, tuple[int, int]]

_BEHAVIORS = {
    "removed": "Removed",
    "isolated": "Isolated",
    "merged_with_previous": "MergedWithPrevious",
    "merged_with_next": "MergedWithNext",
    "contiguous": "Contiguous",
}


class PreTokenizer(Component):
    """The base of every pre-tokenizer: `pre_tokenize_str(text)` gives its pieces with their
    (start, end) in characters of the text."""

    _family = "pre_tokenizer"

    def _check(self) -> None:
        if not self._is_custom():  # a custom one runs only when used, as in tokenizers
            self.pre_tokenize_str("")

    def _steps(self) -> list[dict[str, Any]]:
        return [self._node]

    def pre_tokenize_str(self, sequence: str) -> list[Piece]:
        """The pieces of `sequence`.

        >>> WhitespaceSplit().pre_tokenize_str("a b")
        [('a', (0, 1)), ('b', (2, 3))]
        """
        if not isinstance(sequence, str):
            raise TypeError(f"pre_tokenize_str takes a str, not {type(sequence).__name__}")
        if self._is_custom():
            pretok = PreTokenizedString(sequence)
            self._apply(pretok)
            return [(text, offsets) for text, offsets, _ in pretok.get_splits()]
        # (text, start, width): where a piece starts in `sequence` and how many of its characters
        # it covers (None: its own length, the piece being a slice of the text).
        pieces: list[_Placed] = [(sequence, 0, None)]
        steps = self._steps()
        i = 0
        while i < len(steps):
            if steps[i].get("type") in _REWRITING:
                pieces = [p for piece in pieces for p in _rewrite(steps[i], piece)]
                i += 1
                continue
            j = i
            while j < len(steps) and steps[j].get("type") not in _REWRITING:
                j += 1
            spec = "hf:" + json.dumps({"type": "Sequence", "pretokenizers": steps[i:j]}, ensure_ascii=False)
            pieces = [sub for piece in pieces for sub in _split(spec, piece)]
            i = j
        return [(text, (start, start + (len(text) if width is None else width))) for text, start, width in pieces]

    def pre_tokenize(self, pretok: PreTokenizedString) -> None:
        """Cuts the splits of a `PreTokenizedString` in place, keeping track of where each comes
        from (`pre_tokenize_str` gives the pieces of a text alone).

        >>> from tokenmill.tokenizers import PreTokenizedString
        >>> pretok = PreTokenizedString("Hey friend!")
        >>> Sequence([WhitespaceSplit(), Punctuation()]).pre_tokenize(pretok)
        >>> pretok.get_splits()
        [('Hey', (0, 3), None), ('friend', (4, 10), None), ('!', (10, 11), None)]
        """
        self._apply(target_of(pretok))

    def _apply(self, target: PreTokenizedString) -> None:
        """Each step on `target`'s splits: a custom one's `pre_tokenize`, ByteLevel and Metaspace
        as tokenizers runs them on NormalizedStrings, runs of splitting steps in Rust."""
        steps = self._steps()
        i = 0
        while i < len(steps):
            kind = steps[i].get("type")
            if kind == CUSTOM:
                ref = PreTokenizedStringRefMut(target)
                try:
                    call_custom("pre_tokenizer", steps[i]["object"], "pre_tokenize", ref)
                finally:
                    ref._close()
                i += 1
            elif kind == "ByteLevel":
                _byte_level(steps[i], target)
                i += 1
            elif kind == "Metaspace":
                _metaspace(steps[i], target)
                i += 1
            else:
                j = i
                while j < len(steps) and steps[j].get("type") not in (CUSTOM, *_REWRITING):
                    j += 1
                spec = "hf:" + json.dumps({"type": "Sequence", "pretokenizers": steps[i:j]}, ensure_ascii=False)
                target.split(lambda _, n, spec=spec: _cut(spec, n))
                i = j

    def _counting_spec(self) -> tuple[str, bool, bool] | None:
        """How Rust can count this pre-tokenizer's pieces in one pass (`count_pieces_with`):
        (the split spec, a prefix space, spell the pieces in byte-level characters) for a run of
        splitting steps or a lone ByteLevel; None for the other shapes (`_count`)."""
        if self._is_custom():
            return None
        steps = self._steps()
        if len(steps) == 1 and steps[0].get("type") == "ByteLevel":
            step = steps[0]
            split = "gpt2" if step.get("use_regex", True) else "none"
            return split, bool(step.get("add_prefix_space", True)), True
        if steps and not any(step.get("type") in _REWRITING for step in steps):
            spec = "hf:" + json.dumps({"type": "Sequence", "pretokenizers": steps}, ensure_ascii=False)
            return spec, False, False
        return None

    def _count(self, texts: list[str]) -> Counter[str]:
        """How often each of `pre_tokenize_str`'s pieces occurs over `texts` (what training
        counts), without their places: each run of splitting steps cuts the whole batch in one
        Rust call, and a last ByteLevel step cuts the raw text and spells each distinct piece
        once. With a custom step, the pieces of `pre_tokenize_str`, text by text."""
        if self._is_custom():
            return Counter(piece for text in texts for piece, _ in self.pre_tokenize_str(text))
        pieces: list[tuple[str, bool]] = [(t, True) for t in texts]  # (text, starts its input)
        steps = self._steps()
        respell = False
        i = 0
        while i < len(steps):
            step = steps[i]
            if step.get("type") == "ByteLevel" and i == len(steps) - 1:
                prefix = bool(step.get("add_prefix_space", True))
                spaced = [" " + t if prefix and not t.startswith(" ") else t for t, _ in pieces if t]
                if step.get("use_regex", True):
                    spaced = [p for cut, _ in _core.split_batch_with("gpt2", spaced) for p in cut]
                pieces, respell = [(t, False) for t in spaced], True
                i += 1
            elif step.get("type") in _REWRITING:
                placed = [_rewrite(step, (text, 0 if first else 1, None)) for text, first in pieces]
                pieces = [(t, start == 0) for parts in placed for t, start, _ in parts]
                i += 1
            else:
                j = i
                while j < len(steps) and steps[j].get("type") not in _REWRITING:
                    j += 1
                spec = "hf:" + json.dumps({"type": "Sequence", "pretokenizers": steps[i:j]}, ensure_ascii=False)
                cut = _core.split_batch_with(spec, [t for t, _ in pieces])
                pieces = [
                    (part, first and k == 0 and starts)
                    for (_, first), (parts, starts) in zip(pieces, cut, strict=True)
                    for k, part in enumerate(parts)
                ]
                i = j
        counts = Counter(t for t, _ in pieces)
        return Counter({_spell(w): n for w, n in counts.items()}) if respell else counts

    @staticmethod
    def custom(pre_tokenizer: Any) -> PreTokenizer:
        """A pre-tokenizer whose `pre_tokenizer.pre_tokenize(pretok)` cuts the
        `PreTokenizedString` it is given, in place: `pretok.split(func)` with `func(index,
        normalized)` returning slices of `normalized` (`normalized[i:j]`, `normalized.split(...)`).
        It runs in Python; a tokenizer holding one cannot be saved.

        >>> class EachHan:   # every CJK character a piece of its own, as a word segmenter might
        ...     def cut(self, i, normalized):
        ...         text, parts, start = normalized.normalized, [], 0
        ...         for j, c in enumerate(text):
        ...             if "\u4e00" <= c <= "\u9fff":
        ...                 parts += [normalized[start:j], normalized[j : j + 1]]
        ...                 start = j + 1
        ...         rest = normalized[start:]  # None when the text ends with a CJK character
        ...         return parts if rest is None else parts + [rest]
        ...     def pre_tokenize(self, pretok):
        ...         pretok.split(self.cut)
        >>> PreTokenizer.custom(EachHan()).pre_tokenize_str("ab東京c")
        [('ab', (0, 2)), ('東', (2, 3)), ('京', (3, 4)), ('c', (4, 5))]
        """
        return PreTokenizer._make(custom_node(pre_tokenizer))  # type: ignore[no-any-return]


register_custom(PreTokenizer)


def _cut(spec: str, normalized: NormalizedString) -> list[NormalizedString]:
    """The splitting steps `spec` on one split: the pieces Rust cuts, as slices of it."""
    return [normalized._sliced(a, b) for _, (a, b) in _core.pre_tokenize_with(spec, normalized.normalized)]


def _byte_level(step: dict[str, Any], target: PreTokenizedString) -> None:
    """tokenizers' ByteLevel on each split: a space before it (`add_prefix_space`), cut by
    GPT-2's pattern (`use_regex`), then each character spelled as its bytes' characters."""
    prefix, use_regex = step.get("add_prefix_space", True), step.get("use_regex", True)

    def cut(_: int, normalized: NormalizedString) -> list[NormalizedString]:
        if prefix and not normalized.normalized.startswith(" "):
            normalized.prepend(" ")
        return _cut("gpt2", normalized) if use_regex else [normalized]

    target.split(cut)
    spelling = _byte_spelling()
    for split in target._splits:
        if split.tokens is None:
            n = split.normalized
            n._transform([(spelling[b], int(k > 0)) for c in n._chars for k, b in enumerate(c.encode("utf-8"))])


def _metaspace(step: dict[str, Any], target: PreTokenizedString) -> None:
    """tokenizers' Metaspace on each split: spaces become `replacement`, one is put before the
    split (always, only before the text's start with "first", or never), and with `split` a
    piece starts at each."""
    replacement = step.get("replacement", "▁")
    scheme = step.get("prepend_scheme", "always")

    def cut(_: int, normalized: NormalizedString) -> list[NormalizedString]:
        normalized.replace(" ", replacement)
        if not normalized.normalized.startswith(replacement) and (
            scheme == "always" or (scheme == "first" and normalized._offsets_original()[0] == 0)
        ):
            normalized.prepend(replacement)
        return normalized.split(replacement, "merged_with_next") if step.get("split", True) else [normalized]

    target.split(cut)


_Placed = tuple[str, int, "int | None"]
_REWRITING = ("ByteLevel", "Metaspace")


def _split(spec: str, piece: _Placed) -> list[_Placed]:
    text, start, width = piece
    cut = _core.pre_tokenize_with(spec, text)
    if width is None:
        return [(t, start + a, None) for t, (a, _) in cut]
    # A piece rewritten before (byte characters, ▁) covers `width` characters of the text; its
    # own characters do not map one to one onto them, so its parts share its place.
    return [(t, start + min(a, width), max(min(b, width) - min(a, width), 0)) for t, (a, b) in cut]


@functools.cache
def _byte_spelling() -> dict[int, str]:
    """A `str.translate` table from each byte (as a Latin-1 character) to its byte-level
    character: `_spell(text)` spells a text's UTF-8 bytes in one C-level pass."""
    from tokenmill.formats.huggingface import token_to_text

    return {b: token_to_text(bytes([b])) for b in range(256)}


def _spell(text: str) -> str:
    """`text`'s UTF-8 bytes in byte-level characters (`Ġ` for a space)."""
    return text.encode("utf-8").decode("latin-1").translate(_byte_spelling())


def _rewrite(step: dict[str, Any], piece: _Placed) -> list[_Placed]:
    """A ByteLevel or Metaspace step on one piece: its pieces, spelled, each with its start and
    width in characters of the original text."""
    text, start, _ = piece
    if not text:
        return []
    if step["type"] == "ByteLevel":
        prefix = bool(step.get("add_prefix_space", True)) and not text.startswith(" ")
        spaced = " " + text if prefix else text
        cut = _core.pre_tokenize_with("gpt2", spaced) if step.get("use_regex", True) else [(spaced, (0, len(spaced)))]
        out = []
        for part, (a, b) in cut:
            if prefix:
                # The added space stands where the text's first character does (as tokenizers aligns it).
                a, b = max(a - 1, 0), max(b - 1, 1)
            out.append((_spell(part), start + a, b - a))
        return out
    replacement = step.get("replacement", "▁")
    scheme = step.get("prepend_scheme", "always")
    spelled = text.replace(" ", replacement)
    first = start == 0
    prepend = scheme == "always" or (scheme == "first" and first)
    added = prepend and not spelled.startswith(replacement)
    if added:
        spelled = replacement + spelled
    if not step.get("split", True):
        return [(spelled, start, len(text))]
    # Cut before each replacement character (merged with the next).
    out: list[_Placed] = []
    at = 0  # in `spelled`
    cuts = [i for i, c in enumerate(spelled) if c == replacement and i > 0] + [len(spelled)]
    for end in cuts:
        part = spelled[at:end]
        if part:
            a = max(at - (1 if added else 0), 0)
            b = end - (1 if added else 0)
            out.append((part, start + a, b - a))
        at = end
    return out


class BertPreTokenizer(PreTokenizer):
    """Splits on whitespace (removed) and punctuation (each its own piece)."""

    _type = "BertPreTokenizer"

    def __new__(cls) -> BertPreTokenizer:
        return cls._make({"type": "BertPreTokenizer"})  # type: ignore[no-any-return]


class ByteLevel(PreTokenizer):
    """GPT-2's: a space before the text (`add_prefix_space`), its pattern's pieces (`use_regex`),
    each byte spelled as a printable character."""

    _type = "ByteLevel"
    _fields: ClassVar[dict[str, str]] = {
        "add_prefix_space": "add_prefix_space",
        "trim_offsets": "trim_offsets",
        "use_regex": "use_regex",
    }

    def __new__(
        cls, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True, **state: Any
    ) -> ByteLevel:
        from tokenmill.tokenizers.processors import _only_type

        _only_type(state, "ByteLevel")
        node = {
            "type": "ByteLevel",
            "add_prefix_space": bool(add_prefix_space),
            "trim_offsets": bool(trim_offsets),
            "use_regex": bool(use_regex),
        }
        return cls._make(node)  # type: ignore[no-any-return]

    @staticmethod
    def alphabet() -> list[str]:
        """The 256 characters byte-level spelling uses, one per byte."""
        return list(_byte_spelling().values())


class CharDelimiterSplit(PreTokenizer):
    """Splits on one character (removed)."""

    _type = "CharDelimiterSplit"
    _fields: ClassVar[dict[str, str]] = {"delimiter": "delimiter"}

    def __new__(cls, delimiter: str) -> CharDelimiterSplit:
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise ValueError("expected a string of length 1")
        return cls._make({"type": "CharDelimiterSplit", "delimiter": delimiter})  # type: ignore[no-any-return]


class Digits(PreTokenizer):
    """Digits apart from the rest: runs of them, or each one (`individual_digits`)."""

    _type = "Digits"
    _fields: ClassVar[dict[str, str]] = {"individual_digits": "individual_digits"}

    def __new__(cls, individual_digits: bool = False) -> Digits:
        return cls._make({"type": "Digits", "individual_digits": bool(individual_digits)})  # type: ignore[no-any-return]


class FixedLength(PreTokenizer):
    """Pieces of `length` characters."""

    _type = "FixedLength"
    _fields: ClassVar[dict[str, str]] = {"length": "length"}

    def __new__(cls, length: int = 5) -> FixedLength:
        return cls._make({"type": "FixedLength", "length": length})  # type: ignore[no-any-return]


class Metaspace(PreTokenizer):
    """SentencePiece's spaces: each space becomes `replacement`, one is put before the text
    (`prepend_scheme` "always", "first" or "never"), and with `split` a piece starts at each."""

    _type = "Metaspace"
    _fields: ClassVar[dict[str, str]] = {"replacement": "replacement", "split": "split"}

    def __new__(cls, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> Metaspace:
        node = {"type": "Metaspace", "replacement": _one_char(replacement), "prepend_scheme": "always", "split": split}
        made: Metaspace = cls._make(node)
        made.prepend_scheme = prepend_scheme
        return made

    @property
    def prepend_scheme(self) -> str:
        return str(self._node.get("prepend_scheme", "always"))

    @prepend_scheme.setter
    def prepend_scheme(self, value: str) -> None:
        if value not in ("always", "first", "never"):
            raise ValueError(f"{value} is an unknown variant, should be one of ['first', 'never', 'always']")
        self._node["prepend_scheme"] = value
        self._changed()

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "replacement":
            value = _one_char(value)
        super().__setattr__(name, value)


def _one_char(value: Any) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise ValueError("expected a string of length 1")
    return value


class Punctuation(PreTokenizer):
    """Punctuation apart from the rest, as `behavior` says ("isolated" by default)."""

    _type = "Punctuation"

    def __new__(cls, behavior: str = "isolated") -> Punctuation:
        return cls._make({"type": "Punctuation", "behavior": _behavior(behavior)})  # type: ignore[no-any-return]

    @property
    def behavior(self) -> str:
        return _behavior_name(self._node["behavior"])

    @behavior.setter
    def behavior(self, value: str) -> None:
        self._node["behavior"] = _behavior(value)
        self._changed()


def _behavior(name: str) -> str:
    if name not in _BEHAVIORS:
        raise ValueError(f"Wrong value for SplitDelimiterBehavior, expected one of: {', '.join(_BEHAVIORS)}")
    return _BEHAVIORS[name]


def _behavior_name(node_value: str) -> str:
    return next((k for k, v in _BEHAVIORS.items() if v == node_value), node_value)


class Split(PreTokenizer):
    """Splits at each match of `pattern` (a str, literally, or a `tokenizers.Regex`), the matches
    kept or removed as `behavior` says; `invert` splits at what does not match."""

    _type = "Split"
    _fields: ClassVar[dict[str, str]] = {"invert": "invert"}

    def __new__(cls, pattern: Any, behavior: str, invert: bool = False) -> Split:
        node = {"type": "Split", "pattern": pattern_node(pattern), "behavior": _behavior(behavior), "invert": invert}
        return cls._make(node)  # type: ignore[no-any-return]

    @property
    def behavior(self) -> str:
        return _behavior_name(self._node["behavior"])

    @behavior.setter
    def behavior(self, value: str) -> None:
        self._node["behavior"] = _behavior(value)
        self._changed()

    @property
    def pattern(self) -> Any:
        raise AttributeError("Split.pattern cannot be read (it is compiled); make a new Split")

    @pattern.setter
    def pattern(self, value: Any) -> None:
        raise AttributeError("Split.pattern cannot be changed (it is compiled); make a new Split")


def _plain(name: str, doc: str) -> type[PreTokenizer]:
    def __new__(cls: type[PreTokenizer]) -> PreTokenizer:
        return cls._make({"type": name})  # type: ignore[no-any-return]

    return type(name, (PreTokenizer,), {"_type": name, "__new__": __new__, "__doc__": doc, "__module__": __name__})


UnicodeScripts = _plain("UnicodeScripts", "Splits where the Unicode script changes.")
Whitespace = _plain("Whitespace", r"Words (`\w+`) and runs of other non-space characters (`[^\w\s]+`).")
WhitespaceSplit = _plain("WhitespaceSplit", "Splits on whitespace (removed).")


class Sequence(PreTokenizer, _Sequence):
    """Pre-tokenizers applied in order, each to the pieces of those before it."""

    _type = "Sequence"
    _key = "pretokenizers"

    def __new__(cls, pretokenizers: list[PreTokenizer]) -> Sequence:
        return cls._of(pretokenizers)  # type: ignore[no-any-return]

    def _steps(self) -> list[dict[str, Any]]:
        return [step for child in self.__dict__["_children"] for step in child._steps()]


__all__ = [
    "BertPreTokenizer",
    "ByteLevel",
    "CharDelimiterSplit",
    "Digits",
    "FixedLength",
    "Metaspace",
    "PreTokenizer",
    "Punctuation",
    "Sequence",
    "Split",
    "UnicodeScripts",
    "Whitespace",
    "WhitespaceSplit",
]
