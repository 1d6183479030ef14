"""`tokenmill.tokenizers.processors`: Hugging Face's post-processors (the template that puts special
tokens around one text or a pair), each its `tokenizer.json` node, run by tokenmill's core when set
on a `Tokenizer`.

>>> t = TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
>>> t.num_special_tokens_to_add(False), t.num_special_tokens_to_add(True)   # the default pair: "$A $B:1"
(2, 0)
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from tokenmill.tokenizers._component import Component
from tokenmill.tokenizers._component import Sequence as _Sequence


class PostProcessor(Component):
    """The base of every post-processor."""

    _family = "post_processor"

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """How many tokens this adds to one text (or a pair)."""
        return _added(self._node, is_pair)


def _only_type(state: dict[str, Any], kind: str) -> None:
    """A component made again from its own state (`Kind(**json.loads(c.__getstate__()))`) passes
    its `type` too."""
    if set(state) - {"type"} or state.get("type", kind) != kind:
        raise TypeError(f"{kind}() got unexpected arguments {sorted(state)}")


def _added(node: dict[str, Any], is_pair: bool) -> int:
    kind = node.get("type")
    if kind == "BertProcessing":
        return 3 if is_pair else 2
    if kind == "RobertaProcessing":
        return 4 if is_pair else 2
    if kind == "TemplateProcessing":
        specials = node.get("special_tokens", {})
        return sum(
            len(specials[piece["SpecialToken"]["id"]]["ids"])
            for piece in node["pair" if is_pair else "single"]
            if "SpecialToken" in piece
        )
    if kind == "Sequence":
        return sum(_added(child, is_pair) for child in node.get("processors", []))
    return 0


def _token(value: Any, name: str) -> list[Any]:
    if isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], int):
        return [value[0], value[1]]
    raise TypeError(f"{name} must be a (token, id) tuple, not {value!r}")


class BertProcessing(PostProcessor):
    """BERT's template: `[CLS] A [SEP]`, and `[CLS] A [SEP] B [SEP]` with B's type id 1."""

    _type = "BertProcessing"

    def __new__(cls, sep: tuple[str, int], cls_token: tuple[str, int]) -> BertProcessing:
        return cls._make({"type": "BertProcessing", "sep": _token(sep, "sep"), "cls": _token(cls_token, "cls")})  # type: ignore[no-any-return]

    @property
    def sep(self) -> tuple[str, int]:
        return tuple(self._node["sep"])  # type: ignore[return-value]

    @sep.setter
    def sep(self, value: tuple[str, int]) -> None:
        self._node["sep"] = _token(value, "sep")
        self._changed()

    @property
    def cls(self) -> tuple[str, int]:
        return tuple(self._node["cls"])  # type: ignore[return-value]

    @cls.setter
    def cls(self, value: tuple[str, int]) -> None:
        self._node["cls"] = _token(value, "cls")
        self._changed()


class RobertaProcessing(BertProcessing):
    """RoBERTa's template: `<s> A </s>`, `<s> A </s> </s> B </s>`; offsets trimmed of the spaces
    byte-level BPE puts in tokens (`trim_offsets`)."""

    _type = "RobertaProcessing"
    _fields: ClassVar[dict[str, str]] = {"trim_offsets": "trim_offsets", "add_prefix_space": "add_prefix_space"}

    def __new__(  # type: ignore[misc]
        cls, sep: tuple[str, int], cls_token: tuple[str, int], trim_offsets: bool = True, add_prefix_space: bool = True
    ) -> RobertaProcessing:
        node = {
            "type": "RobertaProcessing",
            "sep": _token(sep, "sep"),
            "cls": _token(cls_token, "cls"),
            "trim_offsets": bool(trim_offsets),
            "add_prefix_space": bool(add_prefix_space),
        }
        return cls._make(node)  # type: ignore[no-any-return]


class ByteLevel(PostProcessor):
    """Byte-level BPE's: offsets trimmed of the spaces its tokens start with (`trim_offsets`)."""

    _type = "ByteLevel"
    _fields: ClassVar[dict[str, str]] = {
        "add_prefix_space": "add_prefix_space",
        "trim_offsets": "trim_offsets",
        "use_regex": "use_regex",
    }

    def __new__(
        cls,
        add_prefix_space: bool | None = None,
        trim_offsets: bool | None = None,
        use_regex: bool | None = None,
        **state: Any,
    ) -> ByteLevel:
        _only_type(state, "ByteLevel")
        node = {
            "type": "ByteLevel",
            "add_prefix_space": True if add_prefix_space is None else bool(add_prefix_space),
            "trim_offsets": True if trim_offsets is None else bool(trim_offsets),
            "use_regex": True if use_regex is None else bool(use_regex),
        }
        return cls._make(node)  # type: ignore[no-any-return]


