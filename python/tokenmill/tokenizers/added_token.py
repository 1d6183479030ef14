"""`AddedToken`: a token added to a vocabulary, with how it is matched in text — Hugging Face
`tokenizers.AddedToken`'s fields, defaults and comparisons.

>>> AddedToken("<sep>", special=True)
AddedToken("<sep>", rstrip=False, lstrip=False, single_word=False, normalized=False, special=True)
"""

from __future__ import annotations

from typing import Any

# In the order tokenizers' `__getstate__` gives them.
_FIELDS = ("content", "single_word", "lstrip", "rstrip", "normalized", "special")


class AddedToken:
    """A token added to the vocabulary. `single_word`: matched only as a whole word; `lstrip` /
    `rstrip`: takes the spaces on its left / right; `normalized`: matched in the normalized text
    (default: not for special tokens, which are matched in the raw text); `special`: skipped when
    decoding with `skip_special_tokens`."""

    __slots__ = ("_normalized", "content", "lstrip", "rstrip", "single_word", "special")

    def __init__(
        self,
        content: str = "",
        single_word: bool = False,
        lstrip: bool = False,
        rstrip: bool = False,
        normalized: bool | None = None,
        special: bool = False,
    ) -> None:
        self.content = content
        self.single_word = single_word
        self.lstrip = lstrip
        self.rstrip = rstrip
        self.special = special
        self._normalized = normalized

    @property
    def normalized(self) -> bool:
        # As tokenizers: unless told, special tokens match the raw text, others the normalized —
        # decided when asked, so a token made ordinary and then added as special is special's.
        return (not self.special) if self._normalized is None else self._normalized

    @normalized.setter
    def normalized(self, value: bool) -> None:
        self._normalized = value

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FIELDS}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._normalized = None
        for name, value in state.items():
            setattr(self, name, value)

    def __str__(self) -> str:
        return self.content

    def __repr__(self) -> str:
        return (
            f'AddedToken("{self.content}", rstrip={self.rstrip}, lstrip={self.lstrip}, '
            f"single_word={self.single_word}, normalized={self.normalized}, special={self.special})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AddedToken):
            return NotImplemented
        return self.__getstate__() == other.__getstate__()

    def __hash__(self) -> int:
        # By content only, as tokenizers hashes it: equal tokens hash equal, and a token's flags
        # may change without moving it in a set.
        return hash(self.content)
