"""`tokenmill.tokenizers.normalizers`: Hugging Face's normalizers, each its `tokenizer.json` node,
run by tokenmill's Rust normalizers. A custom Python one is an error when it is made.

>>> Sequence([Lowercase(), Strip()]).normalize_str("  HELLO  ")
'hello'
"""

from __future__ import annotations

import base64
import json
from typing import Any, ClassVar

from tokenmill import _core
from tokenmill.tokenizers._component import Component, pattern_node
from tokenmill.tokenizers._component import Sequence as _Sequence


class Normalizer(Component):
    """The base of every normalizer: `normalize_str(text)` gives the normalized text."""

    _family = "normalizer"

    def _spec(self) -> str:
        """tokenmill's normalizer spec for this node."""
        return "hf:" + json.dumps(self._node, ensure_ascii=False)

    def _check(self) -> None:
        """Refuses, when it is made, a normalizer tokenmill does not run."""
        self.normalize_str("")

    def normalize_str(self, sequence: str) -> str:
        """The normalized text.

        >>> Lowercase().normalize_str("HeLLo")
        'hello'
        """
        if not isinstance(sequence, str):
            raise TypeError(f"normalize_str takes a str, not {type(sequence).__name__}")
        return _core.normalize_with(self._spec(), sequence)

    @staticmethod
    def custom(normalizer: Any) -> Normalizer:
        from tokenmill.tokenizers._component import no_custom

        raise no_custom("normalizer")


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