_PIECE = re.compile(r"^(.*?)(?::(\d+))?$", re.S)


def _pieces(template: str | list[str]) -> list[dict[str, Any]]:
    """A template's pieces: `$A`/`$B` (or `$`, `$0`...: sequence A with that type id) are the
    sequences, anything else a special token; `:n` sets a piece's type id."""
    words = template.split() if isinstance(template, str) else list(template)
    out = []
    for word in words:
        if not isinstance(word, str) or not word:
            raise ValueError(f"Cannot build Piece from {word!r}")
        if word.startswith("$"):
            name, colon, type_id = word[1:].partition(":")
            if colon and not type_id.isdigit():
                raise ValueError(f'Cannot build Piece from string "{word}"')
            if name in ("", "A", "a"):
                sequence, kind = "A", 0
            elif name in ("B", "b"):
                sequence, kind = "B", 0
            elif name.isdigit():
                sequence, kind = "A", int(name)
            else:
                raise ValueError(f'Cannot build Piece from string "{word}"')
            out.append({"Sequence": {"id": sequence, "type_id": int(type_id) if type_id else kind}})
            continue
        found = _PIECE.match(word)
        assert found is not None  # the pattern matches every string
        out.append({"SpecialToken": {"id": found.group(1), "type_id": int(found.group(2) or 0)}})
    return out


def _specials(special_tokens: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for entry in special_tokens or []:
        if isinstance(entry, (tuple, list)) and len(entry) == 2:
            token, id_ = (entry[0], entry[1]) if isinstance(entry[0], str) else (entry[1], entry[0])
            if not isinstance(token, str) or not isinstance(id_, int):
                raise TypeError(f"a special token is (token, id), not {entry!r}")
            out[token] = {"id": token, "ids": [id_], "tokens": [token]}
        elif isinstance(entry, dict):
            token = entry.get("id")
            ids, tokens = entry.get("ids"), entry.get("tokens")
            if not isinstance(token, str) or not isinstance(ids, list) or not isinstance(tokens, list):
                raise ValueError(f"a special token dict needs id, ids and tokens, not {entry!r}")
            if len(ids) != len(tokens):
                raise ValueError("SpecialToken: ids and tokens must be of the same length")
            out[token] = {"id": token, "ids": list(ids), "tokens": list(tokens)}
        else:
            raise TypeError(f"a special token is a (token, id) tuple or a dict, not {entry!r}")
    return out


class TemplateProcessing(PostProcessor):
    """A template for one text (`single`) and a pair (`pair`), e.g. ``"[CLS] $A [SEP] $B:1 [SEP]:1"``,
    with the ids of the special tokens it names (`special_tokens`: (token, id) tuples or dicts
    of id, ids and tokens)."""

    _type = "TemplateProcessing"

    def __new__(
        cls, single: str | list[str] | None = None, pair: str | list[str] | None = None, special_tokens: Any = None
    ) -> TemplateProcessing:
        node = {
            "type": "TemplateProcessing",
            "single": _pieces(single if single is not None else "$0"),
            "pair": _pieces(pair if pair is not None else "$A:0 $B:1"),
            "special_tokens": _specials(special_tokens),
        }
        _check_template(node)
        return cls._make(node)  # type: ignore[no-any-return]

    @property
    def single(self) -> list[dict[str, Any]]:
        return list(self._node["single"])

    @single.setter
    def single(self, value: str | list[str]) -> None:
        node = dict(self._node, single=_pieces(value))
        _check_template(node)
        self._node["single"] = node["single"]
        self._changed()


def _check_template(node: dict[str, Any]) -> None:
    missing = []
    for piece in [*node["single"], *node["pair"]]:
        if "SpecialToken" in piece and piece["SpecialToken"]["id"] not in node["special_tokens"]:
            name = piece["SpecialToken"]["id"]
            if name not in missing:
                missing.append(name)
    if missing:
        raise ValueError(f"Missing SpecialToken(s) with id(s) `{', '.join(missing)}`")


class Sequence(PostProcessor, _Sequence):
    """Post-processors applied in order."""

    _type = "Sequence"
    _key = "processors"

    def __new__(cls, processors: list[PostProcessor]) -> Sequence:
        return cls._of(processors)  # type: ignore[no-any-return]


__all__ = ["BertProcessing", "ByteLevel", "PostProcessor", "RobertaProcessing", "Sequence", "TemplateProcessing"]
