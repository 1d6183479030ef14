"""`tokenmill.tokenizers.normalizers`: Hugging Face's normalizers, each its `tokenizer.json` node,
run by tokenmill's Rust normalizers; and custom ones (`Normalizer.custom(obj)`), whose
`obj.normalize(normalized)` changes a `NormalizedString` in Python.

>>> Sequence([Lowercase(), Strip()]).normalize_str("  HELLO  ")
'hello'

A custom normalizer runs alone or in a `Sequence` with built-in ones; a `Tokenizer` holding one
encodes through Python (see `tokenmill.tokenizers.tokenizer`), and cannot be saved:

>>> from tokenmill.tokenizers import Regex
>>> class NoDigits:
...     def normalize(self, normalized):
...         normalized.replace(Regex("[0-9]"), "#")
>>> Sequence([Normalizer.custom(NoDigits()), Lowercase()]).normalize_str("Route 66")
'route ##'
"""

from __future__ import annotations

import base64
import functools
import json
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
from tokenmill.tokenizers.normalized_string import NormalizedString, NormalizedStringRefMut, target_of


class Normalizer(Component):
    """The base of every normalizer: `normalize_str(text)` gives the normalized text."""

    _family = "normalizer"

    def _spec(self) -> str:
        """tokenmill's normalizer spec for this node."""
        return "hf:" + json.dumps(self._node, ensure_ascii=False)

    def _check(self) -> None:
        """Refuses, when it is made, a normalizer tokenmill does not run (a custom one runs only
        when used, as in tokenizers)."""
        if not self._is_custom():
            self.normalize_str("")

    def _steps(self) -> list[dict[str, Any]]:
        return [self._node]

    def normalize_str(self, sequence: str) -> str:
        """The normalized text.

        >>> Lowercase().normalize_str("HeLLo")
        'hello'
        """
        if not isinstance(sequence, str):
            raise TypeError(f"normalize_str takes a str, not {type(sequence).__name__}")
        if self._is_custom():
            normalized = NormalizedString(sequence)
            self._apply(normalized)
            return normalized.normalized
        return _core.normalize_with(self._spec(), sequence)

    def normalize(self, normalized: NormalizedString) -> None:
        """Normalizes a `NormalizedString` in place, keeping track of where each character comes
        from (`normalize_str` gives the text alone).

        >>> from tokenmill.tokenizers import NormalizedString
        >>> n = NormalizedString("ÉTÉ")
        >>> Sequence([NFD(), StripAccents(), Lowercase()]).normalize(n)
        >>> n
        NormalizedString(original="ÉTÉ", normalized="ete")
        """
        self._apply(target_of(normalized))

    def _apply(self, target: NormalizedString) -> None:
        """Each step on `target`: a custom one's `normalize`, runs of built-in ones in Rust."""
        steps = self._steps()
        i = 0
        while i < len(steps):
            if steps[i].get("type") == CUSTOM:
                ref = NormalizedStringRefMut(target)
                try:
                    call_custom("normalizer", steps[i]["object"], "normalize", ref)
                finally:
                    ref._close()
                i += 1
                continue
            j = i
            while j < len(steps) and steps[j].get("type") != CUSTOM:
                j += 1
            node = steps[i] if j == i + 1 else {"type": "Sequence", "normalizers": steps[i:j]}
            _normalize_aligned(json.dumps(node, ensure_ascii=False), target)
            i = j

    @staticmethod
    def custom(normalizer: Any) -> Normalizer:
        """A normalizer whose `normalizer.normalize(normalized)` changes the `NormalizedString` it
        is given in place (its methods: `nfkc()`, `lowercase()`, `replace(pattern, content)`,
        `filter(func)`, ...). It runs in Python; a tokenizer holding one cannot be saved.

        >>> class Accentless:
        ...     def normalize(self, normalized):
        ...         normalized.nfd()
        ...         normalized.filter(lambda c: not 0x300 <= ord(c) < 0x370)
        >>> Normalizer.custom(Accentless()).normalize_str("Crème brûlée")
        'Creme brulee'
        """
        return Normalizer._make(custom_node(normalizer))  # type: ignore[no-any-return]


register_custom(Normalizer)


def _normalize_aligned(node_json: str, target: NormalizedString) -> None:
    """A built-in normalizer (its node's JSON) on `target`, in Rust, keeping the alignment: each
    new character takes the original characters of those it came from in `target`."""
    core = _char_splitter(node_json)
    text = target.normalized
    normalized = core.normalize(text)
    # One token per normalized character, each with the characters of `text` it came from.
    places = core.encode_for_model(text, None, False).offsets if normalized else []
    if len(places) != len(normalized):  # not expected: then every character stands for all of `text`
        places = [(0, len(text))] * len(normalized)
    old = target._spans
    spans = []
    for a, b in places:
        if a < b:
            spans.append((old[a][0], old[b - 1][1]))
        elif a < len(old):
            spans.append((old[a][0], old[a][0]))
        else:
            spans.append((old[-1][1], old[-1][1]) if old else (0, 0))
    target._chars, target._spans = list(normalized), spans


