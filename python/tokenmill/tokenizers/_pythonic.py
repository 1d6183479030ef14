"""`repr` and `str` of tokenizers and components as Hugging Face's `tokenizers` writes them: a
component is `Type(field=value, ...)`, a map `{"key":value, ...}`, strings in double quotes,
`None`/`True`/`False`, whole floats without their `.0`; `str` shows at most five entries of a list
or map, then `...`.

>>> render({"type": "Strip", "strip_left": True, "strip_right": False}, None)
'Strip(strip_left=True, strip_right=False)'
>>> render({"type": "Unigram", "unk_id": 0, "vocab": [["A", 0.0], ["B", -0.5]]}, None)
'Unigram(unk_id=0, vocab=[("A", 0), ("B", -0.5)])'
"""

from __future__ import annotations

from typing import Any

# The fields of a tokenizer, in the order tokenizers writes them.
TOKENIZER_FIELDS = (
    "version",
    "truncation",
    "padding",
    "added_tokens",
    "normalizer",
    "pre_tokenizer",
    "post_processor",
    "decoder",
    "model",
)


def render(value: Any, limit: int | None, key: str = "") -> str:
    """`value` (a tokenizer.json value) as tokenizers shows it; `limit`: most entries shown of a
    list or map (None: all); `key`: the field it is the value of (some fields hold tuples)."""
    if value is None or isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        tuples = key in ("vocab", "merges")
        items = [_tuple(v, limit) if tuples and isinstance(v, list) else render(v, limit) for v in value]
        return "[" + _join(items, limit) + "]"
    if isinstance(value, dict):
        if isinstance(value.get("type"), str):
            fields = ", ".join(f"{k}={render(v, limit, k)}" for k, v in value.items() if k != "type")
            return f"{value['type']}({fields})"
        if len(value) == 1 and next(iter(value)) in ("SpecialToken", "Sequence"):
            ((name, piece),) = value.items()
            shown = {k: (v if name != "Sequence" or k != "id" else _Bare(v)) for k, v in piece.items()}
            return f"{name}(" + ", ".join(f"{k}={render(v, limit)}" for k, v in shown.items()) + ")"
        if key == "special_tokens":
            items = [
                f'"{k}":SpecialToken(' + ", ".join(f"{f}={render(x, limit)}" for f, x in v.items()) + ")"
                for k, v in value.items()
            ]
            return "{" + _join(items, limit) + "}"
        return "{" + _join([f'"{k}":{render(v, limit, k)}' for k, v in value.items()], limit) + "}"
    if isinstance(value, _Bare):
        return value.text
    return repr(value)


class _Bare:
    """A value tokenizers shows without quotes (an enum's name: `Sequence(id=A, ...)`)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _tuple(items: list[Any], limit: int | None) -> str:
    return "(" + ", ".join(render(v, limit) for v in items) + ")"


def _join(items: list[str], limit: int | None) -> str:
    if limit is not None and len(items) > limit:
        return ", ".join([*items[:limit], "..."])
    return ", ".join(items)


def render_tokenizer(document: dict[str, Any], limit: int | None) -> str:
    """A tokenizer.json document as `Tokenizer(version=..., ..., model=...)`."""
    fields = ", ".join(f"{k}={render(document.get(k), limit, k)}" for k in TOKENIZER_FIELDS)
    return f"Tokenizer({fields})"