@functools.lru_cache(maxsize=32)
def _char_splitter(node_json: str) -> Any:
    """A tokenizer of the normalizer `node_json` that makes each normalized character a token:
    the tokens' offsets are then the normalizer's alignment, as a tokenizer computes it."""
    from tokenmill.tokenizers.tokenizer import _load

    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": json.loads(node_json),
        "pre_tokenizer": {"type": "Split", "pattern": {"Regex": r"[\s\S]"}, "behavior": "Isolated", "invert": False},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": {"<unk>": 0}, "unk_token": "<unk>"},
    }
    return _load(doc)._core


class BertNormalizer(Normalizer):
    """BERT's: control characters removed and whitespace made spaces (`clean_text`), spaces around
    CJK characters, accents stripped (by default when lowercasing), lowercase."""

    _type = "BertNormalizer"
    _fields: ClassVar[dict[str, str]] = {
        "clean_text": "clean_text",
        "handle_chinese_chars": "handle_chinese_chars",
        "strip_accents": "strip_accents",
        "lowercase": "lowercase",
    }

    def __new__(
        cls,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        lowercase: bool = True,
    ) -> BertNormalizer:
        node = {
            "type": "BertNormalizer",
            "clean_text": bool(clean_text),
            "handle_chinese_chars": bool(handle_chinese_chars),
            "strip_accents": strip_accents,
            "lowercase": bool(lowercase),
        }
        return cls._make(node)  # type: ignore[no-any-return]

    def _spec(self) -> str:
        from tokenmill.formats.wordpiece import bert_normalizer

        n = self._node
        return bert_normalizer(
            clean_text=bool(n.get("clean_text", True)),
            handle_chinese_chars=bool(n.get("handle_chinese_chars", True)),
            strip_accents=n.get("strip_accents"),
            lowercase=bool(n.get("lowercase", True)),
        )


def _plain(name: str, doc: str) -> type[Normalizer]:
    """A normalizer without options."""

    def __new__(cls: type[Normalizer]) -> Normalizer:
        return cls._make({"type": name})  # type: ignore[no-any-return]

    return type(name, (Normalizer,), {"_type": name, "__new__": __new__, "__doc__": doc, "__module__": __name__})


NFC = _plain("NFC", "Unicode normal form C.")
NFD = _plain("NFD", "Unicode normal form D.")
NFKC = _plain("NFKC", "Unicode normal form KC.")
NFKD = _plain("NFKD", "Unicode normal form KD.")
Lowercase = _plain("Lowercase", "Lowercases every character.")
StripAccents = _plain("StripAccents", "Removes combining marks (after NFD, accents).")
ByteLevel = _plain("ByteLevel", "Each byte of the text as GPT-2's printable character for it.")
Nmt = _plain("Nmt", "SentencePiece's NMT rules without NFKC: control characters removed, other spaces a space.")


class Strip(Normalizer):
    """Removes whitespace at the left and/or right end."""

    _type = "Strip"
    _fields: ClassVar[dict[str, str]] = {"left": "strip_left", "right": "strip_right"}

    def __new__(cls, left: bool = True, right: bool = True) -> Strip:
        return cls._make({"type": "Strip", "strip_left": bool(left), "strip_right": bool(right)})  # type: ignore[no-any-return]


class Prepend(Normalizer):
    """Puts `prepend` before the text (nothing before an empty text)."""

    _type = "Prepend"
    _fields: ClassVar[dict[str, str]] = {"prepend": "prepend"}

    def __new__(cls, prepend: str) -> Prepend:
        return cls._make({"type": "Prepend", "prepend": prepend})  # type: ignore[no-any-return]


class Replace(Normalizer):
    """Replaces each match of `pattern` (a str, literally, or a `tokenizers.Regex`) by `content`."""

    _type = "Replace"
    _fields: ClassVar[dict[str, str]] = {"content": "content"}

    def __new__(cls, pattern: Any, content: str) -> Replace:
        return cls._make({"type": "Replace", "pattern": pattern_node(pattern), "content": content})  # type: ignore[no-any-return]

    @property
    def pattern(self) -> Any:
        # tokenizers neither shows nor changes a compiled pattern.
        raise AttributeError("Replace.pattern cannot be read (it is compiled); make a new Replace")

    @pattern.setter
    def pattern(self, value: Any) -> None:
        raise AttributeError("Replace.pattern cannot be changed; make a new Replace")


class Precompiled(Normalizer):
    """SentencePiece's precompiled character map (the bytes of a `.model`'s charsmap)."""

    _type = "Precompiled"

    def __new__(cls, precompiled_charsmap: bytes | list[int]) -> Precompiled:
        blob = base64.b64encode(bytes(precompiled_charsmap)).decode("ascii")
        return cls._make({"type": "Precompiled", "precompiled_charsmap": blob})  # type: ignore[no-any-return]


class Sequence(Normalizer, _Sequence):
    """Normalizers applied in order."""

    _type = "Sequence"
    _key = "normalizers"

    def __new__(cls, normalizers: list[Normalizer]) -> Sequence:
        return cls._of(normalizers)  # type: ignore[no-any-return]

    def _steps(self) -> list[dict[str, Any]]:
        return [step for child in self.__dict__["_children"] for step in child._steps()]


NormalizerNone = None

__all__ = [
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "BertNormalizer",
    "ByteLevel",
    "Lowercase",
    "Nmt",
    "Normalizer",
    "Precompiled",
    "Prepend",
    "Replace",
    "Sequence",
    "Strip",
    "StripAccents",
]
